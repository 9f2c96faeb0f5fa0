//! What a new user meets first: the bare command, a forgotten argument, the listings and their
//! words, a first run without root.

mod common;

use common::rtgauge;

fn stdout_of(args: &[&str]) -> String {
    let out = rtgauge().args(args).output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

#[test]
fn bare_rtgauge_prints_the_short_help_not_just_its_title() {
    let out = rtgauge().output().unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("Usage: rtgauge [OPTIONS] <COMMAND>"),
        "{text}"
    );
    assert!(text.contains("doctor"), "{text}");
}

#[test]
fn missing_required_argument_is_named_in_the_error() {
    let out = rtgauge().arg("check").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    let first = err.lines().next().unwrap_or_default();
    assert!(first.contains("not provided"), "{err}");
    assert!(first.contains("--spec <SPEC>"), "{err}");
    assert!(first.contains("<RESULT>"), "{err}");
}

/// Words from the project's own history that mean nothing to a user: the programs rtgauge
/// was modelled on ("the seeds", "seed 001") and tracker items ("issue 3", "item 4").
fn internal_words(text: &str) -> Vec<String> {
    let lower = text.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .collect();
    let mut found = Vec::new();
    for pair in words.windows(2) {
        let number = pair[1].chars().all(|c| c.is_ascii_digit());
        if matches!(pair[0], "issue" | "item" | "seed" | "seeds") && number {
            found.push(pair.join(" "));
        }
    }
    for w in &words {
        if *w == "seeds" || *w == "seeds'" {
            found.push(w.to_string());
        }
    }
    found
}

#[test]
fn internal_words_are_caught_by_the_listing_check() {
    assert_eq!(internal_words("a loop (seed 001)"), ["seed 001"]);
    assert_eq!(internal_words("# Issue 3: alloc"), ["issue 3"]);
    assert_eq!(internal_words("the seeds' sample counts"), ["seeds'"]);
    assert!(internal_words("seed of the random sizes, so runs repeat").is_empty());
}

#[test]
fn no_listing_or_help_speaks_the_projects_internal_vocabulary() {
    let mut listings: Vec<Vec<&str>> = vec![
        vec!["--help"],
        vec!["probes"],
        vec!["loads"],
        vec!["suites"],
        vec!["suites", "quick"],
        vec!["suites", "standard"],
        vec!["suites", "full"],
    ];
    for command in [
        "run", "probes", "doctor", "loads", "suites", "show", "report", "compare", "check",
        "export", "schema",
    ] {
        listings.push(vec![command, "--help"]);
    }
    for args in listings {
        let text = stdout_of(&args);
        assert!(!text.trim().is_empty(), "rtgauge {args:?} printed nothing");
        let found = internal_words(&text);
        assert!(found.is_empty(), "rtgauge {}: {found:?}", args.join(" "));
    }
}

#[test]
fn doctor_json_with_fix_hint_carries_the_fix_script() {
    let out = rtgauge()
        .args(["doctor", "--json", "--fix-hint"])
        .output()
        .unwrap();
    let doc: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("doctor --json prints JSON");
    let script = doc["fix_script"].as_str().expect("fix_script present");
    assert!(script.starts_with("#!/bin/sh\n"), "{script}");
    // Without --fix-hint the document stays as it was.
    let out = rtgauge().args(["doctor", "--json"]).output().unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc.get("fix_script").is_none());
}

#[test]
fn doctor_fix_hint_lines_are_comments_or_valid_commands() {
    let out = rtgauge().args(["doctor", "--fix-hint"]).output().unwrap();
    let script = String::from_utf8_lossy(&out.stdout);
    for line in script
        .lines()
        .skip(1)
        .filter(|l| !l.is_empty() && !l.starts_with("## "))
    {
        let command = line
            .strip_prefix("# ")
            .unwrap_or_else(|| panic!("not a comment: {line}"));
        let ok = std::process::Command::new("sh")
            .args(["-n", "-c", command])
            .status()
            .unwrap()
            .success();
        assert!(ok, "not valid shell: {command}");
    }
}

/// `rtgauge run clock -d 300ms --no-report -o DIR/NAME EXTRA…` as nobody; None when this
/// test cannot drop privileges. Returns the output and the result path.
fn clock_as_nobody(
    name: &str,
    extra: &[&str],
) -> Option<(tempfile::TempDir, std::process::Output, std::path::PathBuf)> {
    let dir = common::nobody_workdir()?;
    let path = dir.path().join(name);
    let mut cmd = common::as_nobody();
    cmd.current_dir(dir.path())
        .args([
            "run",
            "clock",
            "-d",
            "300ms",
            "--warmup",
            "50ms",
            "--no-report",
        ])
        .args(extra)
        .arg("-o")
        .arg(&path);
    let out = cmd.output().unwrap();
    Some((dir, out, path))
}

#[test]
fn first_run_without_root_measures_best_effort_and_says_which_rows_are_not_real_time() {
    let Some((_dir, out, result)) = clock_as_nobody("first.json", &[]) else {
        return;
    };
    common::assert_success(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    let notice: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("NOT REAL-TIME"))
        .collect();
    assert_eq!(notice.len(), 1, "one prominent line:\n{err}");
    let notice = notice[0];
    assert!(
        notice.contains("rt asked, normal obtained for clock"),
        "{notice}"
    );
    assert!(
        notice.contains("sudo ") && !notice.contains("first.json"),
        "{notice}"
    );
    // The heading and the rows never say `mode rt` for numbers measured as a normal process.
    let printed = String::from_utf8_lossy(&out.stdout);
    let heading = printed.lines().next().unwrap_or_default();
    assert!(
        heading.contains("mode rt asked, normal obtained") && !heading.contains("mode rt ·"),
        "{printed}"
    );
    // The rows say what they really got: an ordinary process, with the reasons.
    let doc = common::read_json(&result);
    for run in doc["runs"].as_array().unwrap() {
        assert_eq!(run["mode"], "rt");
        assert_eq!(run["obtained"]["policy"], "other");
        assert!(!run["obtained"]["shortfalls"].as_array().unwrap().is_empty());
    }
}

#[test]
fn explicit_rt_mode_without_root_still_stops_before_measuring() {
    let Some((_dir, out, result)) = clock_as_nobody("strict.json", &["--mode", "rt"]) else {
        return;
    };
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("SCHED_FIFO"), "{err}");
    assert!(!result.exists());
}

/// The README's table for cyclictest users: every common option has a row, and every rtgauge
/// option it names exists (`--break` comes with the kernel view; its row is checked to be there).
#[test]
fn readme_maps_cyclictest_options_to_rtgauge_options_that_exist() {
    let readme = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"),
    )
    .unwrap();
    let table: Vec<&str> = readme
        .lines()
        .skip_while(|l| !l.starts_with("| cyclictest | rtgauge |"))
        .take_while(|l| l.starts_with('|'))
        .collect();
    assert!(!table.is_empty(), "no cyclictest table in the README");
    let run_help = stdout_of(&["run", "--help"]);
    for option in ["-p", "-i", "-t", "-a", "-m", "-h", "-b", "-D", "-l"] {
        let row = table
            .iter()
            .find(|r| r.starts_with(&format!("| `{option}")))
            .unwrap_or_else(|| panic!("no row for cyclictest {option}"));
        let rtgauge_column = row.split('|').nth(2).unwrap();
        for flag in rtgauge_column
            .split(|c: char| c == '`' || c.is_whitespace())
            .filter(|w| w.starts_with("--"))
        {
            if flag == "--break" {
                continue;
            }
            assert!(
                run_help.contains(flag),
                "{flag} (for {option}) is not a run option"
            );
        }
    }
}

/// `29.492ms` from 29.492 (ms), as the verdict writes a duration.
fn units_ms(ms: f64) -> String {
    format!(
        "{}ms",
        format!("{ms:.3}")
            .trim_end_matches('0')
            .trim_end_matches('.')
    )
}

/// The README's example run and the prose under it describe the same run: the typical
/// wake-up, the p99, the worst wake-up and the lost periods the prose names are those of the
/// table's rows, the warnings count the same overruns, and the verdict says the same.
#[test]
fn readme_prose_describes_the_run_its_example_shows() {
    let readme = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"),
    )
    .unwrap();
    let example: Vec<&str> = readme
        .lines()
        .skip_while(|l| !l.starts_with("$ sudo rtgauge run cyclic --period 1ms"))
        .take_while(|l| !l.starts_with("```"))
        .collect();
    // `  cpu 0   17.7  44.7  10555  29`: median, p99, max (µs), overruns.
    let rows: Vec<[f64; 4]> = example
        .iter()
        .filter(|l| l.trim_start().starts_with("cpu ") && !l.contains(':'))
        .map(|l| {
            let v: Vec<f64> = l
                .split_whitespace()
                .skip(2)
                .map(|w| w.parse().unwrap())
                .collect();
            [v[0], v[1], v[2], v[3]]
        })
        .collect();
    assert_eq!(rows.len(), 2, "two CPUs in the example: {example:?}");
    let prose = &readme[readme
        .find("\nHere: ")
        .expect("the paragraph about the run")..];
    let prose = &prose[..prose.find("\n\n").unwrap()].replace('\n', " ");
    let median = rows.iter().map(|r| r[0]).sum::<f64>() / rows.len() as f64;
    assert!(
        prose.contains(&format!("about {:.0} µs late", median)),
        "median {median}: {prose}"
    );
    let p99 = rows.iter().map(|r| r[1]).fold(0.0, f64::max);
    assert!(
        prose.contains(&format!("within {:.0} µs", p99.ceil())),
        "p99 {p99}: {prose}"
    );
    let max_ms = rows.iter().map(|r| r[2]).fold(0.0, f64::max) / 1000.0;
    assert!(
        prose.contains(&format!("{max_ms:.1} ms late")),
        "max {max_ms} ms: {prose}"
    );
    let lost = format!("{} and {} whole periods", rows[0][3], rows[1][3]);
    assert!(prose.contains(&lost), "{lost}: {prose}");
    // The overruns warning is said once, the other CPU listed with its count.
    let flowing = example.join(" ");
    for (cpu, row) in rows.iter().enumerate() {
        let warning = format!("cpu {cpu}: {}", row[3]);
        assert!(flowing.contains(&warning), "{warning}: {example:?}");
    }
    // The verdict, second line, says the same run: the periods lost and the worst wake-up.
    let verdict = flowing
        .split("verdict: ")
        .nth(1)
        .expect("a verdict line in the example");
    let lost: f64 = rows.iter().map(|r| r[3]).sum();
    assert!(
        verdict.contains(&format!("lost {lost} periods")),
        "lost {lost}: {verdict}"
    );
    assert!(
        verdict.contains(&format!("at most {}", units_ms(max_ms))),
        "max {max_ms} ms: {verdict}"
    );
    assert!(example[2].starts_with("verdict: "), "{example:?}");
}
