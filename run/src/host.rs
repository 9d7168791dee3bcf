//! This machine and its processes, as lock files, leases and logs name them, and timing
//! settings read from the environment.

use std::path::Path;

/// This machine's name (what lock files and logs call it).
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown-host".into())
}

/// Whether process `pid` runs on this machine (`true` where that cannot be known, so a file
/// that may be in use is never removed).
pub fn process_alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    if !Path::new("/proc/self").exists() {
        return true;
    }
    Path::new("/proc").join(pid.to_string()).exists()
}

/// Seconds from the environment variable `var` (a positive finite number), else `default`.
pub fn env_seconds(var: &str, default: f64) -> std::time::Duration {
    let secs = std::env::var(var)
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| *s > 0.0 && s.is_finite())
        .unwrap_or(default);
    std::time::Duration::from_secs_f64(secs)
}
