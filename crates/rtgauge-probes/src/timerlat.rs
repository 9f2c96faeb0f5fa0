//! `timerlat`: the kernel's own timer latency, measured by the kernel's `timerlat` tracer (the
//! "kernel" row beside rtgauge's user-space `cyclic`).
//!
//! The tracer arms a timer every period on each measured CPU; the timer's IRQ handler records
//! how late it fired (series `irq`) and wakes a kernel thread that records how late it ran
//! (series `thread`). The difference between `thread` and `cyclic`'s latency is what user
//! space adds (system call return, the scheduler's choice of a user thread); the difference
//! between `irq` and `thread` is what delayed the thread after the timer fired.
//!
//! It runs in rtgauge's own tracefs instance, but the tracer's settings (`osnoise/cpus`,
//! `osnoise/timerlat_period_us`, the stop thresholds, `print_stack`) are global: they are
//! saved before and written back after (see docs/trace.md). The samples are read from the
//! instance every 50 ms by this thread (the kernel measures; nothing here is timed).
//!
//! Skipped with the reason where the kernel has no timerlat tracer (CONFIG_TIMERLAT_TRACER)
//! or the process is not root.

use rtgauge_core::clock::now_ns;
use rtgauge_core::probe::{About, ParamSpec, Params, ProbeConfig, ProbeContext, ProbeError};
use rtgauge_core::probe::{ProbeOutput, TypedProbe};
use rtgauge_core::units::format_duration_exact;
use rtgauge_result::{Obtained, Series};
use rtgauge_stats::{Recorder, DEFAULT_INTERVAL_NS};
use rtgauge_trace::{
    timerlat_unavailable, TimerlatConfig, TimerlatContext, TimerlatSample, TimerlatSession,
    TraceError, TIMERLAT_PERIOD_US,
};
use std::collections::BTreeMap;
use std::time::Duration;

const PROBE: &str = crate::names::TIMERLAT;
const DESCRIPTION: &str =
    "the kernel's own timer latency (timerlat tracer): IRQ and kernel-thread context, per CPU";
// The tracer's kernel threads do not run in rtgauge's mode.
const ABOUT: About = About::new(PROBE, DESCRIPTION, &PARAMS).mode_independent();
const PARAMS: [ParamSpec; 2] = [
    ParamSpec::new(
        "period",
        "1ms (--period)",
        "timer period from 100us to 1s, with a unit: 100us, 1ms",
    ),
    ParamSpec::new(
        "interval",
        "1s",
        "width of the intervals whose maximum latency is kept (the maxima-over-time series)",
    ),
];
/// How often the samples are taken out of the ring buffer: at the default period that is
/// 100 lines (about 10 KiB) per CPU, far below what the buffer holds.
const READ_EVERY: Duration = Duration::from_millis(50);
const BUFFER_SIZE_KB: u32 = 1024;

pub struct Timerlat;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    period_ns: u64,
    interval_ns: u64,
}

impl ProbeConfig for Config {
    fn parse(params: &Params) -> Result<Config, ProbeError> {
        let period_ns = params.duration_ns("period", rtgauge_core::probe::DEFAULT_PERIOD_NS)?;
        let period_us = period_ns / 1_000;
        if period_ns % 1_000 != 0 || !TIMERLAT_PERIOD_US.contains(&period_us) {
            return Err(ProbeError::Invalid {
                probe: PROBE,
                message: format!(
                    "period {} is not whole microseconds from 100us to 1s (the tracer's range); use e.g. period=1ms",
                    format_duration_exact(period_ns)
                ),
            });
        }
        Ok(Config {
            period_ns,
            interval_ns: params.duration_ns("interval", DEFAULT_INTERVAL_NS)?,
        })
    }

    fn resolved(&self) -> BTreeMap<String, String> {
        let mut p = BTreeMap::new();
        p.insert("period".into(), format_duration_exact(self.period_ns));
        p.insert("interval".into(), format_duration_exact(self.interval_ns));
        p
    }
}

impl TypedProbe for Timerlat {
    const ABOUT: About = ABOUT;
    type Config = Config;

    fn availability(&self) -> Result<(), String> {
        match timerlat_unavailable() {
            Some(reason) => Err(format!("{PROBE}: {reason}")),
            None => Ok(()),
        }
    }

    fn measure(&self, ctx: &ProbeContext, cfg: &mut Config) -> Result<ProbeOutput, ProbeError> {
        rtgauge_core::probe::check_period_fits(ctx, cfg.period_ns)?;
        let config = TimerlatConfig {
            cpus: ctx.cpus.to_vec(),
            period_us: cfg.period_ns / 1_000,
            buffer_size_kb: BUFFER_SIZE_KB,
        };
        let mut session = TimerlatSession::start(&config).map_err(unavailable_or_failed)?;
        let mut recorders = PerCpu::new(ctx.cpus, cfg.interval_ns);
        // One cell per CPU, as the per-thread probes have (progress, and `rtgauge monitor`'s
        // per-CPU histograms): this thread is the only one writing them.
        let live: Vec<_> = ctx
            .cpus
            .iter()
            .map(|cpu| ctx.live.register(format!("cpu{cpu}")))
            .collect();
        let mut late = vec![0u64; ctx.cpus.len()];
        let mut batch = Vec::with_capacity(4096);
        // The tracer's first wake-ups are the warm-up (its threads start, caches fill).
        let start = now_ns() + ctx.warmup_ns;
        // Samples the kernel took after the measuring time are not counted: the reads come
        // every 50 ms at best, and on a slow machine this thread may wake much later.
        let end = ctx
            .budget
            .duration_ns
            .map_or(u64::MAX, |d| start.saturating_add(d));
        let mut now = now_ns();
        while !ctx.stopped()
            && !ctx
                .budget
                .done(start, now.max(start), recorders.threads_min())
        {
            std::thread::sleep(READ_EVERY);
            // Before the read: when `now` ends the measuring time, the read has every
            // sample up to it.
            now = now_ns();
            batch.clear();
            session
                .read_samples(&mut batch)
                .map_err(unavailable_or_failed)?;
            for sample in batch.iter().filter(|s| (start..end).contains(&s.ts_ns)) {
                let cpu = recorders.record(sample, start);
                // The thread's latency is what a periodic task gets; a whole period late is
                // a missed period, as cyclic counts it.
                if let (Some(i), TimerlatContext::Thread) = (cpu, sample.context) {
                    late[i] += u64::from(sample.latency_ns >= cfg.period_ns);
                    live[i].publish_at(sample.latency_ns, late[i], sample.ts_ns);
                }
            }
        }
        let measured_ns = now.min(end).saturating_sub(start);
        drop(session);
        let mut out = ProbeOutput::measured(
            Obtained::default(),
            recorders.series(),
            Vec::new(),
            measured_ns,
        );
        out.params.insert(
            "changed-globally-and-restored".into(),
            "osnoise/cpus, osnoise/timerlat_period_us, osnoise/stop_tracing_us, osnoise/stop_tracing_total_us, osnoise/print_stack".into(),
        );
        Ok(out)
    }
}

/// The tracer is missing or not permitted → skipped with the reason; anything else failed.
fn unavailable_or_failed(e: TraceError) -> ProbeError {
    match e {
        TraceError::Io { path, source } => ProbeError::Os {
            probe: PROBE,
            what: format!("running the timerlat tracer ({})", path.display()),
            source,
        },
        other => ProbeError::Unavailable(format!("{PROBE}: {other}")),
    }
}

/// An IRQ and a thread recorder per measured CPU.
struct PerCpu {
    cpus: Vec<usize>,
    irq: Vec<Recorder>,
    thread: Vec<Recorder>,
}

impl PerCpu {
    fn new(cpus: &[usize], interval_ns: u64) -> Self {
        Self {
            cpus: cpus.to_vec(),
            irq: cpus.iter().map(|_| Recorder::new(interval_ns)).collect(),
            thread: cpus.iter().map(|_| Recorder::new(interval_ns)).collect(),
        }
    }

    /// Records a sample of a measured CPU and returns that CPU's position; samples of other
    /// CPUs (not expected) are dropped.
    fn record(&mut self, sample: &TimerlatSample, start_ns: u64) -> Option<usize> {
        let i = self.cpus.iter().position(|c| *c == sample.cpu as usize)?;
        let recorder = match sample.context {
            TimerlatContext::Irq => &mut self.irq[i],
            TimerlatContext::Thread => &mut self.thread[i],
        };
        recorder.record(sample.latency_ns, sample.ts_ns - start_ns);
        Some(i)
    }

    /// Thread-context samples of the CPU with fewest: a sample budget counts per CPU.
    fn threads_min(&self) -> u64 {
        self.thread.iter().map(Recorder::count).min().unwrap_or(0)
    }

    fn series(self) -> Vec<Series> {
        let mut series = Vec::new();
        for ((cpu, irq), thread) in self.cpus.iter().zip(self.irq).zip(self.thread) {
            series.push(Series::new("irq", irq.summary()).label("cpu", cpu));
            series.push(Series::new("thread", thread.summary()).label("cpu", cpu));
        }
        series
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtgauge_core::probe::Probe;

    fn params(pairs: &[(&str, &str)]) -> Params {
        Params::new(
            PROBE,
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    #[test]
    fn period_outside_the_tracers_range_is_refused_with_the_range() {
        for bad in ["50us", "2s", "1500ns"] {
            let err = Timerlat.validate(&params(&[("period", bad)])).unwrap_err();
            assert!(err.to_string().contains("100us to 1s"), "{bad}: {err}");
        }
        assert!(Timerlat.validate(&params(&[("period", "100us")])).is_ok());
    }

    #[test]
    fn resolved_parameters_parse_back_to_themselves() {
        let cfg = Config::parse(&params(&[("period", "250us")])).unwrap();
        let again = Config::parse(&params(
            &cfg.resolved()
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect::<Vec<_>>(),
        ))
        .unwrap();
        assert_eq!(cfg, again);
    }

    #[test]
    fn samples_go_to_the_series_of_their_cpu_and_context() {
        let mut per_cpu = PerCpu::new(&[1, 3], DEFAULT_INTERVAL_NS);
        let sample = |cpu, context, latency_ns| TimerlatSample {
            cpu,
            ts_ns: 2_000,
            activation: 1,
            context,
            latency_ns,
        };
        per_cpu.record(&sample(3, TimerlatContext::Irq, 900), 1_000);
        per_cpu.record(&sample(3, TimerlatContext::Thread, 9_000), 1_000);
        per_cpu.record(&sample(1, TimerlatContext::Thread, 5_000), 1_000);
        per_cpu.record(&sample(7, TimerlatContext::Thread, 5_000), 1_000);
        assert_eq!(per_cpu.threads_min(), 1);
        let series = per_cpu.series();
        let names: Vec<_> = series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["irq", "thread", "irq", "thread"]);
        assert_eq!(series[0].stats.count, 0);
        assert_eq!(series[2].stats.count, 1);
        assert_eq!(series[3].stats.max_ns, Some(9_000));
    }

    #[test]
    fn skipped_with_the_reason_where_the_tracer_cannot_run() {
        if let Err(reason) = Probe::availability(&Timerlat) {
            assert!(reason.starts_with("timerlat: "), "{reason}");
            assert!(
                reason.contains("root") || reason.contains("CONFIG_"),
                "{reason}"
            );
        }
    }
}
