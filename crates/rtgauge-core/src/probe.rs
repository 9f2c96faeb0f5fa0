//! The interface every probe implements, and what the runner hands it.

use crate::live::LiveBoard;
use crate::rt::{self, Mode, RtError};
use crate::units::{self, UnitError};
pub use rtgauge_record::{RecordingHub, SampleSink, SeriesDef, SinkSlots};
use rtgauge_result::{Calibration, Obtained, Series};
use std::any::Any;
use std::collections::BTreeMap;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Why a probe could not produce a result.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error(transparent)]
    Rt(#[from] RtError),
    #[error("probe {probe}: parameter {key}: {source}")]
    Param {
        probe: &'static str,
        key: String,
        source: UnitError,
    },
    #[error("probe {probe}: {message}")]
    Invalid {
        probe: &'static str,
        message: String,
    },
    /// The probe cannot run on this machine; the run records it as skipped with the reason.
    #[error("{0}")]
    Unavailable(String),
    /// The raw-sample recording (--record) could not be opened.
    #[error(transparent)]
    Record(#[from] rtgauge_record::RecordError),
    #[error("probe {probe}: {what}: {source}")]
    Os {
        probe: &'static str,
        what: String,
        source: std::io::Error,
    },
}

impl ProbeError {
    /// The last OS error, with what was being done.
    pub fn os(probe: &'static str, what: impl Into<String>) -> ProbeError {
        ProbeError::Os {
            probe,
            what: what.into(),
            source: std::io::Error::last_os_error(),
        }
    }
}

/// One parameter a probe takes (`--set PROBE.KEY=VALUE`, or a suite's table), as
/// `rtgauge probes` shows it. The probe's table of these is also what unknown keys are
/// checked against, so what is documented and what is accepted cannot drift apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamSpec {
    pub name: &'static str,
    /// The value used when the parameter is not given, in words where it depends on the run.
    pub default: &'static str,
    /// One line: what it sets and the accepted values.
    pub help: &'static str,
}

impl ParamSpec {
    pub const fn new(name: &'static str, default: &'static str, help: &'static str) -> ParamSpec {
        ParamSpec {
            name,
            default,
            help,
        }
    }
}

/// Probe parameters: as text from `--set key=value` or a suite file, or already typed by a
/// front end that parsed its own flag (`--period`), read through typed accessors that name the
/// parameter in their errors.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Params {
    probe: &'static str,
    /// Every value as text: as written, or the exact form of a typed value (what the result
    /// records and messages quote).
    values: BTreeMap<String, String>,
    /// Durations given typed ([`Params::set_duration`]): read as they are, never parsed again.
    durations: BTreeMap<String, u64>,
}

impl Params {
    pub fn new(probe: &'static str, values: BTreeMap<String, String>) -> Params {
        Params {
            probe,
            values,
            durations: BTreeMap::new(),
        }
    }

    /// Sets `key` to `value` as written (a later setting replaces an earlier one).
    pub fn set(&mut self, key: &str, value: String) {
        self.durations.remove(key);
        self.values.insert(key.to_string(), value);
    }

    /// Sets `key` to a duration already parsed: [`Params::duration_ns`] returns it as is, and
    /// its text is the exact form (`1234567ns` stays `1234567ns`).
    pub fn set_duration(&mut self, key: &str, ns: u64) {
        self.values
            .insert(key.to_string(), units::format_duration_exact(ns));
        self.durations.insert(key.to_string(), ns);
    }

    /// Parameters from `(key, value)` pairs, as a suite or `--set` would give them.
    pub fn of(probe: &'static str, pairs: &[(&str, &str)]) -> Params {
        let values = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Params::new(probe, values)
    }

    /// The probe these parameters are for (errors name it).
    pub fn probe(&self) -> &'static str {
        self.probe
    }

    pub fn raw(&self) -> &BTreeMap<String, String> {
        &self.values
    }

    /// Refuses keys the probe does not know, listing the ones it does.
    pub fn check_known(&self, known: &[ParamSpec]) -> Result<(), ProbeError> {
        match self
            .values
            .keys()
            .find(|k| !known.iter().any(|p| p.name == k.as_str()))
        {
            Some(k) if known.is_empty() => Err(ProbeError::Invalid {
                probe: self.probe,
                message: format!(
                    "unknown parameter '{}'; this probe takes no parameters",
                    units::quote(k)
                ),
            }),
            Some(k) => Err(ProbeError::Invalid {
                probe: self.probe,
                message: format!(
                    "unknown parameter '{}'; known parameters: {}",
                    units::quote(k),
                    known.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
                ),
            }),
            None => Ok(()),
        }
    }

    pub fn text(&self, key: &str, default: &str) -> String {
        self.values
            .get(key)
            .cloned()
            .unwrap_or_else(|| default.to_string())
    }

    /// A comma-separated list.
    pub fn list(&self, key: &str, default: &str) -> Vec<String> {
        self.text(key, default)
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect()
    }

    /// A list whose every item must be one of `accepted` (`all` selects all of them).
    pub fn choices(
        &self,
        key: &str,
        default: &str,
        accepted: &[&str],
    ) -> Result<Vec<String>, ProbeError> {
        let items = self.list(key, default);
        if items.iter().any(|i| i == "all") {
            return Ok(accepted.iter().map(|s| s.to_string()).collect());
        }
        if let Some(bad) = items.iter().find(|i| !accepted.contains(&i.as_str())) {
            return Err(ProbeError::Invalid {
                probe: self.probe,
                message: format!(
                    "unknown {key} '{}'; accepted: {}, or all",
                    units::quote(bad),
                    accepted.join(", ")
                ),
            });
        }
        Ok(items)
    }

    pub fn duration_ns(&self, key: &str, default_ns: u64) -> Result<u64, ProbeError> {
        if let Some(&ns) = self.durations.get(key) {
            return Ok(ns);
        }
        match self.values.get(key) {
            None => Ok(default_ns),
            Some(v) => units::parse_duration_ns(v).map_err(|source| self.param_error(key, source)),
        }
    }

    pub fn size(&self, key: &str, default: u64) -> Result<u64, ProbeError> {
        match self.values.get(key) {
            None => Ok(default),
            Some(v) => units::parse_size(v).map_err(|source| self.param_error(key, source)),
        }
    }

    pub fn sizes(&self, key: &str, default: &str) -> Result<Vec<u64>, ProbeError> {
        self.list(key, default)
            .iter()
            .map(|s| units::parse_size(s).map_err(|source| self.param_error(key, source)))
            .collect()
    }

    pub fn count(&self, key: &str, default: u64) -> Result<u64, ProbeError> {
        match self.values.get(key) {
            None => Ok(default),
            Some(v) => v.parse::<u64>().ok().filter(|&n| n > 0).ok_or_else(|| {
                self.param_error(
                    key,
                    UnitError {
                        input: v.clone(),
                        expected: "a positive whole number",
                    },
                )
            }),
        }
    }

    fn param_error(&self, key: &str, source: UnitError) -> ProbeError {
        ProbeError::Param {
            probe: self.probe,
            key: key.to_string(),
            source,
        }
    }
}

/// `params["key"]`: the value of a parameter that is set, as text.
impl std::ops::Index<&str> for Params {
    type Output = String;

    fn index(&self, key: &str) -> &String {
        &self.values[key]
    }
}

/// The period of the periodic probes (cyclic's wake-ups, response's events), unless given.
pub const DEFAULT_PERIOD_NS: u64 = 1_000_000;
/// Below this, the wake-up path itself is most of the period on common hardware.
pub const MIN_PERIOD_NS: u64 = 10_000;
/// Above this a run measures a handful of cycles at best; it also bounds how long a measuring
/// thread can sleep past the end of the run.
pub const MAX_PERIOD_NS: u64 = 10_000_000_000;

/// The `period` parameter of a periodic probe, within [`MIN_PERIOD_NS`]..=[`MAX_PERIOD_NS`].
pub fn period_param(params: &Params) -> Result<u64, ProbeError> {
    let period_ns = params.duration_ns("period", DEFAULT_PERIOD_NS)?;
    if !(MIN_PERIOD_NS..=MAX_PERIOD_NS).contains(&period_ns) {
        return Err(ProbeError::Invalid {
            probe: params.probe,
            message: format!(
                "period {} is outside 10us..10s; use e.g. period=25us or period=1ms",
                units::format_duration_exact(period_ns)
            ),
        });
    }
    Ok(period_ns)
}

/// Refuses a period the measuring duration cannot hold even once: the run would end with no
/// sample after sleeping a whole period.
pub fn check_period_fits(ctx: &ProbeContext, period_ns: u64) -> Result<(), ProbeError> {
    match ctx.budget.duration_ns.filter(|&d| d < period_ns) {
        None => Ok(()),
        Some(duration) => Err(ProbeError::Invalid {
            probe: ctx.params.probe,
            message: format!(
                "period {} is longer than the measuring duration {}: no cycle would be measured; shorten the period or lengthen --duration",
                units::format_duration_exact(period_ns),
                units::format_duration_exact(duration)
            ),
        }),
    }
}

/// How long a probe measures: a duration, a number of samples per series, or both (first
/// reached wins).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    pub duration_ns: Option<u64>,
    pub loops: Option<u64>,
}

impl Budget {
    /// Whether a loop that started at `start_ns` and has taken `samples` is done at `now_ns`.
    #[inline]
    pub fn done(&self, start_ns: u64, now_ns: u64, samples: u64) -> bool {
        self.duration_ns
            .is_some_and(|d| now_ns.saturating_sub(start_ns) >= d)
            || self.loops.is_some_and(|l| samples >= l)
    }
}

/// Everything a probe needs to run once (one mode, one load).
pub struct ProbeContext<'a> {
    pub mode: &'a Mode,
    /// CPUs to measure on.
    pub cpus: &'a [usize],
    pub params: &'a Params,
    pub budget: Budget,
    pub warmup_ns: u64,
    pub best_effort: bool,
    pub calibration: &'a Calibration,
    pub stop: &'a AtomicBool,
    pub live: &'a LiveBoard,
    /// Where raw samples go when this probe run is recorded (`--record`); probes that support
    /// recording open it once via [`ProbeContext::recording_sinks`].
    pub record: Option<&'a RecordingHub>,
    /// Late samples of probes with a programmed event time go here (`--trace`, `--break`);
    /// a measuring thread takes its producer with [`crate::spikes::SpikeTap::producer`].
    pub spikes: Option<&'a crate::spikes::SpikeTap<'a>>,
    /// The run's tracefs session (`--trace` in a run with a probe that
    /// [reads the whole trace](About::reads_whole_trace)), recording on the measured CPUs,
    /// for probes that read the kernel's view themselves (noise splits its stalls by cause).
    pub trace: Option<&'a rtgauge_trace::TraceSession>,
}

impl ProbeContext<'_> {
    #[inline]
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// One sample sink per measuring thread when this run is recorded (none otherwise): opens
    /// the recording with `series` (the id of a series is its index) before the threads start.
    pub fn recording_sinks(
        &self,
        series: Vec<SeriesDef>,
        threads: usize,
        time_origin: &str,
    ) -> Result<SinkSlots, ProbeError> {
        match self.record {
            Some(hub) => Ok(hub.open(series, threads, time_origin)?),
            None => Ok(SinkSlots::none()),
        }
    }

    /// Applies the mode to the calling (measuring) thread, pinned to `cpu`.
    pub fn enter_thread(&self, cpu: Option<usize>) -> Result<Obtained, ProbeError> {
        Ok(rt::enter_thread(self.mode, cpu, self.best_effort)?)
    }
}

/// What one probe run produced.
#[derive(Debug, Clone, Default)]
pub struct ProbeOutput {
    pub series: Vec<Series>,
    /// The thread part of what was obtained (policy, pinning, slack); the runner adds the
    /// process part.
    pub obtained: Obtained,
    /// Parameters resolved with defaults, for the result.
    pub params: BTreeMap<String, String>,
    pub measured_ns: u64,
    /// Things the reader should know (e.g. a period shorter than the machine sustains).
    pub warnings: Vec<String>,
}

impl ProbeOutput {
    /// The output of a probe that measured `series` in `measured_ns`, its threads having
    /// obtained `obtained`.
    pub fn measured(
        obtained: Obtained,
        series: Vec<Series>,
        warnings: Vec<String>,
        measured_ns: u64,
    ) -> ProbeOutput {
        ProbeOutput {
            series,
            obtained,
            params: BTreeMap::new(),
            measured_ns,
            warnings,
        }
    }
}

/// A probe's parameters parsed once, by the plan, into the probe's own typed configuration
/// ([`TypedProbe::Config`]), and carried as such to `measure`: no probe parses its text again.
#[derive(Clone)]
pub struct ResolvedConfig(Arc<dyn Any + Send + Sync>);

impl ResolvedConfig {
    pub fn new<C: Any + Send + Sync>(config: C) -> ResolvedConfig {
        ResolvedConfig(Arc::new(config))
    }

    /// The configuration, if it is of type `C`.
    pub fn get<C: Any>(&self) -> Option<&C> {
        self.0.downcast_ref()
    }
}

impl std::fmt::Debug for ResolvedConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ResolvedConfig")
    }
}

/// Two requests are equal when their parameters are: the configuration is parsed from them.
impl PartialEq for ResolvedConfig {
    fn eq(&self, _: &ResolvedConfig) -> bool {
        true
    }
}

/// One kind of measurement, as the runner, the plan and the listings see it. Probes do not
/// implement this directly: they implement [`TypedProbe`], and this follows.
pub trait Probe: Sync {
    fn name(&self) -> &'static str;
    /// One line: what it measures.
    fn describe(&self) -> &'static str;
    /// The parameters the probe accepts (`--set key=value`, suite keys), documented.
    fn parameters(&self) -> &'static [ParamSpec];
    /// Whether it can run here; Err says why not.
    fn availability(&self) -> Result<(), String>;
    /// Checks parameters before anything runs, so bad input fails fast.
    fn validate(&self, params: &Params) -> Result<(), ProbeError> {
        self.configure(params).map(drop)
    }
    /// Parses and validates the parameters once, into the probe's typed configuration: the
    /// plan does this, and the runner hands the result to [`Probe::run`].
    fn configure(&self, params: &Params) -> Result<ResolvedConfig, ProbeError>;
    /// The parameters as the probe will use them: parsed and validated once, defaults filled
    /// in, written back exactly (what the result records; it re-parses to the same values).
    fn resolve(&self, params: &Params) -> Result<BTreeMap<String, String>, ProbeError>;
    /// Measures with the configuration [`Probe::configure`] made.
    fn run(&self, ctx: &ProbeContext, config: &ResolvedConfig) -> Result<ProbeOutput, ProbeError>;
    /// See [`About::mode_independent`].
    fn mode_independent(&self) -> bool {
        false
    }
    /// How many of its threads hand samples to the trace (`--trace`, `--break`), one ring of
    /// candidates each: see [`TypedProbe::spike_threads`].
    fn spike_threads(&self, _config: &ResolvedConfig, cpus: usize) -> usize {
        cpus
    }
    /// See [`About::warmup_within_duration`].
    fn warmup_within_duration(&self) -> bool {
        false
    }
    /// See [`About::reads_whole_trace`].
    fn reads_whole_trace(&self) -> bool {
        false
    }
    /// How long one run of this probe takes with `budget` and `warmup_ns` (what the progress
    /// line counts down); None where only a sample count bounds it.
    fn wall_time_ns(&self, budget: &Budget, warmup_ns: u64) -> Option<u64> {
        let d = budget.duration_ns?;
        Some(if self.warmup_within_duration() {
            d
        } else {
            d.saturating_add(warmup_ns)
        })
    }
}

/// A probe's parameters as one typed value: parsed and validated once from their text form
/// (flags, `--set` and suites all arrive as [`Params`]), and written back exactly, so that a
/// resolved value re-parses to itself (`1234567ns` stays `1234567ns`, `3001B` stays `3001B`;
/// use [`units::format_duration_exact`] and [`units::format_size_exact`]).
pub trait ProbeConfig: Sized + Clone + Send + Sync + 'static {
    /// Reads the parameters; unknown keys were already refused against the probe's table.
    fn parse(params: &Params) -> Result<Self, ProbeError>;
    /// The parameters as the result records them.
    fn resolved(&self) -> BTreeMap<String, String>;
}

/// A configuration for probes that take no parameters.
impl ProbeConfig for () {
    fn parse(_: &Params) -> Result<(), ProbeError> {
        Ok(())
    }
    fn resolved(&self) -> BTreeMap<String, String> {
        BTreeMap::new()
    }
}

/// What `rtgauge probes` shows of a probe.
#[derive(Debug, Clone, Copy)]
pub struct About {
    pub name: &'static str,
    /// One line: what it measures.
    pub description: &'static str,
    /// Its parameters, documented: this one table drives `--help`, `rtgauge probes`, the docs
    /// and the refusal of unknown keys.
    pub params: &'static [ParamSpec],
    /// What it measures does not depend on the run's mode (the kernel's own threads): it runs
    /// once per load, in the run's first mode, not once per mode.
    pub mode_independent: bool,
    /// Its warm-ups are part of `--duration`: it measures several cells (sources, placements)
    /// one after the other and shares the duration among them, warm-ups included
    /// ([`crate::threads::WallTime`]), so the probe takes its duration and no more.
    pub warmup_within_duration: bool,
    /// With `--trace` it reads the whole run's trace of its CPUs (every stall, every
    /// interrupt), not windows around late samples: the run records with tracefs, since the
    /// flight recorder keeps only each CPU's last events ([`crate::trace_source`]).
    pub reads_whole_trace: bool,
}

impl About {
    pub const fn new(
        name: &'static str,
        description: &'static str,
        params: &'static [ParamSpec],
    ) -> About {
        About {
            name,
            description,
            params,
            mode_independent: false,
            warmup_within_duration: false,
            reads_whole_trace: false,
        }
    }

    /// See [`About::reads_whole_trace`].
    pub const fn reads_whole_trace(self) -> About {
        About {
            reads_whole_trace: true,
            ..self
        }
    }

    /// See [`About::warmup_within_duration`].
    pub const fn warmup_within_duration(self) -> About {
        About {
            warmup_within_duration: true,
            ..self
        }
    }

    /// See [`About::mode_independent`].
    pub const fn mode_independent(self) -> About {
        About {
            mode_independent: true,
            ..self
        }
    }
}

/// What a probe writes: its name, its parameter table and typed configuration, and its
/// measurement. The frame every probe shares (unknown keys refused, the configuration parsed
/// once, the resolved parameters recorded, a run without any sample reported) is the
/// [`Probe`] implementation below, written once. Adding a probe is one file implementing this
/// and one line in the built-in list of `rtgauge-probes` (or [`crate::registry::register`]).
pub trait TypedProbe: Sync {
    const ABOUT: About;
    type Config: ProbeConfig;
    /// Whether it can run here; Err says why not.
    fn availability(&self) -> Result<(), String> {
        Ok(())
    }
    /// Measures with the parsed configuration. It may settle what was left to run time (e.g.
    /// the phase of cyclic's deadlines) in `cfg`, which is then recorded. `out.params` need
    /// only hold what is not a parameter (figures found while measuring).
    fn measure(
        &self,
        ctx: &ProbeContext,
        cfg: &mut Self::Config,
    ) -> Result<ProbeOutput, ProbeError>;
    /// How many of its threads hand samples to the trace, one ring of candidates each
    /// ([`crate::spikes::SpikeTap`]): one per measured CPU (`cpus`) unless the probe runs
    /// more (a task set: each task's deadline misses, besides each CPU's late starts).
    fn spike_threads(&self, _cfg: &Self::Config, cpus: usize) -> usize {
        cpus
    }
}

impl<P: TypedProbe> Probe for P {
    fn name(&self) -> &'static str {
        P::ABOUT.name
    }

    fn describe(&self) -> &'static str {
        P::ABOUT.description
    }

    fn parameters(&self) -> &'static [ParamSpec] {
        P::ABOUT.params
    }

    fn mode_independent(&self) -> bool {
        P::ABOUT.mode_independent
    }

    fn spike_threads(&self, config: &ResolvedConfig, cpus: usize) -> usize {
        config
            .get::<P::Config>()
            .map_or(cpus, |c| TypedProbe::spike_threads(self, c, cpus))
    }

    fn warmup_within_duration(&self) -> bool {
        P::ABOUT.warmup_within_duration
    }

    fn reads_whole_trace(&self) -> bool {
        P::ABOUT.reads_whole_trace
    }

    fn availability(&self) -> Result<(), String> {
        TypedProbe::availability(self)
    }

    fn configure(&self, params: &Params) -> Result<ResolvedConfig, ProbeError> {
        params.check_known(P::ABOUT.params)?;
        Ok(ResolvedConfig::new(P::Config::parse(params)?))
    }

    fn resolve(&self, params: &Params) -> Result<BTreeMap<String, String>, ProbeError> {
        params.check_known(P::ABOUT.params)?;
        Ok(P::Config::parse(params)?.resolved())
    }

    fn run(&self, ctx: &ProbeContext, config: &ResolvedConfig) -> Result<ProbeOutput, ProbeError> {
        let mut cfg = config
            .get::<P::Config>()
            .cloned()
            .ok_or_else(|| ProbeError::Invalid {
                probe: P::ABOUT.name,
                message: "was given the configuration of another probe".into(),
            })?;
        let mut out = self.measure(ctx, &mut cfg)?;
        let mut params = cfg.resolved();
        params.append(&mut out.params);
        out.params = params;
        Ok(out)
    }
}

/// An OS error of `probe` while doing `what`.
pub fn os_error(probe: &'static str, what: &str, source: io::Error) -> ProbeError {
    ProbeError::Os {
        probe,
        what: what.into(),
        source,
    }
}

/// A list parameter given empty.
pub fn empty_list(probe: &'static str, key: &str, accepted: &[&str]) -> ProbeError {
    ProbeError::Invalid {
        probe,
        message: format!("{key} is empty; accepted: {}, or all", accepted.join(", ")),
    }
}

/// Powers of two from `min` up to `max`.
pub fn power_of_two_range(min: u64, max: u64) -> Vec<u64> {
    let mut sizes = Vec::new();
    let mut s = min;
    while s <= max {
        sizes.push(s);
        match s.checked_mul(2) {
            Some(n) => s = n,
            None => break,
        }
    }
    sizes
}

/// Sizes from `sizes`, or the powers of two between `min-size` and `max-size`.
pub fn size_list(
    probe: &'static str,
    params: &Params,
    default_min: u64,
    default_max: u64,
) -> Result<Vec<u64>, ProbeError> {
    let has_range = params.raw().contains_key("min-size") || params.raw().contains_key("max-size");
    if params.raw().contains_key("sizes") {
        if has_range {
            return Err(ProbeError::Invalid {
                probe,
                message: "give either sizes or min-size/max-size, not both".into(),
            });
        }
        return params.sizes("sizes", "");
    }
    let min = params.size("min-size", default_min)?;
    let max = params.size("max-size", default_max)?;
    if max < min {
        return Err(ProbeError::Invalid {
            probe,
            message: format!(
                "max-size {} is smaller than min-size {}; swap them",
                units::format_size_exact(max),
                units::format_size_exact(min)
            ),
        });
    }
    Ok(power_of_two_range(min, max))
}

/// A yes/no parameter.
pub fn flag(
    probe: &'static str,
    params: &Params,
    key: &str,
    default: bool,
) -> Result<bool, ProbeError> {
    match params.raw().get(key).map(|s| s.as_str()) {
        None => Ok(default),
        Some("yes" | "true" | "on" | "1") => Ok(true),
        Some("no" | "false" | "off" | "0") => Ok(false),
        Some(other) => Err(ProbeError::Invalid {
            probe,
            message: format!(
                "parameter {key}: '{}' is not yes or no",
                units::quote(other)
            ),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_duration_set_typed_is_read_as_is_and_recorded_exactly() {
        let mut params = Params::of("cyclic", &[("timer", "absolute")]);
        params.set_duration("period", 1_234_567);
        assert_eq!(params.duration_ns("period", 0).unwrap(), 1_234_567);
        assert_eq!(params["period"], "1234567ns");
        assert_eq!(params.text("period", ""), "1234567ns");
        // The text form re-parses to the same duration.
        let again = Params::new("cyclic", params.raw().clone());
        assert_eq!(again.duration_ns("period", 0).unwrap(), 1_234_567);
    }

    #[test]
    fn a_later_text_setting_replaces_a_typed_one() {
        let mut params = Params::default();
        params.set_duration("period", 1_000_000);
        params.set("period", "250us".into());
        assert_eq!(params.duration_ns("period", 0).unwrap(), 250_000);
        params.set("period", "nonsense".into());
        assert!(params.duration_ns("period", 0).is_err());
    }
}
