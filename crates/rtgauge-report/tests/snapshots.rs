//! Snapshot tests of every run-table, comparison and check output, on fixed fixtures
//! (tests/fixtures), plus properties of the comparison verdicts and the report page.

mod common;

use rtgauge_report::check::{self, check_result, Spec};
use rtgauge_report::compare::{self, Outcome, Style};
use rtgauge_report::{Format, Render, Style as RenderStyle, Tables};
use rtgauge_result::{read_result, RunResult};

fn fixtures() -> (RunResult, RunResult) {
    (
        read_result(&common::fixture("idle.json")).expect("fixture idle.json"),
        read_result(&common::fixture("loaded.json")).expect("fixture loaded.json"),
    )
}

fn comparison() -> compare::Comparison {
    let (a, b) = fixtures();
    compare::compare(
        &[a, b],
        &["fixtures/idle.json".into(), "fixtures/loaded.json".into()],
    )
}

fn check_report() -> check::CheckReport {
    let (_, b) = fixtures();
    let path = common::fixture("spec.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    // A fixed path keeps the snapshots independent of the checkout location.
    let spec = Spec::parse(&text, std::path::Path::new("fixtures/spec.toml")).unwrap();
    check_result(&b, &spec)
}

#[test]
#[ignore = "writes the fixture files; run when the fixture builder changes"]
fn regenerate_fixtures() {
    for (name, loaded) in [("idle.json", false), ("loaded.json", true)] {
        // Compact JSON keeps the fixtures small.
        let json = serde_json::to_vec(&common::build(loaded)).unwrap();
        rtgauge_result::write_bytes_atomically(&common::fixture(name), &json).unwrap();
    }
    // A pair the baseline gate cannot decide (the command-line tests read it).
    let (a, b) = common::gate_pair(1, 1.3, 0.25);
    for (name, result) in [("gate-baseline.json", a), ("gate-undecided.json", b)] {
        let json = serde_json::to_vec(&result).unwrap();
        rtgauge_result::write_bytes_atomically(&common::fixture(name), &json).unwrap();
    }
}

#[test]
fn fixtures_match_their_builder() {
    // The committed files are what the builder makes (so they can be regenerated at will).
    let (a, b) = fixtures();
    assert_eq!(a, common::build(false));
    assert_eq!(b, common::build(true));
    let (a, b) = common::gate_pair(1, 1.3, 0.25);
    let read = |name: &str| rtgauge_result::read_result(&common::fixture(name)).unwrap();
    assert_eq!(read("gate-baseline.json"), a);
    assert_eq!(read("gate-undecided.json"), b);
}

#[test]
fn compare_markdown() {
    insta::assert_snapshot!(compare::render_text(&comparison(), Style::Markdown));
}

#[test]
fn compare_terminal() {
    insta::assert_snapshot!(compare::render_text(&comparison(), Style::Terminal));
}

#[test]
fn compare_csv() {
    insta::assert_snapshot!(compare::render_csv(&comparison()));
}

#[test]
fn compare_json() {
    insta::assert_snapshot!(compare::render_json(&comparison()));
}

#[test]
fn check_markdown() {
    insta::assert_snapshot!(check::render_text(&check_report(), Style::Markdown));
}

#[test]
fn check_csv() {
    insta::assert_snapshot!(check::render_csv(&check_report()));
}

#[test]
fn check_json() {
    insta::assert_snapshot!(check::render_json(&check_report()));
}

#[test]
fn check_junit() {
    insta::assert_snapshot!(check::render_junit(&check_report()));
}

#[test]
fn environment_differences_come_first() {
    let c = comparison();
    let fields: Vec<&str> = c.environment.iter().map(|d| d.field.as_str()).collect();
    assert!(fields.contains(&"fingerprint.kernel_release"), "{fields:?}");
    assert!(
        fields.contains(&"fingerprint.preemption_model"),
        "{fields:?}"
    );
    for out in [
        compare::render_text(&c, Style::Markdown),
        compare::render_text(&c, Style::Terminal),
        compare::render_csv(&c),
        compare::render_json(&c),
    ] {
        let env = out.find("kernel_release").expect("environment listed");
        let rows = out.find("latency").expect("rows listed");
        assert!(
            env < rows,
            "environment differences must come first:\n{out}"
        );
    }
}

#[test]
fn verdicts_flag_the_shifted_rows_only() {
    let c = comparison();
    for row in c.rows.iter().filter(|r| r.probe == "cyclic") {
        match row.mode.as_str() {
            "rt" => {
                assert_eq!(row.outcome, Outcome::Slower, "{row:?}");
                assert!(
                    row.verdict.starts_with("B slower: median +"),
                    "{}",
                    row.verdict
                );
            }
            _ => {
                assert_eq!(row.outcome, Outcome::Same, "{row:?}");
                assert!(
                    row.verdict
                        .starts_with("no change beyond 10 %; could detect ≥ +"),
                    "{}",
                    row.verdict
                );
            }
        }
    }
    assert!(c
        .unmatched
        .iter()
        .any(|u| u.contains("ioport") && u.contains("skipped")));
}

#[test]
fn a_result_does_not_differ_from_itself_or_a_reordered_copy() {
    let (a, _) = fixtures();
    let c = compare::compare(&[a.clone(), a], &["a".into(), "a".into()]);
    assert!(c.environment.is_empty());
    assert!(!c.rows.is_empty());
    assert!(c
        .rows
        .iter()
        .all(|r| r.outcome == Outcome::Same && r.ks.unwrap().d == 0.0));
}

#[test]
fn check_fails_with_reasons() {
    let r = check_report();
    assert!(!r.passed);
    let messages: Vec<String> = r.cases.iter().filter_map(|c| c.failure_message()).collect();
    let all = messages.join("\n");
    assert!(all.contains("not enough samples"), "{all}");
    assert!(all.contains("probe run skipped"), "{all}");
    assert!(
        all.contains("no series in the result matches probe=response"),
        "{all}"
    );
    assert!(all.contains("exceeds 50us"), "{all}");
    // The idle result passes the rt latency limit.
    let (a, _) = fixtures();
    let text = "[[limit]]\nprobe = \"cyclic\"\nmode = \"rt\"\nseries = \"latency\"\nmax = \"1s\"\noverruns = 0\n";
    let spec = Spec::parse(text, std::path::Path::new("ok.toml")).unwrap();
    let ok = check_result(&a, &spec);
    assert!(ok.passed, "{}", check::render_text(&ok, Style::Terminal));
    assert_eq!(ok.cases.len(), 2);
}

#[test]
fn report_page_is_self_contained_and_shows_skips() {
    rtgauge_probes::register_built_in();
    let (a, b) = fixtures();
    let names = vec!["idle".to_string(), "loaded".to_string()];
    let page = rtgauge_report::render_html(&rtgauge_report::ReportInput {
        results: &[a, b],
        names: &names,
        comparison: None,
        recordings: &[],
    });
    assert!(page.contains("skipped: no I/O port access"));
    // In the summary a skipped probe is one sentence, as in the terminal's, not a table.
    assert!(
        page.contains("<p class=\"note\">ioport (rt none): skipped: no I/O port access"),
        "the skipped probe's sentence"
    );
    assert!(
        !page.contains("<caption>ioport"),
        "no empty table for ioport"
    );
    assert!(page.contains("Deep C-states"));
    // What each probe was asked to do is shown beside what it measured.
    assert!(page.contains("Parameters: period=1ms"));
    assert!(page.contains("data-kind=\"sizes\""));
    assert!(page.contains("data-kind=\"boxes\""));
    assert!(page.contains("data-kind=\"percentiles\""));
    assert!(page.contains("data-kind=\"histogram\""));
    assert!(page.contains("data-kind=\"intervals\""));
    // Nothing is fetched: no external script, style, image or font references.
    for needle in [
        "src=\"http",
        "href=\"http",
        "url(http",
        "@import",
        "<script src",
    ] {
        assert!(!page.contains(needle), "found {needle}");
    }
    // No recordings field: no raw-sample section.
    assert!(!page.contains("id=\"recordings\""));
}

#[test]
fn images_are_written_as_svg_and_png() {
    let (a, _) = fixtures();
    let dir = tempfile::tempdir().unwrap();
    let charts = rtgauge_report::build_charts(&[a], &["idle".into()], &[]);
    let files = rtgauge_report::write_images(&charts, dir.path()).unwrap();
    let per_chart = if cfg!(feature = "png") { 2 } else { 1 };
    assert_eq!(files.len(), charts.len() * per_chart);
    for f in files {
        let bytes = std::fs::read(&f).unwrap();
        match f.extension().and_then(|e| e.to_str()) {
            Some("png") => assert_eq!(&bytes[1..4], b"PNG", "{}", f.display()),
            Some("svg") => assert!(
                String::from_utf8_lossy(&bytes).contains("<svg"),
                "{}",
                f.display()
            ),
            other => panic!("unexpected file {other:?}"),
        }
    }
}

/// The result with its cyclic runs measured a second time as variant `100us`: what a suite
/// with two cyclic entries produces.
fn with_cyclic_variant(mut r: RunResult) -> RunResult {
    let extra: Vec<_> = r
        .runs
        .iter()
        .filter(|run| run.probe == "cyclic")
        .cloned()
        .map(|mut run| {
            run.variant = Some("100us".into());
            run
        })
        .collect();
    r.runs.extend(extra);
    r
}

#[test]
fn run_table_terminal() {
    let (a, _) = fixtures();
    insta::assert_snapshot!(rtgauge_report::table::render_tables(
        &a,
        rtgauge_report::table::Style::Terminal
    ));
}

#[test]
fn run_table_markdown_with_a_variant() {
    let (a, _) = fixtures();
    let text = rtgauge_report::table::render_tables(
        &with_cyclic_variant(a),
        rtgauge_report::table::Style::Markdown,
    );
    assert!(text.contains("cyclic@100us"), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn variants_are_compared_and_checked_apart() {
    let (a, b) = fixtures();
    let (a, b) = (with_cyclic_variant(a), with_cyclic_variant(b));
    let c = compare::compare(&[a, b.clone()], &["a".into(), "b".into()]);
    let titles: std::collections::BTreeSet<&str> = c
        .rows
        .iter()
        .filter(|r| r.probe.starts_with("cyclic"))
        .map(|r| r.probe.as_str())
        .collect();
    assert_eq!(titles, ["cyclic", "cyclic@100us"].into());
    // Each variant's rows pair it with itself: the same rows, the same verdicts.
    let verdicts = |title: &str| -> Vec<(String, Outcome)> {
        c.rows
            .iter()
            .filter(|r| r.probe == title)
            .map(|r| (format!("{} {} {}", r.mode, r.load, r.series), r.outcome))
            .collect()
    };
    assert_eq!(verdicts("cyclic"), verdicts("cyclic@100us"));

    let spec = |probe: &str| {
        let text = format!("[[limit]]\nprobe = \"{probe}\"\nseries = \"latency\"\nmax = \"1h\"\n");
        Spec::parse(&text, std::path::Path::new("v.toml")).unwrap()
    };
    let one = check_result(&b, &spec("cyclic@100us"));
    let all = check_result(&b, &spec("cyclic"));
    assert!(!one.cases.is_empty());
    assert!(one.cases.iter().all(|k| k.probe == "cyclic@100us"));
    assert_eq!(all.cases.len(), 2 * one.cases.len());
}

fn text_of(r: &impl Render, format: Format) -> String {
    r.render(format).expect("a supported format")
}

#[test]
fn summary_terminal() {
    let text = text_of(
        &common::summary_of(&common::every_probe()),
        Format::Text(RenderStyle::Terminal),
    );
    for line in text.lines() {
        assert!(line.chars().count() <= 100, "wider than 100: {line}");
    }
    insta::assert_snapshot!(text);
}

#[test]
fn summary_markdown_of_two_modes() {
    let (a, _) = fixtures();
    insta::assert_snapshot!(text_of(
        &common::summary_of(&a),
        Format::Text(RenderStyle::Markdown)
    ));
}

#[test]
fn summary_json() {
    let (a, _) = fixtures();
    insta::assert_snapshot!(text_of(&common::summary_of(&a), Format::Json));
}

#[test]
fn summary_has_no_csv_and_says_which_formats_it_has() {
    let (a, _) = fixtures();
    let e = common::summary_of(&a)
        .render(Format::Csv)
        .unwrap_err()
        .to_string();
    assert!(e.contains("a summary cannot be written as CSV"), "{e}");
    assert!(e.contains("Markdown"), "{e}");
}

#[test]
fn summary_of_an_interrupted_run_says_so_first() {
    let (mut a, _) = fixtures();
    a.status = rtgauge_result::RunStatus::Interrupted;
    let text = text_of(&common::summary_of(&a), Format::Text(RenderStyle::Plain));
    let second = text.lines().nth(1).unwrap_or_default();
    assert!(second.starts_with("INTERRUPTED"), "{text}");
}

#[test]
fn show_plain_has_no_box_drawing() {
    let (a, _) = fixtures();
    let text = text_of(&Tables(&a), Format::Text(RenderStyle::Plain));
    assert!(
        !text.chars().any(|c| ('\u{2500}'..='\u{257f}').contains(&c)),
        "{text}"
    );
    insta::assert_snapshot!(text);
}

#[test]
fn show_csv() {
    let (a, _) = fixtures();
    insta::assert_snapshot!(text_of(&Tables(&a), Format::Csv));
}

#[test]
fn show_json() {
    let (a, _) = fixtures();
    let text = text_of(&Tables(&a), Format::Json);
    let rows: serde_json::Value = serde_json::from_str(&text).unwrap();
    // One row per series and one for the skipped run.
    let series: usize = a.runs.iter().map(|r| r.series.len().max(1)).sum();
    assert_eq!(rows.as_array().unwrap().len(), series);
    insta::assert_snapshot!(text);
}

#[test]
fn check_of_an_incomplete_result_fails_unless_allowed() {
    let (_, mut b) = fixtures();
    // A suite whose second probe never ran: the run stopped before it.
    b.runs.retain(|r| r.probe == "cyclic");
    let lenient = Spec::parse(
        "[[limit]]\nprobe = \"cyclic\"\nmax = \"1h\"\n",
        std::path::Path::new("s.toml"),
    )
    .unwrap();
    let strict = check_result(&b, &lenient);
    assert!(
        !strict.passed,
        "{}",
        check::render_text(&strict, Style::Plain)
    );
    let text = check::render_text(&strict, Style::Plain);
    assert!(text.contains("never ran: alloc, ioport"), "{text}");
    assert!(check::render_junit(&strict).contains("incomplete result"));
    let csv = check::render_csv(&strict);
    assert!(
        csv.lines()
            .nth(1)
            .is_some_and(|l| l.starts_with("0,0,,*,*,*,*,complete,,,fail,")),
        "{csv}"
    );
    let allowed = check::check_result_allowing(&b, &lenient, true);
    assert!(
        allowed.passed,
        "{}",
        check::render_text(&allowed, Style::Plain)
    );
    insta::assert_snapshot!(text);
}

#[test]
fn compare_lists_an_interrupted_result() {
    let (a, mut b) = fixtures();
    b.status = rtgauge_result::RunStatus::Interrupted;
    let c = compare::compare(&[a, b], &["a.json".into(), "b.json".into()]);
    assert!(c.environment.iter().any(|d| d.field == "status"));
    let text = compare::render_text(&c, Style::Plain);
    assert!(text.contains("b.json (INTERRUPTED"), "{text}");
}

#[test]
fn report_opens_with_the_summary_and_verdicts_and_ends_with_the_system() {
    let (a, _) = fixtures();
    let page = rtgauge_report::render_html(&rtgauge_report::ReportInput {
        results: std::slice::from_ref(&a),
        names: &["idle".into()],
        comparison: None,
        recordings: &[],
    });
    let body = &page[page.find("<main>").expect("a main element")..];
    let at = |id: &str| {
        body.find(&format!("<section id=\"{id}\""))
            .unwrap_or_else(|| panic!("section {id} missing"))
    };
    let order = [
        at("summary"),
        at("doctor"),
        at("probe-cyclic"),
        at("system"),
    ];
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
    // The failing check is in the open; the full audit (its "why") is folded.
    let doctor = &body[order[1]..order[2]];
    let details = doctor.find("<details").expect("the audit is folded");
    let failing = doctor
        .find("Deep C-states")
        .expect("the failing check is listed");
    assert!(failing < details, "{doctor}");
    assert!(
        doctor[details..].contains("waking from deep C-states"),
        "{doctor}"
    );
    assert!(
        !doctor[..details].contains("waking from deep C-states"),
        "{doctor}"
    );
}

/// The report page opens with the verdict (before the summary's tables), and the doctor's
/// findings are listed once, in their own section, not again among the warnings.
#[test]
fn report_page_opens_with_the_verdict_and_says_each_finding_once() {
    rtgauge_probes::register_built_in();
    let (mut a, _) = fixtures();
    // A run's environment findings are also among its warnings, coded by check.
    a.warnings.push(rtgauge_result::Warning::new(
        "rt_throttling",
        "RT throttling: on",
    ));
    let page = rtgauge_report::render_html(&rtgauge_report::ReportInput {
        results: std::slice::from_ref(&a),
        names: &["a".to_string()],
        comparison: None,
        recordings: &[],
    });
    let verdict = page.find("verdict: ").expect("a verdict on the page");
    let summary = page.find("id=\"summary\"").expect("a summary section");
    assert!(verdict < summary, "the verdict comes first");
    if let Some(warnings) = page.find("id=\"warnings\"") {
        let section = &page[warnings..];
        let section = &section[..section.find("</section>").unwrap()];
        assert!(section.contains("short-run"), "the run's own warning stays");
        for check in &a.checks {
            assert!(
                !section.contains(&format!("<span class=\"id\">{}</span>", check.id)),
                "{} said again among the warnings",
                check.id
            );
        }
    }
}

/// A series that carries a deadline and a predicted worst case (a task of a task set) has
/// them drawn on its percentile chart as dashed lines in its colour, inside the value axis;
/// series without them get no extra line.
#[test]
fn deadline_and_prediction_are_drawn_on_the_percentile_chart_of_their_series() {
    let (mut a, _) = fixtures();
    let plain = rtgauge_report::build_charts(std::slice::from_ref(&a), &["idle".into()], &[]);
    let series = &mut a.runs[0].series[0];
    let max = series.stats.max_ns.unwrap() as f64;
    series.metrics.insert("deadline_ns".into(), max * 100.0);
    series.metrics.insert("predicted_wcrt_ns".into(), max * 2.0);
    let charts = rtgauge_report::build_charts(&[a], &["idle".into()], &[]);
    assert_eq!(charts.len(), plain.len());
    let dashed = |c: &rtgauge_report::plots::Chart| c.lines.iter().filter(|l| l.dashed).count();
    let changed: Vec<_> = charts
        .iter()
        .zip(&plain)
        .filter(|(c, p)| c.lines.len() != p.lines.len())
        .collect();
    assert_eq!(changed.len(), 1, "only one chart gains lines");
    let (chart, before) = changed[0];
    assert!(chart.id.ends_with("-pct"), "{}", chart.id);
    assert_eq!(dashed(chart), dashed(before) + 2);
    let deadline = chart
        .lines
        .iter()
        .find(|l| l.dashed && l.label.ends_with(" deadline"))
        .expect("a deadline line");
    // The series' own curve and its references share a colour.
    assert!(chart
        .lines
        .iter()
        .any(|l| !l.dashed && l.color == deadline.color));
    let drawn = deadline.values[0].unwrap();
    assert!(deadline.values.iter().all(|v| *v == Some(drawn)));
    // Drawn in the chart's unit, and the value axis reaches it.
    let curve_top = chart
        .lines
        .iter()
        .filter(|l| !l.dashed && l.color == deadline.color)
        .flat_map(|l| l.values.iter().flatten())
        .fold(0.0f64, |a, &b| a.max(b));
    // (The curve's top is the distribution's maximum, within its histogram's resolution.)
    assert!(
        (drawn / curve_top / 100.0 - 1.0).abs() < 0.1,
        "{drawn} vs {curve_top}"
    );
    assert!(chart.note.contains("deadline"), "{}", chart.note);
}
