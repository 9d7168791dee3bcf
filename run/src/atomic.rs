//! Atomic writes: every file of a run is written under a temporary name beside it (carrying the
//! writer's pid, [`temporary_name`]), fsynced, renamed into place and its directory fsynced, so
//! a reader never sees half a file and a kill loses only the file being written. Appends of
//! whole lines ([`append_line`]) are one write each.

use crate::error::{io_error, RunDirError};
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The temporary name a writer uses for `path`: `.NAME.tmp-PID` beside it.
pub fn temporary_name(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.tmp-{}", std::process::id()))
}

/// The pid of a temporary name, if `name` is one (`.NAME.tmp-PID`, or `.NAME.tmp-PID-N` for
/// the lease's temporaries, several of one process).
pub fn temporary_owner(name: &str) -> Option<u32> {
    let (head, owner) = name.rsplit_once(".tmp-")?;
    (head.starts_with('.')).then_some(())?;
    owner.split('-').next()?.parse().ok()
}

/// fsync a directory, so that a rename inside it survives a power cut.
fn sync_dir(dir: &Path) -> Result<(), RunDirError> {
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io_error(dir, "sync the directory"))
}

pub(crate) fn parent_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Write a file atomically: `fill` writes into a temporary file beside `path`, which is then
/// fsynced, renamed over `path`, and the directory fsynced. On any error the temporary file
/// is removed and `path` is untouched.
pub fn write_atomic_with(
    path: &Path,
    fill: impl FnOnce(&mut io::BufWriter<File>) -> io::Result<()>,
) -> Result<(), RunDirError> {
    let dir = parent_of(path);
    std::fs::create_dir_all(dir).map_err(io_error(dir, "create the directory"))?;
    let tmp = temporary_name(path);
    let written = (|| {
        crate::inject::disk_space()?;
        let mut out = io::BufWriter::new(File::create(&tmp)?);
        fill(&mut out)?;
        out.into_inner().map_err(|e| e.into_error())?.sync_all()
    })();
    if let Err(source) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(RunDirError::Io {
            path: path.to_path_buf(),
            action: "write",
            source,
        });
    }
    crate::stop::interruption_point();
    if let Err(source) = std::fs::rename(&tmp, path) {
        let _ = std::fs::remove_file(&tmp);
        return Err(RunDirError::Io {
            path: path.to_path_buf(),
            action: "rename into place",
            source,
        });
    }
    sync_dir(dir)
}

/// [`write_atomic_with`] for bytes already in memory.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), RunDirError> {
    write_atomic_with(path, |out| out.write_all(bytes))
}

/// Write a directory atomically: `fill` writes its files into a temporary sibling, whose files
/// are fsynced before it is renamed over `dir` (a checkpoint is never seen half written).
pub fn write_dir_atomic<E: From<RunDirError>>(
    dir: &Path,
    fill: impl FnOnce(&Path) -> Result<(), E>,
) -> Result<(), E> {
    let parent = parent_of(dir);
    std::fs::create_dir_all(parent).map_err(io_error(parent, "create the directory"))?;
    let tmp = temporary_name(dir);
    let _ = std::fs::remove_dir_all(&tmp);
    crate::inject::disk_space()
        .and_then(|()| std::fs::create_dir_all(&tmp))
        .map_err(io_error(&tmp, "create the directory"))?;
    if let Err(e) = fill(&tmp).and_then(|()| sync_files(&tmp).map_err(E::from)) {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e);
    }
    crate::stop::interruption_point();
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(io_error(dir, "replace the directory"))?;
    }
    std::fs::rename(&tmp, dir).map_err(io_error(dir, "rename into place"))?;
    Ok(sync_dir(parent)?)
}

fn sync_files(dir: &Path) -> Result<(), RunDirError> {
    for entry in std::fs::read_dir(dir).map_err(io_error(dir, "list the directory"))? {
        let p = entry.map_err(io_error(dir, "list the directory"))?.path();
        File::open(&p)
            .and_then(|f| f.sync_all())
            .map_err(io_error(&p, "sync the file"))?;
    }
    sync_dir(dir)
}

/// Append one line to `path` (its directory made if missing) with a single write (O_APPEND),
/// then fsync: concurrent writers never interleave inside a line and a crash loses at most
/// this line.
pub fn append_line(path: &Path, line: &str) -> Result<(), RunDirError> {
    let dir = parent_of(path);
    std::fs::create_dir_all(dir).map_err(io_error(dir, "create the directory"))?;
    let mut buf = line.trim_end().to_string();
    buf.push('\n');
    crate::inject::disk_space()
        .and_then(|()| {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
        })
        .and_then(|mut f| {
            f.write_all(buf.as_bytes())?;
            f.sync_all()
        })
        .map_err(io_error(path, "append to"))
}

/// Create `dir` and check that a file can be written in it (before work whose results would
/// go there).
pub fn check_writable(dir: &Path) -> Result<(), RunDirError> {
    let probe = dir.join(".write-probe");
    write_atomic(&probe, b"")?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}
