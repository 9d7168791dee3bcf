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

/// When long work ends between its pieces (a round of self-play games, a batch of a match,
/// a training step): at the process's stop request ([`stop_requested`]: SIGINT or SIGTERM),
/// and for a token made by [`Stop::child`], also when its [`StopGuard`] is dropped or asked
/// to stop. A role's token comes from its `run::Session`; deep loops take one from their
/// caller instead of reading the process's request themselves, so that a part of a role (the
/// concurrent loop's self-play thread) can be stopped without stopping the process.
#[derive(Clone, Debug, Default)]
pub struct Stop {
    /// The flags of this token and of the tokens it was made from (none: the signal only).
    flags: Vec<Arc<AtomicBool>>,
}

impl Stop {
    /// Stops at the process's stop request only.
    pub fn on_signal() -> Stop {
        Stop { flags: Vec::new() }
    }

    /// A token that stops when this one does, or when the guard returned with it is dropped
    /// or asked to ([`StopGuard::stop`]). Dropping the guard stops the child on every way out
    /// of a scope, panics included: a `std::thread::scope` waits for its threads before the
    /// panic of its body goes on, so threads that ran until a flag was set would otherwise
    /// play on forever.
    pub fn child(&self) -> (Stop, StopGuard) {
        let flag = Arc::new(AtomicBool::new(false));
        let mut flags = self.flags.clone();
        flags.push(flag.clone());
        (Stop { flags }, StopGuard(flag))
    }

    pub fn requested(&self) -> bool {
        stop_requested() || self.flags.iter().any(|f| f.load(Ordering::Relaxed))
    }
}

/// Two tokens are equal when they stop at the same requests.
impl PartialEq for Stop {
    fn eq(&self, other: &Stop) -> bool {
        self.flags.len() == other.flags.len()
            && self
                .flags
                .iter()
                .zip(&other.flags)
                .all(|(a, b)| Arc::ptr_eq(a, b))
    }
}

/// Stops the child token made with it ([`Stop::child`]) when dropped, or before.
#[derive(Debug)]
pub struct StopGuard(Arc<AtomicBool>);

impl StopGuard {
    pub fn stop(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

impl Drop for StopGuard {
    fn drop(&mut self) {
        self.stop();
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A child stops when its guard is dropped, its parent does not, and a grandchild stops
    /// with its parent's guard. Fails if the child forgot its ancestors' flags or a guard set
    /// a flag it does not own.
    #[test]
    fn a_child_stops_with_its_guard_and_its_parents() {
        let (child, guard) = Stop::on_signal().child();
        let (grandchild, _grand_guard) = child.child();
        assert!(!child.requested() && !grandchild.requested());
        drop(guard);
        assert!(child.requested(), "the child's guard was dropped");
        assert!(
            grandchild.requested(),
            "the grandchild's parent was stopped"
        );
        let (sibling, _sibling_guard) = Stop::on_signal().child();
        assert!(!sibling.requested(), "another child stopped with this one");
        assert!(!Stop::on_signal().requested());
        assert_ne!(child, sibling);
        assert_eq!(child.clone(), child);
    }

    /// A scope whose body panics (the concurrent loop's training side) still stops the thread
    /// it spawned (self-play), and the panic comes out. Fails without the guard's drop: the
    /// thread then gives up waiting after 5 s, not having seen the stop.
    #[test]
    fn a_panic_in_the_scope_stops_its_threads() {
        let saw = AtomicBool::new(false);
        let (stop, stop_all) = Stop::on_signal().child();
        let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            std::thread::scope(|scope| {
                let _stop_all = stop_all;
                scope.spawn(|| {
                    let t0 = std::time::Instant::now();
                    while t0.elapsed() < std::time::Duration::from_secs(5) {
                        if stop.requested() {
                            saw.store(true, Ordering::Relaxed);
                            return;
                        }
                        std::thread::sleep(std::time::Duration::from_millis(1));
                    }
                });
                panic!("the trainer's side failed");
            })
        }));
        assert!(out.is_err(), "the panic was lost");
        assert!(
            saw.load(Ordering::Relaxed),
            "the thread did not see the stop"
        );
    }
}
