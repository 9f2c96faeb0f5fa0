//! Small safe wrappers over the Linux calls the loads need, each returning `io::Error` or a
//! reason string instead of an errno.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::error::LoadError;

/// Turns a `-1` return into the thread's errno.
pub(crate) fn check(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// CPU lists, affinity and scheduling come from the system layer shared by every crate.
pub(crate) use rtgauge_os::cpus::online_cpus;
pub(crate) use rtgauge_os::sched::{set_affinity, set_fifo};

/// Whether a thread of this process may run SCHED_FIFO at `priority`: tried on a short-lived
/// thread, so that the caller's own scheduling is untouched.
pub(crate) fn rt_permitted(priority: i32) -> Result<(), String> {
    let probe = std::thread::Builder::new()
        .name("rt-probe".into())
        .spawn(move || set_fifo(priority));
    match probe.map(|t| t.join()) {
        Ok(Ok(Ok(()))) => Ok(()),
        Ok(Ok(Err(e))) => Err(e.to_string()),
        Ok(Err(_)) => Err("the probe thread panicked".to_string()),
        Err(e) => Err(format!("cannot start a probe thread: {e}")),
    }
}

/// Free bytes for an unprivileged writer on the file system holding `path`.
pub(crate) fn free_bytes(path: &Path) -> io::Result<u64> {
    let c_path = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: statvfs writes only into `stat`, which is plain data; c_path is NUL-terminated.
    let stat = unsafe {
        let mut stat: libc::statvfs = std::mem::zeroed();
        check(libc::statvfs(c_path.as_ptr(), &mut stat))?;
        stat
    };
    Ok(stat.f_bavail.saturating_mul(stat.f_frsize))
}

/// Sends `signal` to every process of the group `pgid`; a group already gone is not an error.
pub(crate) fn kill_group(pgid: i32, signal: i32) {
    if pgid > 1 {
        // SAFETY: kill has no memory-safety preconditions; pgid > 1 never targets "everything".
        unsafe {
            libc::kill(-pgid, signal);
        }
    }
}

/// Whether any non-zombie process is still in one of the process groups `pgids`. Zombies
/// count as gone: they run nothing, and who reaps them (init) is not ours to wait for.
pub(crate) fn groups_alive(pgids: &[i32]) -> bool {
    // Fast path: no process at all in any group (zombies included).
    // SAFETY: kill with signal 0 only checks for existence.
    let any = pgids
        .iter()
        .any(|&pgid| pgid > 1 && unsafe { libc::kill(-pgid, 0) } == 0);
    if !any {
        return false;
    }
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries.flatten().any(|entry| {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            return false;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            return false;
        };
        let Some(close) = stat.rfind(')') else {
            return false;
        };
        // After the command: state, ppid, pgrp.
        let mut fields = stat[close + 1..].split_whitespace();
        let state = fields.next().unwrap_or("Z");
        let pgrp: i32 = fields.nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
        state != "Z" && state != "X" && pgids.contains(&pgrp)
    })
}

/// Start time of a process in clock ticks since boot (field 22 of /proc/PID/stat): with the
/// pid it names one process, even after the pid is reused.
pub(crate) fn process_start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may contain spaces.
    let after_comm = &stat[stat.rfind(')')? + 1..];
    after_comm.split_whitespace().nth(19)?.parse().ok()
}

/// The size of the largest CPU cache, from sysfs (0 when unknown).
pub(crate) fn last_level_cache_bytes() -> u64 {
    let mut best = 0;
    let Ok(entries) = std::fs::read_dir("/sys/devices/system/cpu/cpu0/cache") else {
        return 0;
    };
    for entry in entries.flatten() {
        let Ok(size) = std::fs::read_to_string(entry.path().join("size")) else {
            continue;
        };
        let size = size.trim();
        let (digits, mult) = match size.chars().last() {
            Some('K') => (&size[..size.len() - 1], 1024),
            Some('M') => (&size[..size.len() - 1], 1024 * 1024),
            Some('G') => (&size[..size.len() - 1], 1024 * 1024 * 1024),
            _ => (size, 1),
        };
        if let Ok(n) = digits.parse::<u64>() {
            best = best.max(n * mult);
        }
    }
    best
}

/// Finds an executable named `name` on PATH (or takes it as is when it contains a slash).
pub(crate) fn which(name: &str) -> Option<PathBuf> {
    let is_exec = |p: &Path| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if name.contains('/') {
        let p = PathBuf::from(name);
        return is_exec(&p).then_some(p);
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| is_exec(p))
}

/// The system C compiler: `$CC` when set, else the first of cc, gcc, clang on PATH.
pub(crate) fn find_compiler() -> Result<PathBuf, LoadError> {
    let from_env = std::env::var("CC").ok().filter(|s| !s.trim().is_empty());
    let candidates: Vec<String> = match &from_env {
        Some(cc) => vec![cc.trim().to_string()],
        None => ["cc", "gcc", "clang"].map(String::from).to_vec(),
    };
    candidates
        .iter()
        .find_map(|c| which(c))
        .ok_or_else(|| LoadError::Unavailable {
            load: "compile".to_string(),
            reason: match &from_env {
                Some(cc) => format!("the compiler named by $CC (`{cc}`) is not an executable"),
                None => "no C compiler found (looked for cc, gcc and clang on PATH)".to_string(),
            },
            fix: "install one (e.g. `apt-get install gcc`), set $CC, or choose another load"
                .to_string(),
        })
}

/// `exec:` loads run `/bin/sh -c COMMAND`.
pub(crate) fn shell_available() -> Result<(), LoadError> {
    match which("/bin/sh") {
        Some(_) => Ok(()),
        None => Err(LoadError::Unavailable {
            load: "exec".to_string(),
            reason: "/bin/sh is missing".to_string(),
            fix: "install a POSIX shell at /bin/sh".to_string(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_start_time_is_known() {
        assert!(process_start_time(std::process::id()).is_some());
        assert!(!online_cpus().is_empty());
    }
}
