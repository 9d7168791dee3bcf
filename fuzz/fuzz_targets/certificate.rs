//! A proof certificate file (`engine certify`'s output: a JSON header line, then 10-byte move
//! records) read and checked as `engine check` does. A file that is not a proof must be
//! refused with an error; a panic or a hang is a bug.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = std::path::Path::new("fuzz.proof");
    let Ok((certificate, game)) = engine::proof::Certificate::from_bytes(data, path) else {
        return;
    };
    let _ = engine::proof::check(&game, certificate.header.winner, &certificate.moves);
});
