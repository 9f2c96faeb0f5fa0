//! The extreme-value worst-case estimate through the binary: a result whose maxima support
//! it shows a predicted 1-hour maximum, `check` gates on it (`pwcet_1h`), and maxima that
//! mix two sources are refused with the reason. The maxima are synthetic (drawn from known
//! distributions with a fixed seed) and written into a copy of a report fixture, so the
//! outcome holds on any machine.

mod common;

use common::rtgauge;
use rtgauge_stats::evt::{sample, Gev};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn fixture() -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../rtgauge-report/tests/fixtures/idle.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The fixture with the first latency series' interval maxima replaced by `maxima` (its
/// maximum raised to theirs so the document stays consistent), written to `path`.
fn with_maxima(path: &Path, maxima: &[u64]) {
    let mut doc = fixture();
    let stats = &mut doc["runs"][0]["series"][0]["stats"];
    let top = *maxima.iter().max().unwrap();
    if stats["max_ns"].as_u64().unwrap() < top {
        stats["max_ns"] = top.into();
        // The histogram's last bucket must not lie above the maximum: it does not.
    }
    stats["intervals"]["max_ns"] = maxima.iter().map(|&v| Value::from(v)).collect();
    std::fs::write(path, serde_json::to_string(&doc).unwrap()).unwrap();
}

fn gumbel_maxima(seed: u64) -> Vec<u64> {
    sample(&Gev::gumbel(300_000.0, 20_000.0), 600, seed)
        .iter()
        .map(|v| *v as u64)
        .collect()
}

fn stdout(args: &[&str]) -> (String, Option<i32>) {
    let out = rtgauge().args(args).output().unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    // Long notes wrap: compare their words, not their line breaks.
    (
        text.split_whitespace().collect::<Vec<_>>().join(" "),
        out.status.code(),
    )
}

#[test]
fn show_predicts_the_hour_maximum_and_check_gates_on_it() {
    let dir = tempfile::tempdir().unwrap();
    let result = dir.path().join("r.json");
    with_maxima(&result, &gumbel_maxima(11));
    let r = result.to_str().unwrap();

    let (text, code) = stdout(&["show", r, "--table", "summary"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("latency cpu 0:") && text.contains("predicted 1-h max ≤"),
        "{text}"
    );
    // The other series kept 20 maxima: refused, with how long to measure.
    assert!(
        text.contains("no estimate: only 20 interval maxima, 30 needed"),
        "{text}"
    );
    assert!(text.contains("directly takes --duration"), "{text}");

    let spec = dir.path().join("spec.toml");
    let gate = |limit: &str| {
        std::fs::write(
            &spec,
            format!("[[limit]]\nprobe = \"cyclic\"\nseries = \"latency\"\nlabels = {{ cpu = \"0\" }}\nmode = \"normal\"\nload = \"none\"\npwcet_1h = \"{limit}\"\n"),
        )
        .unwrap();
        stdout(&["check", r, "--spec", spec.to_str().unwrap()])
    };
    // Gumbel(300 µs, 20 µs) maxima of 1 s: an hour's maximum is near 300 + 20·ln 3600 ≈ 464 µs.
    let (text, code) = gate("10ms");
    assert_eq!(code, Some(0), "{text}");
    let (text, code) = gate("350us");
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("predicted 1-h max"), "{text}");
}

#[test]
fn a_mixture_of_two_sources_is_refused_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let result = dir.path().join("r.json");
    // About one interval in ten, at random, holds a stall of a few ms on top of the kernel's
    // 300 µs: a standard Gumbel draw exceeds 2.25 with probability 0.1.
    let stalls = sample(&Gev::gumbel(4_000_000.0, 500_000.0), 600, 12);
    let coin = sample(&Gev::gumbel(0.0, 1.0), 600, 14);
    let maxima: Vec<u64> = gumbel_maxima(13)
        .iter()
        .zip(stalls.iter().zip(&coin))
        .map(|(&k, (&s, &c))| if c > 2.25 { s as u64 } else { k })
        .collect();
    with_maxima(&result, &maxima);
    let (text, code) = stdout(&["show", result.to_str().unwrap(), "--table", "summary"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("latency cpu 0:")
            && text.contains("no estimate: no extreme-value distribution fits"),
        "{text}"
    );
}

#[test]
fn a_document_with_an_estimate_and_a_refusal_follows_the_schema_and_reads_back() {
    use rtgauge_stats::evt::{estimate, Input};
    let mut doc = fixture();
    let maxima = gumbel_maxima(15);
    fn input(maxima: &[u64]) -> Input<'_> {
        Input::hour_ahead(maxima, 1_000_000_000, Some(1000.0))
    }
    let estimated = estimate(&input(&maxima));
    assert!(estimated.estimate().is_some(), "{:?}", estimated.refusal());
    let refused = estimate(&input(&[1, 2, 3]));
    doc["runs"][0]["series"][0]["worst_case"] = serde_json::to_value(&estimated).unwrap();
    doc["runs"][0]["series"][1]["worst_case"] = serde_json::to_value(&refused).unwrap();
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/result.schema.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator.iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:#?}");
    assert_eq!(
        doc["runs"][0]["series"][0]["worst_case"]["state"],
        "estimated"
    );
    assert_eq!(
        doc["runs"][0]["series"][1]["worst_case"]["state"],
        "refused"
    );

    // The stored estimate is what show prints (it is not recomputed).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.json");
    std::fs::write(&path, serde_json::to_string(&doc).unwrap()).unwrap();
    let (text, code) = stdout(&["show", path.to_str().unwrap(), "--table", "summary"]);
    assert_eq!(code, Some(0), "{text}");
    let predicted = estimated.estimate().unwrap().predicted_max_ns;
    let shown = format!(
        "predicted 1-h max ≤ {}",
        rtgauge_report::worst_case::short_duration(predicted)
    );
    assert!(text.contains(&shown), "{shown} in {text}");
}
