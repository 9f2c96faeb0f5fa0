//! Why a trace session could not be had; each message is one line with the fix.

use std::path::PathBuf;

/// A trace session could not be started or read.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("the kernel has no tracefs, so late wake-ups cannot be explained: use a kernel built with CONFIG_FTRACE (and tracing events)")]
    NoTracefs,
    #[error("tracefs is not mounted (the kernel has it), and mounting it needs root: run as root, which mounts it, or mount it first with `mount -t tracefs nodev /sys/kernel/tracing`")]
    NotMounted,
    #[error("tracing needs root: {} is not writable; run as root (or with CAP_SYS_ADMIN) to see why wake-ups were late", path.display())]
    NotPermitted { path: PathBuf },
    #[error("kernel lockdown (confidentiality) forbids tracing; boot with lockdown=integrity or without lockdown to see why wake-ups were late")]
    Lockdown,
    #[error("this kernel's tracefs has no trace instances ({} is missing); use a kernel from 4.4 on to see why wake-ups were late", path.display())]
    NoInstances { path: PathBuf },
    #[error("could not mount tracefs at {}: {source}; mount it yourself (mount -t tracefs nodev {}) and try again", path.display(), path.display())]
    Mount {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("tracing needs at least one CPU to record; name the measured CPUs")]
    NoCpus,
    #[error("CPU {cpu} is not traced (the session records CPUs {traced:?}); read one of those")]
    CpuNotTraced { cpu: usize, traced: Vec<usize> },
    #[error("could not use the trace file {}: {source}; check that tracefs is mounted and not used up by another tracer", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("this kernel has no timerlat tracer (available tracers: {available}); use a kernel built with CONFIG_TIMERLAT_TRACER, such as Debian's linux-image-rt")]
    NoTimerlat { available: String },
    #[error("the timerlat tracer is busy ({source}): another osnoise or timerlat tracer runs (rtla, or `current_tracer` set by hand); stop it and try again")]
    TimerlatBusy { source: std::io::Error },
}
