//! The roles of a run.

/// The roles of a run that one process at a time may hold ([`crate::RunDir::lock`]): the trainer,
/// which writes checkpoints, and the gatekeeper, which moves the best pointer. Workers and
/// raters need no lock (their files are named after their host and pid).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    Train,
    Gate,
}

impl Role {
    pub const ALL: [Role; 2] = [Role::Train, Role::Gate];

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
impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Role::Train => "train",
            Role::Gate => "gate",
        })
    }
}

/// A role by the name of its lock files (`train`, `gate`).
impl std::str::FromStr for Role {
    type Err = String;
    fn from_str(s: &str) -> Result<Role, String> {
        Role::ALL
            .into_iter()
            .find(|r| r.to_string() == s)
            .ok_or_else(|| format!("no role {s:?} (roles: train, gate)"))
    }
}
