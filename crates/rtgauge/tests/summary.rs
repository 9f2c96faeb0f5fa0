//! What a run prints at the end (the summary, or every table with `--table full`) and
//! `rtgauge show`, which prints a stored result again: through the real binary.

mod common;

use common::*;

/// Box-drawing characters (U+2500–U+257F): only for a UTF-8 terminal, never when piped.
fn has_box_drawing(text: &str) -> bool {
    text.chars().any(|c| ('\u{2500}'..='\u{257f}').contains(&c))
}

#[test]
fn quick_suite_summary_fits_one_screen_and_show_prints_the_full_tables() {
    let _guard = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let result = dir.path().join("quick.json");
    // The quick suite, briefly: every probe, every series, a few hundred ms each.
    let out = rtgauge()
        .args([
            "run",
            "--duration",
            "200ms",
            "--warmup",
            "1ms",
            "--mode",
            "normal",
        ])
        .args(["--no-report", "-o"])
        .arg(&result)
        .output()
        .unwrap();
    assert_success(&out);
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines.len() <= 60, "{} lines:\n{stdout}", lines.len());
    for line in &lines {
        assert!(
            line.chars().count() <= 100,
            "{} columns: {line}",
            line.chars().count()
        );
    }
    assert!(!has_box_drawing(&stdout), "piped: no box drawing\n{stdout}");
    // The warnings after the summary (environment, shortfalls) are part of the same screen:
    // summary and warnings together fit 60 lines (the progress lines, which a terminal
    // redraws in place, are printed one by one only because the output is piped).
    let stderr = String::from_utf8(out.stderr).unwrap();
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| !l.starts_with("rtgauge: probe "))
        .collect();
    for line in &warnings {
        assert!(
            line.chars().count() <= 100,
            "{} columns on stderr: {line}",
            line.chars().count()
        );
    }
    assert!(
        lines.len() + warnings.len() <= 60,
        "{} lines of summary and {} of warnings:\n{stdout}{stderr}",
        lines.len(),
        warnings.len()
    );
    assert!(
        warnings.iter().any(|l| l.contains("lists every warning")),
        "the warnings left out are counted: {stderr}"
    );
    for probe in [
        "cyclic:",
        "alloc:",
        "memop:",
        "clock:",
        "response:",
        "switch:",
        "primitive:",
        "noise:",
    ] {
        assert!(
            lines.iter().any(|l| l.starts_with(probe)),
            "{probe} missing:\n{stdout}"
        );
    }
    let show_hint = format!("full tables: rtgauge show {}", result.display());
    assert!(stdout.contains(&show_hint), "{stdout}");

    // The full tables are one command away, in every format.
    let show = |args: &[&str]| -> String {
        let out = rtgauge()
            .arg("show")
            .args(args)
            .arg(&result)
            .output()
            .unwrap();
        assert_success(&out);
        String::from_utf8(out.stdout).unwrap()
    };
    let full = show(&[]);
    assert!(full.contains("Deviation"), "{full}");
    // Every warning the end of the run held short is in the full tables.
    let result_doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&result).unwrap()).unwrap();
    let flowing = full.split_whitespace().collect::<Vec<_>>().join(" ");
    let checks = result_doc["checks"].as_array().unwrap();
    let own = result_doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| !checks.iter().any(|c| c["id"] == w["code"]));
    for w in own {
        let message = w["message"].as_str().unwrap();
        let message = message.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flowing.contains(&message), "{message} missing:\n{full}");
    }
    assert!(full.lines().count() > lines.len(), "{full}");
    assert!(!has_box_drawing(&full), "{full}");
    assert!(show(&["--format", "md"]).contains("### cyclic"));
    let csv = show(&["--format", "csv"]);
    assert!(csv.starts_with("probe,mode,load,status,series,"), "{csv}");
    let rows: serde_json::Value = serde_json::from_str(&show(&["--format", "json"])).unwrap();
    assert_eq!(
        rows.as_array().unwrap().len(),
        csv.lines().count() - 1,
        "JSON and CSV hold the same rows"
    );
    // And the summary again, as the run printed it.
    assert!(stdout.starts_with(&show(&["--table", "summary"])));
}

#[test]
fn run_table_full_prints_every_series() {
    let _guard = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let out = rtgauge()
        .args(["run", "cyclic", "--duration", "100ms", "--warmup", "1ms"])
        .args(["--mode", "normal", "--table", "full", "--no-report", "-o"])
        .arg(dir.path().join("r.json"))
        .output()
        .unwrap();
    assert_success(&out);
    let stdout = String::from_utf8(out.stdout).unwrap();
    for column in ["Series", "Average", "Deviation", "Median"] {
        assert!(stdout.contains(column), "{column}:\n{stdout}");
    }
    assert!(stdout.contains("period cpu="), "every series:\n{stdout}");
    assert!(!has_box_drawing(&stdout), "{stdout}");
}

#[test]
fn show_reads_several_results_and_refuses_what_is_not_one() {
    let out = rtgauge()
        .arg("show")
        .arg(report_fixture("idle.json"))
        .arg(report_fixture("loaded.json"))
        .output()
        .unwrap();
    assert_success(&out);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("idle.json") && text.contains("loaded.json"),
        "{text}"
    );

    let err = one_line_error(&["show".as_ref(), report_fixture("spec.toml").as_os_str()]);
    assert!(err.contains("spec.toml"), "{err}");

    let err = one_line_error(&[
        "show".as_ref(),
        "--table".as_ref(),
        "summary".as_ref(),
        "--format".as_ref(),
        "csv".as_ref(),
        report_fixture("idle.json").as_os_str(),
    ]);
    assert!(err.contains("cannot be written as CSV"), "{err}");
}
