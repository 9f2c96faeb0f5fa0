//! rtgauge's own tracefs instance.
//!
//! Everything is done inside `instances/rtgauge-<pid>[-<n>]`, so the top-level (the user's)
//! tracing settings are never written. The instance records with the `mono` clock
//! (CLOCK_MONOTONIC, the clock the probes read), into a bounded per-CPU ring buffer that
//! overwrites its oldest events, only on the measured CPUs.

use std::collections::VecDeque;
use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::error::TraceError;
use crate::parse::{parse_trace, parse_trace_with_losses, TraceEvent};
use crate::testing::now_ns;
use crate::tracefs::{check_lockdown, ensure_tracefs, mounted_tracefs};

/// Prefix of rtgauge's instance names.
pub const INSTANCE_PREFIX: &str = "rtgauge-";
/// Default ring buffer per CPU. On kernels before 5.7 (no `pause-on-trace` option), and at the
/// end of a run, reading stops recording (every CPU of the instance) for a time
/// proportional to what the buffer holds (about 1.4 ms for 64 KiB, 5 ms for 256 KiB, 20 ms
/// for 1 MiB on the development machine), and a spike during a stop has no events to explain
/// it: 128 KiB halved such windows against 256 KiB and still holds 120 ms of a CPU busy with
/// fork/exec, five batches of the reader (docs/trace.md, "Why windows are empty").
pub const DEFAULT_BUFFER_SIZE_KB: u32 = 128;
/// The largest ring buffer per CPU [`TraceSession::fit_buffer_to`] asks for.
pub const MAX_FITTED_BUFFER_KB: u64 = 1024 * 1024;
/// How many recent recording pauses are remembered to flag windows that overlap one.
const PAUSES_KEPT: usize = 32;

/// The events asked for, as `system:event` (`*` matches within the system). Missing ones are
/// skipped and listed in [`TraceSession::events_missing`].
///
/// Only what the attribution reads: every event recorded on a measured CPU costs its thread
/// time (the observer effect, docs/validation.md). Left out because nothing reads them:
/// `sched_waking` (`sched_wakeup` marks the same wake-up), `sched_migrate_task`,
/// `softirq_raise`, `hrtimer_expire_exit` and `ipi:*` (the sender's side; the receiving CPU's
/// handler is its `irq_vectors` entry and exit).
pub const WANTED_EVENTS: &[&str] = &[
    "sched:sched_switch",
    "sched:sched_wakeup",
    "irq:irq_handler_entry",
    "irq:irq_handler_exit",
    "irq:softirq_entry",
    "irq:softirq_exit",
    // Entries and exits of the system vectors (local timer, reschedule, call function, …);
    // the vector_* allocation events of the same system are not about latency.
    "irq_vectors:*_entry",
    "irq_vectors:*_exit",
    "timer:hrtimer_expire_entry",
    "workqueue:workqueue_execute_start",
    "workqueue:workqueue_execute_end",
    "nmi:nmi_handler",
];

/// What to trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceConfig {
    /// The measured CPUs (the instance records only these).
    pub cpus: Vec<usize>,
    /// Ring buffer size per CPU in KiB.
    pub buffer_size_kb: u32,
}

impl TraceConfig {
    pub fn new(cpus: Vec<usize>) -> Self {
        Self {
            cpus,
            buffer_size_kb: DEFAULT_BUFFER_SIZE_KB,
        }
    }
}

/// Events read from one CPU, with what they cost to read.
#[derive(Debug, Clone)]
pub struct CpuTrace {
    pub cpu: usize,
    pub events: Vec<TraceEvent>,
    /// The ring buffer overwrote events before they were read (for a window read by
    /// [`TraceSession::read_window`]: inside that window).
    pub events_lost: bool,
    /// How long recording was stopped to read them.
    pub paused_for: Duration,
    /// Recording was stopped (for an earlier read) during the window asked for, so events of
    /// that stretch are missing. Only set by [`TraceSession::read_window`].
    pub window_incomplete: bool,
}

/// rtgauge's tracefs instance; removed when dropped.
#[derive(Debug)]
pub struct TraceSession {
    tracefs: PathBuf,
    dir: PathBuf,
    cpus: Vec<usize>,
    events_enabled: Vec<String>,
    events_missing: Vec<String>,
    /// The kernel lets the instance's `trace` file be read while recording goes on (the
    /// instance's `pause-on-trace` option, Linux 5.7 and later, is off): windows are read
    /// without stopping recording.
    reads_while_recording: bool,
    /// Recent [stopped, resumed] stretches (CLOCK_MONOTONIC ns), oldest first.
    pauses: Mutex<VecDeque<(u64, u64)>>,
}

static INSTANCE_SEQUENCE: AtomicU32 = AtomicU32::new(0);

impl TraceSession {
    /// Finds (or mounts) tracefs, creates the instance, configures and starts it.
    pub fn start(config: &TraceConfig) -> Result<Self, TraceError> {
        let (tracefs, dir) = create_instance(&config.cpus)?;
        // From here on, Drop removes the instance whatever fails.
        let mut session = Self {
            tracefs,
            dir,
            cpus: config.cpus.clone(),
            events_enabled: Vec::new(),
            events_missing: Vec::new(),
            reads_while_recording: false,
            pauses: Mutex::new(VecDeque::with_capacity(PAUSES_KEPT)),
        };
        session.configure(config)?;
        Ok(session)
    }

    fn configure(&mut self, config: &TraceConfig) -> Result<(), TraceError> {
        self.write("tracing_on", "0")?;
        self.write("trace_clock", "mono")?;
        self.write("buffer_size_kb", &config.buffer_size_kb.to_string())?;
        // Overwrite the oldest events when full: the newest window is the one wanted.
        self.write("options/overwrite", "1")?;
        self.write("tracing_cpumask", &cpumask(&config.cpus))?;
        // Opening `trace` stops recording while the file is open unless this option is off;
        // off, the kernel's reader copes with the writer going on and marks where the writer
        // overtook it (`[LOST EVENTS]`). Kernels before 5.7 have no such option: their reads
        // stop recording.
        self.reads_while_recording = self.write("options/pause-on-trace", "0").is_ok();
        for wanted in WANTED_EVENTS {
            let found = self.enable_events(wanted)?;
            if found.is_empty() {
                self.events_missing.push((*wanted).to_string());
            }
            self.events_enabled.extend(found);
        }
        self.write("tracing_on", "1")
    }

    /// Enables `system:pattern` where `pattern` is a name, `*`, `*_entry` or `*_exit`.
    fn enable_events(&self, wanted: &str) -> Result<Vec<String>, TraceError> {
        let (system, pattern) = wanted.split_once(':').unwrap_or((wanted, "*"));
        let system_dir = self.dir.join("events").join(system);
        let Ok(entries) = fs::read_dir(&system_dir) else {
            return Ok(Vec::new());
        };
        let mut names: Vec<String> = entries
            .filter_map(|e| e.ok())
            .filter(|e| e.path().join("enable").is_file())
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|name| matches_pattern(name, pattern))
            .collect();
        names.sort();
        for name in &names {
            self.write(&format!("events/{system}/{name}/enable"), "1")?;
        }
        Ok(names
            .into_iter()
            .map(|name| format!("{system}:{name}"))
            .collect())
    }

    /// The events enabled, as `system:event`.
    pub fn events_enabled(&self) -> &[String] {
        &self.events_enabled
    }

    /// The wanted events this kernel does not have.
    pub fn events_missing(&self) -> &[String] {
        &self.events_missing
    }

    /// The instance's directory in tracefs.
    pub fn instance_dir(&self) -> &Path {
        &self.dir
    }

    /// The tracefs mount in use.
    pub fn tracefs(&self) -> &Path {
        &self.tracefs
    }

    /// The CPUs recorded.
    pub fn cpus(&self) -> &[usize] {
        &self.cpus
    }

    /// Stops recording (the buffer keeps its contents).
    pub fn pause(&self) -> Result<(), TraceError> {
        self.write("tracing_on", "0")
    }

    /// Resumes recording.
    pub fn resume(&self) -> Result<(), TraceError> {
        self.write("tracing_on", "1")
    }

    /// Whether windows are read while recording goes on (see [`Self::read_windows`]).
    pub fn reads_while_recording(&self) -> bool {
        self.reads_while_recording
    }

    /// Stops recording, reads and parses everything the buffer of `cpu` holds, and resumes.
    /// Recording resumes even when reading fails. For a reader that takes the whole buffer
    /// (at the end of a run): stopped, the recording cannot overtake the read.
    pub fn read_cpu(&self, cpu: usize) -> Result<CpuTrace, TraceError> {
        let (text, paused_for) = self.read_text(cpu, true)?;
        let (events, events_lost) = parse_trace(&text);
        Ok(CpuTrace {
            cpu,
            events,
            events_lost,
            paused_for,
            window_incomplete: false,
        })
    }

    /// The text of `cpu`'s buffer; recording stopped for the read when `pause`. Returns how
    /// long recording was stopped (zero when it was not).
    fn read_text(&self, cpu: usize, pause: bool) -> Result<(String, Duration), TraceError> {
        if !self.cpus.contains(&cpu) {
            return Err(TraceError::CpuNotTraced {
                cpu,
                traced: self.cpus.clone(),
            });
        }
        let path = self.dir.join(format!("per_cpu/cpu{cpu}/trace"));
        if !pause {
            let text =
                fs::read_to_string(&path).map_err(|source| TraceError::Io { path, source })?;
            return Ok((text, Duration::ZERO));
        }
        let started = Instant::now();
        let stopped_ns = now_ns();
        self.pause()?;
        let text = fs::read_to_string(&path);
        let resumed = self.resume();
        let paused_for = started.elapsed();
        self.remember_pause(stopped_ns, now_ns());
        let text = text.map_err(|source| TraceError::Io { path, source })?;
        resumed?;
        Ok((text, paused_for))
    }

    fn remember_pause(&self, stopped_ns: u64, resumed_ns: u64) {
        // A poisoned lock only means another reader panicked; the list is still usable.
        let mut pauses = self.pauses.lock().unwrap_or_else(|e| e.into_inner());
        if pauses.len() == PAUSES_KEPT {
            pauses.pop_front();
        }
        pauses.push_back((stopped_ns, resumed_ns));
    }

    /// Whether an earlier read stopped recording within [from_ns, to_ns]; `reading_paused`:
    /// the last pause remembered is the read in progress, which began after the window.
    fn paused_during(&self, from_ns: u64, to_ns: u64, reading_paused: bool) -> bool {
        let pauses = self.pauses.lock().unwrap_or_else(|e| e.into_inner());
        pauses
            .iter()
            .rev()
            .skip(usize::from(reading_paused))
            .any(|&(stopped, resumed)| stopped <= to_ns && resumed >= from_ns)
    }

    /// Reads `cpu` and keeps the events in [from_ns, to_ns] (CLOCK_MONOTONIC).
    pub fn read_window(
        &self,
        cpu: usize,
        from_ns: u64,
        to_ns: u64,
    ) -> Result<CpuTrace, TraceError> {
        let mut windows = self.read_windows(cpu, &[(from_ns, to_ns)])?;
        Ok(windows.remove(0))
    }

    /// Reads `cpu` once and returns the events of each window [from_ns, to_ns]: spikes that
    /// came close together cost one read. Recording goes on during the read where the kernel
    /// allows it ([`Self::reads_while_recording`]), else it stops for the read. A window is
    /// incomplete when an earlier read stopped recording inside it, and its events are lost
    /// when the buffer reports lost events inside it (a writer that overtook the reader).
    pub fn read_windows(
        &self,
        cpu: usize,
        windows: &[(u64, u64)],
    ) -> Result<Vec<CpuTrace>, TraceError> {
        let (text, paused_for) = self.read_text(cpu, !self.reads_while_recording)?;
        let (events, losses) = parse_trace_with_losses(&text);
        // Where events were lost, as CLOCK_MONOTONIC stretches between the neighbouring events.
        let gaps: Vec<(u64, u64)> = losses
            .iter()
            .map(|&i| {
                let before = i.checked_sub(1).map_or(0, |b| events[b].ts_ns);
                let after = events.get(i).map_or(u64::MAX, |e| e.ts_ns);
                (before, after)
            })
            .collect();
        // One CPU's buffer is read in time order; two binary searches find a window then.
        let sorted = events.windows(2).all(|w| w[0].ts_ns <= w[1].ts_ns);
        let window = |from_ns: u64, to_ns: u64| -> Vec<TraceEvent> {
            if sorted {
                let first = events.partition_point(|e| e.ts_ns < from_ns);
                let end = events.partition_point(|e| e.ts_ns <= to_ns);
                events[first..end.max(first)].to_vec()
            } else {
                events
                    .iter()
                    .filter(|e| e.ts_ns >= from_ns && e.ts_ns <= to_ns)
                    .cloned()
                    .collect()
            }
        };
        Ok(windows
            .iter()
            .map(|&(from_ns, to_ns)| CpuTrace {
                cpu,
                events: window(from_ns, to_ns),
                events_lost: gaps
                    .iter()
                    .any(|&(before, after)| before <= to_ns && after >= from_ns),
                paused_for,
                window_incomplete: self.paused_during(from_ns, to_ns, !paused_for.is_zero()),
            })
            .collect())
    }

    /// Sizes the ring buffers to hold `span` of recording from now on, for a reader that reads
    /// once at the end (every event kept rather than the newest): the bytes each CPU records
    /// are measured over `sample`, the busiest CPU's rate is taken for all with half again as
    /// much for headroom, and the size is capped at a quarter of the memory available now
    /// (shared by the CPUs) and [`MAX_FITTED_BUFFER_KB`] per CPU. The buffers are emptied.
    pub fn fit_buffer_to(&self, span: Duration, sample: Duration) -> Result<BufferFit, TraceError> {
        let bytes = |s: &Self| -> Result<u64, TraceError> {
            let mut most = 0;
            for cpu in &s.cpus {
                let path = s.dir.join(format!("per_cpu/cpu{cpu}/stats"));
                let text =
                    fs::read_to_string(&path).map_err(|source| TraceError::Io { path, source })?;
                most = most.max(stats_field(&text, "bytes").unwrap_or(0));
            }
            Ok(most)
        };
        self.clear()?;
        let started = Instant::now();
        std::thread::sleep(sample);
        let recorded = bytes(self)?;
        let bytes_per_second = recorded as f64 / started.elapsed().as_secs_f64().max(1e-3);
        let wanted_kb = (bytes_per_second * span.as_secs_f64() * 1.5 / 1024.0).ceil() as u64;
        let available_kb = fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|m| meminfo_kb(&m, "MemAvailable"));
        let cap_kb = available_kb
            .map_or(MAX_FITTED_BUFFER_KB, |kb| kb / 4 / self.cpus.len() as u64)
            .min(MAX_FITTED_BUFFER_KB);
        let kb = wanted_kb.clamp(
            DEFAULT_BUFFER_SIZE_KB as u64,
            cap_kb.max(DEFAULT_BUFFER_SIZE_KB as u64),
        );
        self.write("buffer_size_kb", &kb.to_string())?;
        self.clear()?;
        Ok(BufferFit {
            kb_per_cpu: kb,
            bytes_per_second,
            capped: wanted_kb > kb,
        })
    }

    /// Empties the ring buffers (all CPUs of the instance). Slow (the kernel waits for an RCU
    /// grace period, 10–130 ms measured): not for use between reads.
    pub fn clear(&self) -> Result<(), TraceError> {
        self.write("trace", "")
    }

    fn write(&self, file: &str, value: &str) -> Result<(), TraceError> {
        let path = self.dir.join(file);
        fs::write(&path, value).map_err(|source| {
            if source.kind() == ErrorKind::PermissionDenied {
                TraceError::NotPermitted { path }
            } else {
                TraceError::Io { path, source }
            }
        })
    }
}

impl Drop for TraceSession {
    fn drop(&mut self) {
        let _ = self.write("tracing_on", "0");
        // rmdir fails while events are being read; a short retry covers a reader that is
        // just finishing.
        for _ in 0..10 {
            if remove_instance(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// Finds (or mounts) tracefs and creates a new instance of rtgauge's to trace `cpus` (none is
/// refused): (tracefs, instance dir).
/// The caller removes the instance ([`remove_instance`]) when done.
pub(crate) fn create_instance(cpus: &[usize]) -> Result<(PathBuf, PathBuf), TraceError> {
    if cpus.is_empty() {
        return Err(TraceError::NoCpus);
    }
    check_lockdown()?;
    let tracefs = ensure_tracefs()?;
    let instances = tracefs.join("instances");
    let sequence = INSTANCE_SEQUENCE.fetch_add(1, Ordering::Relaxed);
    let name = if sequence == 0 {
        format!("{INSTANCE_PREFIX}{}", std::process::id())
    } else {
        format!("{INSTANCE_PREFIX}{}-{sequence}", std::process::id())
    };
    let dir = instances.join(&name);
    match fs::create_dir(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == ErrorKind::PermissionDenied => {
            return Err(TraceError::NotPermitted { path: dir })
        }
        Err(e) if e.kind() == ErrorKind::NotFound => {
            return Err(TraceError::NoInstances { path: instances })
        }
        Err(source) => return Err(TraceError::Io { path: dir, source }),
    }
    Ok((tracefs, dir))
}

pub(crate) fn remove_instance(dir: &Path) -> std::io::Result<()> {
    match fs::remove_dir(dir) {
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

/// Removes the instances `rtgauge-<pid>[-<n>]` whose process no longer exists (left by a run
/// killed with SIGKILL). Returns the names removed; does nothing when tracefs is not mounted.
pub fn remove_stale() -> Result<Vec<String>, TraceError> {
    let Some(tracefs) = mounted_tracefs() else {
        return Ok(Vec::new());
    };
    remove_stale_in(&tracefs)
}

/// [`remove_stale`] for a given tracefs mount.
pub fn remove_stale_in(tracefs: &Path) -> Result<Vec<String>, TraceError> {
    let instances = tracefs.join("instances");
    let entries = match fs::read_dir(&instances) {
        Ok(entries) => entries,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) if e.kind() == ErrorKind::PermissionDenied => {
            return Err(TraceError::NotPermitted { path: instances })
        }
        Err(source) => {
            return Err(TraceError::Io {
                path: instances,
                source,
            })
        }
    };
    let mut removed = Vec::new();
    for entry in entries.filter_map(|e| e.ok()) {
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        let Some(pid) = instance_pid(&name) else {
            continue;
        };
        if process_exists(pid) {
            continue;
        }
        let dir = entry.path();
        let _ = fs::write(dir.join("tracing_on"), "0");
        remove_instance(&dir).map_err(|source| TraceError::Io { path: dir, source })?;
        removed.push(name);
    }
    removed.sort();
    Ok(removed)
}

/// The pid in `rtgauge-<pid>` or `rtgauge-<pid>-<n>`.
pub fn instance_pid(name: &str) -> Option<i32> {
    let rest = name.strip_prefix(INSTANCE_PREFIX)?;
    let pid = rest.split_once('-').map_or(rest, |(pid, n)| {
        if n.bytes().all(|b| b.is_ascii_digit()) && !n.is_empty() {
            pid
        } else {
            ""
        }
    });
    pid.parse().ok().filter(|&p| p > 0)
}

fn process_exists(pid: i32) -> bool {
    // kill(pid, 0) checks existence without signalling; EPERM means it exists.
    // SAFETY: signal 0 sends nothing.
    let result = unsafe { libc::kill(pid, 0) };
    result == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// What [`TraceSession::fit_buffer_to`] chose.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BufferFit {
    pub kb_per_cpu: u64,
    /// What the busiest CPU recorded per second while the size was measured.
    pub bytes_per_second: f64,
    /// Whether the wanted size was above the cap (the run may outgrow the buffer).
    pub capped: bool,
}

/// A `name: value` field of a per-CPU `stats` file of tracefs.
fn stats_field(stats: &str, name: &str) -> Option<u64> {
    stats.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        (key.trim() == name).then(|| value.trim().parse().ok())?
    })
}

/// A `Name:   123 kB` field of /proc/meminfo, in KiB.
fn meminfo_kb(meminfo: &str, name: &str) -> Option<u64> {
    meminfo.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        (key == name).then(|| value.trim().trim_end_matches("kB").trim().parse().ok())?
    })
}

/// The tracing_cpumask text for a CPU list: comma-separated 32-bit hex words, most
/// significant first, as the kernel prints it.
pub fn cpumask(cpus: &[usize]) -> String {
    let words = cpus.iter().max().map_or(1, |&m| m / 32 + 1);
    let mut mask = vec![0u32; words];
    for &cpu in cpus {
        mask[cpu / 32] |= 1 << (cpu % 32);
    }
    mask.iter()
        .rev()
        .map(|w| format!("{w:08x}"))
        .collect::<Vec<_>>()
        .join(",")
}

fn matches_pattern(name: &str, pattern: &str) -> bool {
    match pattern.strip_prefix('*') {
        Some(suffix) => name.ends_with(suffix),
        None => name == pattern,
    }
}

/// Whether RT throttling is on now (kernel.sched_rt_runtime_us non-negative and below its
/// period): what the attribution names a normal task taking a waiting real-time thread's CPU.
/// Unreadable: on, the kernel's default.
pub fn rt_throttling_on() -> bool {
    let read = |f: &str| {
        std::fs::read_to_string(format!("/proc/sys/kernel/{f}"))
            .ok()
            .and_then(|t| t.trim().parse::<i64>().ok())
    };
    match (read("sched_rt_runtime_us"), read("sched_rt_period_us")) {
        (Some(runtime), Some(period)) => runtime >= 0 && runtime < period,
        (Some(runtime), None) => runtime >= 0,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn stats_and_meminfo_fields_are_read_by_name() {
        let stats = "entries: 1981\noverrun: 0\ncommit overrun: 0\nbytes: 81020\noldest event ts: 14297.782424\n";
        assert_eq!(super::stats_field(stats, "bytes"), Some(81020));
        assert_eq!(super::stats_field(stats, "overrun"), Some(0));
        assert_eq!(super::stats_field(stats, "missing"), None);
        let meminfo =
            "MemTotal:       24589344 kB\nMemFree:         1234 kB\nMemAvailable:   20000000 kB\n";
        assert_eq!(super::meminfo_kb(meminfo, "MemAvailable"), Some(20_000_000));
        assert_eq!(super::meminfo_kb(meminfo, "Mem"), None);
    }

    use super::*;

    #[test]
    fn cpumask_is_written_as_the_kernel_prints_it() {
        assert_eq!(cpumask(&[0]), "00000001");
        assert_eq!(cpumask(&[1, 3]), "0000000a");
        assert_eq!(cpumask(&[0, 33]), "00000002,00000001");
    }

    #[test]
    fn instance_names_give_their_pid() {
        assert_eq!(instance_pid("rtgauge-123"), Some(123));
        assert_eq!(instance_pid("rtgauge-123-4"), Some(123));
        assert_eq!(instance_pid("rtgauge-abc"), None);
        assert_eq!(instance_pid("rtgauge-12-x"), None);
        assert_eq!(instance_pid("mine-123"), None);
        assert_eq!(instance_pid("rtgauge-0"), None);
    }

    #[test]
    fn event_patterns_match_entries_and_exits() {
        assert!(matches_pattern("local_timer_entry", "*_entry"));
        assert!(!matches_pattern("vector_alloc", "*_entry"));
        assert!(matches_pattern("ipi_send_cpu", "*"));
        assert!(matches_pattern("sched_switch", "sched_switch"));
        assert!(!matches_pattern("sched_switch_x", "sched_switch"));
    }
}
