//! The errors of a run directory.

use crate::role::Lock;
use std::io;
use std::path::{Path, PathBuf};

/// Errors of the run directory; each names the path, and I/O errors keep their cause.
#[derive(Debug, thiserror::Error)]
pub enum RunDirError {
    #[error("{}: cannot {action}", path.display())]
    Io {
        path: PathBuf,
        action: &'static str,
        #[source]
        source: io::Error,
    },
    #[error("{}: {why}", path.display())]
    Invalid { path: PathBuf, why: String },
    #[error(
        "{} is in use: its `{role}` role is held by {holder}; stop that process first, or use another run directory",
        run.display()
    )]
    Locked {
        run: PathBuf,
        role: Lock,
        holder: String,
    },
    #[error(
        "{}: format version {found} is newer than this build reads ({reads}); use a newer build",
        path.display()
    )]
    Format {
        path: PathBuf,
        found: u32,
        /// The newest version this build reads.
        reads: u32,
    },
}

pub(crate) fn io_error<'a>(
    path: &'a Path,
    action: &'static str,
) -> impl FnOnce(io::Error) -> RunDirError + 'a {
    move |source| RunDirError::Io {
        path: path.to_path_buf(),
        action,
        source,
    }
}
