//! The changes that are not a value written to one file: a cgroup tune makes (and removes),
//! tasks moved between cpusets, a thread's CPU affinity, a cgroup v2 controller switched on;
//! and where a changed round's loop and load run. Each is still one [`Write`], so the state
//! file holds it and a restore after SIGKILL needs nothing else.

use super::*;
use std::time::Duration;

/// What a [`Write`] changes (kept in the trials document with it).
pub use rtgauge_result::tune::WriteKind as Kind;

/// The variable naming the cgroup a load worker joins before it pins itself.
pub const LOAD_CGROUP_ENV: &str = rtgauge_load::LOAD_CGROUP_ENV;

/// Where a changed round runs: the loop in one cgroup, its load (if any) in another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    /// The loop's cgroup directory.
    pub loop_cgroup: PathBuf,
    /// The load's cgroup directory and CPUs.
    pub load_cgroup: Option<(PathBuf, String)>,
}

/// The placement a change asks for, if any.
pub fn placement(writes: &[Write]) -> Option<Placement> {
    let loop_cgroup = writes.iter().find(|w| w.kind == Kind::LoopIn)?.path.clone();
    let load_cgroup = writes
        .iter()
        .find(|w| w.kind == Kind::LoadIn)
        .map(|w| (w.path.clone(), w.target.clone()));
    Some(Placement {
        loop_cgroup,
        load_cgroup,
    })
}

impl Placement {
    /// Makes `cmd` (an `rtgauge run` with `run_words`) start in the loop's cgroup: the child
    /// joins it between fork and exec, so every thread and process it makes starts there;
    /// its load is told to join the load's cgroup and run on the load's CPUs.
    pub fn arrange(&self, cmd: &mut std::process::Command, run_words: &[String]) {
        use std::os::unix::process::CommandExt;
        if let Some((cgroup, cpus)) = &self.load_cgroup {
            if run_words.iter().any(|w| w == "--load") {
                cmd.args(["--load-cpus", cpus]);
            }
            cmd.env(LOAD_CGROUP_ENV, cgroup.join("cgroup.procs"));
        }
        let procs = std::ffi::CString::new(
            self.loop_cgroup
                .join("cgroup.procs")
                .as_os_str()
                .as_encoded_bytes(),
        )
        .expect("no NUL in a cgroup path");
        // SAFETY: the closure runs between fork and exec and makes only async-signal-safe
        // system calls (open, write, close) on memory allocated before the fork.
        unsafe {
            cmd.pre_exec(move || {
                let fd = libc::open(procs.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
                if fd < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // "0": the writing process itself.
                let ok = libc::write(fd, b"0".as_ptr().cast(), 1) == 1;
                let err = std::io::Error::last_os_error();
                libc::close(fd);
                if ok {
                    Ok(())
                } else {
                    Err(err)
                }
            });
        }
    }
}

/// PF_KTHREAD and PF_NO_SETAFFINITY of `/proc/PID/stat`'s flags.
pub(super) const PF_KTHREAD: u64 = 0x0020_0000;
pub(super) const PF_NO_SETAFFINITY: u64 = 0x0400_0000;

impl Root {
    fn is_live(&self) -> bool {
        self.base == Path::new("/")
    }

    /// The whole text of a file.
    pub(super) fn text(&self, path: &Path) -> Result<String, SettingError> {
        std::fs::read_to_string(self.full(path)).map_err(|source| SettingError::Read {
            path: path.into(),
            source,
        })
    }

    pub(super) fn exists(&self, path: &Path) -> bool {
        self.full(path).exists()
    }

    /// The flags of the task `/proc/PID` (or `/proc/PID/task/TID`).
    pub(super) fn task_flags(&self, task: &Path) -> Option<u64> {
        let stat = self.text(&task.join("stat")).ok()?;
        let after = &stat[stat.rfind(')')? + 1..];
        after.split_whitespace().nth(6)?.parse().ok()
    }

    /// The CPU list a task may run on.
    pub(super) fn affinity(&self, task: &Path) -> Result<String, SettingError> {
        let status = self.text(&task.join("status"))?;
        Ok(status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .unwrap_or("")
            .trim()
            .to_string())
    }

    fn set_affinity(&self, task: &Path, list: &str) -> Result<(), SettingError> {
        let err = |source| SettingError::Other {
            action: "set the CPUs of",
            path: task.into(),
            source,
        };
        let cpus = rtgauge_sysinfo::cpu_list(list).map_err(|e| err(std::io::Error::other(e)))?;
        if !self.is_live() {
            // A fixture: the status file stands for the thread.
            let status = self.full(&task.join("status"));
            return std::fs::write(status, format!("Cpus_allowed_list:\t{list}\n")).map_err(err);
        }
        let tid: u32 = task
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| err(std::io::ErrorKind::InvalidInput.into()))?;
        rtgauge_os::sched::set_affinity_of(tid, &cpus).map_err(err)?;
        Ok(())
    }

    /// Applies one write of any kind.
    pub(super) fn put(&self, w: &Write) -> Result<(), SettingError> {
        match w.kind {
            Kind::File => self.write(&w.path, &w.target),
            Kind::Cgroup => self.make_cgroup(&w.path, &w.target),
            Kind::Tasks => {
                self.move_tasks(Path::new(&w.original), &w.path);
                Ok(())
            }
            Kind::Affinity => self.set_affinity(&w.path, &w.target),
            Kind::Controller => self.write(&w.path, &format!("+{}", w.target)),
            Kind::LoopIn | Kind::LoadIn => Ok(()),
        }
    }

    /// Undoes one write that is not a file's value; nothing when it is not in effect.
    pub(super) fn undo(&self, w: &Write) -> Vec<SettingError> {
        match w.kind {
            Kind::File | Kind::LoopIn | Kind::LoadIn => Vec::new(),
            Kind::Cgroup => self.remove_cgroup(&w.path).err().into_iter().collect(),
            Kind::Tasks => {
                if self.exists(&w.path) {
                    self.move_tasks(&w.path, Path::new(&w.original));
                }
                self.restore_kthread_cpus(&w.target)
            }
            Kind::Affinity => {
                // Gone, or no longer a kernel thread (its pid reused): nothing to put back.
                let kthread = self
                    .task_flags(&w.path)
                    .is_some_and(|f| f & PF_KTHREAD != 0);
                match self.affinity(&w.path) {
                    Ok(now) if kthread && now != w.original => self
                        .set_affinity(&w.path, &w.original)
                        .err()
                        .into_iter()
                        .collect(),
                    _ => Vec::new(),
                }
            }
            Kind::Controller => {
                let on = self
                    .text(&w.path)
                    .is_ok_and(|t| t.split_whitespace().any(|c| c == w.target));
                if on {
                    self.write(&w.path, &format!("-{}", w.target))
                        .err()
                        .into_iter()
                        .collect()
                } else {
                    Vec::new()
                }
            }
        }
    }

    /// Puts back the CPUs of the kernel threads listed as `TID:CPUS` words: a kernel thread
    /// moved out of a cpuset and back gets the whole cpuset's CPUs, not the ones it had (user
    /// threads keep what they asked for by setting their own affinity).
    fn restore_kthread_cpus(&self, list: &str) -> Vec<SettingError> {
        let mut errors = Vec::new();
        for (tid, cpus) in list.split_whitespace().filter_map(|w| w.split_once(':')) {
            let w = Write {
                path: Path::new("/proc").join(tid),
                original: cpus.into(),
                target: String::new(),
                optional: true,
                kind: Kind::Affinity,
            };
            errors.extend(self.undo(&w));
        }
        errors
    }

    /// Makes the cgroup `dir` and writes its files; removes it again when a write is refused
    /// (or a v2 partition reads as invalid).
    fn make_cgroup(&self, dir: &Path, files: &str) -> Result<(), SettingError> {
        // Made already by this trial's previous changed round (B then B across two rounds):
        // the planning refused a cgroup of this name that tune did not make.
        match std::fs::create_dir(self.full(dir)) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
                return Err(SettingError::Other {
                    action: "make the cgroup",
                    path: dir.into(),
                    source: e,
                })
            }
            _ => {}
        }
        for pair in files.split_whitespace() {
            let (file, value) = pair.split_once('=').unwrap_or((pair, ""));
            let path = dir.join(file);
            let mut outcome = self.write(&path, value);
            if outcome.is_ok() && file.ends_with(".partition") {
                // The kernel takes the write and says why the partition is not one.
                if let Ok(now) = self.text(&path) {
                    if now.contains("invalid") {
                        outcome = Err(SettingError::Write {
                            path: path.clone(),
                            value: value.into(),
                            source: std::io::Error::other(now.trim().to_string()),
                        });
                    }
                }
            }
            if let Err(e) = outcome {
                let _ = self.remove_cgroup(dir);
                return Err(e);
            }
        }
        Ok(())
    }

    /// Moves the tasks of `dir` to its parent and removes it; nothing when it is gone.
    fn remove_cgroup(&self, dir: &Path) -> Result<(), SettingError> {
        if !self.exists(dir) {
            return Ok(());
        }
        if let Some(parent) = dir.parent() {
            self.move_tasks(dir, parent);
        }
        // A task that is exiting keeps the cgroup busy for a moment.
        let mut last = None;
        for _ in 0..40 {
            match std::fs::remove_dir(self.full(dir)) {
                Ok(()) => return Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
                Err(e) => last = Some(e),
            }
            if let Some(parent) = dir.parent() {
                self.move_tasks(dir, parent);
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        Err(SettingError::Other {
            action: "remove the cgroup",
            path: dir.into(),
            source: last.unwrap_or_else(|| std::io::ErrorKind::Other.into()),
        })
    }

    /// The file that lists a cgroup's tasks one per thread (v1), else its processes (v2).
    fn tasks_file(&self, dir: &Path) -> PathBuf {
        let tasks = dir.join("tasks");
        if self.exists(&tasks) {
            tasks
        } else {
            dir.join("cgroup.procs")
        }
    }

    /// Moves every task of cgroup `from` that the kernel lets go into cgroup `to`; returns
    /// how many it refused (kernel threads bound to one CPU). Several passes, so a thread
    /// made while the others move is moved too.
    pub(super) fn move_tasks(&self, from: &Path, to: &Path) -> usize {
        let (source, dest) = (self.tasks_file(from), self.tasks_file(to));
        let mut refused = std::collections::BTreeSet::new();
        for _ in 0..5 {
            let Ok(list) = self.text(&source) else {
                return refused.len();
            };
            let mut moved = 0;
            for task in list.split_whitespace() {
                if refused.contains(task) {
                    continue;
                }
                match self.write(&dest, task) {
                    Ok(()) => moved += 1,
                    Err(SettingError::Write { source, .. })
                        if source.raw_os_error() == Some(libc::ESRCH) => {}
                    Err(_) => {
                        refused.insert(task.to_string());
                    }
                }
            }
            if moved == 0 {
                break;
            }
        }
        refused.len()
    }
}
