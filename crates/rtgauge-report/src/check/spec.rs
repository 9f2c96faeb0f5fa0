//! Spec files: `[[limit]]` tables read into [`Spec`], with one-line errors that name the line
//! and the accepted form.

use crate::units::{format_duration_ns, parse_duration_ns};
use rtgauge_result::{ProbeRun, Series};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What a spec line may say; part of every key error.
const ACCEPTED_KEYS: &str = "probe, mode, load, series, labels, name, cause (selectors, optional); \
     min, max, mean, median, p<N> such as p99, p99_9 or \"p99.99\", pwcet_1h (the predicted 1-hour maximum) \
     (a duration with a unit, e.g. \"50us\"); \
     overruns, deadline_misses (a count, e.g. 0); fits = true (a task set's analysis: every selected task fits); for noise: noise_share (a share of the CPU, e.g. \"0.5%\"), \
     events_per_s_above_<duration> (stalls per second longer than it, e.g. events_per_s_above_10us = 2)";

#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    #[error("cannot read spec file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}:{line}: {message}")]
    Invalid {
        path: PathBuf,
        line: usize,
        message: String,
    },
}

/// A parsed spec file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Spec {
    pub path: PathBuf,
    pub limits: Vec<Limit>,
}

/// One `[[limit]]` table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Limit {
    /// 1-based position in the file.
    pub index: usize,
    /// Line of its `[[limit]]` header.
    pub line: usize,
    pub name: Option<String>,
    pub probe: Option<String>,
    pub mode: Option<String>,
    pub load: Option<String>,
    pub series: Option<String>,
    /// Labels the series must carry (a subset match).
    pub labels: BTreeMap<String, String>,
    /// A cause of explained spikes (`run --trace`): a kind (`gap`, `irq`, `softirq`,
    /// `thread`, …) or a name (`softirq NET_RX`, `kworker/0:1`). `max` bounds the longest
    /// time it held the CPU in one spike.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
    pub bounds: Vec<Bound>,
}

/// One bound: `p99_99 = "50us"`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bound {
    /// The key as written.
    pub key: String,
    pub stat: Stat,
    /// The limit in ns (times) or as a count (overruns).
    pub limit: u64,
    /// The limit as written (`50us`).
    pub written: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Stat {
    Min,
    Max,
    Mean,
    Median,
    /// A percentile: `q` is the quantile (0.9999 for p99.99), `label` e.g. "p99.99".
    Percentile {
        q: f64,
        label: String,
    },
    Overruns,
    /// Jobs that missed their deadline (a task set's `deadline_misses` counter).
    DeadlineMisses,
    /// Whether the series' analysis says it fits (a task set's `fits` metric); the limit is 1.
    Fits,
    /// The predicted maximum of an hour (the series' extreme-value estimate, 95 %).
    PredictedMaxHour,
    /// The share of the CPU lost to stalls (`noise` probe); the limit in parts per million.
    NoiseShare,
    /// Stalls per second longer than `above_ns` (`noise` probe); the limit in thousandths.
    EventsPerSecond {
        above_ns: u64,
    },
}

/// The `noise_share` limit as written (`0.5%`), in parts per million.
fn parse_share_ppm(text: &str) -> Option<u64> {
    let pct: f64 = text.strip_suffix('%')?.trim().parse().ok()?;
    (0.0..=100.0)
        .contains(&pct)
        .then(|| (pct * 10_000.0).round() as u64)
}

impl Stat {
    pub fn label(&self) -> String {
        match self {
            Stat::Min => "min".into(),
            Stat::Max => "max".into(),
            Stat::Mean => "mean".into(),
            Stat::Median => "median".into(),
            Stat::Percentile { label, .. } => label.clone(),
            Stat::Overruns => "overruns".into(),
            Stat::DeadlineMisses => "deadline_misses".into(),
            Stat::Fits => "fits".into(),
            Stat::PredictedMaxHour => "predicted 1-h max".into(),
            Stat::NoiseShare => "noise share".into(),
            Stat::EventsPerSecond { above_ns } => {
                format!("stalls/s above {}", format_duration_ns(*above_ns))
            }
        }
    }

    pub(crate) fn is_time(&self) -> bool {
        !matches!(
            self,
            Stat::Overruns
                | Stat::DeadlineMisses
                | Stat::Fits
                | Stat::NoiseShare
                | Stat::EventsPerSecond { .. }
        )
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSpec {
    #[serde(default)]
    limit: Vec<toml::Spanned<BTreeMap<String, toml::Spanned<toml::Value>>>>,
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Parses `p99`, `p99_9`, `p99.99`, `p50`: the quantile and the canonical label.
pub fn parse_percentile_key(key: &str) -> Option<(f64, String)> {
    let digits = key.strip_prefix('p')?;
    let normalised = digits.replacen('_', ".", 1);
    let valid = !normalised.is_empty()
        && normalised.chars().all(|c| c.is_ascii_digit() || c == '.')
        && normalised.matches('.').count() <= 1
        && !normalised.starts_with('.')
        && !normalised.ends_with('.');
    if !valid {
        return None;
    }
    let percent: f64 = normalised.parse().ok()?;
    if !(percent > 0.0 && percent < 100.0) {
        return None;
    }
    Some((percent / 100.0, format!("p{normalised}")))
}

/// `p101`, `p100`, `p0`: written as a percentile, but not one.
fn percentile_out_of_range(key: &str) -> bool {
    key.strip_prefix('p')
        .and_then(|d| d.replacen('_', ".", 1).parse::<f64>().ok())
        .is_some_and(|percent| !(percent > 0.0 && percent < 100.0))
}

impl Spec {
    /// Reads and validates a spec file.
    pub fn load(path: &Path) -> Result<Spec, SpecError> {
        let text = std::fs::read_to_string(path).map_err(|source| SpecError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Spec::parse(&text, path)
    }

    /// Validates spec text; `path` names it in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Spec, SpecError> {
        let invalid = |line: usize, message: String| SpecError::Invalid {
            path: path.to_path_buf(),
            line,
            message,
        };
        let raw: RawSpec = toml::from_str(text).map_err(|e| {
            let line = e.span().map_or(1, |s| line_of(text, s.start));
            let mut message = e.message().trim().replace('\n', " ");
            if message.contains("unknown field") {
                message.push_str("; a spec holds only [[limit]] tables");
            }
            // A syntax error needs the TOML rule, not the list of keys (which an unknown key
            // gets): both together ran past a line's worth.
            invalid(
                line,
                format!(
                    "{message} (spec files are TOML: [[limit]] tables of selectors and limits)"
                ),
            )
        })?;
        if raw.limit.is_empty() {
            return Err(invalid(
                1,
                "no [[limit]] table; write e.g. [[limit]] probe = \"cyclic\" series = \"latency\" max = \"100us\"".into(),
            ));
        }
        let mut limits = Vec::new();
        for (i, table) in raw.limit.iter().enumerate() {
            // The header line: the last `[[` before the table's first value.
            let first = table
                .get_ref()
                .values()
                .map(|v| v.span().start)
                .min()
                .unwrap_or(table.span().start);
            let header = text[..first.min(text.len())].rfind("[[").unwrap_or(first);
            let mut limit = Limit {
                index: i + 1,
                line: line_of(text, header),
                name: None,
                probe: None,
                mode: None,
                load: None,
                series: None,
                labels: BTreeMap::new(),
                cause: None,
                bounds: Vec::new(),
            };
            let mut entries: Vec<(&String, &toml::Spanned<toml::Value>)> =
                table.get_ref().iter().collect();
            entries.sort_by_key(|(_, v)| v.span().start);
            for (key, value) in entries {
                let line = line_of(text, value.span().start);
                let as_string = || -> Result<String, SpecError> {
                    match value.get_ref() {
                        toml::Value::String(s) => Ok(s.clone()),
                        other => Err(invalid(
                            line,
                            format!(
                                "`{key}` must be a string, e.g. {key} = \"{}\" (found {})",
                                example(key),
                                quote_value(other)
                            ),
                        )),
                    }
                };
                match key.as_str() {
                    "name" => limit.name = Some(as_string()?),
                    "probe" => limit.probe = Some(as_string()?),
                    "mode" => limit.mode = Some(as_string()?),
                    "load" => limit.load = Some(as_string()?),
                    "series" => limit.series = Some(as_string()?),
                    "cause" => limit.cause = Some(as_string()?),
                    "labels" => {
                        let toml::Value::Table(t) = value.get_ref() else {
                            return Err(invalid(
                                line,
                                "`labels` must be an inline table, e.g. labels = { cpu = \"1\" }"
                                    .into(),
                            ));
                        };
                        for (k, v) in t {
                            let v = match v {
                                toml::Value::String(s) => s.clone(),
                                toml::Value::Integer(n) => n.to_string(),
                                other => {
                                    return Err(invalid(
                                        line,
                                        format!("label `{k}` must be a string or integer, e.g. labels = {{ cpu = \"1\" }} (found {})", quote_value(other)),
                                    ))
                                }
                            };
                            limit.labels.insert(k.clone(), v);
                        }
                    }
                    "overruns" | "deadline_misses" => {
                        let n = match value.get_ref() {
                            toml::Value::Integer(n) if *n >= 0 => *n as u64,
                            other => {
                                return Err(invalid(
                                    line,
                                    format!("`{key}` must be a count (an integer ≥ 0), e.g. {key} = 0 (found {})", quote_value(other)),
                                ))
                            }
                        };
                        limit.bounds.push(Bound {
                            key: key.clone(),
                            stat: if key == "overruns" {
                                Stat::Overruns
                            } else {
                                Stat::DeadlineMisses
                            },
                            limit: n,
                            written: n.to_string(),
                        });
                    }
                    "fits" => {
                        if value.get_ref().as_bool() != Some(true) {
                            return Err(invalid(
                                line,
                                format!("`fits` takes true (every task the limit selects must fit its deadline by the analysis), e.g. fits = true (found {})", quote_value(value.get_ref())),
                            ));
                        }
                        limit.bounds.push(Bound {
                            key: key.clone(),
                            stat: Stat::Fits,
                            limit: 1,
                            written: "true".into(),
                        });
                    }
                    "noise_share" => {
                        let written = value.get_ref().as_str().unwrap_or_default().to_string();
                        let ppm = parse_share_ppm(&written).ok_or_else(|| {
                            invalid(
                                line,
                                format!("`noise_share` must be a percentage as a string, e.g. noise_share = \"0.5%\" (found {})", value.get_ref()),
                            )
                        })?;
                        limit.bounds.push(Bound {
                            key: key.clone(),
                            stat: Stat::NoiseShare,
                            limit: ppm,
                            written,
                        });
                    }
                    other if other.starts_with("events_per_s_above_") => {
                        let duration = &other["events_per_s_above_".len()..];
                        let above_ns = parse_duration_ns(duration).map_err(|e| {
                            invalid(
                                line,
                                format!("`{other}`: {e}; write e.g. events_per_s_above_10us = 2"),
                            )
                        })?;
                        let rate = match value.get_ref() {
                            toml::Value::Integer(n) if *n >= 0 => *n as f64,
                            toml::Value::Float(f) if *f >= 0.0 => *f,
                            other_value => {
                                return Err(invalid(
                                    line,
                                    format!("`{other}` must be a number of stalls per second, e.g. {other} = 2 (found {other_value})"),
                                ))
                            }
                        };
                        limit.bounds.push(Bound {
                            key: key.clone(),
                            stat: Stat::EventsPerSecond { above_ns },
                            limit: (rate * 1000.0).round() as u64,
                            written: format!("{rate}/s"),
                        });
                    }
                    other => {
                        let stat = match other {
                            "min" => Stat::Min,
                            "max" => Stat::Max,
                            "mean" => Stat::Mean,
                            "median" => Stat::Median,
                            "pwcet_1h" => Stat::PredictedMaxHour,
                            _ => match parse_percentile_key(other) {
                                Some((q, label)) => Stat::Percentile { q, label },
                                None if percentile_out_of_range(other) => {
                                    return Err(invalid(
                                        line,
                                        format!("`{other}`: a percentile must be above 0 and below 100, e.g. p99 or p99_99"),
                                    ))
                                }
                                None => {
                                    return Err(invalid(
                                        line,
                                        format!(
                                            "unknown key `{}`; accepted: {ACCEPTED_KEYS}",
                                            other.chars().take(40).collect::<String>()
                                        ),
                                    ))
                                }
                            },
                        };
                        let written = match value.get_ref() {
                            toml::Value::String(s) => s.clone(),
                            // TOML reads `p99.99 = …` as a dotted key: table p99, key 99.
                            toml::Value::Table(t) if matches!(stat, Stat::Percentile { .. }) => {
                                let rest = t.keys().next().cloned().unwrap_or_default();
                                return Err(invalid(
                                    line,
                                    format!("`{key}.{rest}` is read by TOML as a dotted key; write the percentile as {key}_{rest} = \"50us\" or \"{key}.{rest}\" = \"50us\""),
                                ));
                            }
                            other => {
                                return Err(invalid(
                                    line,
                                    format!("`{key}` must be a duration with a unit as a string, e.g. {key} = \"50us\" (found {}; units ns, us, ms, s)", quote_value(other)),
                                ))
                            }
                        };
                        let ns = parse_duration_ns(&written)
                            .map_err(|e| invalid(line, format!("`{key}`: {e}")))?;
                        limit.bounds.push(Bound {
                            key: key.clone(),
                            stat,
                            limit: ns,
                            written,
                        });
                    }
                }
            }
            if limit.bounds.is_empty() {
                return Err(invalid(
                    limit.line,
                    format!(
                        "limit {} states no bound; add e.g. max = \"100us\" or p99_99 = \"50us\"",
                        i + 1
                    ),
                ));
            }
            limits.push(limit);
        }
        Ok(Spec {
            path: path.to_path_buf(),
            limits,
        })
    }
}

fn example(key: &str) -> &'static str {
    match key {
        "probe" => "cyclic",
        "mode" => "rt",
        "load" => "cpu",
        "series" => "latency",
        _ => "…",
    }
}

impl Limit {
    /// `probe=cyclic mode=rt series=latency` — what the limit selects.
    pub fn selector(&self) -> String {
        let mut parts = Vec::new();
        for (k, v) in [
            ("probe", &self.probe),
            ("mode", &self.mode),
            ("load", &self.load),
            ("series", &self.series),
        ] {
            if let Some(v) = v {
                parts.push(format!("{k}={v}"));
            }
        }
        for (k, v) in &self.labels {
            parts.push(format!("{k}={v}"));
        }
        if parts.is_empty() {
            "every series".into()
        } else {
            parts.join(" ")
        }
    }

    /// `p99.99 ≤ 50us, max ≤ 100us`.
    pub fn bounds_text(&self) -> String {
        self.bounds
            .iter()
            .map(|b| match b.stat {
                Stat::Fits => "fits".to_string(),
                _ => format!("{} ≤ {}", b.stat.label(), b.written),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    pub(crate) fn selects_run(&self, run: &ProbeRun) -> bool {
        // `cyclic` selects every variant of the probe, `cyclic@100us` one.
        self.probe
            .as_ref()
            .is_none_or(|p| *p == run.probe || *p == run.title())
            && self.mode.as_ref().is_none_or(|m| *m == run.mode)
            && self.load.as_ref().is_none_or(|l| *l == run.load)
    }

    pub(crate) fn selects_series(&self, s: &Series) -> bool {
        self.series.as_ref().is_none_or(|n| *n == s.name)
            && self.labels.iter().all(|(k, v)| s.labels.get(k) == Some(v))
    }
}

/// A spec value as a message quotes it: a pasted blob is named by its start.
fn quote_value(value: &toml::Value) -> String {
    rtgauge_result::units::quote(&value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Spec, SpecError> {
        Spec::parse(text, Path::new("spec.toml"))
    }

    #[test]
    fn task_set_keys_take_a_count_and_true() {
        let spec = parse(
            "[[limit]]\nprobe = \"taskset\"\nlabels = { task = \"slow\" }\ndeadline_misses = 0\nfits = true\n",
        )
        .unwrap();
        let l = &spec.limits[0];
        assert_eq!(l.bounds[0].stat, Stat::DeadlineMisses);
        assert_eq!(l.bounds[1].stat, Stat::Fits);
        assert_eq!(l.bounds_text(), "deadline_misses ≤ 0, fits");
        for (text, says) in [
            ("[[limit]]\nfits = false\n", "`fits` takes true"),
            ("[[limit]]\nfits = \"yes\"\n", "`fits` takes true"),
            (
                "[[limit]]\ndeadline_misses = -1\n",
                "e.g. deadline_misses = 0",
            ),
        ] {
            let e = parse(text).unwrap_err().to_string();
            assert!(e.starts_with("spec.toml:2:") && e.contains(says), "{e}");
        }
    }

    #[test]
    fn percentile_keys() {
        assert_eq!(parse_percentile_key("p99"), Some((0.99, "p99".into())));
        assert_eq!(parse_percentile_key("p99_99").unwrap().1, "p99.99");
        assert!((parse_percentile_key("p99.999").unwrap().0 - 0.99999).abs() < 1e-12);
        assert_eq!(parse_percentile_key("p50").unwrap().0, 0.5);
        for bad in ["p", "p100", "p0", "p9x", "p99__9", "p.9", "q99", "p99."] {
            assert!(parse_percentile_key(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn a_full_limit_parses() {
        let spec = parse(
            "# gate\n[[limit]]\nprobe = \"cyclic\"\nmode = \"rt\"\nload = \"net\"\nseries = \"latency\"\nlabels = { cpu = 1 }\np99_99 = \"50us\"\nmax = \"100us\"\novrruns_is_typo_free = 0\n",
        );
        // The typo is reported with its line and the accepted keys.
        let e = spec.unwrap_err().to_string();
        assert!(
            e.starts_with("spec.toml:10: unknown key `ovrruns_is_typo_free`"),
            "{e}"
        );
        assert!(e.contains("accepted:"), "{e}");
        let spec = parse(
            "[[limit]]\nprobe = \"cyclic\"\nlabels = { cpu = 1 }\n\"p99.99\" = \"50us\"\nmax = \"100us\"\noverruns = 0\n",
        )
        .unwrap();
        let l = &spec.limits[0];
        assert_eq!(l.line, 1);
        assert_eq!(l.labels.get("cpu").map(String::as_str), Some("1"));
        assert_eq!(l.bounds.len(), 3);
        assert_eq!(l.bounds[0].stat.label(), "p99.99");
        assert_eq!(l.bounds[0].limit, 50_000);
        assert_eq!(l.bounds_text(), "p99.99 ≤ 50us, max ≤ 100us, overruns ≤ 0");
    }

    #[test]
    fn bad_specs_name_the_line_and_the_accepted_form() {
        let cases = [
            ("[[limit]]\nmax = 100\n", "spec.toml:2:", "\"50us\""),
            (
                "[[limit]]\nmax = \"100 parsecs\"\n",
                "spec.toml:2:",
                "e.g. 25us",
            ),
            (
                "[[limit]]\nprobe = \"cyclic\"\n",
                "spec.toml:1:",
                "no bound",
            ),
            ("[[limit]]\novverruns = 0\n", "spec.toml:2:", "unknown key"),
            (
                "[[limit]]\np101 = \"1us\"\n",
                "spec.toml:2:",
                "a percentile must be above 0 and below 100",
            ),
            ("[[limit]]\np100 = \"1us\"\n", "spec.toml:2:", "below 100"),
            ("[[limit]]\noverruns = -1\n", "spec.toml:2:", "integer ≥ 0"),
            ("[[limits]]\nmax = \"1us\"\n", "spec.toml:1:", "[[limit]]"),
            ("[[limit]\n", "spec.toml:1:", "TOML"),
            ("", "spec.toml:1:", "no [[limit]]"),
            (
                "[[limit]]\nmax = \"1us\"\n\n[[limit]]\nprobe = 3\nmax = \"1us\"\n",
                "spec.toml:5:",
                "must be a string",
            ),
            (
                "[[limit]]\np99.99 = \"50us\"\n",
                "spec.toml:2:",
                "p99_99 = \"50us\"",
            ),
        ];
        for (text, at, says) in cases {
            let e = parse(text).unwrap_err().to_string();
            assert!(e.starts_with(at), "{text:?}: {e}");
            assert!(e.contains(says), "{text:?}: {e}");
            assert!(!e.contains('\n'), "one line: {e}");
        }
    }
}
