//! What a run prints at the end (the summary, or every table with `--table full`) and
//! `rtgauge show`, which prints a stored result again: through the real binary.

mod common;

use common::*;

/// Box-drawing characters (U+2500–U+257F): only for a UTF-8 terminal, never when piped.
fn has_box_drawing(text: &str) -> bool {
    text.chars().any(|c| ('\u{2500}'..='\u{257f}').contains(&c))
}

/// The quick suite, briefly (every probe, every series, a few hundred ms each), printed for
/// a terminal of `columns`: (stdout, stderr) after checking what the first screen must be.
fn quick_run_fits(columns: usize, result: &std::path::Path) -> (String, String) {
    let out = rtgauge()
        .env("COLUMNS", columns.to_string())
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
        .arg(result)
        .output()
        .unwrap();
    assert_success(&out);
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines.len() <= 60, "{} lines:\n{stdout}", lines.len());
    for line in &lines {
        assert!(
            line.chars().count() <= columns,
            "{} columns of {columns}: {line}\n{stdout}",
            line.chars().count()
        );
    }
    // What a user can conclude comes first: the verdict among the first five lines, from
    // the figures (the periodic task's worst wake-up), with the limits' outcome.
    let at = lines
        .iter()
        .take(5)
        .position(|l| l.starts_with("verdict: "))
        .unwrap_or_else(|| panic!("no verdict in the first five lines:\n{stdout}"));
    // The sentence with its continuation lines.
    let verdict = lines[at..]
        .iter()
        .enumerate()
        .take_while(|(i, l)| *i == 0 || l.starts_with("  "))
        .map(|(_, l)| l.trim())
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        verdict.contains("periodic task") && verdict.contains("late"),
        "{verdict}"
    );
    assert!(stdout.contains("no limit given"), "{stdout}");
    assert!(!has_box_drawing(&stdout), "piped: no box drawing\n{stdout}");
    // The warnings after the summary (environment, shortfalls) are part of the same screen:
    // summary and warnings together fit 60 lines (the progress lines, which a terminal
    // redraws in place, are printed one by one only because the output is piped).
    let stderr = String::from_utf8(out.stderr).unwrap();
    // Progress lines (and their continuation lines, wrapped to the width) are left out.
    let mut in_progress = false;
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| {
            if l.starts_with("rtgauge: probe ") {
                in_progress = true;
            } else if !l.starts_with("  ") {
                in_progress = false;
            }
            !in_progress
        })
        .collect();
    for line in &warnings {
        assert!(
            line.chars().count() <= columns,
            "{} columns of {columns} on stderr: {line}",
            line.chars().count()
        );
    }
    assert!(
        lines.len() + warnings.len() <= 60,
        "{} lines of summary and {} of warnings:\n{stdout}{stderr}",
        lines.len(),
        warnings.len()
    );
    // One warning per kind: the sample counts of every probe in one sentence, never one
    // line per probe.
    let full = show_full(result);
    let samples =
        full.matches("samples per series").count() + full.matches("too few samples").count();
    assert_eq!(samples, 1, "the sample-count warning once:\n{full}");
    let said: Vec<&str> = full
        .lines()
        .filter_map(|l| l.strip_prefix("warning: "))
        .collect();
    for (i, w) in said.iter().enumerate() {
        assert!(!said[..i].contains(w), "said twice: {w}\n{full}");
    }
    (stdout, stderr)
}

/// `rtgauge show RESULT`: the full tables and every warning.
fn show_full(result: &std::path::Path) -> String {
    let out = rtgauge().arg("show").arg(result).output().unwrap();
    assert_success(&out);
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn quick_suite_summary_fits_an_80_column_terminal_with_its_verdict_first() {
    let _guard = exclusive();
    let dir = tempfile::tempdir().unwrap();
    quick_run_fits(80, &dir.path().join("quick80.json"));
}

#[test]
fn quick_suite_summary_fits_one_screen_and_show_prints_the_full_tables() {
    let _guard = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let result = dir.path().join("quick.json");
    let (stdout, stderr) = quick_run_fits(100, &result);
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(
        stderr.contains("lists every warning") || !stderr.contains("warning: "),
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
    // Every warning the end of the run held short is in the full tables, said once per
    // kind: a message about one probe run without the run's name (it is listed after the
    // message when several runs share it), the sample counts in one sentence.
    let result_doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&result).unwrap()).unwrap();
    let flowing = full.split_whitespace().collect::<Vec<_>>().join(" ");
    let checks = result_doc["checks"].as_array().unwrap();
    let own = result_doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| !checks.iter().any(|c| c["id"] == w["code"]))
        .filter(|w| w["code"] != "samples");
    for w in own {
        let message = w["message"].as_str().unwrap();
        let message = message.split_whitespace().collect::<Vec<_>>().join(" ");
        // `cyclic normal none: cpu 1: 42 of 201 periods overran`: said in full for the first
        // subject of its kind, the others listed with their number after it.
        let text = message
            .split_once(": ")
            .map_or(message.as_str(), |(_, t)| t);
        let sentence = text.split_once(": ").map_or(text, |(_, t)| t);
        let digitless = |t: &str| t.replace(|c: char| c.is_ascii_digit(), "");
        assert!(
            flowing.contains(text) || digitless(&flowing).contains(&digitless(sentence)),
            "{message} missing:\n{full}"
        );
    }
    assert!(flowing.contains("too few samples"), "{full}");
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

/// Text output fits the terminal's width (COLUMNS): the full tables leave out columns (and
/// say which), compare and check wrap their cells; piped without COLUMNS, tables stay whole.
#[test]
fn text_output_fits_the_columns_it_is_given() {
    let idle = report_fixture("idle.json");
    let loaded = report_fixture("loaded.json");
    let spec = report_fixture("spec.toml");
    let commands: [Vec<&std::ffi::OsStr>; 4] = [
        vec!["show".as_ref(), idle.as_os_str()],
        vec![
            "show".as_ref(),
            "--table".as_ref(),
            "summary".as_ref(),
            loaded.as_os_str(),
        ],
        vec!["compare".as_ref(), idle.as_os_str(), loaded.as_os_str()],
        vec![
            "check".as_ref(),
            loaded.as_os_str(),
            "--spec".as_ref(),
            spec.as_os_str(),
        ],
    ];
    for columns in [80usize, 100] {
        for args in &commands {
            let out = rtgauge()
                .env("COLUMNS", columns.to_string())
                .args(args)
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(!text.is_empty(), "{args:?}: no output");
            for line in text.lines() {
                assert!(
                    line.chars().count() <= columns,
                    "{args:?} at {columns} columns: {} wide: {line}\n{text}",
                    line.chars().count()
                );
            }
        }
    }
    // Piped without COLUMNS: the full tables keep every column.
    let out = rtgauge().arg("show").arg(&idle).output().unwrap();
    let whole = String::from_utf8_lossy(&out.stdout);
    assert!(
        whole.contains("Deviation") && whole.contains("Min"),
        "{whole}"
    );
    assert!(!whole.contains("left out to fit"), "{whole}");
}
