//! Every integration test of `eval` in one test binary, one module per file of this folder.
//! Each test binary links burn and the workspace statically, so one binary instead of 7 saves
//! 6 links of some hundreds of megabytes in every `cargo test` (CI's time is mostly compile
//! and link). Run one file's tests with a filter: `cargo test -p eval --test integration truth::`.
//! The files share one process: each names its temporary directories after its own tests.

mod balance;
mod cli;
mod page;
mod render;
mod serve;
mod strength;
mod truth;

/// Sends `signal` (as `kill` names it: `-INT`, `-TERM`) to `child`, then waits for its output:
/// how the tests of a requested stop end the process they started.
fn signal_and_wait(child: std::process::Child, signal: &str) -> std::process::Output {
    let sent = std::process::Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success(), "kill {signal} {}", child.id());
    child.wait_with_output().unwrap()
}
