//! The roles of a run ([`Role`]: every process that works on a run is one), and the locks that
//! one process at a time may hold ([`Lock`]).

use crate::store::Pulls;

/// Every role a process takes on a run, with what opening the run for it takes
/// ([`crate::RunLocation::open_role`]): its locks, its log, what its mirror pulls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// `selfplay worker`: batches of games with the run's best network.
    Worker,
    /// `selfplay run`: one batch with a network it is given.
    SelfPlayRun,
    /// `train trainer`: fit rounds as the data allows.
    Trainer,
    /// `train fit`: one fit to a step.
    Fit,
    /// `train loop`: self-play, training, gating and rating in one process.
    Loop,
    /// `eval gatekeeper`: gates the newest checkpoint and moves the best pointer.
    Gatekeeper,
    /// `eval rate`: rates checkpoints against the baselines.
    Rater,
}

impl Role {
    /// The locks it holds: the trainer's and the fit's `train`, the gatekeeper's `gate`, both
    /// for the loop; workers and raters hold none (their files are named after host and pid).
    pub fn locks(self) -> &'static [Lock] {
        match self {
            Role::Trainer | Role::Fit => &[Lock::Train],
            Role::Gatekeeper => &[Lock::Gate],
            Role::Loop => &[Lock::Train, Lock::Gate],
            Role::Worker | Role::SelfPlayRun | Role::Rater => &[],
        }
    }

    /// The name its log lines carry ([`crate::logging`]), for the roles that run unattended
    /// and side by side; `None` for the ones a person watches, whose progress bars the log
    /// lines of their threads would break up.
    pub fn log(self) -> Option<&'static str> {
        match self {
            Role::Worker => Some("worker"),
            Role::Trainer => Some("trainer"),
            Role::Gatekeeper => Some("gatekeeper"),
            Role::Rater => Some("rater"),
            Role::SelfPlayRun | Role::Fit | Role::Loop => None,
        }
    }

    /// Whether entering the run freezes the config in it, or compares it with the frozen one:
    /// every role but the rater, whose matches are keyed by their players, visits and seed, so
    /// that a rater with other baselines or more games adds results and mixes none. The rater
    /// checks only that its config plays the run's game (its caller does: a run knows nothing
    /// of games), and takes no lock.
    pub fn freezes_config(self) -> bool {
        self != Role::Rater
    }

    /// What its mirror pulls from a bucket: a worker needs the config and the best network,
    /// every other role the whole run.
    pub fn pulls(self) -> Pulls {
        match self {
            Role::Worker => Pulls::Models,
            _ => Pulls::Everything,
        }
    }
}

/// The locks of a run that one process at a time may hold ([`crate::RunDir::lock`]): the
/// trainer's, which writes checkpoints, and the gatekeeper's, which moves the best pointer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lock {
    Train,
    Gate,
}

impl Lock {
    pub const ALL: [Lock; 2] = [Lock::Train, Lock::Gate];

    /// The role's lock file in a run: `locks/ROLE.lock`.
    pub(crate) fn lock_key(self) -> String {
        format!("locks/{self}.lock")
    }

    /// The role's lease beside its lock file: `locks/ROLE.lease` (its numbered files are
    /// `ROLE.lease.N`), a key under a bucket run's prefix as a path under a directory's root.
    pub(crate) fn lease_key(self) -> String {
        format!("locks/{self}.lease")
    }
}

/// `train`, `gate`: the name of the role's lock and lease files.
impl std::fmt::Display for Lock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Lock::Train => "train",
            Lock::Gate => "gate",
        })
    }
}

/// A role by the name of its lock files (`train`, `gate`).
impl std::str::FromStr for Lock {
    type Err = String;
    fn from_str(s: &str) -> Result<Lock, String> {
        Lock::ALL
            .into_iter()
            .find(|r| r.to_string() == s)
            .ok_or_else(|| format!("no role {s:?} (roles: train, gate)"))
    }
}
