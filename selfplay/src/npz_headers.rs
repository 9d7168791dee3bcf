//! The shapes an `.npz` archive's arrays declare, read from their npy headers without their
//! data. A header may declare any shape, and reading an array allocates what it declares first:
//! a shard whose header says (10^11, 1) made every trainer that met it abort on a 400 GB
//! allocation. So a shard's arrays are checked here, against the file and its metadata,
//! before one of them is read.

use std::collections::HashMap;
use std::io::{Read, Seek};

/// Longest npy header read (numpy writes 128 bytes or a few more).
const MAX_HEADER: usize = 64 * 1024;

/// Every array of the archive `file` (of `file_len` bytes: a file, or an object read by
/// ranges) by name (without `.npy`) with the shape its header declares. Each array's declared
/// data must fit inside its member, and each member inside the file (so a stored member;
/// compressed ones are not shards'), so that reading any of them allocates at most the file's
/// size.
pub fn declared_shapes(
    file: impl Read + Seek,
    file_len: u64,
) -> Result<HashMap<String, Vec<usize>>, String> {
    let mut zip = zip::ZipArchive::new(file).map_err(|e| format!("not an npz archive: {e}"))?;
    let mut shapes = HashMap::new();
    for i in 0..zip.len() {
        let mut member = zip.by_index(i).map_err(|e| e.to_string())?;
        let name = member.name().trim_end_matches(".npy").to_string();
        let size = member.size();
        if size > file_len {
            return Err(format!(
                "array {name} declares {size} bytes in a file of {file_len}"
            ));
        }
        let (shape, item_bytes) =
            npy_header(&mut member).map_err(|e| format!("array {name}: {e}"))?;
        let data = shape
            .iter()
            .try_fold(item_bytes as u64, |bytes, &d| bytes.checked_mul(d as u64));
        if data.is_none_or(|bytes| bytes > size) {
            return Err(format!(
                "array {name} declares shape {shape:?}, more than its {size} bytes hold"
            ));
        }
        shapes.insert(name, shape);
    }
    Ok(shapes)
}

/// The shape and item size of the npy array `r` starts with (format versions 1 to 3).
fn npy_header(r: &mut impl Read) -> Result<(Vec<usize>, usize), String> {
    let io = |e: std::io::Error| format!("npy header: {e}");
    let mut magic = [0u8; 8];
    r.read_exact(&mut magic).map_err(io)?;
    if &magic[..6] != b"\x93NUMPY" {
        return Err("not an npy array".into());
    }
    let len = match magic[6] {
        1 => {
            let mut b = [0u8; 2];
            r.read_exact(&mut b).map_err(io)?;
            u16::from_le_bytes(b) as usize
        }
        2 | 3 => {
            let mut b = [0u8; 4];
            r.read_exact(&mut b).map_err(io)?;
            u32::from_le_bytes(b) as usize
        }
        v => return Err(format!("npy format version {v}")),
    };
    if len > MAX_HEADER {
        return Err(format!("npy header of {len} bytes"));
    }
    let mut text = vec![0u8; len];
    r.read_exact(&mut text).map_err(io)?;
    parse_header(&String::from_utf8_lossy(&text))
}

/// `{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }` → `([3, 4], 4)`.
fn parse_header(text: &str) -> Result<(Vec<usize>, usize), String> {
    let after = |key: &str| {
        text.find(&format!("'{key}':"))
            .map(|i| text[i + key.len() + 3..].trim_start())
            .ok_or_else(|| format!("npy header without {key}: {text}"))
    };
    let descr = after("descr")?
        .strip_prefix('\'')
        .and_then(|d| d.split('\'').next())
        .ok_or_else(|| format!("npy header: bad descr in {text}"))?;
    let item_bytes = descr
        .trim_start_matches(|c: char| !c.is_ascii_digit())
        .parse::<usize>()
        .map_err(|_| format!("npy header: dtype `{descr}` has no item size"))?;
    let dims = after("shape")?
        .strip_prefix('(')
        .and_then(|s| s.split(')').next())
        .ok_or_else(|| format!("npy header: bad shape in {text}"))?;
    let shape = dims
        .split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| d.parse::<usize>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| format!("npy header: shape ({dims}) is not a list of sizes"))?;
    Ok((shape, item_bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_give_shape_and_item_size() {
        let h = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }";
        assert_eq!(parse_header(h).unwrap(), (vec![3, 4], 4));
        let h = "{'descr': '|u1', 'fortran_order': False, 'shape': (7,), }";
        assert_eq!(parse_header(h).unwrap(), (vec![7], 1));
        let h = "{'descr': '<f8', 'fortran_order': False, 'shape': (), }";
        assert_eq!(parse_header(h).unwrap(), (vec![], 8));
        assert!(parse_header("{'descr': '<f4', 'shape': (1e11, 1), }").is_err());
        assert!(parse_header("{'shape': (3,), }").is_err());
    }
}
