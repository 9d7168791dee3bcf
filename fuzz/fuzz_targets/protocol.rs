//! Lines of the move/analysis protocol (`eval serve`, docs/protocol.md), one command a line,
//! answered by a session with a random player on side-3 Lifeline: any line must get an answer
//! (an error for a bad one), never a panic. The session catches a panic to keep a client's
//! connection alive, but libFuzzer's panic hook aborts first, so a caught panic still counts.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let game = engine::GameConfig::load(
        None,
        r#"{"game":"lifeline","options":{"size":3,"balance":"komi","komi":3}}"#,
    )
    .expect("the session's game");
    let Ok(mut session) = eval::serve::protocol::Session::new(game, eval::Contestant::random(), 1)
    else {
        return;
    };
    for line in text.lines() {
        if let eval::serve::protocol::Reply::Quit = session.handle(line) {
            break;
        }
    }
});
