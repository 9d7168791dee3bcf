//! Logs of the roles: one line per event on stderr with a timestamp, the role, the host and
//! the pid, so that the logs of many processes on many machines can be put side by side. The
//! level comes from `RUST_LOG` (default `info`), as with any `tracing` program.

use tracing_subscriber::EnvFilter;

/// Log events of this process as role `role` for as long as the returned guard lives.
pub fn init(role: &'static str) -> tracing::span::EnteredSpan {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    // A second call (tests running roles in one process) keeps the first subscriber.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        // Colours for a person at a terminal, plain text for log files.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
    let host = crate::host::host_name();
    tracing::info_span!("role", role, host, pid = std::process::id()).entered()
}
