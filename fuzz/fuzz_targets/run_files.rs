//! The files of a run directory that roles read back (`loop.json`, `iterations.jsonl`, the best
//! pointer, `eval/matches.jsonl`, `carried.json`, a lease, `machine.json`) and a run's location
//! (a path or an `s3://` URL). The first byte picks the file, the rest is its text; the run is
//! emptied first, so every input is judged alone. A damaged file must be an error naming it
//! (or, where the format says so, ignored); a panic is a bug.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lifeline_zero_fuzz::{put, scratch};
use run::RunDir;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, text)) = data.split_first() else {
        return;
    };
    let root = scratch().join("run");
    let _ = std::fs::remove_dir_all(&root);
    let run = RunDir::new(&root);
    match pick % 8 {
        0 => {
            put("run/loop.json", text);
            let _ = train::looping::LoopState::load(&run);
        }
        1 => {
            put("run/iterations.jsonl", text);
            let _ = train::looping::read_iterations(&run);
        }
        2 => {
            put("run/models/000000/meta.json", b"{}");
            put("run/models/best", text);
            let _ = run.best();
        }
        3 => {
            put("run/eval/matches.jsonl", text);
            let _ = eval::results::read_summaries(&root.join("eval"));
        }
        4 => {
            put("run/carried.json", text);
            let _ = train::piece::carried(&run);
        }
        5 => {
            put("run/locks/train.lease.1", text);
            let files = run::lease::DirLease::new(root.join("locks/train.lease"));
            let _ = run::lease::holder(&files);
        }
        6 => {
            put("run/machine.json", text);
            let _ = train::machine::MachineRecord::read(&run);
        }
        _ => {
            if let Ok(location) = std::str::from_utf8(text) {
                let _ = location.parse::<run::RunLocation>();
            }
        }
    }
});
