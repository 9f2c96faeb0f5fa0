//! The kernel's own timer latency: the `timerlat` tracer run in an instance of rtgauge's.
//!
//! timerlat arms a timer per CPU every period; its IRQ handler records how late the timer
//! fired (IRQ context) and wakes a kernel thread, which records how late it ran (thread
//! context). Both are printed into the instance's trace as one line each.
//!
//! The tracer is configured through `osnoise/` files that are GLOBAL (shared by every
//! instance and by rtla): [`TimerlatSession`] saves each one it writes and writes the saved
//! value back when dropped, after the tracer is stopped and the instance removed.

use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::error::TraceError;
use crate::session::{create_instance, remove_instance};
use crate::tracefs::ensure_tracefs;

/// The tracer's name in `available_tracers` and `current_tracer`.
pub const TIMERLAT: &str = "timerlat";
/// The kernel accepts a timerlat period from 100 µs to 1 s.
pub const TIMERLAT_PERIOD_US: std::ops::RangeInclusive<u64> = 100..=1_000_000;

/// Where the timer latency was observed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimerlatContext {
    /// In the timer's IRQ handler.
    Irq,
    /// In the timerlat thread the handler woke.
    Thread,
}

/// One `timerlat` line: how late the timer fired (IRQ) or its thread ran (thread).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimerlatSample {
    pub cpu: u32,
    /// CLOCK_MONOTONIC ns (the instance records with the `mono` clock), 1 µs resolution.
    pub ts_ns: u64,
    /// The activation number: the IRQ and thread lines of one timer share it.
    pub activation: u64,
    pub context: TimerlatContext,
    pub latency_ns: u64,
}

/// Parses one line of the timerlat tracer's output (Documentation/trace/timerlat-tracer.rst):
/// `<idle>-0 [000] d.h1 54.029328: #1 context irq timer_latency 932 ns`. Headers, other
/// contexts (`user-ret`) and anything else give `None`.
pub fn parse_timerlat_line(line: &str) -> Option<TimerlatSample> {
    let tokens: Vec<&str> = line.split_whitespace().collect();
    // From the end: "#ID context CTX timer_latency N ns"; the task name may contain spaces.
    let at = tokens.iter().rposition(|t| *t == "context")?;
    let [id, _, context, what, latency, unit] = tokens.get(at.checked_sub(1)?..at + 5)? else {
        return None;
    };
    if *what != "timer_latency" {
        return None;
    }
    let latency: u64 = latency.parse().ok()?;
    let latency_ns = match *unit {
        "ns" => latency,
        "us" => latency.checked_mul(1_000)?,
        _ => return None,
    };
    let context = match *context {
        "irq" => TimerlatContext::Irq,
        "thread" => TimerlatContext::Thread,
        _ => return None,
    };
    let activation = id.strip_prefix('#')?.parse().ok()?;
    let ts_ns = crate::parse::parse_timestamp(tokens.get(at.checked_sub(2)?)?.strip_suffix(':')?)?;
    let cpu = tokens[..at - 2]
        .iter()
        .rev()
        .find_map(|t| t.strip_prefix('[')?.strip_suffix(']')?.parse().ok())?;
    Some(TimerlatSample {
        cpu,
        ts_ns,
        activation,
        context,
        latency_ns,
    })
}

/// Why the timerlat tracer cannot run here, in one line with the fix; `None` if it can. As
/// root, mounts tracefs when the kernel has it and nothing mounted it (as a trace session
/// would; the tracer list is only readable there); writes nothing else.
pub fn timerlat_unavailable() -> Option<String> {
    // SAFETY: geteuid has no arguments and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return Some(
            "the timerlat tracer needs root (it is configured through tracefs); run as root".into(),
        );
    }
    let tracefs = match ensure_tracefs() {
        Ok(tracefs) => tracefs,
        Err(TraceError::NoTracefs) => {
            return Some(
                "the kernel has no tracefs, so the timerlat tracer cannot run: use a kernel \
                 built with CONFIG_FTRACE and CONFIG_TIMERLAT_TRACER, such as Debian's linux-image-rt"
                    .into(),
            )
        }
        Err(e) => return Some(e.to_string()),
    };
    let available = fs::read_to_string(tracefs.join("available_tracers")).unwrap_or_default();
    (!has_timerlat(&available)).then(|| {
        TraceError::NoTimerlat {
            available: available.trim().to_string(),
        }
        .to_string()
    })
}

fn has_timerlat(available_tracers: &str) -> bool {
    available_tracers.split_whitespace().any(|t| t == TIMERLAT)
}

/// What to run timerlat with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimerlatConfig {
    /// The CPUs to measure (timerlat runs a thread on each).
    pub cpus: Vec<usize>,
    /// Timer period in µs, within [`TIMERLAT_PERIOD_US`].
    pub period_us: u64,
    /// Ring buffer per CPU in KiB; read often enough, a small one is enough.
    pub buffer_size_kb: u32,
}

/// The global `osnoise/` files written, with what they are set to for the run (the CPUs and
/// the period are filled in from [`TimerlatConfig`]). A threshold left by the user would stop
/// tracing at the first latency above it, and a stack dump would fill the buffer.
const GLOBAL_SETTINGS: [&str; 5] = [
    "osnoise/cpus",
    "osnoise/timerlat_period_us",
    "osnoise/stop_tracing_us",
    "osnoise/stop_tracing_total_us",
    "osnoise/print_stack",
];

/// The timerlat tracer running in an instance of rtgauge's; dropping it stops the tracer,
/// removes the instance and restores the global `osnoise/` settings it changed.
#[derive(Debug)]
pub struct TimerlatSession {
    tracefs: PathBuf,
    dir: PathBuf,
    /// Global files as they were before the session wrote them, in writing order.
    saved: Vec<(PathBuf, String)>,
    pipe: Option<File>,
    /// The end of the last read that was not yet a whole line.
    partial: Vec<u8>,
    buffer: Vec<u8>,
}

impl TimerlatSession {
    /// Checks the tracer exists, configures it and starts it on `config.cpus`.
    pub fn start(config: &TimerlatConfig) -> Result<Self, TraceError> {
        let (tracefs, dir) = create_instance(&config.cpus)?;
        // From here on, Drop removes the instance and restores what was saved.
        let mut session = Self {
            tracefs,
            dir,
            saved: Vec::new(),
            pipe: None,
            partial: Vec::new(),
            buffer: vec![0; 64 * 1024],
        };
        let available =
            fs::read_to_string(session.dir.join("available_tracers")).unwrap_or_default();
        if !has_timerlat(&available) {
            return Err(TraceError::NoTimerlat {
                available: available.trim().to_string(),
            });
        }
        let cpus = config
            .cpus
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(",");
        let period = config.period_us.to_string();
        for (file, value) in GLOBAL_SETTINGS
            .iter()
            .zip([cpus.as_str(), &period, "0", "0", "0"])
        {
            session.set_global(file, value)?;
        }
        session.write_instance("tracing_on", "0")?;
        session.write_instance("trace_clock", "mono")?;
        session.write_instance("buffer_size_kb", &config.buffer_size_kb.to_string())?;
        session.write_instance("tracing_cpumask", &crate::cpumask(&config.cpus))?;
        match fs::write(session.dir.join("current_tracer"), TIMERLAT) {
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                return Err(TraceError::TimerlatBusy { source: e })
            }
            other => other.map_err(|source| TraceError::Io {
                path: session.dir.join("current_tracer"),
                source,
            })?,
        }
        let pipe_path = session.dir.join("trace_pipe");
        session.pipe = Some(
            OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(&pipe_path)
                .map_err(|source| TraceError::Io {
                    path: pipe_path,
                    source,
                })?,
        );
        session.write_instance("tracing_on", "1")?;
        Ok(session)
    }

    /// Appends the samples recorded since the last call (consuming them from the buffer).
    /// Never blocks: returns when the buffer is empty.
    pub fn read_samples(&mut self, out: &mut Vec<TimerlatSample>) -> Result<(), TraceError> {
        let Some(pipe) = self.pipe.as_mut() else {
            return Ok(());
        };
        loop {
            match pipe.read(&mut self.buffer) {
                Ok(0) => return Ok(()),
                Ok(n) => {
                    self.partial.extend_from_slice(&self.buffer[..n]);
                    let whole = self
                        .partial
                        .iter()
                        .rposition(|b| *b == b'\n')
                        .map_or(0, |i| i + 1);
                    let text = String::from_utf8_lossy(&self.partial[..whole]);
                    out.extend(text.lines().filter_map(parse_timerlat_line));
                    self.partial.drain(..whole);
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(source) => {
                    return Err(TraceError::Io {
                        path: self.dir.join("trace_pipe"),
                        source,
                    })
                }
            }
        }
    }

    /// The instance's directory in tracefs.
    pub fn instance_dir(&self) -> &Path {
        &self.dir
    }

    /// Writes a global `osnoise/` file after saving its value; files this kernel lacks are
    /// left alone (older kernels have fewer).
    fn set_global(&mut self, file: &str, value: &str) -> Result<(), TraceError> {
        let path = self.tracefs.join(file);
        let Ok(before) = fs::read_to_string(&path) else {
            return Ok(());
        };
        fs::write(&path, value).map_err(|source| TraceError::Io {
            path: path.clone(),
            source,
        })?;
        self.saved.push((path, before.trim().to_string()));
        Ok(())
    }

    fn write_instance(&self, file: &str, value: &str) -> Result<(), TraceError> {
        let path = self.dir.join(file);
        fs::write(&path, value).map_err(|source| TraceError::Io { path, source })
    }
}

impl Drop for TimerlatSession {
    fn drop(&mut self) {
        self.pipe = None;
        // Stop the tracer (its threads) before the instance goes; errors cannot be reported
        // from here and removing the instance stops it too.
        let _ = fs::write(self.dir.join("tracing_on"), "0");
        let _ = fs::write(self.dir.join("current_tracer"), "nop");
        let _ = remove_instance(&self.dir);
        // Restored in reverse order; an empty value (nothing set) cannot be written back and
        // is the kernel's default after the tracer stops.
        for (path, value) in self.saved.iter().rev() {
            if !value.is_empty() {
                let _ = fs::write(path, value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Lines as the kernel documentation prints them (Documentation/trace/timerlat-tracer.rst,
    // "Usage"), with the columns of a 6.1 kernel (the migrate-disable flag column).
    const DOC_TRACE: &str = "\
# tracer: timerlat
#
#                                _-----=> irqs-off
#                               / _----=> need-resched
#                              | / _---=> hardirq/softirq
#                              || / _--=> preempt-depth
#                              ||| / _-=> migrate-disable
#                              |||| /     delay
#                              |||||            ACTIVATION
#           TASK-PID      CPU# |||||   TIMESTAMP   ID            CONTEXT                 LATENCY
#              | |         |   |||||      |         |                  |                       |
          <idle>-0       [000] d.h1.    54.029328: #1     context    irq timer_latency       932 ns
           <...>-867     [000] .....    54.029339: #1     context thread timer_latency     11700 ns
          <idle>-0       [001] dNh1.    54.029346: #1     context    irq timer_latency      2580 ns
           <...>-868     [001] .....    54.029353: #1     context thread timer_latency      9820 ns
          <idle>-0       [000] d.h1.    54.030328: #2     context    irq timer_latency       769 ns
 timerlat/0 [1]-867     [000] .....    54.030330: #2     context thread timer_latency      3070 ns
";

    fn parsed(text: &str) -> Vec<TimerlatSample> {
        text.lines().filter_map(parse_timerlat_line).collect()
    }

    #[test]
    fn documented_timerlat_output_gives_irq_and_thread_latency_per_cpu() {
        let samples = parsed(DOC_TRACE);
        assert_eq!(samples.len(), 6);
        assert_eq!(
            samples[0],
            TimerlatSample {
                cpu: 0,
                ts_ns: 54_029_328_000,
                activation: 1,
                context: TimerlatContext::Irq,
                latency_ns: 932,
            }
        );
        assert_eq!(samples[1].context, TimerlatContext::Thread);
        assert_eq!(samples[1].latency_ns, 11_700);
        assert_eq!(samples[3].cpu, 1);
        assert_eq!(samples[3].latency_ns, 9_820);
        // A task name with spaces and brackets does not hide the CPU column.
        assert_eq!((samples[5].cpu, samples[5].activation), (0, 2));
    }

    #[test]
    fn older_kernels_without_the_migrate_disable_column_parse_too() {
        let line = "          <idle>-0       [002] d.h1    54.029328: #7     context    irq timer_latency       932 ns";
        let s = parse_timerlat_line(line).unwrap();
        assert_eq!((s.cpu, s.activation, s.latency_ns), (2, 7, 932));
    }

    #[test]
    fn headers_other_contexts_and_other_events_are_not_samples() {
        assert!(parsed("# tracer: timerlat\n#\n").is_empty());
        let user = "  rtla-900 [000] ..... 10.000001: #3 context user-ret timer_latency 4000 ns";
        assert_eq!(parse_timerlat_line(user), None);
        let other = "  bash-1 [000] d..1. 10.000001: sched_switch: prev_comm=bash prev_pid=1";
        assert_eq!(parse_timerlat_line(other), None);
        assert_eq!(parse_timerlat_line("#1 context"), None);
    }

    #[test]
    fn timerlat_is_found_only_as_a_whole_tracer_name() {
        assert!(has_timerlat("timerlat osnoise hwlat function nop\n"));
        assert!(!has_timerlat("blk function nop\n"));
        assert!(!has_timerlat("timerlat_x nop"));
    }

    #[test]
    fn the_reason_names_the_fix_where_timerlat_cannot_run() {
        if let Some(reason) = timerlat_unavailable() {
            assert!(
                reason.contains("root") || reason.contains("CONFIG_"),
                "{reason}"
            );
        }
    }
}
