//! `--write-profile DIR`: what helped, in the forms a machine is configured with at boot — a
//! sysctl.d file for the sysctls, a tuned profile, a systemd oneshot unit for the sysfs and
//! procfs writes a sysctl file cannot express, and the kernel command line.

use super::trial::Verdict;
use super::TuneDocument;
use anyhow::Result;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

pub const SYSCTL_FILE: &str = "90-rtgauge-tune.conf";
pub const UNIT_FILE: &str = "rtgauge-tune.service";
pub const TUNED_FILE: &str = "tuned/rtgauge/tuned.conf";
pub const CMDLINE_FILE: &str = "kernel-cmdline.txt";

/// `/proc/sys/kernel/timer_migration` → `kernel.timer_migration`.
fn sysctl_key(path: &Path) -> Option<String> {
    let rest = path.strip_prefix("/proc/sys").ok()?;
    let parts: Vec<String> = rest
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    (!parts.is_empty()).then(|| parts.join("."))
}

/// The writes of the changes that helped, each once, in order. Changes that are not file
/// writes (cpusets made, tasks and threads moved) have their boot options instead (isolcpus=,
/// rcu_nocbs=, on the kernel command line).
fn helped_writes(doc: &TuneDocument) -> Vec<&rtgauge_result::tune::Write> {
    doc.trials
        .iter()
        .filter(|t| t.verdict() == Some(Verdict::Better))
        .filter(|t| t.writes.iter().all(|w| w.kind.is_file()))
        .flat_map(|t| &t.writes)
        .collect()
}

/// Writes the profile's files into `dir`; returns their paths.
pub fn write(dir: &Path, doc: &TuneDocument) -> Result<Vec<PathBuf>> {
    let writes = helped_writes(doc);
    let header = format!(
        "# Written by `rtgauge tune` for {}: the changes measured to help.\n",
        doc.the_loop
    );
    let mut sysctl = header.clone();
    let mut others = Vec::new();
    for w in &writes {
        match sysctl_key(&w.path) {
            Some(key) => {
                let _ = writeln!(sysctl, "{key} = {}", w.target);
            }
            None => others.push(*w),
        }
    }
    let cmdline = rtgauge_result::tune::command_line(&doc.boot);
    let files = [
        (PathBuf::from(SYSCTL_FILE), sysctl),
        (PathBuf::from(UNIT_FILE), unit(&header, &others)),
        (
            PathBuf::from(TUNED_FILE),
            tuned(&header, doc, &writes, &cmdline),
        ),
        (PathBuf::from(CMDLINE_FILE), format!("{cmdline}\n")),
    ];
    let mut written = Vec::new();
    for (name, text) in files {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        rtgauge_result::output::write(&path, text.as_bytes())?;
        written.push(path);
    }
    Ok(written)
}

/// A oneshot unit that makes the other writes at boot. Writes the kernel may refuse for one
/// member (a managed interrupt) are prefixed with `-`, so one refusal does not fail the unit.
fn unit(header: &str, writes: &[&rtgauge_result::tune::Write]) -> String {
    let mut out = header.to_string();
    out.push_str(
        "[Unit]\nDescription=Real-time settings measured by rtgauge tune\n\
         After=sysinit.target\n\n[Service]\nType=oneshot\nRemainAfterExit=yes\n",
    );
    if writes.is_empty() {
        out.push_str("ExecStart=/bin/true\n");
    }
    for w in writes {
        let dash = if w.optional { "-" } else { "" };
        let _ = writeln!(
            out,
            "ExecStart={dash}/bin/sh -c 'echo {} > {}'",
            w.target,
            w.path.display()
        );
    }
    out.push_str("\n[Install]\nWantedBy=multi-user.target\n");
    out
}

fn tuned(
    header: &str,
    doc: &TuneDocument,
    writes: &[&rtgauge_result::tune::Write],
    cmdline: &str,
) -> String {
    let mut out = header.to_string();
    out.push_str("[main]\nsummary=Real-time settings measured by rtgauge tune\n\n[sysctl]\n");
    for w in writes {
        if let Some(key) = sysctl_key(&w.path) {
            let _ = writeln!(out, "{key}={}", w.target);
        }
    }
    let helped = |name: &str| {
        doc.trials
            .iter()
            .any(|t| t.name == name && t.verdict() == Some(Verdict::Better))
    };
    // Not measured: these need a reboot (the dry run and the table list each with its reason).
    let _ = writeln!(
        out,
        "\n# the boot-time fixes tune lists; they need a reboot and were not measured\n\
         [bootloader]\ncmdline={cmdline}"
    );
    out.push_str("\n[scheduler]\n");
    if helped("irq-affinity") {
        let _ = writeln!(out, "isolated_cores={}", doc.measured);
    } else {
        let _ = writeln!(
            out,
            "# isolated_cores={} (moving interrupts away was not measured to help)",
            doc.measured
        );
    }
    out.push_str("\n[irqbalance]\n");
    if helped("irq-affinity") {
        let _ = writeln!(out, "banned_cpus={}", doc.measured);
    } else {
        let _ = writeln!(
            out,
            "# banned_cpus={} (moving interrupts away was not measured to help)",
            doc.measured
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysctl_keys_from_proc_paths() {
        assert_eq!(
            sysctl_key(Path::new("/proc/sys/kernel/sched_rt_runtime_us")).as_deref(),
            Some("kernel.sched_rt_runtime_us")
        );
        assert_eq!(sysctl_key(Path::new("/sys/kernel/mm/ksm/run")), None);
    }
}
