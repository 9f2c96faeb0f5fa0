//! `rtgauge suites [SUITE]`: the built-in suites, what each runs, and the text of one to start
//! your own (docs/suites.md). Given a suite file, checks it without running anything.

use anyhow::Result;
use rtgauge_core::plan::{self, PlanOptions, ProbeRequest, BUILTIN_SUITES};
use rtgauge_core::units::format_duration_ns;

pub fn suites(suite: Option<String>, json: bool) -> Result<u8> {
    if json {
        let doc = match &suite {
            None => serde_json::Value::Array(
                BUILTIN_SUITES
                    .iter()
                    .map(|(name, _)| describe_json(name))
                    .collect::<Result<_>>()?,
            ),
            Some(name) => describe_json(name)?,
        };
        println!("{}", serde_json::to_string_pretty(&doc)?);
        return Ok(crate::EXIT_OK);
    }
    match suite {
        None => {
            for (name, _) in BUILTIN_SUITES {
                describe(name)?;
                println!();
            }
            println!(
                "Print one as a file to start your own: rtgauge suites standard > my-suite.toml\n\
                 (its format: suites.md in /usr/share/doc/rtgauge from the Debian package, or doc/ in \
                 the release tarball; check a file with: rtgauge suites my-suite.toml)"
            );
        }
        Some(name) => match BUILTIN_SUITES.iter().find(|(n, _)| *n == name) {
            Some((_, text)) => print!("{text}"),
            None => describe(&name)?,
        },
    }
    Ok(crate::EXIT_OK)
}

/// The suite file and its entries, validated by the same plan builder as
/// `rtgauge run --suite` (its modes, loads, mixes and every probe entry).
fn planned(name_or_path: &str) -> Result<(plan::SuiteFile, Vec<ProbeRequest>)> {
    let suite = plan::load_suite(name_or_path)?;
    let options = PlanOptions {
        suite: Some(name_or_path.to_string()),
        ..PlanOptions::default()
    };
    let planned = plan::build(&options, &rtgauge_sysinfo::online_cpus())?;
    Ok((suite, planned.probes))
}

/// The suite's name, description and entries.
fn describe(name_or_path: &str) -> Result<()> {
    let (suite, entries) = planned(name_or_path)?;
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
    for r in &entries {
        println!("  {}", entry(r));
    }
    Ok(())
}

/// The same as [`describe`], for scripts; times in nanoseconds as in result documents.
fn describe_json(name_or_path: &str) -> Result<serde_json::Value> {
    let (suite, entries) = planned(name_or_path)?;
    let probes: Vec<serde_json::Value> = entries
        .iter()
        .map(|r| {
            serde_json::json!({
                "title": r.title(),
                "probe": r.name,
                "duration_ns": r.budget.duration_ns,
                "loops": r.budget.loops,
                "warmup_ns": r.warmup_ns,
                "params": r.params.raw(),
            })
        })
        .collect();
    Ok(serde_json::json!({
        "name": suite.name,
        "description": suite.description,
        "modes": suite.modes,
        "loads": suite.loads,
        "probes": probes,
    }))
}

/// `cyclic@100us  30s (warm-up 2s)  period=100us`
fn entry(r: &ProbeRequest) -> String {
    let budget = match (r.budget.duration_ns, r.budget.loops) {
        (Some(d), Some(n)) => format!("{n} samples or {}", format_duration_ns(d)),
        (Some(d), None) => format_duration_ns(d),
        (None, Some(n)) => format!("{n} samples"),
        (None, None) => "until stopped".into(),
    };
    let params: Vec<String> = r
        .params
        .raw()
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    format!(
        "{:14} {budget} (warm-up {})  {}",
        r.title(),
        format_duration_ns(r.warmup_ns),
        params.join(" ")
    )
    .trim_end()
    .to_string()
}
