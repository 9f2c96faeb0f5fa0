//! What differs around the numbers: fingerprint, configuration, tool, clock, what each probe
//! run obtained, doctor verdicts and warnings, flattened and set side by side.

use super::EnvDifference;
use rtgauge_result::{ProbeRun, RunResult};
use std::collections::BTreeMap;

/// Flattens a JSON value into `path = text` pairs; arrays of scalars become one value.
fn flatten(prefix: &str, v: &serde_json::Value, out: &mut BTreeMap<String, String>) {
    use serde_json::Value;
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                let path = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&path, v, out);
            }
        }
        Value::Array(items) if items.iter().all(|i| !i.is_object() && !i.is_array()) => {
            let parts: Vec<String> = items.iter().map(scalar).collect();
            out.insert(prefix.to_string(), parts.join(","));
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                flatten(&format!("{prefix}[{i}]"), v, out);
            }
        }
        other => {
            out.insert(prefix.to_string(), scalar(other));
        }
    }
}

fn scalar(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => "–".into(),
        other => other.to_string(),
    }
}

/// What describes the circumstances of a result, flattened: fingerprint, configuration, tool,
/// clock, what each probe run obtained, doctor verdicts and warning codes.
pub fn environment_fields(r: &RunResult) -> BTreeMap<String, String> {
    environment_fields_named(r, &|run: &ProbeRun| run.key().to_string())
}

/// [`environment_fields`] with each probe run's fields named by `name_of`.
fn environment_fields_named(
    r: &RunResult,
    name_of: &dyn Fn(&ProbeRun) -> String,
) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    // An interrupted result beside a complete one is the first difference to know about.
    out.insert("status".into(), r.status.to_string());
    if let Ok(v) = serde_json::to_value(&r.fingerprint) {
        flatten("fingerprint", &v, &mut out);
    }
    if let Ok(v) = serde_json::to_value(&r.config) {
        flatten("config", &v, &mut out);
    }
    out.insert("tool.version".into(), r.tool.version.clone());
    out.insert(
        "calibration.clocksource".into(),
        r.calibration.clocksource.clone(),
    );
    out.insert("calibration.clock".into(), r.calibration.clock.clone());
    out.insert(
        "calibration.resolution_ns".into(),
        r.calibration.resolution_ns.to_string(),
    );
    for run in &r.runs {
        let name = name_of(run);
        if let Ok(v) = serde_json::to_value(&run.obtained) {
            flatten(&format!("obtained[{name}]"), &v, &mut out);
        }
        for (k, v) in &run.params {
            out.insert(format!("params[{name}].{k}"), v.clone());
        }
    }
    for c in &r.checks {
        out.insert(format!("doctor.{}", c.id), c.status.name().to_string());
    }
    let mut codes: Vec<&str> = r.warnings.iter().map(|w| w.code.as_str()).collect();
    codes.sort_unstable();
    codes.dedup();
    out.insert("warnings".into(), codes.join(","));
    out
}

/// Fields whose values are not the same in every result. Two results whose probes each ran
/// once (an idle run against a loaded one, rt against normal, two hosts) name their probe runs
/// by probe alone, so what differs is listed once (`config.loads: none → messaging`), not as
/// every field of a run present on one side only.
pub fn environment_differences(results: &[RunResult]) -> Vec<EnvDifference> {
    let once_each = |title: &str| {
        results
            .iter()
            .all(|r| r.runs.iter().filter(|run| run.title() == title).count() == 1)
    };
    let name_of = |run: &ProbeRun| {
        if results.len() == 2 && once_each(&run.title()) {
            run.title()
        } else {
            run.key().to_string()
        }
    };
    let mut fields: Vec<BTreeMap<String, String>> = results
        .iter()
        .map(|r| environment_fields_named(r, &name_of))
        .collect();
    // A parameter no run set, from one version of rtgauge, took its value at run time (a
    // cyclic run's phase is read from the clock): a different value is not a difference
    // in configuration.
    let one_version = results
        .windows(2)
        .all(|w| w[0].tool.version == w[1].tool.version);
    if one_version {
        let set_by_someone = |field: &str| {
            let Some((run, key)) = field
                .strip_prefix("params[")
                .and_then(|f| f.split_once("]."))
            else {
                return true;
            };
            let title = run.split(' ').next().unwrap_or(run);
            results
                .iter()
                .any(|r| r.config.params.contains_key(&format!("{title}.{key}")))
        };
        for f in &mut fields {
            f.retain(|field, _| set_by_someone(field));
        }
    }
    let mut keys: Vec<&String> = fields.iter().flat_map(|f| f.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter_map(|k| {
            let values: Vec<Option<String>> = fields.iter().map(|f| f.get(k).cloned()).collect();
            let first = &values[0];
            values.iter().any(|v| v != first).then(|| EnvDifference {
                field: k.clone(),
                values,
            })
        })
        .collect()
}
