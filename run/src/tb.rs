//! TensorBoard event files: scalars under `runs/NAME/tb/`.
//!
//! Written by hand rather than with `tensorboard-rs`: that crate is marked inactive by its
//! author and pulls `image` 0.23 and `protobuf` 2 into every build for what is, for scalars,
//! about sixty lines: a TFRecord framing (length, masked CRC-32C, payload, masked CRC-32C) around
//! three tiny protobuf messages (`Event { wall_time, step, file_version | summary }`,
//! `Summary { repeated Value }`, `Value { tag, simple_value }`). The tests read the file back
//! and check every CRC.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Appends scalar events to one event file.
pub struct EventWriter {
    path: PathBuf,
    out: BufWriter<File>,
}

impl EventWriter {
    /// A new event file in `dir` (created if needed), named as TensorBoard expects.
    pub fn create(dir: &Path) -> std::io::Result<EventWriter> {
        std::fs::create_dir_all(dir)?;
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        // One file per writer: the roles of a concurrent loop write from one process, and two
        // writers appending to one file could interleave partial records.
        static WRITERS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let seq = WRITERS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let pid = std::process::id();
        let name = match seq {
            0 => format!("events.out.tfevents.{secs}.lifeline-zero.{pid}"),
            n => format!("events.out.tfevents.{secs}.lifeline-zero.{pid}-{n}"),
        };
        let path = dir.join(name);
        let file = OpenOptions::new().create(true).append(true).open(&path)?;
        let mut w = EventWriter {
            path,
            out: BufWriter::new(file),
        };
        let mut event = Vec::new();
        put_double(&mut event, 1, wall_time());
        put_bytes(&mut event, 3, b"brain.Event:2");
        w.record(&event)?;
        w.out.flush()?;
        Ok(w)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// One scalar at `step`.
    pub fn scalar(&mut self, tag: &str, value: f32, step: u64) -> std::io::Result<()> {
        let mut v = Vec::new();
        put_bytes(&mut v, 1, tag.as_bytes());
        put_float(&mut v, 2, value);
        let mut summary = Vec::new();
        put_bytes(&mut summary, 1, &v);
        let mut event = Vec::new();
        put_double(&mut event, 1, wall_time());
        put_varint_field(&mut event, 2, step);
        put_bytes(&mut event, 5, &summary);
        self.record(&event)
    }

    /// Write buffered events to disk (call after each group of scalars).
    pub fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }

    fn record(&mut self, data: &[u8]) -> std::io::Result<()> {
        let len = (data.len() as u64).to_le_bytes();
        self.out.write_all(&len)?;
        self.out.write_all(&masked_crc(&len).to_le_bytes())?;
        self.out.write_all(data)?;
        self.out.write_all(&masked_crc(data).to_le_bytes())
    }
}

fn wall_time() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_varint_field(out: &mut Vec<u8>, field: u32, v: u64) {
    put_varint(out, (field as u64) << 3);
    put_varint(out, v);
}

fn put_double(out: &mut Vec<u8>, field: u32, v: f64) {
    put_varint(out, ((field as u64) << 3) | 1);
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_float(out: &mut Vec<u8>, field: u32, v: f32) {
    put_varint(out, ((field as u64) << 3) | 5);
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_bytes(out: &mut Vec<u8>, field: u32, bytes: &[u8]) {
    put_varint(out, ((field as u64) << 3) | 2);
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// CRC-32C (Castagnoli), bitwise; event files are small, so a table buys nothing here.
pub fn crc32c(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0x82F6_3B78
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// TFRecord's masked CRC.
pub fn masked_crc(data: &[u8]) -> u32 {
    let c = crc32c(data);
    (c.rotate_right(15)).wrapping_add(0xa282_ead8)
}

/// Read back the scalars of an event file, checking every record's CRCs: `(tag, value, step)`.
pub fn read_scalars(path: &Path) -> Result<Vec<(String, f32, u64)>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let at = i;
        let bad = |what: &str| format!("{}: {what} at byte {at}", path.display());
        let len_bytes = bytes.get(i..i + 8).ok_or_else(|| bad("truncated length"))?;
        let len = u64::from_le_bytes(len_bytes.try_into().unwrap()) as usize;
        let crc = u32::from_le_bytes(
            bytes
                .get(i + 8..i + 12)
                .ok_or_else(|| bad("truncated"))?
                .try_into()
                .unwrap(),
        );
        if crc != masked_crc(len_bytes) {
            return Err(bad("bad length CRC"));
        }
        let data = bytes
            .get(i + 12..i + 12 + len)
            .ok_or_else(|| bad("truncated record"))?;
        let crc = u32::from_le_bytes(
            bytes
                .get(i + 12 + len..i + 16 + len)
                .ok_or_else(|| bad("truncated"))?
                .try_into()
                .unwrap(),
        );
        if crc != masked_crc(data) {
            return Err(bad("bad data CRC"));
        }
        i += 16 + len;
        let event = fields(data).map_err(|e| bad(&e))?;
        let step = event
            .iter()
            .find(|f| f.0 == 2)
            .map(|f| f.1.varint)
            .unwrap_or(0);
        if let Some(summary) = event.iter().find(|f| f.0 == 5) {
            for value in fields(&summary.1.bytes)
                .map_err(|e| bad(&e))?
                .iter()
                .filter(|f| f.0 == 1)
            {
                let v = fields(&value.1.bytes).map_err(|e| bad(&e))?;
                let tag = v
                    .iter()
                    .find(|f| f.0 == 1)
                    .map(|f| String::from_utf8_lossy(&f.1.bytes).into_owned())
                    .unwrap_or_default();
                let x = v
                    .iter()
                    .find(|f| f.0 == 2)
                    .map(|f| f32::from_le_bytes(f.1.bytes[..4].try_into().unwrap()))
                    .unwrap_or(f32::NAN);
                out.push((tag, x, step));
            }
        }
    }
    Ok(out)
}

#[derive(Default)]
struct FieldValue {
    varint: u64,
    bytes: Vec<u8>,
}

/// A protobuf message's fields, enough of the wire format for events.
fn fields(mut data: &[u8]) -> Result<Vec<(u32, FieldValue)>, String> {
    fn varint(data: &mut &[u8]) -> Result<u64, String> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let (&b, rest) = data.split_first().ok_or("truncated varint")?;
            *data = rest;
            v |= ((b & 0x7f) as u64) << shift;
            if b < 0x80 {
                return Ok(v);
            }
        }
        Err("varint too long".into())
    }
    let mut out = Vec::new();
    while !data.is_empty() {
        let key = varint(&mut data)?;
        let mut f = FieldValue::default();
        let take = |data: &mut &[u8], n: usize| -> Result<Vec<u8>, String> {
            if data.len() < n {
                return Err("truncated field".into());
            }
            let (a, b) = data.split_at(n);
            *data = b;
            Ok(a.to_vec())
        };
        match key & 7 {
            0 => f.varint = varint(&mut data)?,
            1 => f.bytes = take(&mut data, 8)?,
            5 => f.bytes = take(&mut data, 4)?,
            2 => {
                let n = varint(&mut data)? as usize;
                f.bytes = take(&mut data, n)?;
            }
            w => return Err(format!("wire type {w} not expected in an event")),
        }
        out.push(((key >> 3) as u32, f));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32c_matches_the_standard_check_value() {
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
    }

    #[test]
    fn scalars_round_trip_through_an_event_file() {
        let dir = std::env::temp_dir().join(format!("lifeline-zero-tb-{}", std::process::id()));
        let mut w = EventWriter::create(&dir).unwrap();
        w.scalar("loss/policy", 2.5, 1).unwrap();
        w.scalar("loss/value", 0.75, 1).unwrap();
        w.scalar("lr", 0.02, 300).unwrap();
        w.flush().unwrap();
        let got = read_scalars(w.path()).unwrap();
        assert_eq!(
            got,
            vec![
                ("loss/policy".into(), 2.5, 1),
                ("loss/value".into(), 0.75, 1),
                ("lr".into(), 0.02, 300)
            ]
        );
        // A flipped byte is caught by the CRC.
        let mut bytes = std::fs::read(w.path()).unwrap();
        let n = bytes.len();
        bytes[n - 6] ^= 1;
        std::fs::write(w.path(), bytes).unwrap();
        assert!(read_scalars(w.path()).unwrap_err().contains("CRC"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
