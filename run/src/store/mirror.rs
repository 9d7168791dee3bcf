//! A mirror kept in step on a thread of its own while its role works, and a last pass when
//! the role finishes.

use super::{Bucket, Pulls, StoreError, Syncer};
use std::fs::File;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A [`Syncer`] run every few seconds on a thread of its own, and once more at the end.
pub struct Mirror {
    root: PathBuf,
    bucket: Arc<Bucket>,
    sync: Arc<Mutex<Syncer>>,
    stop: Option<std::sync::mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// Holds the mirror directory's slot for this process.
    slot: Option<File>,
}

impl std::fmt::Debug for Mirror {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Mirror({})", self.root.display())
    }
}

impl Mirror {
    /// Mirror `bucket` in `root`: one pass now, then one `every` so often on a thread of its
    /// own. The roles of the run take their leases in the bucket
    /// ([`crate::rundir::RunDir::mirrored`]).
    pub fn start(
        bucket: Arc<Bucket>,
        root: PathBuf,
        pulls: Pulls,
        every: Duration,
    ) -> Result<Mirror, StoreError> {
        let mut sync = Syncer::new(bucket.clone(), root.clone(), pulls);
        let first = sync.pass()?;
        tracing::info!(
            "{} mirrored in {} ({} files pulled)",
            bucket.url(),
            root.display(),
            first.pulled
        );
        let sync = Arc::new(Mutex::new(sync));
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let thread = {
            let sync = sync.clone();
            std::thread::spawn(move || {
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                    stopped.recv_timeout(every)
                {
                    let Ok(mut s) = sync.lock() else { return };
                    // A failed pass is said and tried again: the files stay here meanwhile.
                    if let Err(e) = s.pass() {
                        tracing::warn!("mirror of the run: {e}");
                    }
                }
            })
        };
        Ok(Mirror {
            root,
            bucket,
            sync,
            stop: Some(stop),
            thread: Some(thread),
            slot: None,
        })
    }

    /// Stop the passes and make a last one, so that everything written is in the bucket
    /// (once: a mirror already halted has nothing more to do).
    fn last_pass(&mut self) -> Result<(), StoreError> {
        let Some(thread) = self.thread.take() else {
            return Ok(());
        };
        drop(self.stop.take());
        let _ = thread.join();
        let mut sync = self.sync.lock().unwrap_or_else(|e| e.into_inner());
        let moved = sync.pass()?;
        tracing::info!(
            "{}: {} files pushed at the end",
            self.root.display(),
            moved.pushed
        );
        Ok(())
    }

    /// One pass now, beside the mirror's own (they take turns).
    pub fn pass_now(&self) -> Result<(), StoreError> {
        let mut sync = self.sync.lock().unwrap_or_else(|e| e.into_inner());
        sync.pass().map(|_| ())
    }

    /// Stop the passes and make a last one (see `Mirror::last_pass`).
    pub fn finish(mut self) -> Result<(), StoreError> {
        self.last_pass()
    }

    /// Hold the mirror directory's slot (its lock file) as long as the mirror lives.
    pub(crate) fn hold_slot(&mut self, slot: File) {
        self.slot = Some(slot);
    }

    /// The bucket it mirrors.
    pub fn bucket(&self) -> &Arc<Bucket> {
        &self.bucket
    }
}

impl Drop for Mirror {
    fn drop(&mut self) {
        if let Err(e) = self.last_pass() {
            tracing::error!("the last pass of the mirror failed: {e}");
        }
    }
}
