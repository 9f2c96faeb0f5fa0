//! The settings `tune` may change: for each, whether it applies to this machine and these
//! CPUs, its current value, the value to try, and how to put it back.
//!
//! Every setting is a short list of file writes (sysctl, sysfs, procfs, debugfs), each with
//! the value read before anything changed. Applying writes the new values in order; restoring
//! writes the originals back in the reverse order, and only where the file no longer reads
//! as its original. That one shape is what the state file stores, so a restore after SIGKILL
//! needs nothing but the file.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

mod actions;
mod cpuset;
mod isolation;
mod memory;
mod power;
mod scheduling;

pub use actions::{placement, Kind, Placement};
use cpuset::*;
use isolation::*;
use memory::*;
use power::*;
use scheduling::*;
pub use scheduling::{debugfs_mounted, DEBUGFS};

/// An exit latency above this many µs makes an idle state one to disable (as doctor judges).
const DEEP_CSTATE_US: u64 = rtgauge_sysinfo::checks::DEEP_CSTATE_US;

/// What went wrong with one setting: a line for the user.
#[derive(Debug, thiserror::Error)]
pub enum SettingError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("writing {value} to {path} was refused: {source}")]
    Write {
        path: PathBuf,
        value: String,
        source: std::io::Error,
    },
    #[error("cannot {action} {path}: {source}")]
    Other {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
}

/// One file, its value before tune touched it, and the value tune tries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Write {
    pub path: PathBuf,
    pub original: String,
    pub target: String,
    /// A write the kernel may refuse for one member only (a managed interrupt): the others
    /// are still tried, and the refusal is reported rather than undoing the setting.
    #[serde(default)]
    pub optional: bool,
    /// What `path` is: a file (most settings), or a cgroup, tasks or a thread.
    #[serde(default, skip_serializing_if = "Kind::is_file")]
    pub kind: Kind,
}

impl Write {
    /// How it is put back, for the dry run.
    pub fn describe(&self) -> String {
        let p = self.path.display();
        match self.kind {
            Kind::File => format!("{p} ({} → {})", self.original, self.target),
            Kind::Cgroup => format!("{p} (made, then emptied into its parent and removed)"),
            Kind::Tasks => format!(
                "the tasks in {p} (moved back to {}, kernel threads given their CPUs)",
                self.original
            ),
            Kind::Affinity => format!("{p} ({} → {})", self.original, self.target),
            Kind::Controller => format!("{p} (+{0} → -{0})", self.target),
            Kind::LoopIn | Kind::LoadIn => format!("{p} (nothing: where rounds run)"),
        }
    }
}

/// A setting that applies here and differs from its real-time value.
#[derive(Debug, Clone, Serialize)]
pub struct Candidate {
    /// Stable name, as --only and --skip take it.
    pub name: &'static str,
    /// The doctor check that calls for it (empty: doctor has none; tune judges it itself).
    pub check: &'static str,
    /// What it is, for the table.
    pub title: &'static str,
    /// What the change costs.
    pub cost: &'static str,
    /// `before → after` in the user's terms.
    pub change: String,
    pub writes: Vec<Write>,
    /// The file is in debugfs, mounted for the trial when it is not.
    pub needs_debugfs: bool,
}

/// A setting that is not tried, and why.
#[derive(Debug, Clone, Serialize)]
pub struct Skipped {
    pub name: &'static str,
    pub reason: String,
}

/// What the catalogue found for one setting.
pub enum Finding {
    Try(Candidate),
    Skip(Skipped),
}

/// Every setting name, in the order they are tried.
pub const NAMES: [&str; 14] = [
    "rt-throttling",
    "rt-cgroup",
    "preempt-mode",
    "cpu-isolation",
    "irq-affinity",
    "timer-migration",
    "cstates",
    "cpufreq-governor",
    "watchdogs",
    "thp",
    "ksm",
    "vmstat-interval",
    "workqueue-cpumask",
    "rcu-kthreads",
];

/// The machine's files below `base` (`/` live; a directory of fixtures in unit tests).
#[derive(Debug, Clone)]
pub struct Root {
    base: PathBuf,
}

impl Root {
    pub fn live() -> Self {
        Root { base: "/".into() }
    }

    #[cfg(test)]
    pub fn at(base: &Path) -> Self {
        Root { base: base.into() }
    }

    fn full(&self, path: &Path) -> PathBuf {
        self.base.join(path.strip_prefix("/").unwrap_or(path))
    }

    /// The file's value as a setting sees it: the selected word of `a [b] c` or `a (b) c`,
    /// else the trimmed text.
    pub fn value(&self, path: &Path) -> Result<String, SettingError> {
        std::fs::read_to_string(self.full(path))
            .map(|t| selected(&t))
            .map_err(|source| SettingError::Read {
                path: path.into(),
                source,
            })
    }

    pub fn write(&self, path: &Path, value: &str) -> Result<(), SettingError> {
        use std::io::Write as _;
        let err = |source| SettingError::Write {
            path: path.into(),
            value: value.into(),
            source,
        };
        // One write(2) of the whole value: sysfs and procfs take a value per write call.
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(self.full(path))
            .map_err(err)?;
        f.write_all(value.as_bytes()).map_err(err)
    }

    fn list(&self, dir: &str) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.full(Path::new(dir)))
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort_by_key(|n| natural(n));
        names
    }
}

fn natural(s: &str) -> (String, u64) {
    let digits: String = s.chars().filter(char::is_ascii_digit).collect();
    let text: String = s.chars().filter(|c| !c.is_ascii_digit()).collect();
    (text, digits.parse().unwrap_or(0))
}

/// `always [madvise] never` → `madvise`; `none voluntary (full)` → `full`; else trimmed.
pub fn selected(text: &str) -> String {
    let t = text.trim();
    for (open, close) in [('[', ']'), ('(', ')')] {
        if t.split_whitespace().count() > 1 {
            if let (Some(a), Some(b)) = (t.find(open), t.find(close)) {
                if a < b {
                    return t[a + 1..b].to_string();
                }
            }
        }
    }
    t.to_string()
}

/// Two readings of one value are the same setting: hex masks compare without leading zeros
/// and the commas between their words.
pub fn same(a: &str, b: &str) -> bool {
    let norm = |s: &str| {
        let s = s.trim();
        if !s.is_empty() && s.chars().all(|c| c.is_ascii_hexdigit() || c == ',') {
            let hex: String = s.chars().filter(|c| *c != ',').collect();
            let hex = hex.trim_start_matches('0').to_ascii_lowercase();
            if hex.is_empty() {
                "0".to_string()
            } else {
                hex
            }
        } else {
            s.to_string()
        }
    };
    norm(a) == norm(b)
}

/// A CPU set as the hexadecimal mask sysfs writes (`0,2` → `5`), in 32-bit words.
pub fn cpu_mask(cpus: &[usize]) -> String {
    let top = cpus.iter().max().copied().unwrap_or(0);
    let mut words = vec![0u32; top / 32 + 1];
    for &c in cpus {
        words[c / 32] |= 1 << (c % 32);
    }
    let mut out: Vec<String> = Vec::new();
    for (i, w) in words.iter().enumerate().rev() {
        if i == words.len() - 1 {
            out.push(format!("{w:x}"));
        } else {
            out.push(format!("{w:08x}"));
        }
    }
    out.join(",")
}

/// What the catalogue needs to know about the run being tuned.
pub struct Scope<'a> {
    pub root: &'a Root,
    /// The CPUs the loop runs on.
    pub measured: Vec<usize>,
    /// The online CPUs not measured: where housekeeping can go (empty: nowhere).
    pub housekeeping: Vec<usize>,
    /// The kernel's build options, when /proc/config.gz could be read.
    pub config: Option<rtgauge_sysinfo::kernel::KernelConfig>,
}

impl Scope<'_> {
    fn enabled(&self, option: &str) -> Option<bool> {
        self.config.as_ref().map(|c| c.enabled(option))
    }

    fn no_housekeeping(&self, name: &'static str) -> Option<Finding> {
        self.housekeeping.is_empty().then(|| {
            skip(
                name,
                "every online CPU is measured: there is no CPU to move the work to (measure a \
                 subset with --cpus)",
            )
        })
    }
}

fn skip(name: &'static str, reason: impl Into<String>) -> Finding {
    Finding::Skip(Skipped {
        name,
        reason: reason.into(),
    })
}

fn write(path: &str, original: impl Into<String>, target: impl Into<String>) -> Write {
    Write {
        path: path.into(),
        original: original.into(),
        target: target.into(),
        optional: false,
        kind: Kind::File,
    }
}

/// Every setting of the catalogue, judged for this machine, in the order of [`NAMES`].
pub fn catalogue(s: &Scope) -> Vec<Finding> {
    vec![
        rt_throttling(s),
        rt_cgroup(s),
        preempt_mode(s),
        cpu_isolation(s),
        irq_affinity(s),
        timer_migration(s),
        cstates(s),
        cpufreq_governor(s),
        watchdogs(s),
        thp(s),
        ksm(s),
        vmstat_interval(s),
        workqueue_cpumask(s),
        rcu_kthreads(s),
    ]
}

/// A sysctl-like file with a wanted value: skipped when absent or already there.
fn single(
    s: &Scope,
    name: &'static str,
    path: &str,
    good: impl Fn(&str) -> bool,
    target: &str,
    about: (&'static str, &'static str, &'static str),
) -> Finding {
    let (check, title, cost) = about;
    match s.root.value(Path::new(path)) {
        Err(e) => skip(
            name,
            format!("this kernel has no {path} ({})", io_reason(&e)),
        ),
        Ok(v) if good(&v) => skip(name, format!("already {v} ({path})")),
        Ok(v) => Finding::Try(Candidate {
            name,
            check,
            title,
            cost,
            change: format!("{v} → {target}"),
            writes: vec![write(path, v, target)],
            needs_debugfs: false,
        }),
    }
}

fn io_reason(e: &SettingError) -> String {
    match e {
        SettingError::Read { source, .. }
        | SettingError::Write { source, .. }
        | SettingError::Other { source, .. } => match source.kind() {
            std::io::ErrorKind::NotFound => "not found".into(),
            _ => source.to_string(),
        },
    }
}

/// Applies a candidate's writes in order. A refused required write undoes the ones before it
/// and fails the setting; a refused optional one is returned and the rest go on.
pub fn apply(root: &Root, c: &Candidate) -> Result<Vec<SettingError>, SettingError> {
    let mut refused = Vec::new();
    for (i, w) in c.writes.iter().enumerate() {
        if let Err(e) = root.put(w) {
            if w.optional {
                refused.push(e);
                continue;
            }
            let _ = restore(root, &c.writes[..i]);
            return Err(e);
        }
    }
    Ok(refused)
}

/// Puts originals back, last write first, where the file no longer reads as its original.
/// Every write is tried; the errors are returned.
pub fn restore(root: &Root, writes: &[Write]) -> Vec<SettingError> {
    let mut errors = Vec::new();
    for w in writes.iter().rev() {
        if w.kind != Kind::File {
            errors.extend(root.undo(w));
            continue;
        }
        match root.value(&w.path) {
            Ok(now) if same(&now, &w.original) => {}
            // An optional write the kernel refused left the original in place; a file gone
            // (an interrupt freed) has nothing to restore.
            Err(SettingError::Read { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound => {}
            _ => {
                if let Err(e) = root.write(&w.path, &w.original) {
                    errors.push(e);
                }
            }
        }
    }
    errors
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    #[test]
    fn selected_word_and_masks() {
        assert_eq!(selected("always [madvise] never\n"), "madvise");
        assert_eq!(selected("none voluntary (full) lazy\n"), "full");
        assert_eq!(selected("950000\n"), "950000");
        assert_eq!(cpu_mask(&[0]), "1");
        assert_eq!(cpu_mask(&[0, 2]), "5");
        assert_eq!(cpu_mask(&[33]), "2,00000000");
        assert!(same("00000003", "3"));
        assert!(same("00000000,00000001", "1"));
        assert!(!same("0-1", "0"));
    }

    pub fn fixture(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (p, text) in files {
            let at = dir.path().join(p.trim_start_matches('/'));
            std::fs::create_dir_all(at.parent().unwrap()).unwrap();
            std::fs::write(at, text).unwrap();
        }
        dir
    }

    pub fn scope(root: &Root) -> Scope<'_> {
        Scope {
            root,
            measured: vec![1],
            housekeeping: vec![0],
            config: None,
        }
    }

    #[test]
    fn settings_already_right_or_absent_are_skipped_with_their_reason() {
        let dir = fixture(&[
            (RT_RUNTIME, "-1\n"),
            ("/proc/sys/kernel/timer_migration", "0\n"),
            (
                "/sys/kernel/mm/transparent_hugepage/enabled",
                "always [madvise] never\n",
            ),
            ("/proc/irq/5/smp_affinity_list", "0\n"),
            ("/proc/irq/default_smp_affinity", "1\n"),
        ]);
        let root = Root::at(dir.path());
        let found = catalogue(&scope(&root));
        assert_eq!(found.len(), NAMES.len());
        for (f, name) in found.iter().zip(NAMES) {
            match f {
                Finding::Skip(s) => assert_eq!(s.name, name),
                Finding::Try(c) => panic!("{} tried: {}", c.name, c.change),
            }
        }
        let reason = |n: &str| {
            found.iter().find_map(|f| match f {
                Finding::Skip(s) if s.name == n => Some(s.reason.clone()),
                _ => None,
            })
        };
        assert!(reason("ksm").unwrap().contains("no /sys/kernel/mm/ksm/run"));
        assert!(reason("thp").unwrap().contains("already madvise"));
    }
}
