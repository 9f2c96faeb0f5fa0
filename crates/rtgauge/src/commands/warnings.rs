//! What a run has to say beside its figures: the environment findings (doctor's titles) and
//! the run's own warnings. Below the summary they are held to a few lines, so the end of a
//! run reads on one screen; `rtgauge show` (and the report) list every one.

use super::probes::wrap_into;
use rtgauge_result::RunResult;
use std::path::Path;

/// Most lines the environment findings take below the summary (doctor lists them all).
const ENVIRONMENT_LINES: usize = 1;
/// Most lines the run's own warnings take below the summary, the line that counts the rest
/// included.
const WARNING_LINES: usize = 3;
/// The code of the warnings that say a run was too short for its highest percentiles: the
/// least urgent, listed last.
const SAMPLES_CODE: &str = "samples";
/// The codes of the warnings that say something asked for was not done: the most urgent.
const ASKED_CODES: [&str; 3] = ["break", "trace", "load"];

/// Doctor's titles of the environment findings, in the result's order.
fn environment(result: &RunResult) -> Vec<&str> {
    result
        .warnings
        .iter()
        .filter_map(|w| title_of(result, &w.code))
        .collect()
}

fn title_of<'a>(result: &'a RunResult, code: &str) -> Option<&'a str> {
    result
        .checks
        .iter()
        .find(|c| c.id == code)
        .map(|c| c.title.as_str())
}

/// The run's own warnings, most urgent first: what was asked for and not done (`--break`,
/// `--trace`, a load), then what the mode could not obtain and what the probes saw, then runs
/// too short for their highest percentiles. Each is (prefix, message).
fn own_warnings(result: &RunResult, mode_left_to_rtgauge: bool) -> Vec<(String, String)> {
    let plain = |w: &rtgauge_result::Warning| ("warning: ".to_string(), w.message.clone());
    let others = result
        .warnings
        .iter()
        .filter(|w| title_of(result, &w.code).is_none());
    let asked = |w: &&rtgauge_result::Warning| ASKED_CODES.contains(&w.code.as_str());
    let mut list: Vec<(String, String)> = others.clone().filter(asked).map(plain).collect();
    list.extend(
        others
            .clone()
            .filter(|w| !asked(w) && w.code != SAMPLES_CODE)
            .map(plain),
    );
    // Runs whose mode rtgauge chose get one notice at the end instead (fallback::notice).
    for run in result.runs.iter().filter(|_| !mode_left_to_rtgauge) {
        for s in &run.obtained.shortfalls {
            list.push((format!("warning: {}: ", run.key()), s.clone()));
        }
    }
    list.extend(others.filter(|w| w.code == SAMPLES_CODE).map(plain));
    list
}

/// Every finding and warning, wrapped to the summary's 100 columns: what `rtgauge show`
/// prints after the full tables.
pub(super) fn full_text(result: &RunResult) -> String {
    let mut out = String::new();
    let env = environment(result);
    if !env.is_empty() {
        let text = format!(
            "{} (`rtgauge doctor` explains each and how to fix it)",
            env.join(" · ")
        );
        wrap_into(&mut out, "environment: ", 2, &text);
    }
    for (prefix, message) in own_warnings(result, false) {
        wrap_into(&mut out, &prefix, 2, &message);
    }
    out
}

/// The findings and warnings below a run's summary, held to a few lines: the environment in
/// one line (doctor explains it), then the most urgent warnings while they fit, then
/// one line that counts the rest and says where they are.
pub(super) fn short_text(result: &RunResult, mode_left_to_rtgauge: bool, output: &Path) -> String {
    let mut out = String::new();
    let env = environment(result);
    for shown in (1..=env.len()).rev() {
        let rest = env.len() - shown;
        let more = if rest > 0 {
            format!(" · {rest} more")
        } else {
            String::new()
        };
        let text = format!(
            "{}{more} (`rtgauge doctor` explains each)",
            env[..shown].join(" · ")
        );
        let mut lines = String::new();
        wrap_into(&mut lines, "environment: ", 2, &text);
        if lines.lines().count() <= ENVIRONMENT_LINES || shown == 1 {
            out.push_str(&lines);
            break;
        }
    }
    let warnings = own_warnings(result, mode_left_to_rtgauge);
    let mut block = String::new();
    for (i, (prefix, message)) in warnings.iter().enumerate() {
        let mut one = String::new();
        wrap_into(&mut one, prefix, 2, message);
        let rest = warnings.len() - i - 1;
        let room = if rest == 0 {
            WARNING_LINES
        } else {
            WARNING_LINES - 1
        };
        if block.lines().count() + one.lines().count() > room {
            let count = warnings.len() - i;
            let text = format!(
                "{count} more: `rtgauge show {}` lists every warning",
                output.display()
            );
            wrap_into(&mut block, "warning: ", 2, &text);
            break;
        }
        block.push_str(&one);
    }
    out.push_str(&block);
    out
}
