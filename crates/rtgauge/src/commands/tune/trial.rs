//! One trial: a change against the unchanged machine in interleaved rounds (A B, B A, …, as
//! `rtgauge ab` alternates), each round a `rtgauge run` of the user's probe, period and load;
//! then the judgement of the figures that matter.

use super::settings::{self, Root, Write};
use rtgauge_result::RunResult;
use rtgauge_stats::runs::LogWelch;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Three figures are tested per trial, so each at a third of 5 %.
const ALPHA: f64 = 0.05 / 3.0;
/// A change smaller than this is not called better or worse, however consistent.
const MIN_CHANGE: f64 = 0.10;

pub use rtgauge_result::tune::{Effect, Figures, Judgement, Trial, Verdict};

/// Reads the figures of the loop from a round's result. None when the probe measured nothing.
pub fn figures_of(result: &RunResult, path: &Path) -> Option<Figures> {
    let series: Vec<_> = result
        .runs
        .iter()
        .flat_map(|r| &r.series)
        .filter(|s| s.name == "latency" || s.name == "response")
        .collect();
    let max_ns = series.iter().filter_map(|s| s.stats.max_ns).max()?;
    let pick = |label: &str| {
        series
            .iter()
            .filter_map(|s| {
                s.stats
                    .percentiles
                    .entries()
                    .iter()
                    .find(|e| e.0 == label)
                    .and_then(|e| e.2)
            })
            .max()
    };
    let (tail, tail_ns) = match pick("p99.9") {
        Some(v) => ("p99.9", Some(v)),
        None => ("p99", pick("p99")),
    };
    let misses = series
        .iter()
        .map(|s| {
            s.counters.get("overruns").copied().unwrap_or(0)
                + s.counters.get("deadline_misses").copied().unwrap_or(0)
        })
        .sum();
    Some(Figures {
        tail: tail.into(),
        tail_ns,
        max_ns,
        misses,
        result: path.into(),
    })
}

/// One figure's move: `before` and `after` are the sides' geometric means, so
/// `after = before × (1 + change)`.
fn effect_of(figure: &str, a: &[f64], b: &[f64]) -> Option<Effect> {
    let w = LogWelch::of(a, b)?;
    let p = w.p_two_sided();
    Some(Effect {
        figure: figure.into(),
        before: geometric_mean(a),
        after: geometric_mean(b),
        change: w.change(),
        p: if p.is_nan() { 1.0 } else { p },
        spread: w.spread(),
    })
}

/// Better or worse when the figure moved beyond chance and the margin; else undecided.
fn decided(e: &Effect) -> Option<Verdict> {
    if e.p >= ALPHA || e.change.abs() < MIN_CHANGE {
        return None;
    }
    Some(if e.change < 0.0 {
        Verdict::Better
    } else {
        Verdict::Worse
    })
}

fn geometric_mean(v: &[f64]) -> f64 {
    let logs: Vec<f64> = v.iter().filter(|x| **x > 0.0).map(|x| x.ln()).collect();
    if logs.is_empty() {
        return f64::NAN;
    }
    (logs.iter().sum::<f64>() / logs.len() as f64).exp()
}

/// Better when a figure moved down beyond chance and the margin and none moved up; worse the
/// other way round; otherwise cannot tell.
pub fn judge(a: &[Figures], b: &[Figures]) -> Judgement {
    let pick = |v: &[Figures], f: &dyn Fn(&Figures) -> Option<f64>| -> Vec<f64> {
        v.iter().filter_map(f).collect()
    };
    let tail = a.first().map(|f| f.tail.clone()).unwrap_or_default();
    let max = |f: &Figures| Some(f.max_ns as f64);
    let tail_of = |f: &Figures| f.tail_ns.map(|v| v as f64);
    // One more than the count, so a side without a miss still has a logarithm.
    let misses = |f: &Figures| Some(f.misses as f64 + 1.0);
    let mut effects: Vec<Effect> = [
        effect_of("max", &pick(a, &max), &pick(b, &max)),
        effect_of(&tail, &pick(a, &tail_of), &pick(b, &tail_of)),
    ]
    .into_iter()
    .flatten()
    .collect();
    if a.iter().chain(b).any(|f| f.misses > 0) {
        if let Some(mut e) = effect_of("missed", &pick(a, &misses), &pick(b, &misses)) {
            // Counts read best as totals over the rounds.
            let total = |v: &[Figures]| v.iter().map(|f| f.misses as f64).sum();
            (e.before, e.after) = (total(a), total(b));
            effects.push(e);
        }
    }
    let decided: Vec<Verdict> = effects.iter().filter_map(decided).collect();
    let verdict = if decided.contains(&Verdict::Better) && !decided.contains(&Verdict::Worse) {
        Verdict::Better
    } else if decided.contains(&Verdict::Worse) && !decided.contains(&Verdict::Better) {
        Verdict::Worse
    } else {
        Verdict::CannotTell
    };
    Judgement { verdict, effects }
}

/// How each round is measured.
pub struct Rounds<'a> {
    pub exe: PathBuf,
    /// `rtgauge run` words of the loop (probe, CPUs, period, load).
    pub run_words: Vec<String>,
    pub rounds: u32,
    pub round_ns: u64,
    pub dir: &'a Path,
    pub root: &'a Root,
}

/// Why a trial stopped early.
#[derive(Debug, thiserror::Error)]
pub enum TrialError {
    #[error("interrupted")]
    Interrupted,
    #[error("{0}")]
    Apply(#[from] settings::SettingError),
    #[error("a round failed: {0}")]
    Round(String),
}

/// The rounds of one trial: `label` names it in progress lines and file names.
pub struct Sides {
    pub a: Vec<Figures>,
    pub b: Vec<Figures>,
    /// Optional writes the kernel refused (the change went on without them).
    pub refused: Vec<String>,
}

impl Rounds<'_> {
    /// Measures `change` applied (B) against it restored (A), A B then B A; leaves the change
    /// restored, also when a round fails or a stop is requested.
    pub fn trial(&self, label: &str, change: &[Write]) -> Result<Sides, TrialError> {
        let out = self.rounds_of(label, change);
        let errors = settings::restore(self.root, change);
        if let Some(e) = errors.into_iter().next() {
            return Err(e.into());
        }
        out
    }

    fn rounds_of(&self, label: &str, change: &[Write]) -> Result<Sides, TrialError> {
        let mut sides = Sides {
            a: Vec::new(),
            b: Vec::new(),
            refused: Vec::new(),
        };
        let whole = settings::Candidate {
            name: "",
            check: "",
            title: "",
            cost: "",
            change: String::new(),
            writes: change.to_vec(),
            needs_debugfs: false,
        };
        for round in 1..=self.rounds {
            let order = if round % 2 == 1 {
                [false, true]
            } else {
                [true, false]
            };
            for applied in order {
                if applied {
                    let refused = settings::apply(self.root, &whole)?;
                    if round == 1 {
                        sides.refused = refused.iter().map(ToString::to_string).collect();
                    }
                } else {
                    let errors = settings::restore(self.root, change);
                    if let Some(e) = errors.into_iter().next() {
                        return Err(e.into());
                    }
                }
                let letter = if applied { "B" } else { "A" };
                println!(
                    "  round {round} of {}: {}",
                    self.rounds,
                    if applied { "changed" } else { "as it was" }
                );
                let path = self.dir.join(format!("{label}-{letter}-{round}.json"));
                // A change that places the loop (CPU isolation) does so in its rounds only.
                let place = settings::placement(change).filter(|_| applied);
                let figures = self.measure(&path, place.as_ref())?;
                if applied {
                    sides.b.push(figures);
                } else {
                    sides.a.push(figures);
                }
            }
        }
        Ok(sides)
    }

    /// One `rtgauge run` as a child process, started where `place` says; a stop request
    /// interrupts it.
    fn measure(
        &self,
        path: &Path,
        place: Option<&settings::Placement>,
    ) -> Result<Figures, TrialError> {
        use rtgauge_core::signals::stop_requested;
        if stop_requested() {
            return Err(TrialError::Interrupted);
        }
        let round = rtgauge_result::units::format_duration_ns(self.round_ns);
        let mut cmd = std::process::Command::new(&self.exe);
        cmd.arg("run").args(&self.run_words);
        if let Some(place) = place {
            place.arrange(&mut cmd, &self.run_words);
        }
        let mut child = cmd
            .args([
                "-d",
                &round,
                "-q",
                "--no-report",
                "--no-store",
                "--force",
                "-o",
            ])
            .arg(path)
            .env("RTGAUGE_NO_STORE", "1")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| TrialError::Round(format!("cannot start rtgauge run: {e}")))?;
        let status = loop {
            if stop_requested() {
                // SAFETY: signalling our own child, whose pid is still ours to wait for.
                unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
                let _ = child.wait();
                return Err(TrialError::Interrupted);
            }
            match child.try_wait() {
                Ok(Some(s)) => break s,
                Ok(None) => std::thread::sleep(Duration::from_millis(50)),
                Err(e) => return Err(TrialError::Round(e.to_string())),
            }
        };
        let mut stderr = String::new();
        if let Some(mut e) = child.stderr.take() {
            use std::io::Read;
            let _ = e.read_to_string(&mut stderr);
        }
        // 2: a deadline missed or a limit exceeded, which is what is being measured.
        if !matches!(status.code(), Some(0 | 2)) {
            let line = stderr.lines().last().unwrap_or("no message").to_string();
            return Err(TrialError::Round(format!(
                "rtgauge run exited {status}: {line}"
            )));
        }
        let result = rtgauge_result::read_result(path)
            .map_err(|e| TrialError::Round(format!("{}: {e}", path.display())))?;
        figures_of(&result, path).ok_or_else(|| {
            TrialError::Round(format!("{}: the loop measured nothing", path.display()))
        })
    }
}

/// A catalogue write as the document records it.
pub fn doc_write(w: &Write) -> rtgauge_result::tune::Write {
    rtgauge_result::tune::Write {
        path: w.path.clone(),
        original: w.original.clone(),
        target: w.target.clone(),
        optional: w.optional,
        kind: w.kind,
    }
}

/// A document's writes as the settings apply and restore them.
pub fn setting_writes(writes: &[rtgauge_result::tune::Write]) -> Vec<Write> {
    writes
        .iter()
        .map(|w| Write {
            path: w.path.clone(),
            original: w.original.clone(),
            target: w.target.clone(),
            optional: w.optional,
            kind: w.kind,
        })
        .collect()
}

/// A trial of `candidate`, not measured yet.
pub fn planned(candidate: &settings::Candidate) -> Trial {
    Trial {
        name: candidate.name.into(),
        title: candidate.title.into(),
        change: candidate.change.clone(),
        cost: candidate.cost.into(),
        writes: candidate.writes.iter().map(doc_write).collect(),
        failed: None,
        refused: Vec::new(),
        before: Vec::new(),
        after: Vec::new(),
        judgement: None,
    }
}

/// The combination: the changes that were better, together, when more than one was; not
/// measured yet. Its writes are theirs, in the order they were tried.
pub fn combination_of(trials: &[Trial]) -> Option<Trial> {
    let helped: Vec<&Trial> = trials
        .iter()
        .filter(|t| t.verdict() == Some(Verdict::Better))
        .collect();
    if helped.len() < 2 {
        return None;
    }
    let names: Vec<&str> = helped.iter().map(|t| t.name.as_str()).collect();
    Some(Trial {
        name: "together".into(),
        title: "The changes that helped, together".into(),
        change: names.join(" + "),
        cost: helped
            .iter()
            .map(|t| t.cost.as_str())
            .collect::<Vec<_>>()
            .join("; "),
        writes: helped.iter().flat_map(|t| t.writes.clone()).collect(),
        failed: None,
        refused: Vec::new(),
        before: Vec::new(),
        after: Vec::new(),
        judgement: None,
    })
}

/// Records the outcome of a trial's rounds in `t`: the sides and their judgement, or why it
/// was not measured (the change is already rolled back). Only an interruption is passed on.
pub fn record(t: &mut Trial, outcome: Result<Sides, TrialError>) -> Result<(), TrialError> {
    match outcome {
        Ok(sides) => {
            t.judgement = Some(judge(&sides.a, &sides.b));
            t.refused = sides.refused;
            t.before = sides.a;
            t.after = sides.b;
        }
        Err(TrialError::Interrupted) => return Err(TrialError::Interrupted),
        Err(e) => {
            println!("  failed, rolled back: {e}");
            t.failed = Some(e.to_string());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figs(max: &[u64], misses: &[u64]) -> Vec<Figures> {
        max.iter()
            .zip(misses)
            .map(|(&m, &x)| Figures {
                tail: "p99.9".into(),
                tail_ns: Some(m / 2),
                max_ns: m,
                misses: x,
                result: PathBuf::new(),
            })
            .collect()
    }

    #[test]
    fn a_large_consistent_drop_is_better_and_noise_cannot_tell() {
        let a = figs(
            &[900_000_000, 1_100_000_000, 1_000_000_000],
            &[120, 118, 121],
        );
        let b = figs(&[90_000, 120_000, 100_000], &[0, 0, 0]);
        let j = judge(&a, &b);
        assert_eq!(j.verdict, Verdict::Better);
        assert_eq!(j.effects.len(), 3);
        assert_eq!(judge(&b, &a).verdict, Verdict::Worse);
        let c = figs(&[90_000, 200_000, 100_000], &[0, 0, 0]);
        let d = figs(&[150_000, 95_000, 110_000], &[0, 0, 0]);
        assert_eq!(judge(&c, &d).verdict, Verdict::CannotTell);
        assert_eq!(judge(&c, &d).effects.len(), 2, "no misses: not a figure");
    }
}
