//! Leases on a run's roles, for shared filesystems whose file locks do not reach across
//! machines (NFSv3 without lockd, some FUSE mounts): the file lock of
//! [`crate::rundir::RunDir::lock`] keeps a second holder out on one machine, and the lease
//! keeps one out on another.
//!
//! A lease is a numbered file, `locks/ROLE.lease.N`, holding one line `PID HOST EXPIRES_MS`;
//! the highest number is the lease in force. Its holder renews it every third of its duration
//! (an atomic rename over its own file). To take a lease whose holder crashed (expired, or a
//! dead process of this machine), a taker creates number N+1 by hard-linking a fully written
//! temporary to that name, which succeeds for exactly one taker (`link` fails on an existing
//! name, on NFS too), then checks that no higher number appeared, and removes the older ones.
//! Clocks of the machines must agree to well within the duration (`LIFELINE_LEASE_SECONDS`,
//! 60 by default).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Lease duration when `LIFELINE_LEASE_SECONDS` does not set one.
const DEFAULT_SECONDS: f64 = 60.0;

/// Who holds, or held, a lease.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Holder {
    pub pid: u32,
    pub host: String,
    /// Milliseconds since the epoch.
    pub expires_ms: u128,
}

impl Holder {
    fn parse(text: &str) -> Option<Holder> {
        let mut parts = text.split_whitespace();
        Some(Holder {
            pid: parts.next()?.parse().ok()?,
            host: parts.next()?.to_string(),
            expires_ms: parts.next()?.parse().ok()?,
        })
    }

    fn line(&self) -> String {
        format!("{} {} {}\n", self.pid, self.host, self.expires_ms)
    }

    /// `pid N on HOST, lease for another S s` (or `expired`).
    pub fn describe(&self, now_ms: u128) -> String {
        match self.expires_ms.checked_sub(now_ms) {
            Some(left) => format!(
                "pid {} on {}, lease for another {:.0} s",
                self.pid,
                self.host,
                left as f64 / 1000.0
            ),
            None => format!("pid {} on {}, lease expired", self.pid, self.host),
        }
    }
}

/// Why a lease could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum LeaseError {
    #[error("held by {0}")]
    Held(String),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// A lease held by this process, renewed on a thread of its own until it is dropped (which
/// removes the file).
#[derive(Debug)]
pub struct Lease {
    path: PathBuf,
    number: u64,
    /// The holder this lease replaced (a process that ended without releasing it).
    pub previous: Option<Holder>,
    lost: Arc<AtomicBool>,
    stop: Option<std::sync::mpsc::Sender<()>>,
    renewer: Option<std::thread::JoinHandle<()>>,
}

impl Lease {
    /// Take the lease at `path` for this process, for the configured duration
    /// (`LIFELINE_LEASE_SECONDS`, 60 s by default).
    pub fn take(path: &Path) -> Result<Lease, LeaseError> {
        Lease::take_for(path, duration())
    }

    /// [`Lease::take`] for `duration`.
    pub fn take_for(path: &Path, duration: Duration) -> Result<Lease, LeaseError> {
        let me = Holder {
            pid: std::process::id(),
            host: crate::rundir::host_name(),
            expires_ms: now_ms() + duration.as_millis(),
        };
        let (number, previous) = take(path, &me, now_ms, crate::rundir::process_alive)?;
        let lost = Arc::new(AtomicBool::new(false));
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let renewer = {
            let (path, me, lost) = (path.to_path_buf(), me.clone(), lost.clone());
            std::thread::spawn(move || {
                // Renew every third of the duration until the lease is dropped.
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                    stopped.recv_timeout(duration / 3)
                {
                    let renewed = Holder {
                        expires_ms: now_ms() + duration.as_millis(),
                        ..me.clone()
                    };
                    if !renew(&path, number, &renewed) {
                        lost.store(true, Ordering::Relaxed);
                        tracing::error!(
                            "{}: the lease was taken over by another holder",
                            path.display()
                        );
                        return;
                    }
                }
            })
        };
        Ok(Lease {
            path: path.to_path_buf(),
            number,
            previous,
            lost,
            stop: Some(stop),
            renewer: Some(renewer),
        })
    }

    /// Whether another holder took the lease over (this process stalled past its expiry).
    pub fn lost(&self) -> bool {
        self.lost.load(Ordering::Relaxed)
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.renewer.take() {
            let _ = t.join();
        }
        // Only our own lease is removed: a newer one belongs to its new holder.
        if newest(&self.path).map(|(n, _)| n) == Some(self.number) {
            let _ = std::fs::remove_file(generation(&self.path, self.number));
        }
    }
}

/// The lease duration: `LIFELINE_LEASE_SECONDS`, or 60 s.
fn duration() -> Duration {
    let secs = std::env::var("LIFELINE_LEASE_SECONDS")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| *s > 0.0 && s.is_finite())
        .unwrap_or(DEFAULT_SECONDS);
    Duration::from_secs_f64(secs)
}

fn now_ms() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0)
}

/// The holder of the lease in force at `base`.
pub fn holder(base: &Path) -> Option<Holder> {
    Holder::parse(&std::fs::read_to_string(newest(base)?.1).ok()?)
}

fn same_holder(a: &Holder, b: &Holder) -> bool {
    (a.pid, &a.host) == (b.pid, &b.host)
}

/// The numbered lease files of `base` (`ROLE.lease` → `ROLE.lease.N`), lowest first.
fn generations(base: &Path) -> Vec<(u64, PathBuf)> {
    let (Some(dir), Some(stem)) = (base.parent(), base.file_name().and_then(|n| n.to_str())) else {
        return Vec::new();
    };
    let prefix = format!("{stem}.");
    let mut out: Vec<(u64, PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            let n = name.strip_prefix(&prefix)?.parse().ok()?;
            Some((n, dir.join(name)))
        })
        .collect();
    out.sort();
    out
}

fn generation(base: &Path, n: u64) -> PathBuf {
    let mut name = base.as_os_str().to_owned();
    name.push(format!(".{n}"));
    PathBuf::from(name)
}

/// The lease in force: the highest number.
fn newest(base: &Path) -> Option<(u64, PathBuf)> {
    generations(base).pop()
}

/// Take the lease `base` for `me`; returns the lease number and the stale holder it
/// replaced. `alive(pid)` says whether a process of this machine runs. Of several concurrent
/// takers exactly one wins: each new number is created once, by a hard link.
pub fn take(
    base: &Path,
    me: &Holder,
    now: impl Fn() -> u128,
    alive: impl Fn(u32) -> bool,
) -> Result<(u64, Option<Holder>), LeaseError> {
    let io = |source| LeaseError::Io {
        path: base.to_path_buf(),
        source,
    };
    let dir = base.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io)?;
    loop {
        let (next, previous) = match newest(base) {
            None => (1, None),
            Some((n, path)) => {
                let holder = match std::fs::read_to_string(&path) {
                    Ok(text) => Holder::parse(&text),
                    // Replaced since it was listed: look again.
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                    Err(e) => return Err(io(e)),
                };
                if let Some(h) = &holder {
                    let dead_here = h.host == me.host && !alive(h.pid);
                    if h.expires_ms > now() && !dead_here && !same_holder(h, me) {
                        return Err(LeaseError::Held(h.describe(now())));
                    }
                }
                (n + 1, holder)
            }
        };
        let mine = generation(base, next);
        // A temporary of this taker alone (threads of one process take leases too).
        static TAKES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let tmp = dir.join(format!(
            ".{}.tmp-{}-{}",
            mine.file_name().and_then(|n| n.to_str()).unwrap_or("lease"),
            std::process::id(),
            TAKES.fetch_add(1, Ordering::Relaxed)
        ));
        crate::rundir::write_atomic(&tmp, me.line().as_bytes())
            .map_err(|e| io(std::io::Error::other(e.to_string())))?;
        let linked = std::fs::hard_link(&tmp, &mine);
        let _ = std::fs::remove_file(&tmp);
        match linked {
            Ok(()) => {}
            // Another taker made this number first.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(io(e)),
        }
        // A number removed by a newer holder's clean-up can be made again by a slow taker:
        // only the highest number holds.
        if newest(base).map(|(n, _)| n) != Some(next) {
            let _ = std::fs::remove_file(&mine);
            continue;
        }
        for (n, old) in generations(base) {
            if n < next {
                let _ = std::fs::remove_file(old);
            }
        }
        return Ok((next, previous));
    }
}

/// Rewrite our lease number `n` with a later expiry; `false` when a newer lease replaced it.
/// A write that fails is said and tried again at the next renewal (the lease stays ours
/// until it expires).
fn renew(base: &Path, n: u64, renewed: &Holder) -> bool {
    if newest(base).map(|(m, _)| m) != Some(n) {
        return false;
    }
    if let Err(e) = crate::rundir::write_atomic(&generation(base, n), renewed.line().as_bytes()) {
        tracing::warn!("cannot renew the lease: {e}");
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("lifeline-zero-lease-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d.join("train.lease")
    }

    fn holder(pid: u32, host: &str, expires_ms: u128) -> Holder {
        Holder {
            pid,
            host: host.into(),
            expires_ms,
        }
    }

    #[test]
    fn a_live_lease_of_another_machine_is_refused_with_the_holder_named() {
        let base = temp("live");
        let now = 1_000_000u128;
        std::fs::write(
            generation(&base, 3),
            holder(42, "node-7", now + 30_000).line(),
        )
        .unwrap();
        let e = take(&base, &holder(1, "here", now + 60_000), || now, |_| true).unwrap_err();
        assert!(
            e.to_string()
                .contains("pid 42 on node-7, lease for another 30 s"),
            "{e}"
        );
        // The holder's lease is untouched.
        assert_eq!(holder_of(&base), Some(holder(42, "node-7", now + 30_000)));
    }

    fn holder_of(base: &Path) -> Option<Holder> {
        super::holder(base)
    }

    #[test]
    fn an_expired_lease_or_a_dead_local_holder_is_taken_over() {
        let base = temp("stale");
        let now = 1_000_000u128;
        let me = holder(1, "here", now + 60_000);
        // Expired on another machine.
        std::fs::write(generation(&base, 1), holder(42, "node-7", now - 1).line()).unwrap();
        let (n, previous) = take(&base, &me, || now, |_| true).unwrap();
        assert_eq!((n, previous), (2, Some(holder(42, "node-7", now - 1))));
        assert_eq!(holder_of(&base), Some(me.clone()));
        assert_eq!(generations(&base).len(), 1, "the stale lease is removed");
        // Unexpired, but its process on this machine is gone.
        std::fs::write(
            generation(&base, 3),
            holder(43, "here", now + 30_000).line(),
        )
        .unwrap();
        let (n, previous) = take(&base, &me, || now, |pid| pid != 43).unwrap();
        assert_eq!((n, previous.map(|h| h.pid)), (4, Some(43)));
        // An unreadable line (its writer died) is stale too.
        std::fs::write(generation(&base, 5), "44 no").unwrap();
        assert_eq!(take(&base, &me, || now, |_| true).unwrap(), (6, None));
        assert_eq!(holder_of(&base), Some(me));
    }

    #[test]
    fn of_many_takers_of_a_stale_lease_exactly_one_wins() {
        let base = temp("race");
        let now = 1_000_000u128;
        for round in 0..50 {
            for (_, old) in generations(&base) {
                std::fs::remove_file(old).unwrap();
            }
            std::fs::write(generation(&base, 1), holder(42, "node-7", now - 1).line()).unwrap();
            let barrier = std::sync::Barrier::new(8);
            let winners: Vec<u32> = std::thread::scope(|s| {
                let takers: Vec<_> = (0..8u32)
                    .map(|i| {
                        let (base, barrier) = (&base, &barrier);
                        s.spawn(move || {
                            barrier.wait();
                            let me = holder(100 + i, &format!("node-{i}"), now + 60_000);
                            take(base, &me, || now, |_| true).is_ok().then_some(100 + i)
                        })
                    })
                    .collect();
                takers
                    .into_iter()
                    .filter_map(|t| t.join().unwrap())
                    .collect()
            });
            assert_eq!(winners.len(), 1, "round {round}: {winners:?}");
            assert_eq!(holder_of(&base).map(|h| h.pid), Some(winners[0]));
        }
    }

    #[test]
    fn a_held_lease_is_renewed_and_removed_when_dropped() {
        let base = temp("renew");
        let lease = Lease::take_for(&base, Duration::from_millis(300)).unwrap();
        let first = holder_of(&base).unwrap();
        std::thread::sleep(Duration::from_millis(700));
        let later = holder_of(&base).unwrap();
        assert!(later.expires_ms > first.expires_ms, "{first:?} {later:?}");
        assert!(
            later.expires_ms > now_ms(),
            "still valid after twice its duration"
        );
        assert!(!lease.lost());
        // Taken over behind its back (it stalled past expiry): it notices and stops renewing.
        let (mine, _) = newest(&base).unwrap();
        std::fs::write(
            generation(&base, mine + 1),
            holder(42, "node-7", now_ms() + 60_000).line(),
        )
        .unwrap();
        std::thread::sleep(Duration::from_millis(300));
        assert!(lease.lost());
        drop(lease);
        assert_eq!(
            holder_of(&base).map(|h| h.pid),
            Some(42),
            "the new holder's lease stays"
        );
        for (_, old) in generations(&base) {
            std::fs::remove_file(old).unwrap();
        }
        let lease = Lease::take_for(&base, Duration::from_millis(300)).unwrap();
        drop(lease);
        assert!(generations(&base).is_empty(), "a released lease is removed");
    }
}
