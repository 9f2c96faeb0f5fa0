//! Where the kernel's view of a late sample comes from (`--trace`).
//!
//! - **The flight recorder** (rtgauge-bpf), where it loads: BPF programs on the scheduler and
//!   interrupt tracepoints keep each measured CPU's last events in the kernel, and send a CPU's
//!   events to user space only after a watched thread woke late. On-time wake-ups cost a few
//!   stores in the kernel and nothing is written out for them.
//! - **The tracefs session** (rtgauge-trace): every event of the measured CPUs goes into the
//!   ftrace ring buffer and windows are read back from its text. It is the fallback where BPF,
//!   the kernel's BTF or the privilege is missing, and the source for probes that read a whole
//!   run's trace (noise splits every stall by cause, a task set's calibration times the
//!   interrupts): the recorder only keeps the last events of a CPU.
//!
//! `RTGAUGE_TRACE_RECORDER=tracefs` forces the tracefs session; `=bpf` insists on the flight
//! recorder (the run says why when it cannot load) rather than falling back.

use rtgauge_bpf::{Recorder, Spike, Watch};
use rtgauge_trace::{CpuTrace, TraceConfig, TraceError, TraceSession};
use std::collections::VecDeque;
use std::sync::Mutex;

/// The environment variable that picks the recorder: `tracefs`, `bpf` or unset (automatic).
pub const RECORDER_ENV: &str = "RTGAUGE_TRACE_RECORDER";

/// Windows the kernel sent that no candidate claimed yet (32 KiB each): a new maximum whose
/// window comes later than the next ones must still find it, but memory stays bounded.
const KEPT_WINDOWS: usize = 64;

/// Why a window could not be had.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error(transparent)]
    Tracefs(#[from] TraceError),
    #[error(transparent)]
    Kernel(#[from] rtgauge_bpf::Error),
}

/// The recorder a run's attribution reads.
pub enum TraceSource {
    /// The BPF flight recorder (boxed: one per run, and much larger than a session).
    Kernel(Box<KernelRecorder>),
    /// rtgauge's tracefs session.
    Tracefs(TraceSession),
}

/// Which recorder the user asked for through [`RECORDER_ENV`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecorderChoice {
    /// The flight recorder where it loads, else tracefs.
    Automatic,
    Bpf,
    Tracefs,
}

impl RecorderChoice {
    /// From the environment; an unknown value is refused with the accepted ones.
    pub fn from_env() -> Result<RecorderChoice, String> {
        match std::env::var(RECORDER_ENV).ok().as_deref() {
            None | Some("" | "auto") => Ok(RecorderChoice::Automatic),
            Some("bpf") => Ok(RecorderChoice::Bpf),
            Some("tracefs") => Ok(RecorderChoice::Tracefs),
            Some(other) => Err(format!(
                "{RECORDER_ENV}={other:?} is not a trace recorder; use auto, bpf or tracefs"
            )),
        }
    }
}

/// A started source, with the one line that says why it is tracefs when the flight recorder
/// was wanted but did not load.
pub struct Started {
    pub source: TraceSource,
    pub fallback: Option<String>,
}

impl TraceSource {
    /// Starts recording on `cpus`: the flight recorder unless `whole_run` (a probe of the plan
    /// reads the whole run's trace) or `choice` says tracefs, then the tracefs session.
    pub fn start(
        cpus: &[usize],
        whole_run: bool,
        choice: RecorderChoice,
    ) -> Result<Started, SourceError> {
        let mut fallback = None;
        if choice != RecorderChoice::Tracefs && !whole_run {
            match KernelRecorder::start(cpus) {
                Ok(kernel) => {
                    return Ok(Started {
                        source: TraceSource::Kernel(Box::new(kernel)),
                        fallback: None,
                    })
                }
                Err(e) if choice == RecorderChoice::Bpf => return Err(e.into()),
                Err(e) => fallback = Some(format!("attribution uses tracefs: {e}")),
            }
        }
        // Sessions of runs killed with SIGKILL; failing to list them is not this run's problem.
        let _ = rtgauge_trace::remove_stale();
        let session = TraceSession::start(&TraceConfig::new(cpus.to_vec()))?;
        Ok(Started {
            source: TraceSource::Tracefs(session),
            fallback,
        })
    }

    /// The name the result records: `bpf` or `tracefs`.
    pub fn name(&self) -> &'static str {
        match self {
            TraceSource::Kernel(_) => "bpf",
            TraceSource::Tracefs(_) => "tracefs",
        }
    }

    /// The tracefs session, for probes that read the whole run's trace.
    pub fn tracefs(&self) -> Option<&TraceSession> {
        match self {
            TraceSource::Tracefs(session) => Some(session),
            TraceSource::Kernel(_) => None,
        }
    }

    /// The flight recorder, whose watch slots the measuring threads fill.
    pub fn kernel(&self) -> Option<&KernelRecorder> {
        match self {
            TraceSource::Kernel(kernel) => Some(kernel),
            TraceSource::Tracefs(_) => None,
        }
    }

    /// Events attribution wanted and this source does not record.
    pub fn events_missing(&self) -> Vec<String> {
        match self {
            TraceSource::Tracefs(session) => session.events_missing().to_vec(),
            TraceSource::Kernel(kernel) => kernel.recorder.events_missing(),
        }
    }

    /// The events of `cpu` in each window: for wake-up `(programmed, woke)` of thread `tid`,
    /// from `margin_ns` before `programmed` to `woke`.
    pub fn windows(
        &self,
        cpu: usize,
        tid: u32,
        wakeups: &[(u64, u64)],
        margin_ns: u64,
    ) -> Result<Vec<CpuTrace>, SourceError> {
        match self {
            TraceSource::Tracefs(session) => {
                let windows: Vec<(u64, u64)> = wakeups
                    .iter()
                    .map(|&(p, w)| (p.saturating_sub(margin_ns), w))
                    .collect();
                Ok(session.read_windows(cpu, &windows)?)
            }
            TraceSource::Kernel(kernel) => kernel.windows(cpu, tid, wakeups, margin_ns),
        }
    }

    /// Takes in what the kernel sent since the last call, so its buffer never fills while no
    /// candidate asks; a no-op for tracefs.
    pub fn poll(&self) {
        if let TraceSource::Kernel(kernel) = self {
            drop(kernel.receive());
        }
    }
}

/// The flight recorder and the windows it sent.
pub struct KernelRecorder {
    recorder: Recorder,
    received: Mutex<VecDeque<Spike>>,
}

impl KernelRecorder {
    fn start(cpus: &[usize]) -> Result<KernelRecorder, rtgauge_bpf::Error> {
        let cpus: Vec<u32> = cpus
            .iter()
            .map(|&c| u32::try_from(c).unwrap_or(u32::MAX))
            .collect();
        let recorder = Recorder::start(&cpus)?;
        // Loading parsed the kernel's BTF (tens of MB in memory, freed now): give the pages
        // back rather than keep them for the rest of a long run.
        // SAFETY: malloc_trim only releases free memory of the allocator.
        #[cfg(target_env = "gnu")]
        unsafe {
            libc::malloc_trim(0);
        }
        Ok(KernelRecorder {
            recorder,
            received: Mutex::new(VecDeque::with_capacity(KEPT_WINDOWS)),
        })
    }

    /// The watch slot of `cpu`, for the thread that measures there.
    pub fn watch(&self, cpu: usize) -> Option<Watch<'_>> {
        self.recorder.watch(u32::try_from(cpu).ok()?)
    }

    fn receive(&self) -> std::sync::MutexGuard<'_, VecDeque<Spike>> {
        let mut received = self.received.lock().unwrap_or_else(|p| p.into_inner());
        while let Some(spike) = self.recorder.next_spike() {
            if received.len() == KEPT_WINDOWS {
                received.pop_front();
            }
            received.push_back(spike);
        }
        received
    }

    /// The window the kernel sent for each wake-up; a wake-up it did not send (not watched,
    /// such as an event-driven one, or late by less than the kernel's threshold on its own
    /// clock reading) gets the CPU's ring as it is now, whose window says when it had already
    /// been overwritten.
    fn windows(
        &self,
        cpu: usize,
        tid: u32,
        wakeups: &[(u64, u64)],
        margin_ns: u64,
    ) -> Result<Vec<CpuTrace>, SourceError> {
        let mut received = self.receive();
        let mut live: Option<Spike> = None;
        let mut out = Vec::with_capacity(wakeups.len());
        for &(programmed, woke) in wakeups {
            let from = programmed.saturating_sub(margin_ns);
            if let Some(spike) = claim(&mut received, cpu, tid, programmed) {
                out.push(spike.window(from, woke));
                continue;
            }
            if live.is_none() {
                let ring = self
                    .recorder
                    .snapshot(u32::try_from(cpu).unwrap_or(u32::MAX))?;
                live = Some(Spike {
                    cpu: u32::try_from(cpu).unwrap_or(u32::MAX),
                    tid,
                    programmed_ns: programmed,
                    woke_ns: woke,
                    ring: Box::new(ring),
                });
            }
            out.push(live.as_ref().expect("set above").window(from, woke));
        }
        Ok(out)
    }
}

/// The doctor's verdict on the flight recorder: whether attribution can stay on here at
/// little cost. As root it loads the recorder for a moment (the only way to know that the
/// kernel accepts it); otherwise it says what loading needs.
pub fn flight_recorder_check() -> rtgauge_result::Check {
    use rtgauge_result::{Check, Status};
    const WHY: &str = "long runs, soaks and `--trace` explain late wake-ups with rtgauge's \
        flight recorder in the kernel (BPF), which costs far less than tracing through tracefs; \
        where it cannot load, `--trace` uses tracefs and long runs are not explained.";
    let verdict = |status, found: String| {
        Check::new(
            "flight-recorder",
            "Flight recorder (BPF)",
            status,
            found,
            WHY,
        )
    };
    if !Recorder::built() {
        return verdict(Status::Warn, rtgauge_bpf::Error::NotBuilt.to_string())
            .fix("use a release build of rtgauge (built with clang)");
    }
    if !std::path::Path::new("/sys/kernel/btf/vmlinux").exists() {
        return verdict(Status::Warn, rtgauge_bpf::Error::NoBtf.to_string())
            .fix("use a kernel built with CONFIG_DEBUG_INFO_BTF (most distribution kernels are)");
    }
    if rtgauge_os::process::euid() != 0 {
        return verdict(
            Status::Ok,
            "the kernel has BTF; loading the recorder needs root (or CAP_BPF and CAP_PERFMON): run as root to check that it loads".into(),
        );
    }
    match KernelRecorder::start(&[0]) {
        Ok(_) => verdict(Status::Ok, "loads and records (BTF and BPF present)".into()),
        Err(e) => verdict(Status::Warn, e.to_string()),
    }
}

/// Takes out the window the kernel sent for thread `tid`'s wake-up programmed at
/// `programmed` on `cpu`, if it sent one.
fn claim(received: &mut VecDeque<Spike>, cpu: usize, tid: u32, programmed: u64) -> Option<Spike> {
    let i = received
        .iter()
        .position(|s| s.cpu as usize == cpu && s.tid == tid && s.programmed_ns == programmed)?;
    received.remove(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(cpu: u32, tid: u32, programmed_ns: u64) -> Spike {
        Spike {
            cpu,
            tid,
            programmed_ns,
            woke_ns: programmed_ns + 500_000,
            // SAFETY: RawRing is plain data (a counter and records) valid for all-zero bits.
            ring: Box::new(unsafe { std::mem::zeroed() }),
        }
    }

    #[test]
    fn a_window_is_claimed_once_by_its_cpu_thread_and_programmed_time() {
        let mut received: VecDeque<Spike> = [
            sent(1, 10, 1_000),
            sent(2, 10, 1_000),
            sent(1, 11, 1_000),
            sent(1, 10, 2_000),
        ]
        .into_iter()
        .collect();
        let got = claim(&mut received, 1, 10, 2_000).unwrap();
        assert_eq!((got.cpu, got.tid, got.programmed_ns), (1, 10, 2_000));
        assert!(claim(&mut received, 1, 10, 2_000).is_none(), "claimed once");
        assert!(
            claim(&mut received, 3, 10, 1_000).is_none(),
            "another CPU's"
        );
        assert_eq!(claim(&mut received, 2, 10, 1_000).unwrap().cpu, 2);
        assert_eq!(claim(&mut received, 1, 11, 1_000).unwrap().tid, 11);
        assert_eq!(received.len(), 1);
    }

    #[test]
    fn the_recorder_is_chosen_by_name_and_a_wrong_name_says_the_right_ones() {
        // One test sets and clears the variable, so tests in parallel do not see it.
        std::env::remove_var(RECORDER_ENV);
        assert_eq!(RecorderChoice::from_env(), Ok(RecorderChoice::Automatic));
        std::env::set_var(RECORDER_ENV, "tracefs");
        assert_eq!(RecorderChoice::from_env(), Ok(RecorderChoice::Tracefs));
        std::env::set_var(RECORDER_ENV, "bpf");
        assert_eq!(RecorderChoice::from_env(), Ok(RecorderChoice::Bpf));
        std::env::set_var(RECORDER_ENV, "ebpf");
        let e = RecorderChoice::from_env().unwrap_err();
        std::env::remove_var(RECORDER_ENV);
        assert!(e.contains("use auto, bpf or tracefs"), "{e}");
    }
}
