//! What a run will do: probes × modes × loads, their budgets and parameters.
//!
//! A plan comes from command-line flags, from a suite (a TOML file users can write; the
//! built-in `quick`, `standard` and `full` suites are such files compiled in), or both, flags
//! winning.

use crate::probe::{Budget, Params, ProbeError};
use crate::probes;
use crate::rt::Mode;
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
    pub params: BTreeMap<String, String>,
    pub budget: Budget,
    pub warmup_ns: u64,
}

impl ProbeRequest {
    pub fn params(&self) -> Params {
        Params::new(self.name, self.params.clone())
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
}

/// A problem with the plan: a bad suite, probe or parameter.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("unknown probe '{0}'; known probes: {names}", names = probes::names())]
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
    toml::from_str(&text).map_err(|e| PlanError::Suite {
        path: origin,
        detail: e.message().to_string(),
    })
}

fn suite_duration(origin: &str, key: &str, v: &Option<String>) -> Result<Option<u64>, PlanError> {
    v.as_deref()
        .map(units::parse_duration_ns)
        .transpose()
        .map_err(|e| PlanError::Suite {
            path: origin.into(),
            detail: format!("{key}: {e}"),
        })
}

/// Turns a suite into probe requests. `fallback` budget and warm-up apply where the suite is
/// silent.
pub fn suite_requests(
    suite: &SuiteFile,
    fallback: Budget,
    fallback_warmup_ns: u64,
) -> Result<Vec<ProbeRequest>, PlanError> {
    let origin = &suite.name;
    let default_duration = suite_duration(origin, "duration", &suite.duration)?;
    let default_warmup =
        suite_duration(origin, "warmup", &suite.warmup)?.unwrap_or(fallback_warmup_ns);
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
            let duration = suite_duration(origin, "duration", &p.duration)?.or(default_duration);
            let loops = p.loops.or(suite.loops);
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
                suite_duration(origin, "warmup", &p.warmup)?.unwrap_or(default_warmup),
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    check_unique_titles(&requests).map_err(|e| PlanError::Suite {
        path: origin.clone(),
        detail: e.to_string(),
    })?;
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

/// Builds and validates one probe request.
pub fn request(
    name: &str,
    variant: Option<String>,
    params: BTreeMap<String, String>,
    budget: Budget,
    warmup_ns: u64,
) -> Result<ProbeRequest, PlanError> {
    let probe = probes::find(name).ok_or_else(|| PlanError::UnknownProbe(name.to_string()))?;
    // A variant becomes part of result titles, file names and `--set` selectors.
    if let Some(v) = variant.as_deref().filter(|v| {
        v.is_empty()
            || !v
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    }) {
        return Err(PlanError::BadVariant(format!("{name}@{v}")));
    }
    let req = ProbeRequest {
        name: probe.name(),
        variant,
        params,
        budget,
        warmup_ns,
    };
    probe.validate(&req.params())?;
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
        .ok_or_else(|| format!("--set '{s}' is not of the form key=value or probe.key=value"))?;
    Ok(match key.split_once('.') {
        Some((probe, key)) => (Some(probe.to_string()), key.to_string(), value.to_string()),
        None => (None, key.to_string(), value.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_suites_parse_and_validate() {
        for (name, _) in BUILTIN_SUITES {
            let suite = load_suite(name).unwrap();
            let reqs = suite_requests(
                &suite,
                Budget {
                    duration_ns: Some(1),
                    loops: None,
                },
                0,
            )
            .unwrap();
            assert!(!reqs.is_empty(), "{name}");
        }
    }

    #[test]
    fn suite_parameters_reach_the_probe() {
        let suite: SuiteFile = toml::from_str(
            "name = \"t\"\nduration = \"2s\"\n[[probe]]\nname = \"cyclic\"\nperiod = \"250us\"\ntimer = \"timerfd\"\n",
        )
        .unwrap();
        let reqs = suite_requests(
            &suite,
            Budget {
                duration_ns: None,
                loops: None,
            },
            0,
        )
        .unwrap();
        assert_eq!(reqs[0].params["period"], "250us");
        assert_eq!(reqs[0].budget.duration_ns, Some(2_000_000_000));
    }

    #[test]
    fn bad_suites_say_what_is_wrong() {
        assert!(matches!(
            load_suite("nope"),
            Err(PlanError::UnknownSuite(_))
        ));
        let suite: SuiteFile =
            toml::from_str("name = \"t\"\n[[probe]]\nname = \"cyclic\"\nperiod = \"0\"\n").unwrap();
        let e = suite_requests(
            &suite,
            Budget {
                duration_ns: Some(1),
                loops: None,
            },
            0,
        )
        .unwrap_err();
        assert!(e.to_string().contains("period"), "{e}");
    }

    fn requests_of(text: &str) -> Result<Vec<ProbeRequest>, PlanError> {
        let suite: SuiteFile = toml::from_str(text).unwrap();
        suite_requests(
            &suite,
            Budget {
                duration_ns: Some(1),
                loops: None,
            },
            0,
        )
    }

    #[test]
    fn one_probe_twice_in_a_suite_needs_variants() {
        let reqs = requests_of(
            "name = \"t\"\n[[probe]]\nname = \"cyclic\"\nvariant = \"1ms\"\n[[probe]]\nname = \"cyclic\"\nvariant = \"100us\"\nperiod = \"100us\"\n",
        )
        .unwrap();
        let titles: Vec<String> = reqs.iter().map(ProbeRequest::title).collect();
        assert_eq!(titles, ["cyclic@1ms", "cyclic@100us"]);
        assert!(reqs[1].is_selected_by("cyclic") && reqs[1].is_selected_by("cyclic@100us"));
        assert!(!reqs[1].is_selected_by("cyclic@1ms"));

        let e = requests_of(
            "name = \"t\"\n[[probe]]\nname = \"cyclic\"\n[[probe]]\nname = \"cyclic\"\nperiod = \"100us\"\n",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("'cyclic' is planned twice") && e.contains("variant"),
            "{e}"
        );

        let e = requests_of("name = \"t\"\n[[probe]]\nname = \"cyclic\"\nvariant = \"a.b\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("cyclic@a.b") && e.contains("letters, digits"),
            "{e}"
        );
    }

    #[test]
    fn selectors_split_at_the_variant() {
        assert_eq!(split_selector("cyclic"), ("cyclic", None));
        assert_eq!(split_selector("cyclic@100us"), ("cyclic", Some("100us")));
    }

    #[test]
    fn suite_mixes_expand_in_place() {
        let mixes = BTreeMap::from([("office".to_string(), vec!["cpu".into(), "io+net".into()])]);
        assert_eq!(expand_mixes("none,office", &mixes), "none,cpu,io+net");
        assert_eq!(expand_mixes("none", &mixes), "none");
    }

    #[test]
    fn settings_split() {
        assert_eq!(
            parse_setting("cyclic.period=25us"),
            Ok((Some("cyclic".into()), "period".into(), "25us".into()))
        );
        assert!(parse_setting("period").is_err());
    }
}
