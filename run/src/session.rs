//! One door for every role. Opening a run for a role does, once and always in this order, what
//! each binary used to put together by hand, each slightly differently:
//!
//! 1. the stop handler: a signal ends the role after the write in progress ([`crate::stop`]);
//! 2. the role's log, for the roles that run unattended ([`Role::log`]);
//! 3. the config, read once: every layer parses its tables from this one text, and what is
//!    frozen in the run (or compared with it) is this same text;
//! 4. the location: a directory as it is, or a bucket through a mirror of what the role needs
//!    ([`Role::pulls`]), a role held by another process refused before the pull;
//! 5. [`Opening::enter`]: the role's locks ([`Role::locks`]), the config frozen or compared
//!    ([`Role::freezes_config`]), the run tidied; a role that took a lock brings its mirror in
//!    step once more, so that it goes on from what the bucket holds once no one else may write
//!    there.
//!
//! Between 4 and 5 the caller parses its tables from [`Opening::text`] and checks what must be
//! checked before the run is entered: a config that does not parse, or a network that cannot
//! play the config's game, is refused without freezing anything into a run that has no config.

use crate::location::{OpenRun, RunLocation};
use crate::role::Role;
use crate::rundir::{RoleLock, RunDir};
use crate::stop::Stop;
use crate::store::StoreError;
use crate::RunDirError;
use std::path::{Path, PathBuf};

/// Why a run could not be opened for a role.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("cannot read the config {}: {source}", path.display())]
    Config {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Run(#[from] RunDirError),
}

/// A run opened for a role, not yet entered: the config's text read and the location open (a
/// bucket's mirror in step), no lock taken and nothing written into the run.
pub struct Opening {
    role: Role,
    config: PathBuf,
    text: String,
    open: OpenRun,
    log: Option<tracing::span::EnteredSpan>,
}

impl RunLocation {
    /// Open this run for `role` with the config file `config`: steps 1 to 4 of the door.
    pub fn open_role(&self, role: Role, config: &Path) -> Result<Opening, SessionError> {
        crate::stop::install_stop_handler();
        let log = role.log().map(crate::logging::init);
        let text = std::fs::read_to_string(config).map_err(|source| SessionError::Config {
            path: config.to_path_buf(),
            source,
        })?;
        let open = self.open(role.pulls(), role.locks())?;
        Ok(Opening {
            role,
            config: config.to_path_buf(),
            text,
            open,
            log,
        })
    }
}

impl Opening {
    /// The config's text, read once: what the caller parses its tables from.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The config file it was read from (what messages name).
    pub fn config(&self) -> &Path {
        &self.config
    }

    /// The run, to look at before entering it (its newest checkpoint, its frozen config).
    pub fn run(&self) -> RunDir {
        self.open.run_dir()
    }

    /// `result` with the bucket's objects named rather than this machine's mirror of them
    /// ([`OpenRun::name_objects`]).
    pub fn name_objects<T>(&self, result: anyhow::Result<T>) -> anyhow::Result<T> {
        self.open.name_objects(result)
    }

    /// Step 5 of the door: the role's locks taken, the config frozen or compared, the run
    /// tidied, and the mirror brought in step once more when a lock was taken. An error names
    /// the bucket's objects, not the mirror's files; it is a [`SessionError`] underneath.
    pub fn enter(self) -> anyhow::Result<Session> {
        let run = self.open.run_dir();
        let entered = (|| {
            let locks = match self.role.freezes_config() {
                true => run.enter(self.role.locks(), &self.config, &self.text)?,
                false => Vec::new(),
            };
            if !locks.is_empty() {
                self.open.sync()?;
            }
            Ok::<_, SessionError>(locks)
        })();
        let locks = self
            .open
            .name_objects(entered.map_err(anyhow::Error::from))?;
        Ok(Session {
            role: self.role,
            config: self.config,
            text: self.text,
            run,
            locks,
            stop: Stop::on_signal(),
            open: self.open,
            _log: self.log,
        })
    }
}

/// A run entered by a role: its run directory, its locks for as long as the session lives,
/// the config's text, and the stop it heeds. [`Session::finish`] ends it.
pub struct Session {
    role: Role,
    config: PathBuf,
    text: String,
    run: RunDir,
    /// Dropped before `open` (fields drop in order): the locks are released before the
    /// mirror's last pass, as when each role let go of them itself.
    locks: Vec<RoleLock>,
    stop: Stop,
    open: OpenRun,
    _log: Option<tracing::span::EnteredSpan>,
}

impl Session {
    pub fn role(&self) -> Role {
        self.role
    }

    /// The run the role works on (for a bucket, its mirror, with the leases in the bucket).
    pub fn run(&self) -> &RunDir {
        &self.run
    }

    /// The config's text, as frozen in the run or compared with it.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The config file it was read from.
    pub fn config(&self) -> &Path {
        &self.config
    }

    /// The stop every long step of the role heeds (a signal, from [`crate::stop`]).
    pub fn stop(&self) -> &Stop {
        &self.stop
    }

    /// A lock of the role found taken over by another process (this one stalled past its
    /// lease, or its lease was removed): the role must stop and name the new holder.
    pub fn lost(&self) -> Option<&RoleLock> {
        self.locks.iter().find(|l| l.lost())
    }

    /// `result` with the bucket's objects named rather than this machine's mirror of them
    /// ([`OpenRun::name_objects`]).
    pub fn name_objects<T>(&self, result: anyhow::Result<T>) -> anyhow::Result<T> {
        self.open.name_objects(result)
    }

    /// End the role: its locks released, then the bucket brought in step with everything
    /// written and the mirror stopped.
    pub fn finish(self) -> Result<(), StoreError> {
        let Session { locks, open, .. } = self;
        drop(locks);
        open.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Lock;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "lifeline-zero-session-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// The door in its order: nothing is written into the run before `enter` (a config that
    /// does not parse is refused by the caller in between), `enter` freezes the text read once
    /// and takes the role's locks, and `finish` releases them. Fails if opening writes into the
    /// run, if the frozen text is not the one read, or if a second trainer is let in.
    #[test]
    fn a_role_enters_through_one_door_in_order() {
        let d = scratch("door");
        let config = d.join("run.toml");
        std::fs::write(&config, "game = \"lifeline\"\n").unwrap();
        let location = RunLocation::Dir(d.join("run"));
        let opening = location.open_role(Role::Trainer, &config).unwrap();
        assert_eq!(opening.text(), "game = \"lifeline\"\n");
        assert!(!d.join("run").exists(), "opening wrote into the run");
        // The file changed after it was read: the text read once is the one frozen.
        std::fs::write(&config, "game = \"leblin\"\n").unwrap();
        let session = opening.enter().unwrap();
        let frozen = std::fs::read_to_string(session.run().config()).unwrap();
        assert_eq!(frozen, "game = \"lifeline\"\n");
        assert_eq!(session.run().epoch(Lock::Train), Some(1));
        let second = location.open_role(Role::Fit, &config).unwrap().enter();
        let refused = second.err().expect("a second holder of `train` was let in");
        assert!(
            matches!(
                refused.downcast_ref::<SessionError>(),
                Some(SessionError::Run(RunDirError::Locked { .. }))
            ),
            "{refused}"
        );
        session.finish().unwrap();
        // Released: the next trainer enters (and finds the config it froze compared).
        std::fs::write(&config, "game = \"lifeline\"\n").unwrap();
        let again = location.open_role(Role::Trainer, &config).unwrap();
        again.enter().unwrap().finish().unwrap();
        let _ = std::fs::remove_dir_all(&d);
    }

    /// A config that cannot be read is one clear error naming the file, before anything else.
    #[test]
    fn a_missing_config_is_named() {
        let d = scratch("missing");
        let location = RunLocation::Dir(d.join("run"));
        let Err(e) = location.open_role(Role::Worker, &d.join("nope.toml")) else {
            panic!("a missing config was read");
        };
        assert!(e.to_string().contains("nope.toml"), "{e}");
        assert!(!d.join("run").exists());
        let _ = std::fs::remove_dir_all(&d);
    }
}
