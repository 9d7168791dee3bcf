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
//!
//! The number is the lease's **epoch**, its fencing token: it grows every time the role changes
//! hands, and what a holder writes that others act on carries it (a checkpoint's `epoch`), so
//! that a reader keeps the newest epoch's writes and a holder that meets a newer epoch stops.
//! Removing the lease files (by hand, a cleanup script, a bucket's lifecycle rule) must not
//! hand an old number out again: a taker starts above `floor`, the highest epoch the run's own
//! records hold ([`crate::RunDir::lock`] reads it from the checkpoints for `train`, from the
//! best pointer for `gate`).

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

/// Where the numbered files of one lease live: a directory ([`DirLease`], local or on a
/// shared filesystem) or an object store (`crate::store`). The one guarantee a lease needs
/// from its storage: of several concurrent creators of one number, exactly one succeeds.
pub trait LeaseFiles: Send + Sync + std::fmt::Debug {
    /// The numbers present, lowest first.
    fn numbers(&self) -> std::io::Result<Vec<u64>>;
    /// The text of number `n`; `None` when it is gone.
    fn read(&self, n: u64) -> std::io::Result<Option<String>>;
    /// Create number `n` holding `text`; `Ok(false)` when it already exists.
    fn create(&self, n: u64, text: &str) -> std::io::Result<bool>;
    /// Rewrite number `n` (the caller's own) with `text`.
    fn replace(&self, n: u64, text: &str) -> std::io::Result<()>;
    /// Remove number `n` if it is there.
    fn remove(&self, n: u64);
    /// Where the lease lives, for messages (`RUN/locks/train.lease`).
    fn location(&self) -> PathBuf;
}

/// A lease's numbered files in a directory: `BASE.N` beside `BASE`.
#[derive(Clone, Debug)]
pub struct DirLease {
    base: PathBuf,
}

impl DirLease {
    pub fn new(base: impl Into<PathBuf>) -> DirLease {
        DirLease { base: base.into() }
    }

    fn generation(&self, n: u64) -> PathBuf {
        let mut name = self.base.as_os_str().to_owned();
        name.push(format!(".{n}"));
        PathBuf::from(name)
    }
}

impl LeaseFiles for DirLease {
    fn numbers(&self) -> std::io::Result<Vec<u64>> {
        let (Some(dir), Some(stem)) = (
            self.base.parent(),
            self.base.file_name().and_then(|n| n.to_str()),
        ) else {
            return Ok(Vec::new());
        };
        let prefix = format!("{stem}.");
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let mut out: Vec<u64> = entries
            .filter_map(|e| {
                let name = e.ok()?.file_name().into_string().ok()?;
                name.strip_prefix(&prefix)?.parse().ok()
            })
            .collect();
        out.sort();
        Ok(out)
    }

    fn read(&self, n: u64) -> std::io::Result<Option<String>> {
        match std::fs::read_to_string(self.generation(n)) {
            Ok(text) => Ok(Some(text)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// A fully written temporary hard-linked to the name: `link` fails on an existing name,
    /// on NFS too, so exactly one creator wins.
    fn create(&self, n: u64, text: &str) -> std::io::Result<bool> {
        let mine = self.generation(n);
        let dir = mine.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        // A temporary of this creator alone (threads of one process take leases too).
        static TAKES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let tmp = dir.join(format!(
            ".{}.tmp-{}-{}",
            mine.file_name().and_then(|n| n.to_str()).unwrap_or("lease"),
            std::process::id(),
            TAKES.fetch_add(1, Ordering::Relaxed)
        ));
        crate::atomic::write_atomic(&tmp, text.as_bytes()).map_err(io_of)?;
        let linked = std::fs::hard_link(&tmp, &mine);
        let _ = std::fs::remove_file(&tmp);
        match linked {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
            Err(e) => Err(e),
        }
    }

    fn replace(&self, n: u64, text: &str) -> std::io::Result<()> {
        crate::atomic::write_atomic(&self.generation(n), text.as_bytes()).map_err(io_of)
    }

    fn remove(&self, n: u64) {
        let _ = std::fs::remove_file(self.generation(n));
    }

    fn location(&self) -> PathBuf {
        self.base.clone()
    }
}

/// A run-directory error as an I/O error of the same kind, its cause kept (a full disk must
/// read as one where the lease could not be taken).
fn io_of(e: crate::RunDirError) -> std::io::Error {
    let kind = match &e {
        crate::RunDirError::Io { source, .. } => source.kind(),
        _ => std::io::ErrorKind::Other,
    };
    std::io::Error::new(kind, e)
}

/// A lease held by this process, renewed on a thread of its own until it is dropped (which
/// removes the file).
#[derive(Debug)]
pub struct Lease {
    /// The lease's files, number, holder line and flags, as its writers check them.
    check: LeaseCheck,
    /// The holder this lease replaced (a process that ended without releasing it).
    pub previous: Option<Holder>,
    stop: Option<std::sync::mpsc::Sender<()>>,
    renewer: Option<std::thread::JoinHandle<()>>,
}

impl Lease {
    /// Take the lease whose numbered files are `files` for this process, for the configured
    /// duration (`LIFELINE_LEASE_SECONDS`, 60 s by default), its epoch above `floor`.
    pub fn take(files: Arc<dyn LeaseFiles>, floor: u64) -> Result<Lease, LeaseError> {
        Lease::take_for(files, duration(), floor)
    }

    /// The lease's epoch (its number): what this holder's writes carry.
    pub fn epoch(&self) -> u64 {
        self.check.number
    }

    /// [`Lease::take`] for `duration`, its epoch above `floor` (the highest epoch the run's
    /// records hold).
    pub fn take_for(
        files: Arc<dyn LeaseFiles>,
        duration: Duration,
        floor: u64,
    ) -> Result<Lease, LeaseError> {
        let me = Holder {
            pid: std::process::id(),
            host: crate::host::host_name(),
            expires_ms: now_ms() + duration.as_millis(),
        };
        let (number, previous) = take(&*files, &me, floor, now_ms, crate::host::process_alive)?;
        let lost = Arc::new(AtomicBool::new(false));
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let renewer = {
            let (files, me, lost) = (files.clone(), me.clone(), lost.clone());
            std::thread::spawn(move || {
                // Renew every third of the duration until the lease is dropped. A renewal
                // that cannot tell (the storage did not answer) keeps the lease until its
                // last written expiry: a connection blip is not a takeover.
                let mut held_until = me.expires_ms;
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                    stopped.recv_timeout(duration / 3)
                {
                    let renewed = Holder {
                        expires_ms: now_ms() + duration.as_millis(),
                        ..me.clone()
                    };
                    let location = files.location();
                    match renew(&*files, number, &renewed) {
                        Renewal::Renewed => held_until = renewed.expires_ms,
                        Renewal::Unknown(e) if now_ms() < held_until => tracing::warn!(
                            "{}: cannot renew the lease ({e}); trying again",
                            location.display()
                        ),
                        Renewal::Unknown(e) => {
                            lost.store(true, Ordering::Relaxed);
                            tracing::error!(
                                "{}: the lease expired before it could be renewed ({e})",
                                location.display()
                            );
                            return;
                        }
                        Renewal::TakenOver => {
                            lost.store(true, Ordering::Relaxed);
                            tracing::error!(
                                "{}: the lease was taken over by another holder",
                                location.display()
                            );
                            return;
                        }
                    }
                }
            })
        };
        Ok(Lease {
            check: LeaseCheck {
                files,
                number,
                me,
                duration,
                lost,
                released: Arc::new(AtomicBool::new(false)),
            },
            previous,
            stop: Some(stop),
            renewer: Some(renewer),
        })
    }

    /// Whether another holder took the lease over (this process stalled past its expiry).
    pub fn lost(&self) -> bool {
        self.check.lost()
    }

    /// Who holds the lease now (after [`Lease::lost`]: the holder that took it over).
    pub fn holder_now(&self) -> Option<Holder> {
        holder(&*self.check.files)
    }

    /// The check a writer makes before each write others act on (a bucket's mirror:
    /// [`crate::store::Bucket::fence_with`]); it shares the lease's flags.
    pub fn check(&self) -> LeaseCheck {
        self.check.clone()
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        let c = &self.check;
        c.released.store(true, Ordering::Relaxed);
        drop(self.stop.take());
        if let Some(t) = self.renewer.take() {
            let _ = t.join();
        }
        // Only our own lease is removed: a newer one belongs to its new holder, and so does
        // our number when it holds another's line (the file was removed from under us and
        // taken again; removing it would leave the role to nobody).
        if let Renewal::Renewed = still_ours(&*c.files, c.number, &c.me, false) {
            c.files.remove(c.number);
        }
    }
}

/// The lease duration: `LIFELINE_LEASE_SECONDS`, or 60 s.
fn duration() -> Duration {
    crate::host::env_seconds("LIFELINE_LEASE_SECONDS", DEFAULT_SECONDS)
}

/// This process's clock for leases, in milliseconds since the epoch (skewed by
/// `LIFELINE_CLOCK_SKEW_MS` in the fault suite).
pub fn now_ms() -> u128 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    now.saturating_add_signed(crate::inject::clock_skew_ms() as i128)
}

/// The holder of the lease in force in `files`.
pub fn holder(files: &dyn LeaseFiles) -> Option<Holder> {
    Holder::parse(&files.read(newest(files)?).ok()??)
}

/// Who holds the lease of `files` for another live process, described as a taker would be
/// refused ("pid 12 on host-a, lease for another 40 s"); `None` when [`Lease::take`] would
/// not refuse this process. A look without taking: a role whose run lives in a bucket asks
/// before it pulls the run, so that a refused start says so at once rather than after minutes
/// of pulling; the lease itself is taken once the pull is done.
pub fn held_by_another(files: &dyn LeaseFiles) -> Option<String> {
    let me = Holder {
        pid: std::process::id(),
        host: crate::host::host_name(),
        expires_ms: 0,
    };
    let h = holder(files)?;
    in_force(&h, &me, now_ms(), crate::host::process_alive).then(|| h.describe(now_ms()))
}

/// Whether `h`'s lease keeps taker `me` out: unexpired, not a dead process of `me`'s machine,
/// and not `me` itself.
fn in_force(h: &Holder, me: &Holder, now: u128, alive: impl Fn(u32) -> bool) -> bool {
    let dead_here = h.host == me.host && !alive(h.pid);
    h.expires_ms > now && !dead_here && !same_holder(h, me)
}

fn same_holder(a: &Holder, b: &Holder) -> bool {
    (a.pid, &a.host) == (b.pid, &b.host)
}

/// The lease in force: the highest number.
fn newest(files: &dyn LeaseFiles) -> Option<u64> {
    files.numbers().ok()?.pop()
}

/// Take the lease of `files` for `me`; returns the lease number (its epoch, above `floor`) and
/// the stale holder it replaced. `alive(pid)` says whether a process of this machine runs. Of
/// several concurrent takers exactly one wins: each new number is created once.
pub fn take(
    files: &dyn LeaseFiles,
    me: &Holder,
    floor: u64,
    now: impl Fn() -> u128,
    alive: impl Fn(u32) -> bool,
) -> Result<(u64, Option<Holder>), LeaseError> {
    let io = |source| LeaseError::Io {
        path: files.location(),
        source,
    };
    loop {
        let (next, previous) = match files.numbers().map_err(io)?.pop() {
            None => (floor + 1, None),
            Some(n) => {
                // Replaced since it was listed: look again.
                let Some(text) = files.read(n).map_err(io)? else {
                    continue;
                };
                let holder = Holder::parse(&text);
                if let Some(h) = holder.as_ref().filter(|h| in_force(h, me, now(), &alive)) {
                    return Err(LeaseError::Held(h.describe(now())));
                }
                (n.max(floor) + 1, holder)
            }
        };
        if !files.create(next, &me.line()).map_err(io)? {
            // Another taker made this number first.
            continue;
        }
        // A number removed by a newer holder's clean-up can be made again by a slow taker:
        // only the highest number holds.
        let numbers = files.numbers().map_err(io)?;
        if numbers.last() != Some(&next) {
            files.remove(next);
            continue;
        }
        for n in numbers.into_iter().filter(|n| *n < next) {
            files.remove(n);
        }
        return Ok((next, previous));
    }
}

/// What a renewal found.
enum Renewal {
    Renewed,
    /// A newer lease replaced ours.
    TakenOver,
    /// The storage did not answer (a listing or a write failed): tried again at the next
    /// renewal, the lease staying ours until its last written expiry.
    Unknown(std::io::Error),
}

/// Rewrite our lease number `n` with a later expiry. A failed listing or read says nothing
/// about a newer lease, and is not read as one. Number `n` must still be ours: a lease file
/// removed from under its holder (by hand, or by a bucket's lifecycle rule) and created again
/// by another taker holds that taker's line, and renewing over it would give the role to two
/// holders at once.
fn renew(files: &dyn LeaseFiles, n: u64, renewed: &Holder) -> Renewal {
    match still_ours(files, n, renewed, true) {
        Renewal::Renewed => {}
        other => return other,
    }
    match files.replace(n, &renewed.line()) {
        Ok(()) => Renewal::Renewed,
        Err(e) => Renewal::Unknown(e),
    }
}

/// Whether number `n` is still the lease in force and holds `me`'s line (`Renewed`: yes),
/// read from the storage now. With `remake`, a number removed from under its holder with
/// none above it (the lease object deleted by hand, a cleanup script, a lifecycle rule, and
/// no one has taken the role since) is made again: deleting the lease must not leave the role
/// to nobody. Making it is a create, which fails where a taker made it first. A number listed
/// but gone when read was removed in between: it is looked at again (read as a takeover, the
/// holder stopped for good while no one held the role: the fault suite's trainer, once).
fn still_ours(files: &dyn LeaseFiles, n: u64, me: &Holder, remake: bool) -> Renewal {
    for _ in 0..LOOKS {
        let numbers = match files.numbers() {
            Ok(numbers) => numbers,
            Err(e) => return Renewal::Unknown(e),
        };
        match numbers.last() {
            Some(&last) if last == n => {}
            Some(&last) if last > n => return Renewal::TakenOver,
            _ if remake => match files.create(n, &me.line()) {
                Ok(true) => {
                    tracing::warn!(
                        "{}: the lease was removed from under its holder, and no one took it: \
                         made again",
                        files.location().display()
                    );
                    return Renewal::Renewed;
                }
                Ok(false) => {}
                Err(e) => return Renewal::Unknown(e),
            },
            _ => return Renewal::TakenOver,
        }
        match files.read(n) {
            Ok(Some(text)) if Holder::parse(&text).is_some_and(|h| same_holder(&h, me)) => {
                return Renewal::Renewed
            }
            Ok(Some(_)) => return Renewal::TakenOver,
            Ok(None) if remake => continue,
            Ok(None) => return Renewal::TakenOver,
            Err(e) => return Renewal::Unknown(e),
        }
    }
    Renewal::Unknown(std::io::Error::other(
        "the lease was removed each time it was read",
    ))
}

/// How many times [`still_ours`] looks at a lease that vanishes as it is read.
const LOOKS: usize = 3;

/// What a holder asks before a write that others act on (a checkpoint, the best pointer): is
/// the lease still mine? Asked of the storage at that moment, so a takeover is seen before the
/// next write, not at the next renewal (a third of the lease later).
#[derive(Clone, Debug)]
pub struct LeaseCheck {
    files: Arc<dyn LeaseFiles>,
    number: u64,
    me: Holder,
    /// The lease's duration: the expiry a lease made again is given.
    duration: Duration,
    lost: Arc<AtomicBool>,
    /// Set when the lease was released (dropped): what the holder pushes after that, its
    /// mirror's last pass, it wrote while it held the lease.
    released: Arc<AtomicBool>,
}

impl LeaseCheck {
    /// Whether the lease was found lost, by this check or a renewal (no I/O).
    pub fn lost(&self) -> bool {
        self.lost.load(Ordering::Relaxed)
    }

    /// The lease's epoch.
    pub fn epoch(&self) -> u64 {
        self.number
    }

    /// Mark the lease lost for good: a write of a newer epoch was found (a checkpoint of the
    /// role's next holder), so whoever holds the lease files now, this holder's time is over.
    pub fn lose(&self) {
        if !self.lost.swap(true, Ordering::Relaxed) {
            tracing::error!(
                "{}: a newer holder's write was found (epoch above {}): this holder stops",
                self.files.location().display(),
                self.number
            );
        }
    }

    /// Whether the lease is still this holder's, read now. A takeover found sets the lease's
    /// lost flag for good; a storage that does not answer says nothing new (the renewals judge
    /// an outage by the lease's expiry).
    pub fn still_held(&self) -> bool {
        if self.lost() {
            return false;
        }
        if self.released.load(Ordering::Relaxed) {
            return true;
        }
        let me = Holder {
            expires_ms: now_ms() + self.duration.as_millis(),
            ..self.me.clone()
        };
        if let Renewal::TakenOver = still_ours(&*self.files, self.number, &me, true) {
            self.lost.store(true, Ordering::Relaxed);
            tracing::error!(
                "{}: the lease was taken over by another holder",
                self.files.location().display()
            );
            return false;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    fn temp(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("lifeline-zero-lease-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d.join("train.lease")
    }

    fn generation(base: &Path, n: u64) -> PathBuf {
        DirLease::new(base).generation(n)
    }

    fn generations(base: &Path) -> Vec<(u64, PathBuf)> {
        let files = DirLease::new(base);
        let numbers = files.numbers().unwrap();
        numbers
            .into_iter()
            .map(|n| (n, files.generation(n)))
            .collect()
    }

    fn take(
        base: &Path,
        me: &Holder,
        now: impl Fn() -> u128,
        alive: impl Fn(u32) -> bool,
    ) -> Result<(u64, Option<Holder>), LeaseError> {
        super::take(&DirLease::new(base), me, 0, now, alive)
    }

    fn holder(pid: u32, host: &str, expires_ms: u128) -> Holder {
        Holder {
            pid,
            host: host.into(),
            expires_ms,
        }
    }

    /// The look before pulling refuses what a take refuses and nothing else. Fails if a live
    /// holder elsewhere is let through (a refused start would pull the whole run first), or if
    /// an expired lease or this process's own is reported as held.
    #[test]
    fn a_look_without_taking_names_a_live_holder_only() {
        let base = temp("look");
        let files = DirLease::new(&base);
        assert_eq!(held_by_another(&files), None, "no lease at all");
        std::fs::write(
            generation(&base, 4),
            holder(42, "node-7", now_ms() + 30_000).line(),
        )
        .unwrap();
        let said = held_by_another(&files).expect("a live holder elsewhere");
        assert!(
            said.starts_with("pid 42 on node-7, lease for another"),
            "{said}"
        );
        std::fs::write(generation(&base, 4), holder(42, "node-7", 1).line()).unwrap();
        assert_eq!(held_by_another(&files), None, "an expired lease");
        let mine = holder(
            std::process::id(),
            &crate::host::host_name(),
            now_ms() + 30_000,
        );
        std::fs::write(generation(&base, 4), mine.line()).unwrap();
        assert_eq!(held_by_another(&files), None, "this process's own lease");
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
        super::holder(&DirLease::new(base))
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

    /// Lease files removed (by hand, a lifecycle rule) do not hand a number out again that the
    /// run's records hold: the next taker starts above the floor, and above the files' own
    /// numbers where those are higher. Fails if the floor is ignored: the next holder would
    /// write under an old epoch, and readers could not tell its checkpoints from the old
    /// holder's.
    #[test]
    fn a_removed_lease_is_taken_again_above_the_epoch_the_run_records() {
        let base = temp("floor");
        let now = 1_000_000u128;
        let files = DirLease::new(&base);
        let me = holder(1, "here", now + 60_000);
        let taken = super::take(&files, &me, 7, || now, |_| true).unwrap();
        assert_eq!(
            taken,
            (8, None),
            "no lease files: the next epoch after the floor"
        );
        // Removed from under its holder; the records now hold epoch 8.
        files.remove(8);
        let next = super::take(
            &files,
            &holder(2, "there", now + 60_000),
            8,
            || now,
            |_| true,
        );
        assert_eq!(next.unwrap().0, 9, "an epoch handed out twice");
        // Files above the floor (an expired holder of epoch 12): the files' number counts.
        std::fs::write(generation(&base, 12), holder(3, "x", now - 1).line()).unwrap();
        assert_eq!(super::take(&files, &me, 9, || now, |_| true).unwrap().0, 13);
    }

    /// A lease's files whose storage stops answering while `down` is set, and which lists
    /// number 5 once more after it is gone while `stale_listings` counts down (the lease
    /// object deleted between a holder's listing and its read).
    #[derive(Debug)]
    struct Flaky {
        files: DirLease,
        down: Arc<AtomicBool>,
        stale_listings: AtomicUsize,
    }

    impl LeaseFiles for Flaky {
        fn numbers(&self) -> std::io::Result<Vec<u64>> {
            if self.down.load(Ordering::SeqCst) {
                return Err(std::io::Error::other("connection reset"));
            }
            if self.stale_listings.load(Ordering::SeqCst) > 0 {
                self.stale_listings.fetch_sub(1, Ordering::SeqCst);
                return Ok(vec![5]);
            }
            self.files.numbers()
        }
        fn read(&self, n: u64) -> std::io::Result<Option<String>> {
            self.files.read(n)
        }
        fn create(&self, n: u64, text: &str) -> std::io::Result<bool> {
            self.files.create(n, text)
        }
        fn replace(&self, n: u64, text: &str) -> std::io::Result<()> {
            self.files.replace(n, text)
        }
        fn remove(&self, n: u64) {
            self.files.remove(n)
        }
        fn location(&self) -> PathBuf {
            self.files.location()
        }
    }

    #[test]
    fn a_storage_that_stops_answering_is_not_a_takeover_until_the_lease_expires() {
        let base = temp("blip");
        let down = Arc::new(AtomicBool::new(false));
        let files = Flaky {
            files: DirLease::new(&base),
            down: down.clone(),
            stale_listings: AtomicUsize::new(0),
        };
        // Renewed every 500 ms for 1.5 s: a blip must outlast a whole second to cost it.
        let lease = Lease::take_for(Arc::new(files), Duration::from_millis(1500), 0).unwrap();
        // A blip shorter than the lease: renewals fail, the lease is kept.
        down.store(true, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(450));
        assert!(!lease.lost(), "a failed listing was read as a newer lease");
        down.store(false, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(1100));
        assert!(!lease.lost());
        // An outage past the expiry: the lease is lost (another holder may have taken it).
        down.store(true, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(3500));
        assert!(lease.lost(), "kept past its expiry");
        drop(lease);
    }

    /// The lease file removed from under its holder (by hand, a cleanup script, a bucket's
    /// lifecycle rule) and taken again by a second process under the same number: the first
    /// loses the role, names the second as the holder now, and leaving does not remove the
    /// second's lease. Fails if the first renews over the second's line, or if its exit
    /// removes the lease the second holds (then both would stop).
    #[test]
    fn a_lease_removed_and_taken_again_goes_to_the_second_holder_alone() {
        let base = temp("removed");
        let first = Lease::take_for(
            Arc::new(DirLease::new(&base)),
            Duration::from_millis(300),
            0,
        )
        .unwrap();
        let number = newest(&DirLease::new(&base)).unwrap();
        // Removed and made again by the second under the same number, in one step (between a
        // removal and a take the first would make its lease again: see the next test).
        let second = holder(77, "node-7", now_ms() + 60_000);
        std::fs::write(generation(&base, number), second.line()).unwrap();
        let t0 = std::time::Instant::now();
        while !first.lost() && t0.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(first.lost(), "the first holder never saw the role taken");
        assert_eq!(first.holder_now().map(|h| h.pid), Some(77));
        drop(first);
        assert_eq!(
            holder_of(&base).map(|h| h.pid),
            Some(77),
            "the first holder's exit removed the second's lease"
        );
    }

    /// The lease file removed from under its holder, and no one takes the role: the holder
    /// makes it again (at its next renewal, or when its writer asks) and keeps the role, rather
    /// than leave the run with no holder at all. Fails if a missing lease is read as taken
    /// over (the holder would stop, and the run would have no trainer).
    #[test]
    fn a_lease_removed_with_no_one_taking_it_is_made_again_by_its_holder() {
        let base = temp("remade");
        let files = Arc::new(DirLease::new(&base));
        let lease = Lease::take_for(files.clone(), Duration::from_millis(300), 4).unwrap();
        assert_eq!(lease.epoch(), 5);
        std::fs::remove_file(generation(&base, 5)).unwrap();
        assert!(lease.check().still_held(), "a removed lease read as taken");
        assert_eq!(holder_of(&base).map(|h| h.pid), Some(std::process::id()));
        std::fs::remove_file(generation(&base, 5)).unwrap();
        std::thread::sleep(Duration::from_millis(400));
        assert!(!lease.lost(), "the renewal read a removed lease as taken");
        assert_eq!(newest(&*files), Some(5), "made again under its own epoch");
    }

    /// A lease deleted between the holder's listing and its read is made again, not read as
    /// taken over. Fails if the read that finds the listed number gone counts as a takeover:
    /// the holder would stop for good though no one holds the role (the fault suite's trainer
    /// did, deleting the lease objects one by one while its mirror and renewer both looked).
    #[test]
    fn a_lease_deleted_between_listing_and_reading_is_made_again() {
        let base = temp("vanishing");
        let files = Flaky {
            files: DirLease::new(&base),
            down: Arc::new(AtomicBool::new(false)),
            stale_listings: AtomicUsize::new(0),
        };
        let me = holder(std::process::id(), "here", u128::MAX);
        assert!(files.create(5, &me.line()).unwrap());
        files.remove(5);
        files.stale_listings.store(1, Ordering::SeqCst);
        assert!(
            matches!(still_ours(&files, 5, &me, true), Renewal::Renewed),
            "a lease deleted as it was read counted as taken over"
        );
        assert_eq!(files.files.numbers().unwrap(), vec![5], "not made again");
    }

    #[test]
    fn a_held_lease_is_renewed_and_removed_when_dropped() {
        let base = temp("renew");
        let lease = Lease::take_for(
            Arc::new(DirLease::new(&base)),
            Duration::from_millis(300),
            0,
        )
        .unwrap();
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
        let mine = newest(&DirLease::new(&base)).unwrap();
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
        let lease = Lease::take_for(
            Arc::new(DirLease::new(&base)),
            Duration::from_millis(300),
            0,
        )
        .unwrap();
        drop(lease);
        assert!(generations(&base).is_empty(), "a released lease is removed");
    }
}
