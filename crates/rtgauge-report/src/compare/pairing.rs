//! Which series of one result stand for which of another: the same probe run and series, or
//! its one counterpart measured in another mode or under another load.

use super::statistics::{compare_series, mark_configured};
use super::{CauseMove, CompareRow};
use rtgauge_result::SeriesKey;
use rtgauge_result::{ProbeRun, ProbeStatus, RunResult, Series};
use std::collections::BTreeMap;

/// The dominant causes of every traced probe run, counted in each result.
pub(super) fn cause_moves(results: &[RunResult]) -> Vec<CauseMove> {
    let mut moves: Vec<CauseMove> = Vec::new();
    for (i, result) in results.iter().enumerate() {
        for run in result.runs.iter().filter(|r| !r.spikes.is_empty()) {
            let label = run.key().to_string();
            for g in rtgauge_result::spike::dominant_causes(&run.spikes) {
                let entry = match moves
                    .iter()
                    .position(|m| m.run == label && m.cause == g.label)
                {
                    Some(at) => &mut moves[at],
                    None => {
                        moves.push(CauseMove {
                            run: label.clone(),
                            cause: g.label.clone(),
                            counts: vec![0; results.len()],
                            longest_ns: vec![0; results.len()],
                        });
                        moves.last_mut().expect("just pushed")
                    }
                };
                entry.counts[i] = g.count;
                entry.longest_ns[i] = g.longest_ns;
            }
        }
    }
    moves
}

fn run_status(r: &ProbeRun) -> Option<String> {
    match &r.status {
        ProbeStatus::Ok => None,
        ProbeStatus::Skipped { reason } => Some(format!("skipped: {reason}")),
        ProbeStatus::Failed { error } => Some(format!("failed: {error}")),
    }
}

pub(super) fn compare_pair(
    base: &RunResult,
    cand: &RunResult,
    a: &str,
    b: &str,
    rows: &mut Vec<CompareRow>,
    unmatched: &mut Vec<String>,
) {
    // Probe runs that did not measure, on either side.
    for (name, result) in [(a, base), (b, cand)] {
        for r in &result.runs {
            if let Some(status) = run_status(r) {
                unmatched.push(format!(
                    "{} {} {}: {status} in {name}",
                    r.title(),
                    r.mode,
                    r.load
                ));
            }
        }
    }
    let cand_series: BTreeMap<SeriesKey, (&ProbeRun, &Series)> = cand
        .runs
        .iter()
        .flat_map(|r| r.series.iter().map(move |s| (r.series_key(s), (r, s))))
        .collect();
    let mut seen = Vec::new();
    let mut pending = Vec::new();
    for run in &base.runs {
        for s in &run.series {
            let k = run.series_key(s);
            let label = k.to_string();
            match cand_series.get(&k) {
                Some((crun, cs)) => {
                    seen.push(k.clone());
                    match compare_series(run, s, cs, a, b) {
                        Some(mut row) => {
                            mark_configured(&mut row, run, crun);
                            rows.push(row);
                        }
                        None => unmatched.push(format!("{label}: no samples in {a} or {b}")),
                    }
                }
                None => pending.push((run, s, label)),
            }
        }
    }
    // A series measured under another load or in another mode (a loaded run against an idle
    // baseline, rt against normal) pairs with its one counterpart that differs only there.
    for (run, s, label) in pending {
        let k = run.series_key(s);
        // The closest counterpart: another load in the same mode, else another mode under
        // the same load, else both; paired only when it is the only one.
        let others: Vec<&SeriesKey> = [
            |c: &SeriesKey, k: &SeriesKey| c.run.mode == k.run.mode,
            |c: &SeriesKey, k: &SeriesKey| c.run.load == k.run.load,
            |_: &SeriesKey, _: &SeriesKey| true,
        ]
        .iter()
        .map(|closer| {
            cand_series
                .keys()
                .filter(|c| {
                    !seen.contains(*c) && differs_only_in_mode_or_load(c, &k) && closer(c, &k)
                })
                .collect::<Vec<_>>()
        })
        .find(|found| !found.is_empty())
        .unwrap_or_default();
        match others.as_slice() {
            [other] => {
                let other = (*other).clone();
                let (crun, cs) = cand_series[&other];
                seen.push(other);
                match compare_series(run, s, cs, a, b) {
                    Some(mut row) => {
                        mark_configured(&mut row, run, crun);
                        row.mode = moved(&run.mode, &crun.mode);
                        row.load = moved(&run.load, &crun.load);
                        rows.push(row);
                    }
                    None => unmatched.push(format!("{label}: no samples in {a} or {b}")),
                }
            }
            _ => unmatched.push(format!("{label}: only in {a}, not in {b}")),
        }
    }
    for k in cand_series.keys() {
        if !seen.contains(k) {
            unmatched.push(format!("{k}: only in {b}, not in {a}"));
        }
    }
}

/// Whether two series are the same measurement, perhaps in another mode or under another
/// load.
fn differs_only_in_mode_or_load(a: &SeriesKey, b: &SeriesKey) -> bool {
    (&a.run.probe, &a.run.variant, &a.name, &a.labels)
        == (&b.run.probe, &b.run.variant, &b.name, &b.labels)
}

/// `none → messaging` when a value differs between the two sides, else the value.
fn moved(a: &str, b: &str) -> String {
    if a == b {
        a.to_string()
    } else {
        format!("{a} → {b}")
    }
}

/// The two sides of a row's mode or load (`none → messaging`, or the same value twice).
pub fn sides(value: &str) -> (&str, &str) {
    value.split_once(" → ").unwrap_or((value, value))
}

/// Why nothing paired, when nothing did although both sides measured: per probe and series
/// the labels each side has (an import that knows no CPU labels `thread=N` where a run
/// labels `cpu=N`), or that they share no probe and series at all. `None` when some row
/// paired or a side has no series. Self-contained: it reads only the results and the
/// comparison's rows.
pub fn nothing_paired(c: &super::Comparison, results: &[RunResult]) -> Option<String> {
    if !c.rows.is_empty() || results.len() < 2 {
        return None;
    }
    // "cyclic latency" → the label sets of that series, on one side.
    let labels_of = |r: &RunResult| {
        let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for run in &r.runs {
            for s in &run.series {
                let labels: Vec<String> =
                    s.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
                let set = if labels.is_empty() {
                    "no labels".to_string()
                } else {
                    labels.join(",")
                };
                let sets = out.entry(format!("{} {}", run.probe, s.name)).or_default();
                if !sets.contains(&set) {
                    sets.push(set);
                }
            }
        }
        out
    };
    let base = labels_of(&results[0]);
    let mut lines = Vec::new();
    for (i, cand) in results.iter().enumerate().skip(1) {
        let other = labels_of(cand);
        if base.is_empty() || other.is_empty() {
            continue;
        }
        let (a, b) = (super::letter(0), super::letter(i));
        let shown = |sets: &[String]| {
            let mut text = sets.iter().take(4).cloned().collect::<Vec<_>>().join(" ");
            if sets.len() > 4 {
                text.push_str(&format!(" (+{} more)", sets.len() - 4));
            }
            text
        };
        let common: Vec<String> = base
            .iter()
            .filter_map(|(series, sets)| {
                let theirs = other.get(series)?;
                Some(format!(
                    "{series}: {a} has {}, {b} has {}",
                    shown(sets),
                    shown(theirs)
                ))
            })
            .collect();
        if common.is_empty() {
            let names = |m: &BTreeMap<String, Vec<String>>| {
                m.keys().take(3).cloned().collect::<Vec<_>>().join(", ")
            };
            lines.push(format!(
                "{a} ({}) and {b} ({}) have no probe and series in common",
                names(&base),
                names(&other)
            ));
        } else {
            lines.extend(common);
        }
    }
    (!lines.is_empty()).then(|| {
        format!(
            "nothing compared: no series paired; series pair when probe, series and every label agree — {}",
            lines.join("; ")
        )
    })
}
