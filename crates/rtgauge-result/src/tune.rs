//! The trials document `rtgauge tune --output FILE` writes: every setting tried, its writes,
//! both sides' figures per round, the effects and the verdict, the combination of the changes
//! that helped, what was not tried and why, the fixes that need a reboot, and what was kept.
//!
//! It is a document of its own (`kind` is [`TUNE_KIND`], versioned by [`TUNE_SCHEMA_VERSION`]),
//! not a run result: `report` draws it, `compare` compares two of them and `history` lists
//! the tunes it kept. Documents written before it carried `kind` and `schema_version` (the
//! first tunes) read as version 1: every field added since has a default. The JSON Schema in
//! `docs/tune.schema.json` is generated from these types (`rtgauge schema --tune`).

use crate::io::ResultError;
use crate::Tool;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The value of `kind` that tells a trials document from a run result.
pub const TUNE_KIND: &str = "rtgauge-tune";
/// Version of the trials document's layout; bumped on any incompatible change.
pub const TUNE_SCHEMA_VERSION: u32 = 1;

fn tune_kind() -> String {
    TUNE_KIND.into()
}

fn first_version() -> u32 {
    1
}

/// One `rtgauge tune --apply`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TuneDocument {
    /// Always `rtgauge-tune`.
    #[serde(default = "tune_kind")]
    pub kind: String,
    #[serde(default = "first_version")]
    pub schema_version: u32,
    /// The rtgauge that wrote it (absent in the first documents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<Tool>,
    /// Wall-clock start and end of the tune (CLOCK_REALTIME, ns since the Unix epoch; 0 in
    /// the first documents).
    #[serde(default)]
    pub started_unix_ns: u64,
    #[serde(default)]
    pub finished_unix_ns: u64,
    /// The machine and kernel tuned (empty in the first documents).
    #[serde(default)]
    pub host: String,
    #[serde(default)]
    pub kernel_release: String,
    /// The line printed first: the loop, its maximum before and after what helped.
    pub verdict: String,
    /// The loop measured, as the user reads it (`a 1ms loop on CPU 1 under load cpu`).
    pub the_loop: String,
    /// The measured CPUs and the housekeeping ones, as lists (`1`, `0,2-3`).
    pub measured: String,
    pub housekeeping: String,
    /// The `rtgauge run` words of every round (probe, period, CPUs, load).
    pub run_words: Vec<String>,
    /// Rounds of each side per trial.
    pub rounds: u32,
    /// The length of one round.
    pub round_ns: u64,
    /// Every setting tried alone, in the order tried.
    pub trials: Vec<Trial>,
    /// The changes that were better, together against the machine as it was (present when
    /// more than one was better).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub combination: Option<Trial>,
    /// The settings not tried, and why.
    #[serde(default)]
    pub skipped: Vec<Skipped>,
    /// The fixes that need a reboot (not measured).
    #[serde(default)]
    pub boot: Vec<BootFix>,
    /// The settings left in place with `--keep`.
    #[serde(default)]
    pub kept: Vec<String>,
}

/// One trial: a change (or, for the combination, several) against the unchanged machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Trial {
    /// The setting's name, as `--only` takes it; `together` for the combination.
    pub name: String,
    pub title: String,
    /// `before → after` in the user's terms.
    pub change: String,
    /// What the change costs (power, throughput, safety).
    pub cost: String,
    /// The files written, with their original and tried values.
    pub writes: Vec<Write>,
    /// Why it was not measured (it failed to apply, a round failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<String>,
    /// Optional writes the kernel refused (the trial went on without them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refused: Vec<String>,
    /// The rounds of side A (the machine as it was) and side B (with the change), in order.
    pub before: Vec<Figures>,
    pub after: Vec<Figures>,
    /// The effects and the verdict; absent when the trial was not measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judgement: Option<Judgement>,
}

impl Trial {
    pub fn verdict(&self) -> Option<Verdict> {
        self.judgement.as_ref().map(|j| j.verdict)
    }

    /// The effect on one figure (`max`, `p99.9`, `missed`).
    pub fn effect(&self, figure: &str) -> Option<&Effect> {
        self.judgement
            .as_ref()
            .and_then(|j| j.effects.iter().find(|e| e.figure == figure))
    }
}

/// One file, its value before tune touched it, and the value tune tries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Write {
    pub path: PathBuf,
    pub original: String,
    pub target: String,
    /// A write the kernel may refuse for one member only (a managed interrupt).
    #[serde(default)]
    pub optional: bool,
    /// What `path` is: a file (most settings), or a cgroup, tasks or a thread.
    #[serde(default, skip_serializing_if = "WriteKind::is_file")]
    pub kind: WriteKind,
}

/// What a [`Write`] changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WriteKind {
    /// `target` written to the file `path`; restored by writing `original` back.
    #[default]
    File,
    /// The cgroup directory `path`, made by tune, with its files set as `target` says
    /// (`file=value`, space-separated, in order); `original` is empty. Restored by moving
    /// whatever tasks it holds to its parent, then removing it.
    Cgroup,
    /// Every task of the cpuset `original` (a directory) that the kernel lets go is moved into
    /// the cpuset `path`; restored by moving every task of `path` back to `original`, then
    /// giving the kernel threads listed in `target` (`TID:CPUS` words) their CPUs again.
    Tasks,
    /// The CPU affinity of the kernel thread `/proc/PID` (a CPU list); the kernel may refuse
    /// a thread bound to its CPU.
    Affinity,
    /// cgroup v2: the controller `target` enabled for the children of the cgroup whose
    /// `cgroup.subtree_control` is `path`; restored by disabling it.
    Controller,
    /// Nothing is written: a changed round's loop runs in the cgroup `path`.
    LoopIn,
    /// Nothing is written: a changed round's load runs in the cgroup `path`, on the CPUs
    /// `target`.
    LoadIn,
}

impl WriteKind {
    pub fn is_file(&self) -> bool {
        *self == WriteKind::File
    }
}

/// The figures of one round: the tail percentile and maximum of the loop's worst series, and
/// its missed periods (cyclic: overruns; task set: deadline misses).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Figures {
    /// `p99.9` where the round had enough samples for it, else `p99`.
    pub tail: String,
    pub tail_ns: Option<u64>,
    pub max_ns: u64,
    pub misses: u64,
    /// The round's result document (a normal run result).
    pub result: PathBuf,
}

/// Better, worse, or cannot tell, for a whole trial.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Better,
    Worse,
    CannotTell,
}

impl Verdict {
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::CannotTell => "cannot tell",
        }
    }
}

/// One figure's move between the sides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Effect {
    /// `max`, the tail percentile (`p99.9` or `p99`) or `missed`.
    pub figure: String,
    /// The sides' geometric means (ns); for `missed` the totals over the rounds.
    pub before: f64,
    pub after: f64,
    /// The ratio of the geometric means − 1 (`-0.5`: halved).
    pub change: f64,
    /// Welch's test on the logarithms of the per-round values, two-sided.
    pub p: f64,
    /// The rounds' own spread (relative), from both sides.
    pub spread: f64,
}

/// The judgement of one trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Judgement {
    pub verdict: Verdict,
    /// max, the tail percentile, missed periods (when either side missed one).
    pub effects: Vec<Effect>,
}

/// A setting not tried, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Skipped {
    pub name: String,
    pub reason: String,
}

/// A fix that needs a reboot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BootFix {
    pub what: String,
    /// Kernel command-line words (empty for a fix that is a different kernel).
    pub param: String,
    pub why: String,
}

/// The kernel command line of these boot-time fixes.
pub fn command_line(fixes: &[BootFix]) -> String {
    fixes
        .iter()
        .filter(|f| !f.param.is_empty())
        .map(|f| f.param.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// How the table ranks a trial: better first (largest drop of the maximum first), then
/// cannot tell, then worse, then not measured.
fn rank(t: &Trial) -> (u8, f64) {
    let class = match t.verdict() {
        Some(Verdict::Better) => 0,
        Some(Verdict::CannotTell) => 1,
        Some(Verdict::Worse) => 2,
        None => 3,
    };
    (class, t.effect("max").map_or(0.0, |e| e.change))
}

impl TuneDocument {
    /// The trials as the table ranks them, the combination first.
    pub fn ranked(&self) -> Vec<&Trial> {
        let mut ranked: Vec<&Trial> = self.trials.iter().collect();
        ranked.sort_by(|a, b| {
            let (ra, rb) = (rank(a), rank(b));
            ra.0.cmp(&rb.0).then(ra.1.total_cmp(&rb.1))
        });
        if let Some(c) = &self.combination {
            ranked.insert(0, c);
        }
        ranked
    }
}

/// Whether a JSON value is a trials document: its `kind`, or, for the first documents, which
/// had none, the fields only they have.
pub fn is_tune_document(value: &serde_json::Value) -> bool {
    match value.get("kind") {
        Some(kind) => kind == TUNE_KIND,
        None => {
            value.get("schema_version").is_none()
                && value.get("trials").is_some()
                && value.get("the_loop").is_some()
        }
    }
}

/// Whether the file at `path` holds a trials document (false when it cannot be read or is
/// not JSON: the reader of the other kind says what is wrong with it).
pub fn file_is_tune(path: &Path) -> bool {
    std::fs::read(path)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok())
        .is_some_and(|v| is_tune_document(&v))
}

/// Reads a trials document, refusing a run result, a newer version and damage in one line.
pub fn read_tune(path: &Path) -> Result<TuneDocument, ResultError> {
    let bytes = std::fs::read(path).map_err(|source| ResultError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let value: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| {
        if e.is_eof() {
            ResultError::Truncated {
                path: path.to_path_buf(),
                detail: format!("JSON ends early at line {}", e.line()),
            }
        } else {
            ResultError::Malformed {
                path: path.to_path_buf(),
                detail: e.to_string(),
            }
        }
    })?;
    parse_tune_value(value).map_err(|p| p.at(path))
}

/// A parsed JSON value as a trials document.
pub fn parse_tune_value(value: serde_json::Value) -> Result<TuneDocument, crate::read::Problem> {
    use crate::read::Problem;
    if !is_tune_document(&value) {
        return Err(Problem::NotTune);
    }
    if let Some(v) = value.get("schema_version") {
        match v.as_u64() {
            Some(n) if n > u64::from(TUNE_SCHEMA_VERSION) => {
                return Err(Problem::FutureTuneVersion(n));
            }
            Some(n) if n >= 1 => {}
            _ => {
                return Err(Problem::Invalid {
                    field: "schema_version".into(),
                    problem: format!("is {v}; it must be the whole number 1"),
                })
            }
        }
    }
    let doc: TuneDocument =
        serde_json::from_value(value).map_err(|e| Problem::Malformed(e.to_string()))?;
    validate(&doc)?;
    Ok(doc)
}

/// What every trials document rtgauge writes satisfies: a round's tail is not above its
/// maximum, p-values are probabilities.
fn validate(doc: &TuneDocument) -> Result<(), crate::read::Problem> {
    let invalid = |field: String, problem: String| crate::read::Problem::Invalid { field, problem };
    let all = doc
        .trials
        .iter()
        .enumerate()
        .map(|(i, t)| (format!("trials[{i}]"), t))
        .chain(
            doc.combination
                .iter()
                .map(|t| ("combination".to_string(), t)),
        );
    for (at, t) in all {
        for (side, rounds) in [("before", &t.before), ("after", &t.after)] {
            for (r, f) in rounds.iter().enumerate() {
                if f.tail_ns.is_some_and(|tail| tail > f.max_ns) {
                    return Err(invalid(
                        format!("{at}.{side}[{r}].tail_ns"),
                        format!("({:?}) is above max_ns ({})", f.tail_ns, f.max_ns),
                    ));
                }
            }
        }
        for (e, effect) in t
            .judgement
            .iter()
            .flat_map(|j| j.effects.iter().enumerate())
        {
            if !(0.0..=1.0).contains(&effect.p) {
                return Err(invalid(
                    format!("{at}.judgement.effects[{e}].p"),
                    format!("is {}, not a probability", effect.p),
                ));
            }
        }
    }
    Ok(())
}

/// The document as written: pretty JSON and a final newline.
pub fn tune_bytes(doc: &TuneDocument) -> Vec<u8> {
    let mut json = serde_json::to_vec_pretty(doc).expect("trials documents always serialise");
    json.push(b'\n');
    json
}

/// The JSON Schema of [`TuneDocument`], pretty-printed (the content of docs/tune.schema.json).
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(TuneDocument);
    serde_json::to_string_pretty(&schema).expect("a schema always serialises") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A document as the first tunes wrote it: no kind, no version, no host.
    const FIRST: &str = r#"{
      "verdict": "a 1ms loop on CPU 1: no runtime change helped",
      "the_loop": "a 1ms loop on CPU 1", "measured": "1", "housekeeping": "0",
      "run_words": ["cyclic"], "rounds": 2, "round_ns": 1000000000,
      "trials": [{"name": "ksm", "title": "KSM", "change": "1 → 0", "cost": "memory",
        "writes": [{"path": "/sys/kernel/mm/ksm/run", "original": "1", "target": "0"}],
        "before": [{"tail": "p99.9", "tail_ns": 50000, "max_ns": 90000, "misses": 0,
                    "result": "t.rounds/ksm-A-1.json"}],
        "after": [{"tail": "p99", "tail_ns": null, "max_ns": 80000, "misses": 1,
                   "result": "t.rounds/ksm-B-1.json"}],
        "judgement": {"verdict": "cannot_tell", "effects": [{"figure": "max",
          "before": 90000.0, "after": 80000.0, "change": -0.11, "p": 0.5, "spread": 0.2}]}}],
      "skipped": [{"name": "thp", "reason": "not always"}],
      "boot": [{"what": "isolation", "param": "isolcpus=1", "why": "w"}],
      "kept": []
    }"#;

    #[test]
    fn the_first_documents_read_as_version_1() {
        let value: serde_json::Value = serde_json::from_str(FIRST).unwrap();
        assert!(is_tune_document(&value));
        let doc = parse_tune_value(value).unwrap();
        assert_eq!(doc.kind, TUNE_KIND);
        assert_eq!(doc.schema_version, 1);
        assert_eq!(doc.host, "");
        assert_eq!(doc.trials[0].verdict(), Some(Verdict::CannotTell));
        assert_eq!(doc.trials[0].after[0].tail_ns, None);
        assert_eq!(command_line(&doc.boot), "isolcpus=1");
        // Written again, it carries its kind and version and reads back the same.
        let again: serde_json::Value = serde_json::from_slice(&tune_bytes(&doc)).unwrap();
        assert_eq!(again["kind"], TUNE_KIND);
        assert_eq!(parse_tune_value(again).unwrap(), doc);
    }

    #[test]
    fn a_run_result_a_newer_version_and_damage_are_refused() {
        let run = serde_json::json!({"schema_version": 1, "runs": []});
        assert!(!is_tune_document(&run));
        assert_eq!(parse_tune_value(run), Err(crate::read::Problem::NotTune));
        let mut value: serde_json::Value = serde_json::from_str(FIRST).unwrap();
        value["kind"] = TUNE_KIND.into();
        value["schema_version"] = 7.into();
        assert_eq!(
            parse_tune_value(value.clone()),
            Err(crate::read::Problem::FutureTuneVersion(7))
        );
        value["schema_version"] = 1.into();
        value["trials"][0]["before"][0]["tail_ns"] = 100_000.into();
        let err = parse_tune_value(value).unwrap_err();
        let text = err.at(Path::new("t.json")).to_string();
        assert!(text.contains("trials[0].before[0].tail_ns"), "{text}");
    }

    /// The committed schema is the one these types give.
    #[test]
    fn the_committed_schema_is_current() {
        let committed = include_str!("../../../docs/tune.schema.json");
        assert!(
            committed == json_schema(),
            "docs/tune.schema.json is stale: run `cargo run -p rtgauge -- schema --tune > \
             docs/tune.schema.json`"
        );
    }
}
