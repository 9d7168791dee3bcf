//! Faults the fault suite injects from the environment, where a test cannot make them for
//! real: a disk that fills up, and a clock that runs ahead of or behind the others'. Each is
//! off unless its variable is set; `LIFELINE_KILL_AT_RENAME` ([`crate::stop`]) is the third.
//!
//! - `LIFELINE_DISK_FULL_AFTER=N`: the writes of this process's run files after the first N
//!   fail as a full disk does (`ENOSPC`), each atomic write, directory write and line append
//!   counting one.
//! - `LIFELINE_CLOCK_SKEW_MS=MS`: this process's clock for leases runs MS milliseconds ahead
//!   (or behind, negative) of the system's.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

fn env_number<T: std::str::FromStr>(name: &str) -> Option<T> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

/// Before each write of a run file: `Err` (a full disk) once `LIFELINE_DISK_FULL_AFTER` writes
/// were made.
pub(crate) fn disk_space() -> std::io::Result<()> {
    static AFTER: OnceLock<Option<u64>> = OnceLock::new();
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let Some(after) = *AFTER.get_or_init(|| env_number("LIFELINE_DISK_FULL_AFTER")) else {
        return Ok(());
    };
    match WRITES.fetch_add(1, Ordering::SeqCst) < after {
        true => Ok(()),
        false => Err(std::io::Error::new(
            std::io::ErrorKind::StorageFull,
            "No space left on device (LIFELINE_DISK_FULL_AFTER)",
        )),
    }
}

/// The skew of this process's lease clock, in milliseconds (`LIFELINE_CLOCK_SKEW_MS`).
pub(crate) fn clock_skew_ms() -> i64 {
    static SKEW: OnceLock<i64> = OnceLock::new();
    *SKEW.get_or_init(|| env_number("LIFELINE_CLOCK_SKEW_MS").unwrap_or(0))
}
