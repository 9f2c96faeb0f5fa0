//! `rtgauge run`: options → plan → runner → result document → tables.

use crate::cli::{ModeName, RtPolicy, RunArgs};
use crate::display::LiveDisplay;
use anyhow::{Context, Result};
use clap::ValueEnum;
use rtgauge_core::plan::{self, Plan, ProbeRequest};
use rtgauge_core::probe::Budget;
use rtgauge_core::rt::{Mode, Policy};
use rtgauge_core::runner::{self, RunInputs, RunObserver};
use rtgauge_core::{cpus, probes, units};
use rtgauge_report::table::{render_tables, Style};
use rtgauge_result::{write_atomically, RunResult, RunStatus};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub const DEFAULT_DURATION_NS: u64 = 10_000_000_000;
pub const DEFAULT_WARMUP_NS: u64 = 1_000_000_000;

pub fn run(args: RunArgs, command_line: Vec<String>) -> Result<u8> {
    let plan = build_plan(&args)?;
    // A bad spec fails before the run, not after it.
    let spec = args
        .spec
        .as_deref()
        .map(rtgauge_report::Spec::load)
        .transpose()?;
    let output = args.output.clone().unwrap_or_else(default_output);
    let live = Arc::new(rtgauge_core::live::LiveBoard::default());
    let display = (!args.quiet)
        .then(|| LiveDisplay::start(live.clone(), &plan.cpus))
        .flatten();
    let inputs = RunInputs {
        command_line,
        live,
        scratch_dir: std::env::temp_dir(),
        exe: std::env::current_exe()
            .context("cannot find the rtgauge binary to start load workers")?,
        record_stem: Some(output.with_extension("")),
    };
    let mut writer = CheckpointWriter {
        path: &output,
        error: None,
        display: display.as_ref(),
    };
    let outcome = runner::execute(&plan, &inputs, &mut writer);
    let checkpoint_error = writer.error.take();
    // With every CPU measured, the display thread had nowhere else to run.
    let display_shared_cpus =
        display.is_some() && rtgauge_core::cpus::housekeeping_cpus(&plan.cpus).is_empty();
    drop(display);
    let mut result = outcome?;
    if let Some(e) = checkpoint_error {
        return Err(e).context("the result could not be saved");
    }
    if display_shared_cpus {
        result.warnings.push(rtgauge_result::Warning::new(
            "display_shares_cpus",
            "the live display ran on the measured CPUs (every CPU is measured): a neighbour that wakes a few times a second can lower the minima; use -q, or leave a CPU unmeasured with --cpus",
        ));
    }
    write_atomically(&output, &result)?;
    report(&args, &result, &output, spec.as_ref())
}

/// Writes the document after every probe so an interrupted or killed run keeps what it
/// measured.
struct CheckpointWriter<'a> {
    path: &'a Path,
    error: Option<rtgauge_result::ResultError>,
    display: Option<&'a LiveDisplay>,
}

impl RunObserver for CheckpointWriter<'_> {
    fn probe_started(&mut self, probe: &str, mode: &str, load: &str) {
        if let Some(d) = self.display {
            d.note(format!("measuring {probe} · mode {mode} · load {load}"));
        }
    }

    fn checkpoint(&mut self, result: &RunResult) {
        if self.error.is_none() {
            self.error = write_atomically(self.path, result).err();
        }
    }
}

fn report(
    args: &RunArgs,
    result: &RunResult,
    output: &Path,
    spec: Option<&rtgauge_report::Spec>,
) -> Result<u8> {
    if !args.quiet {
        print!("{}", render_tables(result, Style::Terminal));
        print_warnings(result);
    }
    if result.status == RunStatus::Interrupted {
        eprintln!("rtgauge: interrupted; the result holds what was measured");
    }
    println!("result: {}", output.display());
    for r in &result.recordings {
        let path = output.with_file_name(&r.path);
        println!(
            "recording: {} ({} samples)",
            path.display(),
            r.samples_written
        );
    }
    if !args.no_report {
        let html = output.with_extension("html");
        let name = output
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "run".into());
        let recordings = super::recordings::plots(result, output);
        rtgauge_report::write_html(
            &rtgauge_report::ReportInput {
                results: std::slice::from_ref(result),
                names: &[name],
                comparison: None,
                recordings: &recordings,
            },
            &html,
        )
        .context("the HTML report could not be written (--no-report skips it)")?;
        println!("report: {}", html.display());
    }
    let failed: Vec<String> = result
        .runs
        .iter()
        .filter_map(|r| match &r.status {
            rtgauge_result::ProbeStatus::Failed { error } => {
                Some(format!("{} {} {}: {error}", r.title(), r.mode, r.load))
            }
            _ => None,
        })
        .collect();
    if !failed.is_empty() {
        for f in &failed {
            eprintln!("rtgauge: {f}");
        }
        return Ok(crate::EXIT_ERROR);
    }
    if let Some(limit) = args.max_latency {
        let worst = result
            .runs
            .iter()
            .flat_map(|r| r.series.iter().map(move |s| (r, s)))
            .filter(|(_, s)| s.name == "latency")
            .filter_map(|(r, s)| s.stats.max_ns.map(|m| (m, r, s)))
            .max_by_key(|(m, _, _)| *m);
        if let Some((max, run, series)) = worst.filter(|(m, _, _)| *m > limit) {
            eprintln!(
                "rtgauge: max latency {} ({} {} {} {}) exceeds --max-latency {}",
                units::format_duration_ns(max),
                run.probe,
                run.mode,
                run.load,
                series.display_name(),
                units::format_duration_ns(limit)
            );
            return Ok(crate::EXIT_THRESHOLD);
        }
    }
    if let (Some(spec), Some(spec_path)) = (spec, &args.spec) {
        let checked = rtgauge_report::check_result(result, spec);
        print!(
            "{}",
            rtgauge_report::check::render_text(&checked, rtgauge_report::check::Style::Terminal)
        );
        if !checked.passed {
            eprintln!("rtgauge: limits of {} exceeded", spec_path.display());
            return Ok(crate::EXIT_THRESHOLD);
        }
    }
    Ok(crate::EXIT_OK)
}

/// Environment findings in one line (doctor explains each), then the run's own warnings.
fn print_warnings(result: &RunResult) {
    let title_of = |code: &str| {
        result
            .checks
            .iter()
            .find(|c| c.id == code)
            .map(|c| c.title.as_str())
    };
    let environment: Vec<&str> = result
        .warnings
        .iter()
        .filter_map(|w| title_of(&w.code))
        .collect();
    if !environment.is_empty() {
        eprintln!(
            "environment: {} (`rtgauge doctor` explains each and how to fix it)",
            environment.join(" · ")
        );
    }
    for w in result
        .warnings
        .iter()
        .filter(|w| title_of(&w.code).is_none())
    {
        eprintln!("warning: {}", w.message);
    }
    for run in &result.runs {
        for s in &run.obtained.shortfalls {
            eprintln!("warning: {} {}: {s}", run.probe, run.mode);
        }
    }
}

fn default_output() -> PathBuf {
    let host = rtgauge_sysinfo::collect().hostname;
    let host = if host.is_empty() { "host".into() } else { host };
    PathBuf::from("rtgauge-results").join(format!(
        "{host}-{}.json",
        compact_utc(rtgauge_core::clock::unix_ns() / 1_000_000_000)
    ))
}

/// `20261122T051234Z` from Unix seconds.
fn compact_utc(secs: u64) -> String {
    rtgauge_result::units::utc(secs * 1_000_000_000, "%Y%m%dT%H%M%SZ")
}

/// Options → a validated plan.
fn build_plan(args: &RunArgs) -> Result<Plan> {
    let online = rtgauge_sysinfo::online_cpus();
    let cpus = cpus::parse_cpus(&args.cpus, &online).map_err(|e| anyhow::anyhow!("--cpus: {e}"))?;
    let flag_budget = Budget {
        duration_ns: args.duration,
        loops: args.loops,
    };
    let explicit_budget = args.duration.is_some() || args.loops.is_some();
    let default_budget = if explicit_budget {
        flag_budget
    } else {
        Budget {
            duration_ns: Some(DEFAULT_DURATION_NS),
            loops: None,
        }
    };
    let warmup = args.warmup.unwrap_or(DEFAULT_WARMUP_NS);

    let suite_name = match (&args.suite, args.probes.is_empty()) {
        (Some(s), _) => Some(s.clone()),
        (None, true) => Some("quick".to_string()),
        (None, false) => None,
    };
    let suite = suite_name.as_deref().map(plan::load_suite).transpose()?;
    let mut requests: Vec<ProbeRequest> = match &suite {
        Some(suite) => plan::suite_requests(suite, default_budget, warmup)?,
        None => Vec::new(),
    };
    if !args.probes.is_empty() {
        for selector in &args.probes {
            let (name, _) = plan::split_selector(selector);
            if probes::find(name).is_none() {
                return Err(plan::PlanError::UnknownProbe(name.to_string()).into());
            }
        }
        if suite_name.is_some() {
            requests.retain(|r| args.probes.iter().any(|p| r.is_selected_by(p)));
        } else {
            // `cyclic@fast cyclic@slow` runs one probe twice, told apart by its variant.
            requests = args
                .probes
                .iter()
                .map(|selector| {
                    let (name, variant) = plan::split_selector(selector);
                    let variant = variant.map(str::to_string);
                    plan::request(name, variant, BTreeMap::new(), default_budget, warmup)
                })
                .collect::<Result<_, _>>()?;
        }
    }
    if requests.is_empty() {
        anyhow::bail!("the selected suite has none of the probes named; see `rtgauge probes`");
    }

    // Flags override the suite: (flag as typed, probe, key, value).
    let mut settings: Vec<(String, Option<String>, String, String)> = Vec::new();
    if let Some(p) = args.period {
        settings.push((
            "--period".into(),
            None,
            "period".into(),
            units::format_duration_exact(p),
        ));
    }
    if let Some(t) = args.timer {
        settings.push(("--timer".into(), None, "timer".into(), t.as_param().into()));
    }
    for s in &args.settings {
        let (probe, key, value) = plan::parse_setting(s).map_err(anyhow::Error::msg)?;
        settings.push((format!("--set {s}"), probe, key, value));
    }
    for (flag, probe, key, value) in &settings {
        let targets: Vec<&mut ProbeRequest> = requests
            .iter_mut()
            .filter(|r| probe.as_deref().is_none_or(|p| r.is_selected_by(p)))
            .filter(|r| {
                probes::find(r.name)
                    .is_some_and(|p| p.parameters().iter().any(|spec| spec.name == key.as_str()))
            })
            .collect();
        if targets.is_empty() {
            anyhow::bail!(
                "{flag}: no selected probe takes parameter '{key}'; `rtgauge probes` lists each probe's parameters"
            );
        }
        for r in targets {
            r.params.insert(key.clone(), value.clone());
        }
    }
    let mut validated = Vec::with_capacity(requests.len());
    for mut r in requests {
        if explicit_budget {
            r.budget = flag_budget;
        }
        if args.warmup.is_some() {
            r.warmup_ns = warmup;
        }
        validated.push(plan::request(
            r.name,
            r.variant,
            r.params,
            r.budget,
            r.warmup_ns,
        )?);
    }
    plan::check_unique_titles(&validated)?;
    let record = record_names(&args.record, &validated)?;
    let policy = match args.policy {
        RtPolicy::Fifo => Policy::Fifo,
        RtPolicy::Rr => Policy::Rr,
    };
    let period = args.period.unwrap_or(1_000_000);
    let mode_names = match (&suite, args.mode.is_empty()) {
        (Some(suite), true) => suite_modes(suite)?,
        (None, true) => vec![ModeName::Rt],
        (_, false) => args.mode.clone(),
    };
    let mut modes = Vec::new();
    for m in &mode_names {
        let mode = match m {
            ModeName::Normal => Mode::normal(),
            ModeName::Rt => Mode::rt(args.priority, policy),
            ModeName::Deadline => Mode::deadline(args.dl_runtime, period, period),
        };
        if !modes.contains(&mode) {
            modes.push(mode);
        }
    }
    let load_text = match (&args.load, &suite) {
        (Some(text), _) => text.clone(),
        (None, Some(suite)) => suite.loads.clone().unwrap_or_default().join(","),
        (None, None) => String::new(),
    };
    let load_text = match &suite {
        Some(suite) => plan::expand_mixes(&load_text, &suite.mixes),
        None => load_text,
    };
    let load_text = if load_text.trim().is_empty() {
        "none".to_string()
    } else {
        load_text
    };
    let loads = rtgauge_load::expand(
        &rtgauge_load::parse_list(&load_text).map_err(|e| anyhow::anyhow!("--load: {e}"))?,
    );
    let load_cpus = match &args.load_cpus {
        Some(spec) => {
            cpus::parse_cpus(spec, &online).map_err(|e| anyhow::anyhow!("--load-cpus: {e}"))?
        }
        None => Vec::new(),
    };
    Ok(Plan {
        suite: suite_name,
        probes: validated,
        modes,
        loads,
        load_cpus,
        load_disk_cap_bytes: args.load_disk_cap,
        skip_failed_loads: args.skip_failed_loads,
        cpus,
        best_effort: args.best_effort,
        priority: args.priority,
        record,
    })
}

/// The suite's `modes` (default: rt), spelled as `--mode` takes them.
fn suite_modes(suite: &plan::SuiteFile) -> Result<Vec<ModeName>> {
    let Some(names) = &suite.modes else {
        return Ok(vec![ModeName::Rt]);
    };
    names
        .iter()
        .map(|n| {
            ModeName::from_str(n, false).map_err(|_| {
                anyhow::anyhow!(
                    "suite {}: mode '{n}' is not one of normal, rt, deadline",
                    suite.name
                )
            })
        })
        .collect()
}

/// `--record` names: probes of this run (`probe` or `probe@variant`), or `all`.
fn record_names(record: &[String], planned: &[ProbeRequest]) -> Result<Vec<String>> {
    for name in record.iter().filter(|n| n.as_str() != "all") {
        let (probe, _) = plan::split_selector(name);
        if probes::find(probe).is_none() {
            return Err(plan::PlanError::UnknownProbe(probe.to_string())).context("--record");
        }
        if !planned.iter().any(|r| r.is_selected_by(name)) {
            anyhow::bail!("--record {name}: probe {name} is not part of this run");
        }
    }
    Ok(record.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_utc_is_a_calendar_date() {
        assert_eq!(compact_utc(0), "19700101T000000Z");
        assert_eq!(compact_utc(1_795_000_000), "20261118T110640Z");
    }
}
