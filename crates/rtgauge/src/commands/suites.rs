//! `rtgauge suites [SUITE]`: the built-in suites, what each runs, and the text of one to start
//! your own (docs/suites.md). Given a suite file, checks it without running anything.

use anyhow::Result;
use rtgauge_core::plan::{self, PlanOptions, ProbeRequest, BUILTIN_SUITES};
use rtgauge_core::units::format_duration_ns;

pub fn suites(suite: Option<String>) -> Result<u8> {
    match suite {
        None => {
            for (name, _) in BUILTIN_SUITES {
                describe(name)?;
                println!();
            }
            println!(
                "Print one as a file to start your own: rtgauge suites standard > my-suite.toml\n\
                 (format: docs/suites.md; check a file with: rtgauge suites my-suite.toml)"
            );
        }
        Some(name) => match BUILTIN_SUITES.iter().find(|(n, _)| *n == name) {
            Some((_, text)) => print!("{text}"),
            None => describe(&name)?,
        },
    }
    Ok(crate::EXIT_OK)
}

/// The suite's name, description and entries, validated by the same plan builder as
/// `rtgauge run --suite` (its modes, loads, mixes and every probe entry).
fn describe(name_or_path: &str) -> Result<()> {
    let suite = plan::load_suite(name_or_path)?;
    let options = PlanOptions {
        suite: Some(name_or_path.to_string()),
        ..PlanOptions::default()
    };
    let planned = plan::build(&options, &rtgauge_sysinfo::online_cpus())?;
    println!(
        "{}",
        format!("{}  {}", suite.name, suite.description).trim_end()
    );
    if let Some(modes) = &suite.modes {
        println!("  modes: {}", modes.join(", "));
    }
    if let Some(loads) = &suite.loads {
        println!("  loads: {}", loads.join(", "));
    }
    for r in &planned.probes {
        println!("  {}", entry(r));
    }
    Ok(())
}

/// `cyclic@100us  30s (warm-up 2s)  period=100us`
fn entry(r: &ProbeRequest) -> String {
    let budget = match (r.budget.duration_ns, r.budget.loops) {
        (Some(d), Some(n)) => format!("{n} samples or {}", format_duration_ns(d)),
        (Some(d), None) => format_duration_ns(d),
        (None, Some(n)) => format!("{n} samples"),
        (None, None) => "until stopped".into(),
    };
    let params: Vec<String> = r.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!(
        "{:14} {budget} (warm-up {})  {}",
        r.title(),
        format_duration_ns(r.warmup_ns),
        params.join(" ")
    )
    .trim_end()
    .to_string()
}
