//! A file of game records (JSON lines, as `selfplay` and `eval match` write them), read and
//! replayed as `engine replay` does: a record that is not a legal game must be refused with an
//! error naming its line or action; a panic is a bug.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = lifeline_zero_fuzz::put("records.jsonl", data);
    let Ok(records) = engine::record::read_records(&path) else {
        return;
    };
    for record in records {
        let _ = record.replay();
    }
});
