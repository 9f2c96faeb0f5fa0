//! Result documents: damaged, edited and made-up documents are refused in one line naming the
//! file and the field, and whatever is accepted renders (tables, report, comparison, check)
//! without a panic.

use proptest::prelude::*;
use rtgauge_fuzz::*;
use rtgauge_report::Render;
use rtgauge_result::{read_result, RunResult};
use serde_json::Value;

fn corpus_documents() -> Vec<Value> {
    corpus("result")
        .into_iter()
        .map(|(name, bytes)| {
            serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("corpus {name}: {e}"))
        })
        .collect()
}

/// Reads `bytes` as a result file; a refusal must keep the contract.
fn read(bytes: Vec<u8>) -> Result<Option<RunResult>, TestCaseError> {
    let (_dir, path) = input_file("result.json", &bytes);
    let reader_path = path.clone();
    let outcome = within("read_result", move || read_result(&reader_path))?;
    match outcome {
        Ok(result) => Ok(Some(result)),
        Err(e) => {
            check_refusal(&e.to_string(), &path.display().to_string())?;
            Ok(None)
        }
    }
}

/// Everything a user can do with an accepted document.
fn render(result: RunResult) -> Result<(), TestCaseError> {
    within("rendering an accepted document", move || {
        let _ =
            rtgauge_report::table::render_tables(&result, rtgauge_report::table::Style::Terminal);
        let pair = [result.clone(), result.clone()];
        let names = ["a".to_string(), "b".to_string()];
        let comparison = rtgauge_report::compare(&pair, &names);
        let _ = rtgauge_report::compare::render_text(
            &comparison,
            rtgauge_report::compare::Style::Terminal,
        );
        let _ = rtgauge_report::compare::render_csv(&comparison);
        let _ = rtgauge_report::render_html(&rtgauge_report::ReportInput {
            results: &pair,
            names: &names,
            comparison: Some(&comparison),
            recordings: &[],
        });
        let spec_path = corpus_path("spec", "limits.toml");
        let spec = rtgauge_report::Spec::load(&spec_path).expect("corpus spec");
        let _ = rtgauge_report::check_result(&result, &spec);
        // The baseline gate reads the block histograms: tested against itself and a copy.
        let stats = ["median".to_string(), "p99".to_string(), "max".to_string()];
        let gate = rtgauge_report::check::check_against_baseline(
            &pair[0], &pair[1], "a", 0.1, &stats, true,
        );
        let _ = gate.render(rtgauge_report::Format::Text(
            rtgauge_report::Style::Terminal,
        ));
    })
}

#[test]
fn the_corpus_is_accepted_and_renders() {
    for doc in corpus_documents() {
        let result = read(serde_json::to_vec(&doc).unwrap())
            .unwrap()
            .expect("corpus documents are valid");
        render(result).unwrap();
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn edited_documents_are_refused_in_one_line_or_render(
        which in any::<usize>(),
        edits in json_edits(),
    ) {
        let docs = corpus_documents();
        let doc = apply_json_edits(&docs[which % docs.len()], &edits);
        if let Some(result) = read(serde_json::to_vec(&doc).unwrap())? {
            render(result)?;
        }
    }

    #[test]
    fn damaged_files_are_refused_in_one_line_or_render(bytes in damaged_corpus_file("result")) {
        if let Some(result) = read(bytes)? {
            render(result)?;
        }
    }

    #[test]
    fn random_bytes_are_refused_in_one_line(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        prop_assert!(read(bytes)?.is_none());
    }
}

#[test]
fn deeply_nested_documents_are_refused_without_overflowing_the_stack() {
    // Built as text: a nested value this deep would overflow the test's own stack.
    let mut doc = corpus_documents().remove(0);
    doc["runs"] = Value::from("NESTED");
    let depth = 100_000;
    let nested = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    let text = serde_json::to_string(&doc)
        .unwrap()
        .replace("\"NESTED\"", &nested);
    assert!(read(text.into_bytes()).unwrap().is_none());
    let text = "[".repeat(1_000_000);
    assert!(read(text.into_bytes()).unwrap().is_none());
}

/// Inputs that once broke the contract (found by the coverage-guided fuzzer, `.ci/fuzz`),
/// replayed on every test run.
#[test]
fn past_findings_are_refused_in_one_line() {
    for (name, bytes) in corpus("result-findings") {
        assert!(
            read(bytes)
                .unwrap_or_else(|e| panic!("{name}: {e}"))
                .is_none(),
            "{name} is accepted"
        );
    }
}
