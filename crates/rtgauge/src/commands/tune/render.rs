//! What `tune` prints: the verdict line first, then the ranked table (at most 100 columns),
//! what was not tried and why, and the fixes that need a reboot.

use super::boot::{self, BootFix};
use super::settings::{Candidate, Skipped};
use super::trial::{Effect, Verdict};
use super::{Trial, TuneArgs, TuneDocument};
use rtgauge_result::units::format_duration_ns;
use std::fmt::Write as _;

const WIDTH: usize = 100;

/// `text` broken into lines of at most [`WIDTH`] columns, each after `indent`.
pub fn wrap(text: &str, indent: &str) -> String {
    hanging(indent, text, indent)
}

/// `first` then `text`, broken into lines of at most [`WIDTH`] columns; the lines after the
/// first start with `indent`.
fn hanging(first: &str, text: &str, indent: &str) -> String {
    let mut out = String::new();
    let mut line = String::from(first);
    let mut empty = true;
    for word in text.split_whitespace() {
        if !empty && line.chars().count() + word.chars().count() + 1 > WIDTH {
            out.push_str(line.trim_end());
            out.push('\n');
            line = String::from(indent);
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    if !empty {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

fn reboot_count(boot: &[BootFix]) -> String {
    match boot.len() {
        0 => String::new(),
        1 => "; 1 more needs a reboot".into(),
        n => format!("; {n} more need a reboot"),
    }
}

pub fn dry_run(
    the_loop: &str,
    tried: &[Candidate],
    skipped: &[Skipped],
    boot: &[BootFix],
    args: &TuneArgs,
    round_ns: u64,
) -> String {
    let mut out = wrap(
        &format!(
            "dry run for {the_loop}: {} change(s) to try, {} not{}; nothing was changed",
            tried.len(),
            skipped.len(),
            reboot_count(boot)
        ),
        "",
    );
    if !tried.is_empty() {
        let _ = writeln!(
            out,
            "\nwould try, each alone against the unchanged machine ({} rounds of {} per side), \
             then together:",
            args.rounds,
            format_duration_ns(round_ns)
        );
        for c in tried {
            out.push_str(&hanging(
                &format!("  {:<18} ", c.name),
                &c.change,
                "                     ",
            ));
            let check = if c.check.is_empty() {
                String::new()
            } else {
                format!("doctor's {} check; ", c.check)
            };
            out.push_str(&wrap(
                &format!("{}{}; costs {}", check, c.title, c.cost),
                "                     ",
            ));
            let files: Vec<String> = c.writes.iter().take(3).map(|w| w.describe()).collect();
            let more = if c.writes.len() > 3 {
                format!(" and {} more", c.writes.len() - 3)
            } else {
                String::new()
            };
            out.push_str(&wrap(
                &format!(
                    "restored by putting back: {}{more}{}",
                    files.join(", "),
                    if c.needs_debugfs {
                        "; debugfs is mounted for it and unmounted after"
                    } else {
                        ""
                    }
                ),
                "                     ",
            ));
        }
    }
    out.push_str(&skipped_section(skipped));
    out.push_str(&boot_section(boot));
    out.push_str(
        "\nrun with --apply (as root) to try them; every original is saved to a state file first\n",
    );
    out
}

fn skipped_section(skipped: &[Skipped]) -> String {
    if skipped.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nnot tried:\n");
    // Those left out by --only are many and say one thing: one line.
    let (unnamed, skipped): (Vec<&Skipped>, Vec<&Skipped>) =
        skipped.iter().partition(|s| s.reason == super::NOT_IN_ONLY);
    if !unnamed.is_empty() {
        let names: Vec<&str> = unnamed.iter().map(|s| s.name).collect();
        out.push_str(&hanging(
            "  --only leaves out: ",
            &names.join(", "),
            "                     ",
        ));
    }
    for s in skipped {
        out.push_str(&hanging(
            &format!("  {:<18} ", s.name),
            &s.reason,
            "                     ",
        ));
    }
    out
}

fn boot_section(boot: &[BootFix]) -> String {
    if boot.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nneed a reboot (cannot be tried while running):\n");
    for f in boot {
        let head = if f.param.is_empty() {
            f.what.clone()
        } else {
            format!("{}: {}", f.what, f.param)
        };
        out.push_str(&wrap(&format!("{head} — {}", f.why), "  "));
    }
    let line = boot::command_line(boot);
    if !line.is_empty() {
        let _ = writeln!(out, "kernel command line: {line}");
        for (family, how) in boot::how_to_set(&line) {
            out.push_str(&wrap(&format!("{family}: {how}"), "  "));
        }
    }
    out
}

fn ns(v: f64) -> String {
    if v.is_finite() && v >= 0.0 {
        format_duration_ns(v.round() as u64)
    } else {
        "-".into()
    }
}

/// A relative change for people: `-35 %`, `+12 %`, and a large drop as a factor (`÷221`).
fn change_text(change: f64) -> String {
    if change <= -0.5 {
        format!("÷{:.0}", 1.0 / (1.0 + change).max(1e-9))
    } else {
        format!("{:+.0} %", change * 100.0)
    }
}

fn effect_text(e: &Effect) -> String {
    let p = rtgauge_report::compare::format_p(e.p);
    if e.figure == "missed" {
        // Counts: the numbers say it; a factor of counts plus one would not.
        return format!(
            "missed {:.0} → {:.0} in all rounds (p {p})",
            e.before, e.after
        );
    }
    format!(
        "{} {} → {} ({}, p {p})",
        e.figure,
        ns(e.before),
        ns(e.after),
        change_text(e.change)
    )
}

/// The first line: the loop, its max before and after the changes that helped.
pub fn verdict_line(
    the_loop: &str,
    trials: &[Trial],
    combination: &Option<Trial>,
    boot: &[BootFix],
) -> String {
    let helped: Vec<&Trial> = trials
        .iter()
        .filter(|t| t.verdict() == Some(Verdict::Better))
        .collect();
    let reboot = reboot_count(boot);
    let finale = combination.as_ref().or(helped.first().copied());
    let max = |t: &Trial| {
        t.judgement
            .as_ref()
            .and_then(|j| j.effects.iter().find(|e| e.figure == "max"))
            .map(|e| (e.before, e.after))
    };
    match finale.and_then(max) {
        Some((before, after)) if !helped.is_empty() => format!(
            "{the_loop}: max {} → {} with {} change{}{reboot}",
            ns(before),
            ns(after),
            helped.len(),
            if helped.len() == 1 { "" } else { "s" }
        ),
        _ => {
            let start = trials
                .iter()
                .find_map(max)
                .map(|(b, _)| format!(" (max {} as it was)", ns(b)))
                .unwrap_or_default();
            format!("{the_loop}: no runtime change helped{start}{reboot}")
        }
    }
}

/// The ranked table and the sections after it.
pub fn applied(doc: &TuneDocument) -> String {
    let mut out = format!("\n{}\n", wrap(&doc.verdict, ""));
    let mut ranked: Vec<&Trial> = doc.trials.iter().collect();
    let rank = |t: &Trial| -> (u8, f64) {
        let max_change = t
            .judgement
            .as_ref()
            .and_then(|j| j.effects.iter().find(|e| e.figure == "max"))
            .map_or(0.0, |e| e.change);
        let class = match t.verdict() {
            Some(Verdict::Better) => 0,
            Some(Verdict::CannotTell) => 1,
            Some(Verdict::Worse) => 2,
            None => 3,
        };
        (class, max_change)
    };
    ranked.sort_by(|a, b| {
        let (ra, rb) = (rank(a), rank(b));
        ra.0.cmp(&rb.0).then(ra.1.total_cmp(&rb.1))
    });
    if let Some(c) = &doc.combination {
        ranked.insert(0, c);
    }
    let _ = writeln!(
        out,
        "{:<3} {:<18} {:<12} {:<30} rounds vary",
        "#", "setting", "verdict", "max: before → after"
    );
    for (i, t) in ranked.iter().enumerate() {
        out.push_str(&row(i + 1, t));
    }
    if !doc.kept.is_empty() {
        let _ = writeln!(
            out,
            "\nkept until reboot (--keep): {}; everything else is as it was",
            doc.kept.join(", ")
        );
    } else {
        out.push_str("\nevery setting is as it was before\n");
    }
    out.push_str(&skipped_section(&doc.skipped));
    out.push_str(&boot_section(&doc.boot));
    out
}

fn row(rank: usize, t: &Trial) -> String {
    let mut out = String::new();
    let Some(j) = &t.judgement else {
        let _ = writeln!(out, "{rank:<3} {:<18} {:<12}", t.name, "not measured");
        out.push_str(&wrap(
            &format!("{} — {}", t.change, t.failed.as_deref().unwrap_or("")),
            "    ",
        ));
        return out;
    };
    let max = j.effects.iter().find(|e| e.figure == "max");
    let figures = max
        .map(|e| {
            format!(
                "{} → {} ({})",
                ns(e.before),
                ns(e.after),
                change_text(e.change)
            )
        })
        .unwrap_or_default();
    let spread = max
        .map(|e| format!("± {:.0} %", e.spread * 100.0))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "{rank:<3} {:<18} {:<12} {:<30} {spread}",
        t.name,
        j.verdict.word(),
        figures
    );
    out.push_str(&wrap(&t.change, "    "));
    let others: Vec<String> = j.effects.iter().map(effect_text).collect();
    out.push_str(&wrap(&others.join("; "), "    "));
    for r in &t.refused {
        out.push_str(&wrap(&format!("refused (left as it was): {r}"), "    "));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::settings::Write;
    use super::super::trial::{judge, Figures};
    use super::*;

    fn rounds(max_ms: &[f64], misses: u64) -> Vec<Figures> {
        max_ms
            .iter()
            .map(|&m| Figures {
                tail: "p99.9".into(),
                tail_ns: Some((m * 300_000.0) as u64),
                max_ns: (m * 1e6) as u64,
                misses,
                result: Default::default(),
            })
            .collect()
    }

    fn trial(name: &str, change: &str, before: &[f64], after: &[f64], misses: u64) -> Trial {
        let (a, b) = (rounds(before, misses), rounds(after, 0));
        Trial {
            name: name.into(),
            title: String::new(),
            change: change.into(),
            cost: String::new(),
            writes: vec![Write {
                path: "/proc/sys/kernel/sched_rt_runtime_us".into(),
                original: "950000".into(),
                target: "-1".into(),
                optional: false,
                kind: Default::default(),
            }],
            failed: None,
            refused: Vec::new(),
            judgement: Some(judge(&a, &b)),
            before: a,
            after: b,
        }
    }

    /// The table of a run with one clear winner, one undecided change and one that failed to
    /// apply: ranked, every line within 100 columns.
    #[test]
    fn the_ranked_table_fits_100_columns() {
        let trials = vec![
            trial(
                "timer-migration",
                "1 → 0",
                &[1.2, 1.9, 1.4],
                &[1.5, 1.1, 2.0],
                0,
            ),
            trial(
                "rt-throttling",
                "300000 → -1, root cpu group 300000 → -1",
                &[1210.0, 1250.0, 1230.0],
                &[5.1, 5.3, 4.9],
                240,
            ),
            Trial {
                failed: Some("writing 0 to /proc/sys/kernel/nmi_watchdog was refused".into()),
                judgement: None,
                ..trial("watchdogs", "NMI 1 → 0", &[1.0], &[1.0], 0)
            },
        ];
        let boot = vec![BootFix {
            what: "CPU isolation".into(),
            param: "isolcpus=domain,managed_irq,1".into(),
            why: "the scheduler balances no task onto the measured CPUs".into(),
        }];
        let doc = TuneDocument {
            verdict: verdict_line("a 1ms loop on CPU 1", &trials, &None, &boot),
            the_loop: "a 1ms loop on CPU 1".into(),
            measured: "1".into(),
            housekeeping: "0".into(),
            run_words: Vec::new(),
            rounds: 3,
            round_ns: 2_000_000_000,
            trials,
            combination: None,
            skipped: vec![Skipped {
                name: "cstates",
                reason: "no enabled idle state exits slower than 10 µs".into(),
            }],
            boot,
            kept: Vec::new(),
        };
        let text = applied(&doc);
        for line in text.lines() {
            assert!(line.chars().count() <= WIDTH, "{line}");
        }
        insta::assert_snapshot!("applied", text);
    }
}
