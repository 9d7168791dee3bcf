//! Stopping a role: the first SIGINT or SIGTERM asks the program to stop after the write in
//! progress ([`stop_requested`], which long work checks between its pieces), a second one ends
//! it at once. Every file is written atomically (`crate::atomic`), so neither loses anything
//! already written. Kill tests stop a process at its N-th rename (`interruption_point`).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

static STOP_REQUESTED: AtomicBool = AtomicBool::new(false);
static SIGNALS: AtomicUsize = AtomicUsize::new(0);

/// Install the handler of SIGINT and SIGTERM: the first asks the program to stop after the
/// write in progress ([`stop_requested`]) and says so; a second one exits at once (every file
/// is written atomically, so that too loses nothing already written).
pub fn install_stop_handler() {
    #[cfg(unix)]
    signals::install();
}

#[cfg(unix)]
mod signals {
    use super::{SIGNALS, STOP_REQUESTED};
    use std::sync::atomic::Ordering;

    /// Only async-signal-safe calls here: atomics, write(2), _exit(2).
    extern "C" fn on_signal(_: libc::c_int) {
        const FIRST: &[u8] = b"\nstopping: finishing the write in progress (interrupt again to stop at once; nothing written is lost either way)\n";
        const SECOND: &[u8] = b"\nstopped at once\n";
        // SAFETY: write(2) and _exit(2) are async-signal-safe; the buffers are static.
        unsafe {
            if SIGNALS.fetch_add(1, Ordering::SeqCst) == 0 {
                STOP_REQUESTED.store(true, Ordering::SeqCst);
                libc::write(libc::STDERR_FILENO, FIRST.as_ptr().cast(), FIRST.len());
            } else {
                libc::write(libc::STDERR_FILENO, SECOND.as_ptr().cast(), SECOND.len());
                libc::_exit(130);
            }
        }
    }

    pub fn install() {
        static ONCE: std::sync::Once = std::sync::Once::new();
        let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        // SAFETY: the handler is a plain extern "C" function that only touches atomics and
        // makes async-signal-safe calls.
        ONCE.call_once(|| unsafe {
            libc::signal(libc::SIGINT, handler);
            libc::signal(libc::SIGTERM, handler);
        });
    }
}

/// Whether SIGINT or SIGTERM asked the program to stop.
pub fn stop_requested() -> bool {
    STOP_REQUESTED.load(Ordering::SeqCst)
}

/// When long work ends between its pieces (a round of self-play games, a batch of a match):
/// at the process's stop request ([`stop_requested`]: SIGINT or SIGTERM), and
/// for a token made with [`Stop::with_flag`], also when its caller sets the flag. Deep loops
/// take one of these from their caller instead of reading the process's request themselves.
#[derive(Clone, Debug, Default)]
pub struct Stop {
    flag: Option<Arc<AtomicBool>>,
}

impl Stop {
    /// Stops at the process's stop request only.
    pub fn on_signal() -> Stop {
        Stop { flag: None }
    }

    /// Stops at the process's stop request, or once `flag` is set.
    pub fn with_flag(flag: Arc<AtomicBool>) -> Stop {
        Stop { flag: Some(flag) }
    }

    pub fn requested(&self) -> bool {
        stop_requested()
            || self
                .flag
                .as_ref()
                .is_some_and(|f| f.load(Ordering::Relaxed))
    }
}

/// Two tokens are equal when they stop at the same requests.
impl PartialEq for Stop {
    fn eq(&self, other: &Stop) -> bool {
        match (&self.flag, &other.flag) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

/// Before each rename of an atomic write: where kill tests stop the process as `kill -9`
/// would (`LIFELINE_KILL_AT_RENAME=N`: at the N-th rename of the process, counting from 1).
/// The same can be done from outside with
/// `strace -f -e trace=rename -e inject=rename:signal=KILL:when=N`, where strace exists.
pub(crate) fn interruption_point() {
    static RENAMES: AtomicUsize = AtomicUsize::new(0);
    static KILL_AT: std::sync::OnceLock<Option<usize>> = std::sync::OnceLock::new();
    let at = *KILL_AT.get_or_init(|| {
        std::env::var("LIFELINE_KILL_AT_RENAME")
            .ok()
            .and_then(|v| v.parse().ok())
    });
    if at.is_some_and(|at| RENAMES.fetch_add(1, Ordering::SeqCst) + 1 == at) {
        kill_self();
    }
}

#[cfg(unix)]
fn kill_self() -> ! {
    // SAFETY: sending SIGKILL to this process; it does not return.
    unsafe {
        libc::kill(std::process::id() as libc::pid_t, libc::SIGKILL);
    }
    std::process::abort()
}

#[cfg(not(unix))]
fn kill_self() -> ! {
    std::process::abort()
}
