//! One look for every progress bar of the workspace's roles: the bar, the count and what is
//! counted, the time so far, then the caller's running figures (`set_message`). Drawn on
//! stderr, and not at all when stderr is no terminal (indicatif's own rule), so logs and
//! pipes get the roles' printed lines only.

use indicatif::{ProgressBar, ProgressStyle};

/// A bar of `len` steps counting `what` ("games", "steps", "positions proved"), or a hidden
/// one when `shown` is false (a role's `--quiet`, or a part of a role that reports otherwise).
pub fn bar(len: u64, what: &str, shown: bool) -> ProgressBar {
    if !shown {
        return ProgressBar::hidden();
    }
    let style =
        ProgressStyle::with_template("{bar:30} {pos}/{len} {prefix} [{elapsed_precise}] {msg}")
            .expect("a valid template");
    let bar = ProgressBar::new(len).with_style(style);
    bar.set_prefix(what.to_string());
    bar
}
