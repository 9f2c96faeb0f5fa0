//! What `tune` prints: the verdict line first, then the ranked table (at most 100 columns),
//! what was not tried and why, and the fixes that need a reboot.

use super::boot;
use super::settings::{self, Candidate};
use super::trial::{Trial, Verdict};
use super::{TuneArgs, TuneDocument};
use rtgauge_report::tune::{before_after_spread, effect_text, ns};
use rtgauge_result::tune::{command_line, BootFix, Skipped};
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

/// The catalogue's reasons, as the document records them.
pub fn skipped(skipped: &[settings::Skipped]) -> Vec<Skipped> {
    skipped
        .iter()
        .map(|s| Skipped {
            name: s.name.into(),
            reason: s.reason.clone(),
        })
        .collect()
}

/// The boot-time fixes, as the document records them.
pub fn boot_fixes(fixes: Vec<boot::BootFix>) -> Vec<BootFix> {
    fixes
        .into_iter()
        .map(|f| BootFix {
            what: f.what,
            param: f.param,
            why: f.why,
        })
        .collect()
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
    skipped: &[settings::Skipped],
    boot: &[boot::BootFix],
    args: &TuneArgs,
    round_ns: u64,
) -> String {
    let line = boot::command_line(boot);
    let (skipped, boot) = (&self::skipped(skipped), &boot_fixes(boot.to_vec()));
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
    out.push_str(&boot_section(boot, &line));
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
        let names: Vec<&str> = unnamed.iter().map(|s| s.name.as_str()).collect();
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

/// The fixes that need a reboot, and `line`, their kernel command line.
fn boot_section(boot: &[BootFix], line: &str) -> String {
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
    if !line.is_empty() {
        let _ = writeln!(out, "kernel command line: {line}");
        for (family, how) in boot::how_to_set(line) {
            out.push_str(&wrap(&format!("{family}: {how}"), "  "));
        }
    }
    out
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
    let ranked = doc.ranked();
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
    out.push_str(&boot_section(&doc.boot, &command_line(&doc.boot)));
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
    let (figures, spread) = before_after_spread(j.effects.iter().find(|e| e.figure == "max"));
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
    use super::super::trial::{judge, Figures};
    use super::*;
    use rtgauge_result::tune::Write;

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
            kind: rtgauge_result::tune::TUNE_KIND.into(),
            schema_version: rtgauge_result::tune::TUNE_SCHEMA_VERSION,
            tool: None,
            started_unix_ns: 0,
            finished_unix_ns: 0,
            host: String::new(),
            kernel_release: String::new(),
            skipped: vec![Skipped {
                name: "cstates".into(),
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

/// The combination step, from fabricated rounds: two settings that each made the loop better
/// are planned together, measured against the machine as it was, and recorded in the
/// document that `report`, `compare` and `history` read.
#[cfg(test)]
mod combination {
    use super::super::trial::{self, judge, Figures, Sides};
    use super::*;
    use rtgauge_result::tune::{Write, TUNE_KIND, TUNE_SCHEMA_VERSION};
    use std::path::{Path, PathBuf};

    /// Rounds of the loop with these maxima (ms) and missed periods per round.
    fn rounds(label: &str, max_ms: &[f64], misses: u64) -> Vec<Figures> {
        max_ms
            .iter()
            .enumerate()
            .map(|(i, &m)| Figures {
                tail: "p99.9".into(),
                tail_ns: Some((m * 300_000.0) as u64),
                max_ns: (m * 1e6) as u64,
                misses,
                result: PathBuf::from(format!("trials.rounds/{label}-{}.json", i + 1)),
            })
            .collect()
    }

    fn unmeasured(name: &str, change: &str, path: &str) -> Trial {
        Trial {
            name: name.into(),
            title: format!("{name} (fabricated)"),
            change: change.into(),
            cost: format!("the cost of {name}"),
            writes: vec![Write {
                path: path.into(),
                original: "1".into(),
                target: "0".into(),
                optional: false,
                kind: Default::default(),
            }],
            failed: None,
            refused: Vec::new(),
            before: Vec::new(),
            after: Vec::new(),
            judgement: None,
        }
    }

    fn measured(name: &str, change: &str, path: &str, a: Vec<Figures>, b: Vec<Figures>) -> Trial {
        let mut t = unmeasured(name, change, path);
        let sides = Sides {
            a,
            b,
            refused: Vec::new(),
        };
        trial::record(&mut t, Ok(sides)).unwrap();
        t
    }

    /// A tune in which rt-throttling and timer-migration each helped, vmstat-interval could
    /// not be told apart and watchdogs failed to apply; the combination of the two that helped
    /// brought the maximum from about 1.2 s to about 0.9 ms.
    pub fn two_helped() -> TuneDocument {
        let mut trials = vec![
            measured(
                "rt-throttling",
                "950000 → -1",
                "/proc/sys/kernel/sched_rt_runtime_us",
                rounds("rt-throttling-A", &[1210.0, 1250.0, 1230.0], 240),
                rounds("rt-throttling-B", &[2.1, 2.3, 1.9], 0),
            ),
            measured(
                "timer-migration",
                "1 → 0",
                "/proc/sys/kernel/timer_migration",
                rounds("timer-migration-A", &[1240.0, 1220.0, 1260.0], 235),
                rounds("timer-migration-B", &[610.0, 590.0, 605.0], 110),
            ),
            measured(
                "vmstat-interval",
                "1 → 10",
                "/proc/sys/vm/stat_interval",
                rounds("vmstat-interval-A", &[1200.0, 1900.0, 1400.0], 200),
                rounds("vmstat-interval-B", &[1500.0, 1100.0, 2000.0], 210),
            ),
        ];
        let mut failed = unmeasured("watchdogs", "NMI 1 → 0", "/proc/sys/kernel/nmi_watchdog");
        trial::record(
            &mut failed,
            Err(trial::TrialError::Round(
                "rtgauge run exited 1: no CPU 7".into(),
            )),
        )
        .unwrap();
        trials.push(failed);
        let mut together = trial::combination_of(&trials).expect("two were better");
        let sides = Sides {
            a: rounds("together-A", &[1230.0, 1190.0, 1250.0], 238),
            b: rounds("together-B", &[0.9, 0.85, 0.95], 0),
            refused: Vec::new(),
        };
        trial::record(&mut together, Ok(sides)).unwrap();
        let combination = Some(together);
        let boot = vec![BootFix {
            what: "CPU isolation".into(),
            param: "isolcpus=domain,managed_irq,1".into(),
            why: "the scheduler balances no task onto the measured CPUs".into(),
        }];
        TuneDocument {
            kind: TUNE_KIND.into(),
            schema_version: TUNE_SCHEMA_VERSION,
            tool: Some(rtgauge_result::Tool {
                name: "rtgauge".into(),
                version: "0.1.0".into(),
            }),
            started_unix_ns: 1_795_000_000_000_000_000,
            finished_unix_ns: 1_795_000_600_000_000_000,
            host: "bench".into(),
            kernel_release: "6.18.0".into(),
            verdict: verdict_line("a 1ms loop on CPU 1", &trials, &combination, &boot),
            the_loop: "a 1ms loop on CPU 1".into(),
            measured: "1".into(),
            housekeeping: "0".into(),
            run_words: ["cyclic", "-p", "1ms", "-c", "1"]
                .map(String::from)
                .to_vec(),
            rounds: 3,
            round_ns: 2_000_000_000,
            trials,
            combination,
            skipped: vec![Skipped {
                name: "cstates".into(),
                reason: "no enabled idle state exits slower than 10 µs".into(),
            }],
            boot,
            kept: Vec::new(),
        }
    }

    #[test]
    fn two_better_changes_are_measured_together_and_recorded() {
        let doc = two_helped();
        let c = doc.combination.as_ref().expect("a combination trial");
        assert_eq!(c.change, "rt-throttling + timer-migration");
        // Its writes are those of the two that helped, in the order they were tried.
        let paths: Vec<&Path> = c.writes.iter().map(|w| w.path.as_path()).collect();
        assert_eq!(
            paths,
            [
                Path::new("/proc/sys/kernel/sched_rt_runtime_us"),
                Path::new("/proc/sys/kernel/timer_migration")
            ]
        );
        assert_eq!((c.before.len(), c.after.len()), (3, 3));
        assert_eq!(c.verdict(), Some(Verdict::Better));
        // The verdict line counts the two changes and gives the combination's maximum.
        assert!(
            doc.verdict
                .starts_with("a 1ms loop on CPU 1: max 1.223s → 899.073µs with 2 changes"),
            "{}",
            doc.verdict
        );
        // The table ranks the combination first.
        let text = applied(&doc);
        let first = text.lines().find(|l| l.starts_with("1 ")).unwrap();
        assert!(first.contains("together"), "{text}");
        // Written and read back, the combination and every round are there.
        let bytes = rtgauge_result::tune::tune_bytes(&doc);
        let value: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        let back = rtgauge_result::tune::parse_tune_value(value).unwrap();
        assert_eq!(back, doc);
        // One better change alone is no combination.
        let one: Vec<Trial> = doc.trials.iter().skip(1).cloned().collect();
        assert!(trial::combination_of(&one).is_none());
        assert_eq!(
            judge(&c.before, &c.after).verdict,
            Verdict::Better,
            "recorded as judged"
        );
    }

    /// The fixture the report, compare and history tests read is this document:
    /// `RTGAUGE_UPDATE_FIXTURES=1 cargo test -p rtgauge --bin rtgauge combination` rewrites it.
    #[test]
    fn the_report_fixture_is_what_tune_writes() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../rtgauge-report/tests/fixtures/trials.json");
        let bytes = rtgauge_result::tune::tune_bytes(&two_helped());
        if std::env::var_os("RTGAUGE_UPDATE_FIXTURES").is_some() {
            std::fs::write(&path, &bytes).unwrap();
        }
        let committed = std::fs::read(&path).unwrap_or_default();
        assert!(
            committed == bytes,
            "{} is stale: run RTGAUGE_UPDATE_FIXTURES=1 cargo test -p rtgauge --bin rtgauge \
             combination",
            path.display()
        );
    }
}
