//! How a clocksync run reads: one row per reference, the verdict against the limit, and what
//! cannot be verified from inside the machine.

use super::{recorded_limit, Limit, ABOUT};
use rtgauge_core::units::format_duration_ns;
use rtgauge_report::format::TimeUnit;
use rtgauge_report::summary::{fmt, Cells, SummaryRows};
use rtgauge_result::{ProbeRun, RunResult, Series};

/// What no daemon on this machine can see: said once under the rows, never hidden.
pub const ASYMMETRY: &str = "not verifiable from inside: a path slower one way than the other shifts the true offset by half the difference, unseen by every daemon (chrony's error bound includes it, PTP's offset does not)";

fn offsets(run: &ProbeRun) -> impl Iterator<Item = &Series> {
    run.series.iter().filter(|s| s.name == "offset")
}

fn label(s: &Series) -> String {
    let get = |k: &str| s.labels.get(k).map(String::as_str).unwrap_or("?");
    match get("source") {
        "default" => get("reference").to_string(),
        source => format!("{} {source}", get("reference")),
    }
}

fn counter(s: &Series, key: &str) -> u64 {
    s.counters.get(key).copied().unwrap_or(0)
}

fn limit_text(limit: Limit) -> String {
    match limit.profile {
        Some(p) => format!("{} ({p})", format_duration_ns(limit.ns)),
        None => format_duration_ns(limit.ns),
    }
}

/// The largest |offset| a reference showed, from its signed extremes.
fn worst_ns(s: &Series) -> Option<u64> {
    let m = |k: &str| s.metrics.get(k).copied();
    let worst = m("offset_min_ns")?.abs().max(m("offset_max_ns")?.abs());
    Some(worst.round() as u64)
}

/// Why the run failed its limit, one line per finding (empty without a limit, or when every
/// reference held it): the program prints them and exits 2.
pub fn failures(run: &ProbeRun) -> Vec<String> {
    if run.probe != ABOUT.name {
        return Vec::new();
    }
    let Some(limit) = recorded_limit(&run.params) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for s in offsets(run) {
        let name = label(s);
        let polls = counter(s, "polls");
        let failed = counter(s, "failed_polls");
        let over = counter(s, "over_limit");
        let losses = counter(s, "lock_losses");
        let head = format!("{}: {name}", ABOUT.name);
        if over > 0 {
            let worst = worst_ns(s).map_or("?".into(), format_duration_ns);
            out.push(format!(
                "{head}: |offset| reached {worst}, over the {} limit in {over} of {polls} polls ({:.0} %)",
                limit_text(limit),
                over as f64 * 100.0 / polls.max(1) as f64
            ));
        }
        if losses > 0 {
            out.push(format!(
                "{head}: lost its lock {losses} time{} ({} state changes, {} sources stopped answering)",
                if losses == 1 { "" } else { "s" },
                counter(s, "state_changes"),
                counter(s, "source_losses")
            ));
        }
        if failed > 0 {
            let reason = run
                .params
                .get(&format!("failure of {} {}", reference(s), source(s)))
                .map_or("", String::as_str);
            out.push(format!(
                "{head}: no answer to {failed} of {polls} polls: {reason}"
            ));
        } else if counter(s, "locked_polls") == 0 && polls > 0 {
            out.push(format!(
                "{head}: never locked to its reference ({})",
                state(run, s)
            ));
        }
    }
    out
}

/// `clocksync limit 1µs: held` (or `EXCEEDED`) for a run given a limit: what the verdict line
/// says instead of "no limit given".
pub fn limit_outcome(run: &ProbeRun) -> Option<String> {
    if run.probe != ABOUT.name {
        return None;
    }
    let limit = recorded_limit(&run.params)?;
    let held = failures(run).is_empty();
    Some(format!(
        "{} limit {}: {}",
        ABOUT.name,
        limit_text(limit),
        if held { "held" } else { "EXCEEDED" }
    ))
}

fn reference(s: &Series) -> &str {
    s.labels.get("reference").map_or("?", String::as_str)
}

fn source(s: &Series) -> &str {
    s.labels.get("source").map_or("?", String::as_str)
}

fn state<'a>(run: &'a ProbeRun, s: &Series) -> &'a str {
    run.params
        .get(&format!("state of {} {}", reference(s), source(s)))
        .map_or("state unknown", String::as_str)
}

fn signed(unit: TimeUnit, v: Option<f64>) -> String {
    v.map_or("–".into(), |v| {
        let text = unit.format(v.abs());
        if v < 0.0 {
            format!("-{text}")
        } else {
            format!("+{text}")
        }
    })
}

fn ppb(v: Option<f64>) -> String {
    v.map_or("–".into(), |v| format!("{v:+.0}"))
}

impl SummaryRows for super::ClockSync {
    fn probe(&self) -> &'static str {
        ABOUT.name
    }

    fn question(&self) -> &'static str {
        "offset from each reference"
    }

    fn columns(&self, _runs: &[&ProbeRun]) -> Vec<String> {
        ["mean", "|max|", "delay", "freq ppb", "lock"]
            .map(String::from)
            .to_vec()
    }

    fn rows(&self, run: &ProbeRun, _runs: &[&ProbeRun], unit: TimeUnit) -> Vec<Cells> {
        let mut rows: Vec<Cells> = offsets(run)
            .map(|s| {
                let delay = run
                    .series
                    .iter()
                    .find(|d| d.name == "path_delay" && d.labels == s.labels);
                let (polls, locked) = (counter(s, "polls"), counter(s, "locked_polls"));
                let lock = if counter(s, "failed_polls") == polls {
                    "failed".to_string()
                } else {
                    format!("{locked}/{polls}, {} lost", counter(s, "lock_losses"))
                };
                let cells = vec![
                    signed(unit, s.metrics.get("offset_mean_ns").copied()),
                    fmt(unit, s, s.stats.max_ns),
                    delay.map_or("–".into(), |d| fmt(unit, d, d.stats.median_ns)),
                    ppb(s.metrics.get("frequency_mean_ppb").copied()),
                    lock,
                ];
                (label(s), cells)
            })
            .collect();
        if let Some(t) = run.series.iter().find(|s| s.name == "tsc_rate") {
            let m = |k: &str| t.metrics.get(k).copied();
            let hz = m("tsc_hz").map_or("?".into(), |hz| format!("{:.6} GHz", hz / 1e9));
            let error = m("tsc_error_ppb").map_or("?".into(), |e| format!("±{e:.0} ppb"));
            rows.push((
                "tsc".into(),
                vec![
                    "–".into(),
                    "–".into(),
                    "–".into(),
                    ppb(m("frequency_ppb")),
                    format!("{hz} {error}"),
                ],
            ));
        }
        rows
    }

    fn notes(&self, run: &ProbeRun, _result: &RunResult) -> Vec<String> {
        let mut notes = Vec::new();
        let failures = failures(run);
        match recorded_limit(&run.params) {
            None => notes.push(
                "no limit given: --set clocksync.limit=1us or clocksync.profile=telecom|industrial|robotics for a verdict"
                    .to_string(),
            ),
            Some(limit) if failures.is_empty() => notes.push(format!(
                "every reference held the {} limit in every poll",
                limit_text(limit)
            )),
            Some(limit) => {
                notes.push(format!("FAILS the {} limit:", limit_text(limit)));
                let head = format!("{}: ", ABOUT.name);
                notes.extend(failures.iter().map(|f| format!("  {}", f.trim_start_matches(&head))));
            }
        }
        notes.extend(offsets(run).map(|s| format!("{}: {}", label(s), state(run, s))));
        notes.push(ASYMMETRY.to_string());
        notes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run recorded on this VM (docs/clocksync.md): a chrony client 5 ms off its server,
    /// a ptp4l slave that does not steer, the TSC; the robotics profile.
    fn recorded() -> RunResult {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("src/clocksync/fixtures/chrony-ptp4l.json");
        rtgauge_result::read_result(&path).unwrap()
    }

    #[test]
    fn rows_notes_and_verdict_of_a_recorded_run() {
        let result = recorded();
        let run = &result.runs[0];
        let rows: Vec<String> = super::super::ClockSync
            .rows(run, &[run], TimeUnit::Us)
            .into_iter()
            .map(|(label, cells)| format!("{label}: {}", cells.join(" | ")))
            .collect();
        insta::assert_snapshot!("clocksync_rows", rows.join("\n"));
        let notes = super::super::ClockSync.notes(run, &result);
        insta::assert_snapshot!("clocksync_notes", notes.join("\n"));
        assert_eq!(
            limit_outcome(run).as_deref(),
            Some("clocksync limit 100µs (robotics): EXCEEDED")
        );
        assert_eq!(failures(run).len(), 2, "{:?}", failures(run));
    }

    #[test]
    fn without_a_limit_there_is_no_verdict() {
        let mut result = recorded();
        result.runs[0].params.remove("profile");
        let run = &result.runs[0];
        assert!(failures(run).is_empty());
        assert_eq!(limit_outcome(run), None);
        let notes = super::super::ClockSync.notes(run, &result);
        assert!(notes[0].starts_with("no limit given"), "{notes:?}");
    }
}
