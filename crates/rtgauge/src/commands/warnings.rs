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

/// Doctor's titles of the environment findings, the failures first, each marked with its
/// severity (`FAIL`, `warn`) and said once.
fn environment(result: &RunResult) -> Vec<String> {
    use rtgauge_result::Status;
    let mut found: Vec<(u8, String)> = Vec::new();
    for w in &result.warnings {
        let Some(check) = result.checks.iter().find(|c| c.id == w.code) else {
            continue;
        };
        let (rank, mark) = match check.status {
            Status::Fail => (0, "FAIL"),
            Status::Warn => (1, "warn"),
            Status::Unknown => (2, "unknown"),
            Status::Ok => (3, "ok"),
        };
        let text = format!("{} ({mark})", check.title);
        if !found.iter().any(|(_, t)| *t == text) {
            found.push((rank, text));
        }
    }
    found.sort_by_key(|(rank, _)| *rank);
    found.into_iter().map(|(_, t)| t).collect()
}

fn title_of<'a>(result: &'a RunResult, code: &str) -> Option<&'a str> {
    result
        .checks
        .iter()
        .find(|c| c.id == code)
        .map(|c| c.title.as_str())
}

/// The run's own warnings, most urgent first: what was asked for and not done (`--break`,
/// `--trace`, a load, what the mode could not obtain), then what the probes saw, then runs
/// too short for their highest percentiles. One line per kind: the same message for several
/// probe runs is said once with the runs it concerns, and the sample counts in one sentence.
/// Each is (prefix, message).
fn own_warnings(result: &RunResult, mode_left_to_rtgauge: bool) -> Vec<(String, String)> {
    let others = result
        .warnings
        .iter()
        .filter(|w| title_of(result, &w.code).is_none());
    let asked = |w: &&rtgauge_result::Warning| ASKED_CODES.contains(&w.code.as_str());
    let mut list = Grouped::default();
    for w in others.clone().filter(asked) {
        list.add(&w.message);
    }
    // The mode asked for and not obtained. Runs whose mode rtgauge chose get one notice at
    // the end instead (fallback::notice).
    for run in result.runs.iter().filter(|_| !mode_left_to_rtgauge) {
        for s in &run.obtained.shortfalls {
            list.add(&format!("{}: {s}", run.key()));
        }
    }
    for w in others.filter(|w| !asked(w) && w.code != SAMPLES_CODE) {
        list.add(&w.message);
    }
    let mut out = list.lines();
    // An import cannot be measured longer: the advice is for rtgauge's own runs.
    if let Some(line) = samples_line(result).filter(|_| !rtgauge_import::is_imported(result)) {
        out.push(("warning: ".to_string(), line));
    }
    out
}

/// Messages grouped by kind: the same message about several probe runs, or the same
/// sentence about several subjects with other numbers (`cpu 0: 31 of 201 periods overran`,
/// `cpu 1: 78 of 201 …`), is said once, in full for the first, the others listed after it
/// (`also cpu 1: 78`).
#[derive(Default)]
struct Grouped {
    groups: Vec<Group>,
}

struct Group {
    /// The message with its run, subject and numbers taken out: what makes it a kind.
    shape: String,
    /// The first message's run key, if it had one, and its text.
    key: Option<String>,
    text: String,
    /// The first message's sentence (its text without the subject).
    sentence: String,
    /// The other messages of the kind, each as its run, subject and first number.
    also: Vec<String>,
}

impl Grouped {
    fn add(&mut self, message: &str) {
        // `cyclic rt none: text`: a run's key (words without a colon) before the text.
        let (key, text) = match message.split_once(": ") {
            Some((key, text)) if is_run_key(key) => (Some(key.to_string()), text.to_string()),
            _ => (None, message.to_string()),
        };
        // `cpu 0: 31 of 201 periods…`: a short subject before the sentence.
        let (subject, sentence) = match text.split_once(": ") {
            Some((subject, rest)) if subject.split(' ').count() <= 3 && subject.len() <= 32 => {
                (Some(subject.to_string()), rest.to_string())
            }
            _ => (None, text.clone()),
        };
        let shape = without_numbers(&sentence);
        let Some(group) = self.groups.iter_mut().find(|g| g.shape == shape) else {
            self.groups.push(Group {
                shape,
                key,
                text,
                sentence,
                also: Vec::new(),
            });
            return;
        };
        let mut who: Vec<String> = Vec::new();
        if key != group.key {
            who.extend(key);
        }
        who.extend(subject);
        // Its number, when the sentence says another one than the first's (a subject alone
        // when the sentences are the same: `also task servo`, never `task servo: 0`).
        if let Some(n) = first_number(&sentence).filter(|_| sentence != group.sentence) {
            who.push(n.to_string());
        }
        let who = who.join(": ");
        if !who.is_empty() && !group.also.contains(&who) {
            group.also.push(who);
        }
    }

    fn lines(self) -> Vec<(String, String)> {
        self.groups
            .into_iter()
            .map(|g| {
                let prefix = match &g.key {
                    Some(key) => format!("warning: {key}: "),
                    None => "warning: ".to_string(),
                };
                let text = if g.also.is_empty() {
                    g.text
                } else {
                    format!("{} (also {})", g.text, g.also.join(", "))
                };
                (prefix, text)
            })
            .collect()
    }
}

/// `text` with every number replaced by `#`: messages of one kind have the same shape.
fn without_numbers(text: &str) -> String {
    let mut out = String::new();
    let mut in_number = false;
    for c in text.chars() {
        if c.is_ascii_digit() || (in_number && c == '.') {
            if !in_number {
                out.push('#');
            }
            in_number = true;
        } else {
            in_number = false;
            out.push(c);
        }
    }
    out
}

/// The first number in `text`, as written.
fn first_number(text: &str) -> Option<&str> {
    let start = text.find(|c: char| c.is_ascii_digit())?;
    let rest = &text[start..];
    let end = rest
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(rest.len());
    Some(rest[..end].trim_end_matches('.'))
}

/// A probe run's key as warnings write it (`cyclic rt none`, `noise@w1 normal cpu`): three
/// words, none with punctuation that a sentence would have.
fn is_run_key(text: &str) -> bool {
    let words: Vec<&str> = text.split(' ').collect();
    (2..=3).contains(&words.len())
        && words.iter().all(|w| {
            !w.is_empty()
                && w.chars()
                    .all(|c| c.is_alphanumeric() || "@_-+,.".contains(c))
        })
}

/// One sentence for every probe run too short for p99.999, from the sample counts: `samples
/// per series support percentiles up to p99.9 for cyclic, noise; up to p90 for alloc`.
fn samples_line(result: &RunResult) -> Option<String> {
    const FULL: u64 = 100_000;
    let short = result.runs.iter().filter_map(|run| {
        let smallest = run.series.iter().map(|s| s.stats.count).min()?;
        (smallest > 0 && smallest < FULL)
            .then(|| (format!("up to {}", highest_label(smallest)), run.title()))
    });
    let parts = titles_by_label(short)?;
    Some(format!(
        "too few samples for the highest percentiles: {parts}; p99.999 needs {FULL} per series (use a longer --duration or --loops)"
    ))
}

/// `label for title, title; label for title`: each title once under its label, the labels in
/// the order first seen, so that runs that have one thing to say share one sentence; None
/// when there are none.
pub(super) fn titles_by_label(
    labelled: impl IntoIterator<Item = (String, String)>,
) -> Option<String> {
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for (label, title) in labelled {
        match groups.iter_mut().find(|(l, _)| *l == label) {
            Some((_, titles)) if titles.contains(&title) => {}
            Some((_, titles)) => titles.push(title),
            None => groups.push((label, vec![title])),
        }
    }
    let parts: Vec<String> = groups
        .iter()
        .map(|(label, titles)| format!("{label} for {}", titles.join(", ")))
        .collect();
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// The highest percentile `count` samples support.
fn highest_label(count: u64) -> &'static str {
    let support = |q: f64| rtgauge_stats::percentile_supported(q, count);
    [
        (0.99999, "p99.999"),
        (0.9999, "p99.99"),
        (0.999, "p99.9"),
        (0.99, "p99"),
        (0.9, "p90"),
    ]
    .into_iter()
    .find(|(q, _)| support(*q))
    .map_or("the median", |(_, l)| l)
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
        let text = format!("{}{more} (see `rtgauge doctor`)", env[..shown].join(" · "));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_are_said_once_under_their_label_in_the_order_first_seen() {
        let pairs = [
            ("rt", "cyclic"),
            ("normal", "clock"),
            ("rt", "switch"),
            ("rt", "cyclic"),
        ];
        let text = titles_by_label(pairs.map(|(l, t)| (l.to_string(), t.to_string())));
        assert_eq!(
            text.as_deref(),
            Some("rt for cyclic, switch; normal for clock")
        );
        assert_eq!(titles_by_label(Vec::new()), None);
    }

    #[test]
    fn the_same_sentence_about_other_subjects_lists_them_without_numbers() {
        let mut g = Grouped::default();
        for m in [
            "taskset rt none: task servo: the verdict depends on the overhead figure: with the p99.9 overheads it fits",
            "taskset rt none: task planner: the verdict depends on the overhead figure: with the p99.9 overheads it fits",
            "cyclic rt none: cpu 0: 31 of 201 periods overran",
            "cyclic rt none: cpu 1: 78 of 201 periods overran",
        ] {
            g.add(m);
        }
        let lines: Vec<String> = g.lines().into_iter().map(|(p, t)| p + &t).collect();
        assert!(
            lines[0].ends_with("it fits (also task planner)"),
            "{lines:?}"
        );
        assert!(lines[1].ends_with("overran (also cpu 1: 78)"), "{lines:?}");
    }
}
