//! CPU isolation at runtime: the measured CPUs in a cpuset of their own, the rest of the
//! machine's tasks kept off them, the scheduler's load balancing split — the runtime stand-in
//! for `isolcpus=`. cgroup v2 (the cpuset controller on the unified hierarchy): a child cgroup
//! that is an `isolated` partition, which takes its CPUs from every other cgroup by itself.
//! cgroup v1: an exclusive cpuset without load balancing for the measured CPUs, a housekeeping
//! cpuset with the others into which every task of the root cpuset the kernel lets go is
//! moved, and the root's load balancing off so the scheduler domains split.

use super::actions::{PF_KTHREAD, PF_NO_SETAFFINITY};
use super::*;
use rtgauge_sysinfo::format_cpu_list;

const NAME: &str = "cpu-isolation";
/// The cgroups tune makes, below the hierarchy's root.
pub const ISOLATED: &str = "rtgauge-isolated";
pub const HOUSEKEEPING: &str = "rtgauge-housekeeping";

/// Where the cpuset controller is: a v1 hierarchy, or cgroup2 with it available.
#[derive(Debug, PartialEq, Eq)]
enum Hierarchy {
    V1(PathBuf),
    V2(PathBuf),
}

fn hierarchy(root: &Root) -> Option<Hierarchy> {
    let mounts = root.text(Path::new("/proc/self/mounts")).ok()?;
    let mut v2 = None;
    for line in mounts.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let [_, at, kind, options, ..] = f[..] else {
            continue;
        };
        if kind == "cgroup" && options.split(',').any(|o| o == "cpuset") {
            return Some(Hierarchy::V1(at.into()));
        }
        if kind == "cgroup2" && v2.is_none() {
            let controllers = root.text(&Path::new(at).join("cgroup.controllers"));
            if controllers.is_ok_and(|c| c.split_whitespace().any(|c| c == "cpuset")) {
                v2 = Some(Hierarchy::V2(at.into()));
            }
        }
    }
    v2
}

pub(super) fn cpu_isolation(s: &Scope) -> Finding {
    if let Some(f) = s.no_housekeeping(NAME) {
        return f;
    }
    let Some(h) = hierarchy(s.root) else {
        return skip(
            NAME,
            "no cpuset controller: neither a cgroup v1 cpuset hierarchy nor cgroup2 with the \
             cpuset controller is mounted",
        );
    };
    let top = match &h {
        Hierarchy::V1(p) | Hierarchy::V2(p) => p.clone(),
    };
    for made in [ISOLATED, HOUSEKEEPING] {
        let dir = top.join(made);
        if s.root.exists(&dir) {
            return skip(
                NAME,
                format!(
                    "the cgroup {} exists (left by a tune that did not finish?): `rtgauge tune \
                     --restore`, or move its tasks out and rmdir it",
                    dir.display()
                ),
            );
        }
    }
    match h {
        Hierarchy::V1(top) => v1(s, &top),
        Hierarchy::V2(top) => v2(s, &top),
    }
}

fn cgroup(dir: &Path, files: &[(&str, &str)]) -> Write {
    let target: Vec<String> = files.iter().map(|(f, v)| format!("{f}={v}")).collect();
    Write {
        path: dir.into(),
        original: String::new(),
        target: target.join(" "),
        optional: false,
        kind: Kind::Cgroup,
    }
}

fn placed(kind: Kind, dir: &Path, cpus: &str) -> Write {
    Write {
        path: dir.into(),
        original: String::new(),
        target: cpus.into(),
        optional: false,
        kind,
    }
}

/// The other cpusets below `top` that may use a measured CPU: their tasks would stay there.
fn overlapping(s: &Scope, top: &Path, file: &str) -> Vec<String> {
    let top_text = top.display().to_string();
    s.root
        .list(&top_text)
        .into_iter()
        .filter(|name| {
            s.root
                .value(&top.join(name).join(file))
                .ok()
                .and_then(|l| rtgauge_sysinfo::cpu_list(&l).ok())
                .is_some_and(|cpus| cpus.iter().any(|c| s.measured.contains(c)))
        })
        .collect()
}

fn v1(s: &Scope, top: &Path) -> Finding {
    let others = overlapping(s, top, "cpuset.cpus");
    if !others.is_empty() {
        return skip(
            NAME,
            format!(
                "the cpuset {} also holds a measured CPU: tune does not move the tasks of \
                 other cpusets",
                others.join(", ")
            ),
        );
    }
    let (m, h) = (
        format_cpu_list(&s.measured),
        format_cpu_list(&s.housekeeping),
    );
    let Ok(mems) = s.root.value(&top.join("cpuset.mems")) else {
        return skip(NAME, format!("cannot read {}/cpuset.mems", top.display()));
    };
    let balance = top.join("cpuset.sched_load_balance");
    let Ok(balancing) = s.root.value(&balance) else {
        return skip(NAME, format!("cannot read {}", balance.display()));
    };
    // The threads of the root cpuset, and those the kernel will not move (PF_NO_SETAFFINITY:
    // per-CPU threads, workqueue workers).
    let tasks = s.root.text(&top.join("tasks")).unwrap_or_default();
    // Kernel threads come back from a cpuset with all of its CPUs: their own are recorded.
    let all = s.root.value(&top.join("cpuset.cpus")).unwrap_or_default();
    let (mut threads, mut bound, mut kthread_cpus) = (0, 0, Vec::new());
    for tid in tasks.split_whitespace() {
        threads += 1;
        let task = Path::new("/proc").join(tid);
        let flags = s.root.task_flags(&task).unwrap_or(0);
        if flags & PF_KTHREAD == 0 {
            continue;
        }
        if flags & PF_NO_SETAFFINITY != 0 {
            bound += 1;
        } else if let Ok(cpus) = s.root.affinity(&task) {
            if cpus != all {
                kthread_cpus.push(format!("{tid}:{cpus}"));
            }
        }
    }
    let (iso, hk) = (top.join(ISOLATED), top.join(HOUSEKEEPING));
    let mut writes = vec![
        cgroup(&hk, &[("cpuset.cpus", &h), ("cpuset.mems", &mems)]),
        cgroup(
            &iso,
            &[
                ("cpuset.cpus", &m),
                ("cpuset.mems", &mems),
                ("cpuset.cpu_exclusive", "1"),
                ("cpuset.sched_load_balance", "0"),
            ],
        ),
        Write {
            path: hk.clone(),
            original: top.display().to_string(),
            target: kthread_cpus.join(" "),
            optional: false,
            kind: Kind::Tasks,
        },
    ];
    if balancing != "0" {
        writes.push(write(
            &balance.display().to_string(),
            balancing.clone(),
            "0",
        ));
    }
    writes.push(placed(Kind::LoopIn, &iso, &m));
    writes.push(placed(Kind::LoadIn, &hk, &h));
    let cpu = |l: &str| {
        if l.contains([',', '-']) {
            "CPUs"
        } else {
            "CPU"
        }
    };
    Finding::Try(Candidate {
        name: NAME,
        check: "isolated_cpus",
        title: "CPU isolation (an exclusive cpuset, the stand-in for isolcpus=)",
        cost: "throughput: every other task shares the housekeeping CPUs",
        change: format!(
            "{} {m} alone in the exclusive cpuset {ISOLATED} (no load balancing); the root \
             cpuset's {} threads → {HOUSEKEEPING} on {} {h} ({bound} kernel threads cannot \
             leave it: per-CPU threads, workqueue workers); root load balancing {balancing} → 0; changed rounds run the \
             loop in {ISOLATED} and its load on {} {h}",
            cpu(&m),
            threads - bound,
            cpu(&h),
            cpu(&h),
        ),
        writes,
        needs_debugfs: false,
    })
}

fn v2(s: &Scope, top: &Path) -> Finding {
    let (m, h) = (
        format_cpu_list(&s.measured),
        format_cpu_list(&s.housekeeping),
    );
    let control = top.join("cgroup.subtree_control");
    let mut writes = Vec::new();
    let enabled = s
        .root
        .text(&control)
        .is_ok_and(|t| t.split_whitespace().any(|c| c == "cpuset"));
    if !enabled {
        writes.push(Write {
            path: control,
            original: String::new(),
            target: "cpuset".into(),
            optional: false,
            kind: Kind::Controller,
        });
    }
    let iso = top.join(ISOLATED);
    writes.push(cgroup(
        &iso,
        &[("cpuset.cpus", &m), ("cpuset.cpus.partition", "isolated")],
    ));
    writes.push(placed(Kind::LoopIn, &iso, &m));
    writes.push(placed(Kind::LoadIn, top, &h));
    let cpu = |l: &str| {
        if l.contains([',', '-']) {
            "CPUs"
        } else {
            "CPU"
        }
    };
    Finding::Try(Candidate {
        name: NAME,
        check: "isolated_cpus",
        title: "CPU isolation (an isolated cpuset partition, the stand-in for isolcpus=)",
        cost: "throughput: every other task shares the housekeeping CPUs",
        change: format!(
            "{} {m} → the isolated partition {ISOLATED} (no load balancing; every other cgroup \
             loses {m}){}; changed rounds run the loop in it and its load on {} {h}",
            cpu(&m),
            if enabled {
                ""
            } else {
                ", the cpuset controller enabled for the root's children"
            },
            cpu(&h),
        ),
        writes,
        needs_debugfs: false,
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::{fixture, scope};
    use super::*;

    const V1_MOUNTS: &str = "proc /proc proc rw 0 0\ncgroup /sys/fs/cgroup/cpuset cgroup \
                             rw,relatime,cpuset 0 0\ncgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0\n";

    fn v1_tree(extra: &[(&str, &str)]) -> tempfile::TempDir {
        let mut files = vec![
            ("/proc/self/mounts", V1_MOUNTS),
            ("/sys/fs/cgroup/unified/cgroup.controllers", "hugetlb\n"),
            ("/sys/fs/cgroup/cpuset/cpuset.cpus", "0-1\n"),
            ("/sys/fs/cgroup/cpuset/cpuset.mems", "0\n"),
            ("/sys/fs/cgroup/cpuset/cpuset.sched_load_balance", "1\n"),
            ("/sys/fs/cgroup/cpuset/tasks", "1\n2\n15\n50\n"),
            // init, kthreadd (movable), a per-CPU kernel thread (bound).
            ("/proc/1/stat", "1 (init) S 0 1 1 0 -1 4194560 0"),
            ("/proc/2/stat", "2 (kthreadd) S 0 0 0 0 -1 2129984 0"),
            ("/proc/15/stat", "15 (ksoftirqd/1) S 2 0 0 0 -1 69238848 0"),
            // An interrupt thread: movable, its CPUs its interrupt's.
            (
                "/proc/50/stat",
                "50 (irq/24-ACPI:Ged) S 2 0 0 0 -1 2129984 0",
            ),
            ("/proc/50/status", "Cpus_allowed_list:\t1\n"),
            ("/proc/2/status", "Cpus_allowed_list:\t0-1\n"),
        ];
        files.extend_from_slice(extra);
        fixture(&files)
    }

    fn tried(f: Finding) -> Candidate {
        match f {
            Finding::Try(c) => c,
            Finding::Skip(s) => panic!("skipped: {}", s.reason),
        }
    }

    #[test]
    fn v1_plans_two_cpusets_the_move_and_the_root_balancing() {
        let dir = v1_tree(&[]);
        let root = Root::at(dir.path());
        let c = tried(cpu_isolation(&scope(&root)));
        let top = Path::new("/sys/fs/cgroup/cpuset");
        let kinds: Vec<Kind> = c.writes.iter().map(|w| w.kind).collect();
        assert_eq!(
            kinds,
            [
                Kind::Cgroup,
                Kind::Cgroup,
                Kind::Tasks,
                Kind::File,
                Kind::LoopIn,
                Kind::LoadIn
            ]
        );
        assert_eq!(c.writes[0].path, top.join(HOUSEKEEPING));
        assert_eq!(c.writes[0].target, "cpuset.cpus=0 cpuset.mems=0");
        assert_eq!(
            c.writes[1].target,
            "cpuset.cpus=1 cpuset.mems=0 cpuset.cpu_exclusive=1 cpuset.sched_load_balance=0"
        );
        assert_eq!(c.writes[2].original, top.display().to_string());
        assert_eq!(
            c.writes[2].target, "50:1",
            "a kernel thread's own CPUs are kept"
        );
        assert_eq!(c.writes[3].path, top.join("cpuset.sched_load_balance"));
        assert_eq!(
            (c.writes[3].original.as_str(), c.writes[3].target.as_str()),
            ("1", "0")
        );
        assert!(
            c.change.contains("3 threads → rtgauge-housekeeping"),
            "{}",
            c.change
        );
        assert!(
            c.change.contains("(1 kernel threads cannot leave"),
            "{}",
            c.change
        );
        let p = placement(&c.writes).unwrap();
        assert_eq!(p.loop_cgroup, top.join(ISOLATED));
        assert_eq!(p.load_cgroup, Some((top.join(HOUSEKEEPING), "0".into())));
    }

    #[test]
    fn v1_restore_gives_a_moved_kernel_thread_its_own_cpus() {
        let dir = v1_tree(&[("/sys/fs/cgroup/cpuset/rtgauge-housekeeping/tasks", "")]);
        let root = Root::at(dir.path());
        let moved = Write {
            path: "/sys/fs/cgroup/cpuset/rtgauge-housekeeping".into(),
            original: "/sys/fs/cgroup/cpuset".into(),
            target: "50:1".into(),
            optional: false,
            kind: Kind::Tasks,
        };
        // Back in the root cpuset, the kernel gave it all of the root's CPUs.
        std::fs::write(
            dir.path().join("proc/50/status"),
            "Cpus_allowed_list:\t0-1\n",
        )
        .unwrap();
        assert!(restore(&root, &[moved]).is_empty());
        assert_eq!(root.affinity(Path::new("/proc/50")).unwrap(), "1");
    }

    #[test]
    fn v1_refuses_a_tree_it_did_not_make_or_cannot_isolate() {
        let left = v1_tree(&[("/sys/fs/cgroup/cpuset/rtgauge-isolated/tasks", "")]);
        let root = Root::at(left.path());
        let Finding::Skip(s) = cpu_isolation(&scope(&root)) else {
            panic!("tried over a cpuset left behind")
        };
        assert!(s.reason.contains("tune --restore"), "{}", s.reason);
        let docker = v1_tree(&[("/sys/fs/cgroup/cpuset/docker/cpuset.cpus", "0-1\n")]);
        let root = Root::at(docker.path());
        let Finding::Skip(s) = cpu_isolation(&scope(&root)) else {
            panic!("tried beside an overlapping cpuset")
        };
        assert!(
            s.reason.contains("the cpuset docker also holds"),
            "{}",
            s.reason
        );
    }

    #[test]
    fn v2_plans_an_isolated_partition_and_enables_the_controller_only_when_off() {
        let mounts = "cgroup2 /sys/fs/cgroup cgroup2 rw,nsdelegate 0 0\n";
        let dir = fixture(&[
            ("/proc/self/mounts", mounts),
            (
                "/sys/fs/cgroup/cgroup.controllers",
                "cpuset cpu io memory pids\n",
            ),
            ("/sys/fs/cgroup/cgroup.subtree_control", "memory pids\n"),
        ]);
        let root = Root::at(dir.path());
        let c = tried(cpu_isolation(&scope(&root)));
        let top = Path::new("/sys/fs/cgroup");
        assert_eq!(c.writes[0].kind, Kind::Controller);
        assert_eq!(c.writes[0].path, top.join("cgroup.subtree_control"));
        assert_eq!(c.writes[1].kind, Kind::Cgroup);
        assert_eq!(
            c.writes[1].target,
            "cpuset.cpus=1 cpuset.cpus.partition=isolated"
        );
        let p = placement(&c.writes).unwrap();
        assert_eq!(p.loop_cgroup, top.join(ISOLATED));
        assert_eq!(p.load_cgroup, Some((top.into(), "0".into())));
        std::fs::write(
            dir.path().join("sys/fs/cgroup/cgroup.subtree_control"),
            "cpuset memory\n",
        )
        .unwrap();
        let c = tried(cpu_isolation(&scope(&root)));
        assert!(c.writes.iter().all(|w| w.kind != Kind::Controller));
    }

    #[test]
    fn without_a_cpuset_controller_it_says_so() {
        let dir = fixture(&[
            (
                "/proc/self/mounts",
                "cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n",
            ),
            ("/sys/fs/cgroup/cgroup.controllers", "cpu memory\n"),
        ]);
        let root = Root::at(dir.path());
        let Finding::Skip(s) = cpu_isolation(&scope(&root)) else {
            panic!("tried")
        };
        assert!(s.reason.contains("no cpuset controller"), "{}", s.reason);
    }
}
