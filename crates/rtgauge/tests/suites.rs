//! Suite files are judged by one plan builder: `rtgauge suites FILE` refuses exactly what
//! `rtgauge run --suite FILE` refuses, before anything is measured, in one line that names the
//! file and the key.

mod common;

use common::one_line_error;

const CYCLIC: &str = "[[probe]]\nname = \"cyclic\"\n";

/// The refusal of `suites FILE`, checked to be the refusal of `run --suite FILE`.
fn refusal(text: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("my-suite.toml");
    std::fs::write(&file, text).unwrap();
    let file = file.to_str().unwrap();
    let checked = one_line_error(&["suites", file]);
    let output = dir.path().join("r.json");
    let run = one_line_error(&[
        "run",
        "--suite",
        file,
        "-d",
        "30s",
        "-q",
        "-o",
        output.to_str().unwrap(),
    ]);
    assert_eq!(checked, run, "suites and run disagree");
    assert!(
        checked.contains("my-suite.toml"),
        "names the file: {checked}"
    );
    assert!(!output.exists(), "nothing measured, nothing written");
    checked
}

#[test]
fn unknown_mode_in_a_suite_is_refused_by_suites_and_run() {
    let e = refusal(&format!("name = \"t\"\nmodes = [\"bogus\"]\n{CYCLIC}"));
    assert!(e.contains("modes: 'bogus' is not a mode"), "{e}");
}

#[test]
fn unknown_load_in_a_suite_is_refused_by_suites_and_run() {
    let e = refusal(&format!("name = \"t\"\nloads = [\"bogus\"]\n{CYCLIC}"));
    assert!(e.contains("loads:") && e.contains("bogus"), "{e}");
}

#[test]
fn unknown_load_in_a_mix_is_refused_by_suites_and_run() {
    let e = refusal(&format!(
        "name = \"t\"\nloads = [\"office\"]\n{CYCLIC}[mixes]\noffice = [\"cpu\", \"bogus\"]\n"
    ));
    assert!(e.contains("mixes.office:") && e.contains("bogus"), "{e}");
}

#[test]
fn a_mix_that_names_itself_is_refused_by_suites_and_run() {
    let e = refusal(&format!(
        "name = \"t\"\nloads = [\"office\"]\n{CYCLIC}[mixes]\noffice = [\"office\"]\n"
    ));
    assert!(e.contains("a mix cannot contain itself"), "{e}");
}

#[test]
fn a_suite_without_probes_is_refused_by_suites_and_run() {
    let e = refusal("name = \"t\"\n");
    assert!(e.contains("no [[probe]] entry"), "{e}");
}

#[test]
fn zero_loops_in_a_suite_is_refused_instead_of_a_complete_empty_run() {
    let e = refusal(&format!("name = \"t\"\nloops = 0\n{CYCLIC}"));
    assert!(e.contains("loops: 0 samples measures nothing"), "{e}");
    let e = refusal(&format!("name = \"t\"\n{CYCLIC}loops = 0\n"));
    assert!(e.contains("probe cyclic: loops:"), "{e}");
}

#[test]
fn a_printed_builtin_suite_checks_as_a_file() {
    for name in ["quick", "standard", "full"] {
        let text = common::rtgauge().args(["suites", name]).output().unwrap();
        assert!(text.status.success());
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(format!("{name}.toml"));
        std::fs::write(&file, &text.stdout).unwrap();
        common::rtgauge()
            .arg("suites")
            .arg(&file)
            .assert()
            .success();
    }
}
