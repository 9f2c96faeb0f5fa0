//! Helpers shared by the integration tests: the worker binary, options, and /proc scans that
//! find load processes.
#![allow(dead_code)] // each test file uses a different subset

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rtgauge_load::{LoadOptions, MARKER_ENV};

/// The crate's stand-in for the rtgauge binary (calls `worker_main`).
pub fn exe() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_rtgauge-load-worker"))
}

pub fn options(scratch_root: &Path) -> LoadOptions {
    let mut opts = LoadOptions::new(exe());
    opts.scratch_dir = scratch_root.to_path_buf();
    opts.disk_cap_bytes = 64 * 1024 * 1024;
    opts
}

/// (pid, pgid, state) of every process, from /proc/PID/stat.
fn processes() -> Vec<(u32, i32, char)> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return out;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some(close) = stat.rfind(')') else {
            continue;
        };
        let fields: Vec<&str> = stat[close + 1..].split_whitespace().collect();
        let state = fields.first().and_then(|s| s.chars().next()).unwrap_or('?');
        let pgid = fields.get(2).and_then(|s| s.parse().ok()).unwrap_or(0);
        out.push((pid, pgid, state));
    }
    out
}

fn cmdline(pid: u32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
        .unwrap_or_default()
}

/// Live (non-zombie) processes whose environment marks them as loads of `owner`.
pub fn marked_processes(owner: u32) -> Vec<String> {
    let needle = format!("{MARKER_ENV}={owner}\0");
    processes()
        .into_iter()
        .filter(|&(_, _, state)| state != 'Z' && state != 'X')
        .filter(|&(pid, _, _)| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.windows(needle.len()).any(|w| w == needle.as_bytes()))
        })
        .map(|(pid, _, state)| format!("{pid} ({state}) {}", cmdline(pid)))
        .collect()
}

/// Live processes in any of the process groups `groups`.
pub fn processes_in_groups(groups: &[u32]) -> Vec<String> {
    processes()
        .into_iter()
        .filter(|&(_, pgid, state)| state != 'Z' && state != 'X' && groups.contains(&(pgid as u32)))
        .map(|(pid, pgid, state)| format!("{pid} (group {pgid}, {state}) {}", cmdline(pid)))
        .collect()
}

/// Polls `scan` until it finds nothing or `timeout` passes; returns the last finding.
pub fn wait_for_none(timeout: Duration, scan: impl Fn() -> Vec<String>) -> Vec<String> {
    let deadline = Instant::now() + timeout;
    loop {
        let found = scan();
        if found.is_empty() || Instant::now() > deadline {
            return found;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Entries of the scratch root that belong to loads.
pub fn scratch_dirs(root: &Path) -> Vec<String> {
    std::fs::read_dir(root)
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| e.file_name().to_str().map(String::from))
                .filter(|n| n.starts_with("rtgauge-load."))
                .collect()
        })
        .unwrap_or_default()
}

/// A pseudo-random number in 0..n, from the clock (no dependency for one number).
pub fn random_below(n: u64) -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos() as u64)
        .unwrap_or(0);
    let mut x = nanos ^ 0x9E37_79B9_7F4A_7C15 ^ u64::from(std::process::id());
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x % n.max(1)
}
