//! Errors of the load crate. Each Display is one line: what was wrong, then how to fix it.

use std::path::PathBuf;

/// Why a load could not be parsed or started.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// The user's load text is not one of the accepted forms.
    #[error(
        "invalid load `{spec}`: {reason}; `rtgauge loads` lists the loads and how to write them"
    )]
    InvalidSpec { spec: String, reason: String },

    /// The options given to [`crate::RunningLoad::start`] cannot work.
    #[error("invalid load options: {reason}; {fix}")]
    InvalidOptions { reason: String, fix: String },

    /// The machine lacks what the load needs (a compiler, a shell, ...).
    #[error("load `{load}` is unavailable: {reason}; {fix}")]
    Unavailable {
        load: String,
        reason: String,
        fix: String,
    },

    /// `rt-memory` needs SCHED_FIFO, which the kernel refused.
    #[error(
        "load `{load}` needs SCHED_FIFO priority {priority} but the kernel refused it ({reason}); \
         run as root, grant CAP_SYS_NICE (setcap cap_sys_nice+ep BINARY) or raise RLIMIT_RTPRIO \
         (ulimit -r {priority}), or choose a load that runs at SCHED_OTHER"
    )]
    RtNotPermitted {
        load: String,
        priority: i32,
        reason: String,
    },

    /// The scratch file system has less free space than the load would use.
    #[error(
        "not enough free space for load `{load}` in {}: it needs {} MiB plus a {} MiB reserve, \
         {} MiB are free; choose a scratch directory on a larger file system or lower the disk cap",
        dir.display(), need / MIB, reserve / MIB, free / MIB
    )]
    NoSpace {
        load: String,
        dir: PathBuf,
        need: u64,
        reserve: u64,
        free: u64,
    },

    /// A file-system operation on the scratch area failed.
    #[error("cannot {action} {}: {source}; check that the scratch directory is writable and not full", path.display())]
    Scratch {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// Spawning a worker process failed.
    #[error("cannot start a worker for load `{load}` from {}: {source}; LoadOptions::exe must be the rtgauge binary (it re-executes itself as `__load-worker`)", exe.display())]
    Spawn {
        load: String,
        exe: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// A system facility the load machinery relies on failed (memfd, mmap, ...).
    #[error("cannot {action} for load `{load}`: {source}; the kernel may be too old or out of resources")]
    System {
        load: String,
        action: &'static str,
        #[source]
        source: std::io::Error,
    },

    /// A worker started but reported a failure (or died) before it was running.
    #[error("load `{load}` failed to start: {reason}; run `rtgauge loads` to see which loads this machine supports, or choose another load")]
    WorkerFailed { load: String, reason: String },

    /// Workers did not report ready in time.
    #[error("load `{load}` did not start within {seconds} s: the machine may be overloaded; retry, or lower the load's intensity")]
    Timeout { load: String, seconds: u64 },
}

pub(crate) const MIB: u64 = 1024 * 1024;

/// Makes a message from a worker or the OS fit on one line of an error.
pub(crate) fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_is_one_line_with_a_fix() {
        let io = || std::io::Error::other("boom\nsecond line");
        let errors = [
            LoadError::InvalidSpec {
                spec: "bogus".into(),
                reason: "unknown load `bogus`".into(),
            },
            LoadError::InvalidOptions {
                reason: "r".into(),
                fix: "f".into(),
            },
            LoadError::Unavailable {
                load: "compile".into(),
                reason: "no C compiler".into(),
                fix: "install gcc".into(),
            },
            LoadError::RtNotPermitted {
                load: "rt-memory".into(),
                priority: 94,
                reason: "EPERM".into(),
            },
            LoadError::NoSpace {
                load: "io".into(),
                dir: "/tmp".into(),
                need: 64 * MIB,
                reserve: 32 * MIB,
                free: MIB,
            },
            LoadError::Scratch {
                action: "create",
                path: "/x".into(),
                source: io(),
            },
            LoadError::Spawn {
                load: "cpu".into(),
                exe: "/x".into(),
                source: io(),
            },
            LoadError::System {
                load: "cpu".into(),
                action: "map",
                source: io(),
            },
            LoadError::WorkerFailed {
                load: "io".into(),
                reason: one_line("a\nb"),
            },
            LoadError::Timeout {
                load: "cpu".into(),
                seconds: 30,
            },
        ];
        for e in errors {
            let text = e.to_string();
            // io::Error texts come from the OS and are one line; the test's fake has two.
            let first = text.replace("boom\nsecond line", "boom");
            assert!(!first.contains('\n'), "{text}");
            assert!(
                ["accepted forms", "; "].iter().any(|s| text.contains(s)),
                "no fix in: {text}"
            );
        }
        assert_eq!(one_line("a\n  b\tc"), "a b c");
    }

    #[test]
    fn running_loads_can_move_between_threads() {
        fn is_send<T: Send>() {}
        is_send::<crate::RunningLoad>();
        is_send::<LoadError>();
    }
}
