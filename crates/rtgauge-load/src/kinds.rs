//! The built-in load kinds and the facts every other module needs about them: name, what they
//! stress, which counters they keep, how their workers are placed.

use serde::{Deserialize, Serialize};

/// One built-in load generator (the `exec:` command is carried separately).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Kind {
    Cpu,
    Syscall,
    Memory,
    RtMemory,
    Messaging,
    Io,
    Net,
    Compile,
    Exec,
}

/// A counter a worker keeps in its shared slot.
pub(crate) struct MetricDef {
    pub name: &'static str,
    pub unit: &'static str,
    /// Counted into `bytes_per_second`.
    pub bytes: bool,
}

const fn m(name: &'static str, unit: &'static str) -> MetricDef {
    MetricDef {
        name,
        unit,
        bytes: false,
    }
}

const fn b(name: &'static str) -> MetricDef {
    MetricDef {
        name,
        unit: "bytes",
        bytes: true,
    }
}

/// Counter indices, shared by a worker (which adds) and the parent (which reports). Index 0 is
/// the load's main operation, reported as `operations_per_second`.
pub(crate) mod idx {
    pub const OPS: usize = 0;
    // memory
    pub const MEM_COPIED: usize = 1;
    pub const MEM_WRITTEN: usize = 2;
    pub const MEM_SYNCS: usize = 3;
    // rt-memory
    pub const RT_COPIED: usize = 1;
    pub const RT_OVERRUNS: usize = 2;
    // messaging
    pub const MSG_BYTES: usize = 1;
    // io
    pub const IO_WRITTEN: usize = 1;
    pub const IO_FSYNCS: usize = 2;
    pub const IO_ENTRIES: usize = 3;
    // net
    pub const NET_RECEIVED: usize = 1;
    pub const NET_BYTES: usize = 2;
    pub const NET_ICMP: usize = 3;
    // compile
    pub const CC_SOURCE_BYTES: usize = 1;
    // exec
    pub const EXEC_RUNTIME_NS: usize = 1;
}

/// Every kind a user can name, in catalogue order; `all` expands to those with `in_all`.
pub(crate) const KINDS: [Kind; 9] = [
    Kind::Cpu,
    Kind::Syscall,
    Kind::Memory,
    Kind::RtMemory,
    Kind::Messaging,
    Kind::Io,
    Kind::Net,
    Kind::Compile,
    Kind::Exec,
];

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Cpu => "cpu",
            Kind::Syscall => "syscall",
            Kind::Memory => "memory",
            Kind::RtMemory => "rt-memory",
            Kind::Messaging => "messaging",
            Kind::Io => "io",
            Kind::Net => "net",
            Kind::Compile => "compile",
            Kind::Exec => "exec",
        }
    }

    pub fn from_name(name: &str) -> Option<Kind> {
        KINDS.iter().copied().find(|k| k.name() == name)
    }

    /// Whether `all` includes it: every built-in generator, not the user's command.
    pub fn in_all(self) -> bool {
        self != Kind::Exec
    }

    pub fn stresses(self) -> &'static str {
        match self {
            Kind::Cpu => "CPU in user mode: one spinning integer loop per worker",
            Kind::Syscall => {
                "CPU in kernel mode: a tight system-call loop (getppid, read of /dev/zero)"
            }
            Kind::Memory => {
                "memory bandwidth and caches: copies over buffers larger than the last-level \
                 cache, plus a dd-like sequential write to a capped scratch file"
            }
            Kind::RtMemory => {
                "real-time contention: a SCHED_FIFO thread just below the measuring priority \
                 copying memory every 50 µs"
            }
            Kind::Messaging => {
                "scheduler and IPC: hackbench-like groups of 20 sender and 20 receiver processes \
                 over pipes and UNIX sockets"
            }
            Kind::Io => {
                "file system and disk: create/write/fsync/copy/delete files and walk directory \
                 trees in a size-capped scratch directory"
            }
            Kind::Net => {
                "network stack and softirqs: UDP flood over 127.0.0.1, plus an ICMP echo flood to \
                 127.0.0.1 when raw sockets are allowed; loopback only"
            }
            Kind::Compile => {
                "everything a kernel build stresses: parallel `cc -O2 -c` of a generated C \
                 source tree, in a loop"
            }
            Kind::Exec => "whatever the command stresses; restarted when it exits early",
        }
    }

    pub fn metrics(self) -> &'static [MetricDef] {
        // Named constants: a `const fn` call is not promoted to a 'static temporary.
        const CPU: &[MetricDef] = &[m("iterations", "loop iterations")];
        const SYSCALL: &[MetricDef] = &[m("system calls", "system calls")];
        const MEMORY: &[MetricDef] = &[
            m("copies", "1 MiB block copies"),
            b("copied"),
            b("written"),
            m("syncs", "fdatasync calls"),
        ];
        const RT_MEMORY: &[MetricDef] = &[
            m("periods", "periods"),
            b("copied"),
            m("overruns", "periods"),
        ];
        const MESSAGING: &[MetricDef] = &[m("messages", "messages"), b("transferred")];
        const IO: &[MetricDef] = &[
            m("file operations", "file creations, copies and deletions"),
            b("written"),
            m("fsyncs", "fsync calls"),
            m("entries walked", "directory entries"),
        ];
        const NET: &[MetricDef] = &[
            m("udp datagrams sent", "datagrams"),
            m("udp datagrams received", "datagrams"),
            b("udp received"),
            m("icmp echo replies", "replies"),
        ];
        const COMPILE: &[MetricDef] = &[m("compilations", "translation units"), b("compiled")];
        const EXEC: &[MetricDef] = &[m("restarts", "restarts"), m("runtime", "ns")];
        match self {
            Kind::Cpu => CPU,
            Kind::Syscall => SYSCALL,
            Kind::Memory => MEMORY,
            Kind::RtMemory => RT_MEMORY,
            Kind::Messaging => MESSAGING,
            Kind::Io => IO,
            Kind::Net => NET,
            Kind::Compile => COMPILE,
            Kind::Exec => EXEC,
        }
    }

    /// Per-CPU loads pin worker `i` to CPU `i mod n` so that a run is reproducible; the others
    /// (several threads or processes per worker) may use the whole load CPU set.
    pub fn pinned(self) -> bool {
        matches!(
            self,
            Kind::Cpu | Kind::Syscall | Kind::Memory | Kind::RtMemory
        )
    }

    /// Whether the load writes to the scratch directory.
    pub fn needs_scratch(self) -> bool {
        matches!(self, Kind::Memory | Kind::Io | Kind::Compile)
    }

    /// Whether `operations_per_second` means something (a restart count is not a rate).
    pub fn reports_ops(self) -> bool {
        self != Kind::Exec
    }
}
