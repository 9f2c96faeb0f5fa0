//! What a run will do: probes × modes × loads, their budgets and parameters.
//!
//! A plan comes from command-line flags, from a suite (a TOML file users can write; the
//! built-in `quick`, `standard` and `full` suites are such files compiled in), or both, flags
//! winning. [`build`] is the one place a plan is made and validated: `rtgauge run` and
//! `rtgauge suites FILE` both go through it, so a suite is judged the same wherever it is read.

use crate::probe::{Budget, Params, Probe, ProbeError, ResolvedConfig};
use crate::registry;
use crate::rt::{Mode, Policy};
use crate::units;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// One probe to run, with its own budget and parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeRequest {
    pub name: &'static str,
    /// Tells apart several entries of one probe in a suite (`cyclic@100us`).
    pub variant: Option<String>,
    /// The parameters as given: text from suites and `--set`, typed values from flags.
    pub params: Params,
    /// `params` parsed once into the probe's typed configuration, handed to the probe as is.
    pub config: ResolvedConfig,
    pub budget: Budget,
    pub warmup_ns: u64,
}

impl ProbeRequest {
    /// The probe this entry runs (a request is only made for a known probe).
    pub fn probe(&self) -> &'static dyn Probe {
        registry::find(self.name).expect("a request is only made for a known probe")
    }

    /// `probe` or `probe@variant`: how results, tables and `--set` name this entry.
    pub fn title(&self) -> String {
        rtgauge_result::probe_title(self.name, self.variant.as_deref())
    }

    /// Whether `selector` (a probe name or `probe@variant`) picks this entry.
    pub fn is_selected_by(&self, selector: &str) -> bool {
        selector == self.name || selector == self.title()
    }
}

/// A complete, validated plan.
#[derive(Debug, Clone)]
pub struct Plan {
    pub suite: Option<String>,
    pub probes: Vec<ProbeRequest>,
    pub modes: Vec<Mode>,
    /// Load conditions, each measured in turn (`none` is the idle condition).
    pub loads: Vec<rtgauge_load::LoadSpec>,
    /// CPUs the loads run on (empty: every online CPU, the measured ones included).
    pub load_cpus: Vec<usize>,
    /// Most bytes the disk-writing loads may use.
    pub load_disk_cap_bytes: u64,
    /// A load that cannot start is reported and its probes skipped, instead of failing the run.
    pub skip_failed_loads: bool,
    pub cpus: Vec<usize>,
    pub best_effort: bool,
    pub priority: i32,
    /// Probes whose raw samples are recorded (`--record`).
    pub record: Vec<String>,
    /// `--trace`, `--trace-above`, `--trace-max`, `--break`.
    pub spikes: crate::spikes::SpikeSettings,
}

impl Plan {
    /// The probes measured in `mode` (one of [`Plan::modes`]), in order: every probe in the
    /// first mode, the mode-dependent ones in the others.
    pub fn probes_in<'a>(&'a self, mode: &'a Mode) -> impl Iterator<Item = &'a ProbeRequest> {
        let first = self.modes.first() == Some(mode);
        self.probes
            .iter()
            .filter(move |r| first || !r.probe().mode_independent())
    }
}

/// A problem with the plan: a bad suite, probe or parameter.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("unknown probe '{0}'; known probes: {names}", names = registry::names())]
    UnknownProbe(String),
    #[error(transparent)]
    Probe(#[from] ProbeError),
    #[error("unknown suite '{0}'; built-in suites: quick, standard, full, or give the path of a suite file (.toml)")]
    UnknownSuite(String),
    #[error("probe variant '{0}': a variant is letters, digits, '-' and '_' (e.g. cyclic@100us)")]
    BadVariant(String),
    #[error("probe '{0}' is planned twice; give each entry its own variant (`cyclic@1ms cyclic@100us` on the command line, `variant = \"100us\"` in a suite) so their results can be told apart")]
    DuplicateProbe(String),
    #[error("suite {path}: {detail}")]
    Suite { path: String, detail: String },
    #[error("{flag}: {detail}")]
    Flag { flag: String, detail: String },
    #[error("{0}")]
    Selection(String),
}

/// How long each probe measures when neither a flag nor the suite says: 10 s.
pub const DEFAULT_DURATION_NS: u64 = 10_000_000_000;
/// Warm-up discarded before counting when neither a flag nor the suite says: 1 s.
pub const DEFAULT_WARMUP_NS: u64 = 1_000_000_000;
/// The period a deadline reservation uses when no `--period` is given: the periodic probes'.
pub use crate::probe::DEFAULT_PERIOD_NS;
/// Measuring priority in `rt` mode: high, but below 99 where kernel housekeeping runs.
pub use rtgauge_os::sched::DEFAULT_PRIORITY;
/// SCHED_DEADLINE runtime per period in `deadline` mode: 100 µs.
pub const DEFAULT_DL_RUNTIME_NS: u64 = 100_000;
/// Most disk space the io and memory loads may use: 256 MiB.
pub const DEFAULT_LOAD_DISK_CAP_BYTES: u64 = 256 << 20;
/// The suite run when neither probes nor a suite are named.
pub const DEFAULT_SUITE: &str = "quick";

/// The execution modes a run can measure in, by the names flags and suites use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModeName {
    /// SCHED_OTHER, nothing locked: "user soft RT".
    Normal,
    /// SCHED_FIFO/RR at the priority, memory locked, pinned, PM QoS held: "user hard RT".
    Rt,
    /// A SCHED_DEADLINE reservation (runtime per period).
    Deadline,
}

impl ModeName {
    pub const ALL: [ModeName; 3] = [ModeName::Normal, ModeName::Rt, ModeName::Deadline];

    pub fn name(self) -> &'static str {
        match self {
            ModeName::Normal => "normal",
            ModeName::Rt => "rt",
            ModeName::Deadline => "deadline",
        }
    }

    /// One line for `--help`.
    pub fn help(self) -> &'static str {
        match self {
            ModeName::Normal => "SCHED_OTHER, nothing locked: user soft real time",
            ModeName::Rt => {
                "SCHED_FIFO at --priority, memory locked, pinned, PM QoS held: user hard real time"
            }
            ModeName::Deadline => "SCHED_DEADLINE reservation (--dl-runtime per --period)",
        }
    }
}

impl std::str::FromStr for ModeName {
    type Err = String;

    fn from_str(s: &str) -> Result<ModeName, String> {
        ModeName::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| {
                format!(
                    "'{}' is not a mode; use normal, rt or deadline",
                    crate::units::quote(s)
                )
            })
    }
}

/// Real-time policies of `rt` mode, by the names `--policy` takes.
pub const RT_POLICIES: [(&str, Policy); 2] = [("fifo", Policy::Fifo), ("rr", Policy::Rr)];

/// Everything a user can ask of a run, as typed values; filled by the command line (or any
/// other front end), turned into a [`Plan`] by [`build`].
#[derive(Debug, Clone)]
pub struct PlanOptions {
    /// Probe selectors (`cyclic`, `cyclic@100us`); empty: the suite's probes.
    pub probes: Vec<String>,
    /// A built-in suite or the path of a suite file; none and no probes: [`DEFAULT_SUITE`].
    pub suite: Option<String>,
    pub duration_ns: Option<u64>,
    pub loops: Option<u64>,
    pub warmup_ns: Option<u64>,
    /// `--period`: the periodic probes' period, and the deadline reservation's (ns, parsed
    /// once by the front end; the probes receive this number as it is).
    pub period_ns: Option<u64>,
    /// `--timer`: the cyclic probe's timer, by its parameter name.
    pub timer: Option<String>,
    /// `all` or a CPU list (`0-3,6`).
    pub cpus: String,
    /// Empty: the suite's modes, or rt.
    pub modes: Vec<ModeName>,
    pub priority: i32,
    pub policy: Policy,
    pub dl_runtime_ns: u64,
    /// A comma-separated load list; none: the suite's loads, or idle.
    pub load: Option<String>,
    pub load_cpus: Option<String>,
    pub load_disk_cap_bytes: u64,
    pub skip_failed_loads: bool,
    /// `--set` values: `key=value`, `probe.key=value`.
    pub settings: Vec<String>,
    pub best_effort: bool,
    /// Probes whose raw samples are recorded, or `all`.
    pub record: Vec<String>,
}

impl Default for PlanOptions {
    fn default() -> PlanOptions {
        PlanOptions {
            probes: Vec::new(),
            suite: None,
            duration_ns: None,
            loops: None,
            warmup_ns: None,
            period_ns: None,
            timer: None,
            cpus: "all".into(),
            modes: Vec::new(),
            priority: DEFAULT_PRIORITY,
            policy: Policy::Fifo,
            dl_runtime_ns: DEFAULT_DL_RUNTIME_NS,
            load: None,
            load_cpus: None,
            load_disk_cap_bytes: DEFAULT_LOAD_DISK_CAP_BYTES,
            skip_failed_loads: false,
            settings: Vec::new(),
            best_effort: false,
            record: Vec::new(),
        }
    }
}

/// The one lookup of a probe by name.
pub fn find_probe(name: &str) -> Result<&'static dyn Probe, PlanError> {
    registry::find(name).ok_or_else(|| PlanError::UnknownProbe(name.to_string()))
}

/// Options → a validated plan. `online` are the CPUs the plan may measure on.
pub fn build(options: &PlanOptions, online: &[usize]) -> Result<Plan, PlanError> {
    let flag_error = |flag: &str, detail: String| PlanError::Flag {
        flag: flag.into(),
        detail,
    };
    let cpus = crate::cpus::parse_cpus(&options.cpus, online)
        .map_err(|e| flag_error("--cpus", e.to_string()))?;
    let flag_budget = Budget {
        duration_ns: options.duration_ns,
        loops: options.loops,
    };
    let explicit_budget = options.duration_ns.is_some() || options.loops.is_some();
    let default_budget = if explicit_budget {
        flag_budget
    } else {
        Budget {
            duration_ns: Some(DEFAULT_DURATION_NS),
            loops: None,
        }
    };
    let warmup = options.warmup_ns.unwrap_or(DEFAULT_WARMUP_NS);

    let suite_name = match (&options.suite, options.probes.is_empty()) {
        (Some(s), _) => Some(s.clone()),
        (None, true) => Some(DEFAULT_SUITE.to_string()),
        (None, false) => None,
    };
    let suite = suite_name.as_deref().map(load_suite).transpose()?;
    let mut requests: Vec<ProbeRequest> = match &suite {
        Some(suite) => suite_requests(suite, default_budget, warmup)?,
        None => Vec::new(),
    };
    if !options.probes.is_empty() {
        for selector in &options.probes {
            find_probe(split_selector(selector).0)?;
        }
        if suite_name.is_some() {
            requests.retain(|r| options.probes.iter().any(|p| r.is_selected_by(p)));
        } else {
            // `cyclic@fast cyclic@slow` runs one probe twice, told apart by its variant.
            requests = options
                .probes
                .iter()
                .map(|selector| {
                    let (name, variant) = split_selector(selector);
                    let variant = variant.map(str::to_string);
                    request(name, variant, BTreeMap::new(), default_budget, warmup)
                })
                .collect::<Result<_, _>>()?;
        }
    }
    if requests.is_empty() {
        return Err(PlanError::Selection(
            "the selected suite has none of the probes named; see `rtgauge probes`".into(),
        ));
    }
    apply_settings(options, &mut requests)?;
    let mut validated = Vec::with_capacity(requests.len());
    for mut r in requests {
        if explicit_budget {
            r.budget = flag_budget;
        }
        if options.warmup_ns.is_some() {
            r.warmup_ns = warmup;
        }
        validated.push(configured(r.variant, r.params, r.budget, r.warmup_ns)?);
    }
    check_unique_titles(&validated)?;
    check_record_names(&options.record, &validated)?;
    // The suite's modes are checked even when --mode replaces them.
    let suite_modes = suite.as_ref().map(suite_modes).transpose()?;
    let mode_names = match (options.modes.is_empty(), suite_modes) {
        (false, _) => options.modes.clone(),
        (true, Some(modes)) => modes,
        (true, None) => vec![ModeName::Rt],
    };
    let period = options.period_ns.unwrap_or(DEFAULT_PERIOD_NS);
    let mut modes = Vec::new();
    for m in mode_names {
        let mode = match m {
            ModeName::Normal => Mode::normal(),
            ModeName::Rt => Mode::rt(options.priority, options.policy),
            ModeName::Deadline => Mode::deadline(options.dl_runtime_ns, period, period),
        };
        if !modes.contains(&mode) {
            modes.push(mode);
        }
    }
    // The suite's own loads are checked even when --load replaces them.
    let suite_loads = suite.as_ref().map(suite_loads).transpose()?;
    let loads = match (&options.load, suite_loads) {
        (Some(text), _) => parse_loads(text, suite.as_ref().map(|s| &s.mixes))
            .map_err(|detail| flag_error("--load", detail))?,
        (None, Some(loads)) => loads,
        (None, None) => parse_loads("none", None).map_err(|detail| flag_error("--load", detail))?,
    };
    let load_cpus = match &options.load_cpus {
        Some(spec) => crate::cpus::parse_cpus(spec, online)
            .map_err(|e| flag_error("--load-cpus", e.to_string()))?,
        None => Vec::new(),
    };
    Ok(Plan {
        suite: suite_name,
        probes: validated,
        modes,
        loads,
        load_cpus,
        load_disk_cap_bytes: options.load_disk_cap_bytes,
        skip_failed_loads: options.skip_failed_loads,
        cpus,
        best_effort: options.best_effort,
        priority: options.priority,
        record: options.record.clone(),
        spikes: crate::spikes::SpikeSettings::default(),
    })
}

/// Flags override the suite: `--period`, `--timer` and `--set` reach every selected probe
/// that takes the parameter; one that reaches none is refused.
fn apply_settings(options: &PlanOptions, requests: &mut [ProbeRequest]) -> Result<(), PlanError> {
    /// A value as the front end gives it: text, or a duration it already parsed.
    enum Value {
        Text(String),
        Duration(u64),
    }
    // (flag as typed, probe, key, value)
    let mut settings: Vec<(String, Option<String>, String, Value)> = Vec::new();
    if let Some(p) = options.period_ns {
        let value = Value::Duration(p);
        settings.push(("--period".into(), None, "period".into(), value));
    }
    if let Some(t) = &options.timer {
        let value = Value::Text(t.clone());
        settings.push(("--timer".into(), None, "timer".into(), value));
    }
    for s in &options.settings {
        let (probe, key, value) = parse_setting(s).map_err(PlanError::Selection)?;
        settings.push((format!("--set {s}"), probe, key, Value::Text(value)));
    }
    for (flag, probe, key, value) in &settings {
        let mut reached = false;
        for r in requests
            .iter_mut()
            .filter(|r| probe.as_deref().is_none_or(|p| r.is_selected_by(p)))
        {
            let takes_it = r
                .probe()
                .parameters()
                .iter()
                .any(|spec| spec.name == key.as_str());
            if takes_it {
                match value {
                    Value::Text(text) => r.params.set(key, text.clone()),
                    Value::Duration(ns) => r.params.set_duration(key, *ns),
                }
                reached = true;
            }
        }
        if !reached {
            return Err(PlanError::Flag {
                flag: flag.clone(),
                detail: format!("no selected probe takes parameter '{key}'; `rtgauge probes` lists each probe's parameters"),
            });
        }
    }
    Ok(())
}

/// `--record` names: probes of this run (`probe` or `probe@variant`), or `all`.
fn check_record_names(record: &[String], planned: &[ProbeRequest]) -> Result<(), PlanError> {
    for name in record.iter().filter(|n| n.as_str() != "all") {
        find_probe(split_selector(name).0).map_err(|e| PlanError::Flag {
            flag: "--record".into(),
            detail: e.to_string(),
        })?;
        if !planned.iter().any(|r| r.is_selected_by(name)) {
            return Err(PlanError::Flag {
                flag: format!("--record {name}"),
                detail: format!("probe {name} is not part of this run"),
            });
        }
    }
    Ok(())
}

/// A load list, with a suite's named mixes replaced by their conditions.
fn parse_loads(
    text: &str,
    mixes: Option<&BTreeMap<String, Vec<String>>>,
) -> Result<Vec<rtgauge_load::LoadSpec>, String> {
    let text = match mixes {
        Some(mixes) => expand_mixes(text, mixes),
        None => text.to_string(),
    };
    let text = if text.trim().is_empty() {
        "none"
    } else {
        &text
    };
    rtgauge_load::parse_list(text)
        .map(|specs| rtgauge_load::expand(&specs))
        .map_err(|e| e.to_string())
}

/// The suite's `modes` (default: rt).
pub fn suite_modes(suite: &SuiteFile) -> Result<Vec<ModeName>, PlanError> {
    let Some(names) = &suite.modes else {
        return Ok(vec![ModeName::Rt]);
    };
    names
        .iter()
        .map(|n| n.parse().map_err(|e| suite.error(format!("modes: {e}"))))
        .collect()
}

/// The suite's `loads` (default: idle) after checking every mix: each names known loads and
/// none names itself.
pub fn suite_loads(suite: &SuiteFile) -> Result<Vec<rtgauge_load::LoadSpec>, PlanError> {
    for (name, conditions) in &suite.mixes {
        if conditions.iter().any(|c| c.trim() == name) {
            return Err(suite.error(format!(
                "mixes.{name}: a mix cannot contain itself; list load names (`rtgauge loads`)"
            )));
        }
        parse_loads(&conditions.join(","), None)
            .map_err(|e| suite.error(format!("mixes.{name}: {e}")))?;
    }
    let list = suite.loads.clone().unwrap_or_default().join(",");
    parse_loads(&list, Some(&suite.mixes)).map_err(|e| suite.error(format!("loads: {e}")))
}

/// The text of a suite file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuiteFile {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Default duration of each probe run.
    pub duration: Option<String>,
    pub loops: Option<u64>,
    pub warmup: Option<String>,
    pub modes: Option<Vec<String>>,
    pub loads: Option<Vec<String>>,
    /// Named load mixes, usable in `loads` (e.g. `office = ["cpu", "io"]`).
    #[serde(default)]
    pub mixes: BTreeMap<String, Vec<String>>,
    #[serde(rename = "probe", default)]
    pub probes: Vec<SuiteProbe>,
    /// Where the suite came from (`built-in quick`, or the file's path), for messages.
    #[serde(skip)]
    pub origin: String,
}

impl SuiteFile {
    /// A problem with this suite, naming where it came from.
    fn error(&self, detail: String) -> PlanError {
        let path = if self.origin.is_empty() {
            self.name.clone()
        } else {
            self.origin.clone()
        };
        PlanError::Suite { path, detail }
    }
}

#[derive(Debug, Deserialize)]
pub struct SuiteProbe {
    pub name: String,
    /// Needed when the suite has several entries of one probe (say cyclic at 1 ms and at
    /// 100 µs): results are titled `name@variant`.
    pub variant: Option<String>,
    pub duration: Option<String>,
    pub loops: Option<u64>,
    pub warmup: Option<String>,
    /// Every other key is a probe parameter (period, timer, sources, sizes…).
    #[serde(flatten)]
    pub params: BTreeMap<String, toml::Value>,
}

pub const BUILTIN_SUITES: [(&str, &str); 3] = [
    ("quick", include_str!("../suites/quick.toml")),
    ("standard", include_str!("../suites/standard.toml")),
    ("full", include_str!("../suites/full.toml")),
];

/// Loads a built-in suite by name, or a suite file by path.
pub fn load_suite(name_or_path: &str) -> Result<SuiteFile, PlanError> {
    let (origin, text) = match BUILTIN_SUITES.iter().find(|(n, _)| *n == name_or_path) {
        Some((n, t)) => (format!("built-in {n}"), t.to_string()),
        None => {
            let path = Path::new(name_or_path);
            if !path.exists() {
                if name_or_path.contains('/') || name_or_path.ends_with(".toml") {
                    return Err(PlanError::Suite {
                        path: name_or_path.into(),
                        detail: "no such file (built-in suites: quick, standard, full)".into(),
                    });
                }
                return Err(PlanError::UnknownSuite(name_or_path.to_string()));
            }
            let text = std::fs::read_to_string(path).map_err(|e| PlanError::Suite {
                path: name_or_path.into(),
                detail: e.to_string(),
            })?;
            (name_or_path.to_string(), text)
        }
    };
    let mut suite: SuiteFile = toml::from_str(&text).map_err(|e| PlanError::Suite {
        path: origin.clone(),
        detail: e.message().to_string(),
    })?;
    suite.origin = origin;
    Ok(suite)
}

fn suite_duration(
    suite: &SuiteFile,
    key: &str,
    v: &Option<String>,
) -> Result<Option<u64>, PlanError> {
    v.as_deref()
        .map(units::parse_duration_ns)
        .transpose()
        .map_err(|e| suite.error(format!("{key}: {e}")))
}

/// `loops = 0` would be a run of no samples that claims to be complete.
fn suite_loops(suite: &SuiteFile, key: &str, v: Option<u64>) -> Result<Option<u64>, PlanError> {
    match v {
        Some(0) => Err(suite.error(format!(
            "{key}: 0 samples measures nothing; give at least 1, or leave it out to measure for the duration"
        ))),
        v => Ok(v),
    }
}

/// Turns a suite into probe requests. `fallback` budget and warm-up apply where the suite is
/// silent.
pub fn suite_requests(
    suite: &SuiteFile,
    fallback: Budget,
    fallback_warmup_ns: u64,
) -> Result<Vec<ProbeRequest>, PlanError> {
    if suite.probes.is_empty() {
        return Err(suite.error(
            "no [[probe]] entry; add one, e.g. [[probe]] with name = \"cyclic\" (`rtgauge probes` lists them)".into(),
        ));
    }
    let default_duration = suite_duration(suite, "duration", &suite.duration)?;
    let default_loops = suite_loops(suite, "loops", suite.loops)?;
    let default_warmup =
        suite_duration(suite, "warmup", &suite.warmup)?.unwrap_or(fallback_warmup_ns);
    let requests = suite
        .probes
        .iter()
        .map(|p| {
            let params = p
                .params
                .iter()
                .map(|(k, v)| {
                    let text = match v {
                        toml::Value::String(s) => s.clone(),
                        toml::Value::Array(items) => items
                            .iter()
                            .map(|i| {
                                i.as_str()
                                    .map(str::to_string)
                                    .unwrap_or_else(|| i.to_string())
                            })
                            .collect::<Vec<_>>()
                            .join(","),
                        other => other.to_string(),
                    };
                    (k.clone(), text)
                })
                .collect();
            let key = |k: &str| format!("probe {}: {k}", p.name);
            let duration =
                suite_duration(suite, &key("duration"), &p.duration)?.or(default_duration);
            let loops = suite_loops(suite, &key("loops"), p.loops)?.or(default_loops);
            let budget = if duration.is_none() && loops.is_none() {
                fallback
            } else {
                Budget {
                    duration_ns: duration,
                    loops,
                }
            };
            request(
                &p.name,
                p.variant.clone(),
                params,
                budget,
                suite_duration(suite, &key("warmup"), &p.warmup)?.unwrap_or(default_warmup),
            )
            .map_err(|e| match e {
                e @ PlanError::Suite { .. } => e,
                e => suite.error(e.to_string()),
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    check_unique_titles(&requests).map_err(|e| suite.error(e.to_string()))?;
    Ok(requests)
}

/// Two entries with one title would be indistinguishable in tables, comparisons and checks.
pub fn check_unique_titles(requests: &[ProbeRequest]) -> Result<(), PlanError> {
    let mut seen = std::collections::BTreeSet::new();
    for title in requests.iter().map(ProbeRequest::title) {
        if !seen.insert(title.clone()) {
            return Err(PlanError::DuplicateProbe(title));
        }
    }
    Ok(())
}

/// Splits a probe selector `name` or `name@variant`.
pub fn split_selector(selector: &str) -> (&str, Option<&str>) {
    match selector.split_once('@') {
        Some((name, variant)) => (name, Some(variant)),
        None => (selector, None),
    }
}

/// Builds and validates one probe request from parameters written as text.
pub fn request(
    name: &str,
    variant: Option<String>,
    params: BTreeMap<String, String>,
    budget: Budget,
    warmup_ns: u64,
) -> Result<ProbeRequest, PlanError> {
    let probe = find_probe(name)?;
    configured(
        variant,
        Params::new(probe.name(), params),
        budget,
        warmup_ns,
    )
}

/// Builds and validates one request of the probe `params` are for.
fn configured(
    variant: Option<String>,
    params: Params,
    budget: Budget,
    warmup_ns: u64,
) -> Result<ProbeRequest, PlanError> {
    let name = params.probe();
    let probe = find_probe(name)?;
    // A variant becomes part of result titles, file names and `--set` selectors.
    if let Some(v) = variant.as_deref().filter(|v| {
        v.is_empty()
            || !v
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    }) {
        return Err(PlanError::BadVariant(format!("{name}@{v}")));
    }
    // The one parse of the parameters: the runner hands this configuration to the probe.
    let config = probe.configure(&params)?;
    let req = ProbeRequest {
        name: probe.name(),
        variant,
        params,
        config,
        budget,
        warmup_ns,
    };
    Ok(req)
}

/// Replaces each item of a comma-separated load list that names a suite mix by the mix's
/// load conditions (a mix is a named list of conditions, each measured in turn).
pub fn expand_mixes(list: &str, mixes: &BTreeMap<String, Vec<String>>) -> String {
    list.split(',')
        .map(|item| match mixes.get(item.trim()) {
            Some(conditions) => conditions.join(","),
            None => item.to_string(),
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Splits `--set` values of the form `key=value` or `probe.key=value`; returns (probe, key, value).
pub fn parse_setting(s: &str) -> Result<(Option<String>, String, String), String> {
    let (key, value) = s
        .split_once('=')
        .filter(|(k, v)| !k.is_empty() && !v.is_empty())
        .ok_or_else(|| {
            format!(
                "--set '{}' is not of the form key=value or probe.key=value",
                crate::units::quote(s)
            )
        })?;
    Ok(match key.split_once('.') {
        Some((probe, key)) => (Some(probe.to_string()), key.to_string(), value.to_string()),
        None => (None, key.to_string(), value.to_string()),
    })
}
