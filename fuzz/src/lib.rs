//! What the fuzz targets share: a scratch directory of this process for the parsers that read
//! files (a shard, a checkpoint, a run directory), and splitting one input into parts.

use std::path::{Path, PathBuf};

/// This process's scratch directory, made once (each libFuzzer worker is a process of its
/// own, so workers never share one).
pub fn scratch() -> &'static Path {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("lifeline-zero-fuzz-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("the scratch directory can be made");
        dir
    })
}

/// Write `bytes` to `rel` under the scratch directory (its folders made), returning the path.
pub fn put(rel: &str, bytes: &[u8]) -> PathBuf {
    let path = scratch().join(rel);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).expect("scratch folders can be made");
    }
    std::fs::write(&path, bytes).expect("scratch files can be written");
    path
}

/// Split `data` at the first line that is exactly `---`: (before, after); no such line: all of
/// it before and nothing after. Seeds are written by hand this way.
pub fn split_parts(data: &[u8]) -> (&[u8], &[u8]) {
    const SEP: &[u8] = b"\n---\n";
    match data.windows(SEP.len()).position(|w| w == SEP) {
        Some(i) => (&data[..i], &data[i + SEP.len()..]),
        None => (data, &[]),
    }
}
