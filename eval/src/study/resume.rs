//! The finished pieces of a long study, kept so that a study stopped part-way (a signal, a
//! crash, a machine gone) starts again where it stopped: the atlas's studies run for hours.
//!
//! A piece (the best opening of one game by one player) is written atomically to the study's
//! `OUT/.resume/` as soon as it is done, under a key of everything that decides it: the game,
//! the player, its weights' checksum and its search, the study's options and seed, and this
//! crate's version. Run the same command again into the same OUT and the pieces already there
//! are read back instead of played; a piece whose key differs (another option, another search,
//! another build) is played again. The folder is removed once the study has written its files.

use crate::error::EvalError;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The folder of a study's pieces inside its output folder.
pub fn pieces_dir(out: &Path) -> PathBuf {
    out.join(".resume")
}

#[derive(Serialize, Deserialize)]
struct Piece<T> {
    key: serde_json::Value,
    value: T,
}

/// The value of `key` kept in `dir`, or `work`'s, then kept there. Without a folder, `work`.
pub fn remembered<T, K>(
    dir: Option<&Path>,
    key: &K,
    work: impl FnOnce() -> Result<T, EvalError>,
) -> Result<T, EvalError>
where
    T: Serialize + DeserializeOwned,
    K: Serialize,
{
    let Some(dir) = dir else { return work() };
    let key = serde_json::json!({ "version": env!("CARGO_PKG_VERSION"), "piece": key });
    let text = key.to_string();
    let path = dir.join(format!(
        "{:016x}.json",
        net::model::fnv1a64(text.as_bytes())
    ));
    // A piece from another key (a hash collision, another build) or a damaged file is played
    // again and replaced.
    let kept = std::fs::read(&path)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<Piece<T>>(&bytes).ok())
        .filter(|p| p.key == key);
    if let Some(piece) = kept {
        return Ok(piece.value);
    }
    let value = work()?;
    let piece = Piece { key, value };
    let json = serde_json::to_vec(&piece).map_err(|source| EvalError::Json {
        path: path.clone(),
        source,
    })?;
    run::write_atomic(&path, &json)?;
    Ok(piece.value)
}

/// Remove a finished study's pieces.
pub fn forget(out: &Path) {
    let _ = std::fs::remove_dir_all(pieces_dir(out));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_piece_is_read_back_and_another_key_is_played_again() {
        let dir = std::env::temp_dir().join(format!("eval-resume-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let first = remembered(Some(&dir), &("komi", 3), || Ok(vec![0.5, 0.25])).unwrap();
        assert_eq!(first, [0.5, 0.25]);
        // The same key: read back, the work not done again.
        let again: Vec<f64> = remembered(Some(&dir), &("komi", 3), || {
            panic!("a kept piece was played again")
        })
        .unwrap();
        assert_eq!(again, first);
        // Another key: played.
        let other = remembered(Some(&dir), &("komi", 4), || Ok(vec![1.0])).unwrap();
        assert_eq!(other, [1.0]);
        // A damaged piece is played again and replaced.
        for entry in std::fs::read_dir(&dir).unwrap() {
            std::fs::write(entry.unwrap().path(), b"{ half").unwrap();
        }
        let replayed = remembered(Some(&dir), &("komi", 3), || Ok(vec![0.75])).unwrap();
        assert_eq!(replayed, [0.75]);
        // An error keeps nothing.
        let failed: Result<Vec<f64>, _> =
            remembered(Some(&dir), &("komi", 5), || Err(EvalError::Interrupted));
        assert!(failed.is_err());
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
