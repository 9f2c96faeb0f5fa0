//! `rtgauge run`: options → plan → runner → result document → summary (or tables).

use crate::cli::{RunArgs, TableKind};
use crate::display::{LiveDisplay, Progress};
use anyhow::{Context, Result};
use rtgauge_core::plan::{self, Plan, PlanOptions};
use rtgauge_core::runner::{self, RunInputs, RunObserver};
use rtgauge_core::units;
use rtgauge_probes::names::{self, TASKSET};
use rtgauge_report::{Format, Render, Summary, Tables};
use rtgauge_result::output::{self, Existing};
use rtgauge_result::{write_atomically, RunResult, RunStatus};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub fn run(args: RunArgs, command_line: Vec<String>) -> Result<u8> {
    if args.repeat == 1 {
        return run_once(&args, command_line, &mut Vec::new());
    }
    // Repeated runs: the same measurement N times, each its own result (NAME-i.json); the
    // worst exit status wins, and an interrupted run stops the series.
    let mut worst = crate::EXIT_OK;
    let mut written = Vec::new();
    for i in 1..=args.repeat {
        let mut once = args.clone();
        once.output = args.output.as_ref().map(|path| numbered(path, i));
        if !args.quiet {
            println!("run {i} of {}", args.repeat);
        }
        let code = run_once(&once, command_line.clone(), &mut written)?;
        if code > crate::EXIT_THRESHOLD {
            return Ok(code);
        }
        worst = worst.max(code);
    }
    if !args.quiet {
        print!("{}", repeated_ending(&written));
    }
    Ok(worst)
}

/// The end of `run --repeat N`: the N runs side by side, and the command that judges them
/// together against a baseline (the gate over repeated runs measures how runs vary).
fn repeated_ending(written: &[PathBuf]) -> String {
    let results: Vec<RunResult> = written
        .iter()
        .filter_map(|p| rtgauge_result::read_result(p).ok())
        .collect();
    if results.len() < 2 {
        return String::new();
    }
    let names: Vec<String> = (1..=results.len()).map(|i| format!("run {i}")).collect();
    let style = crate::display::text_style();
    let files: Vec<String> = written
        .iter()
        .map(|p| shell_word(&p.to_string_lossy()))
        .collect();
    let mut out = format!("\nthe {} runs side by side:\n", results.len());
    out.push_str(&rtgauge_report::side_by_side::render(
        &results, &names, style,
    ));
    out.push_str(&format!(
        "judge them together against a baseline's runs (one --baseline each: a file, a stored run's ID or a baseline name):\n  rtgauge check {} --baseline BASELINE\n",
        files.join(" ")
    ));
    rtgauge_report::format::fit_lines(out, style)
}

/// A path as one shell word: quoted when it holds anything but plain characters.
fn shell_word(text: &str) -> String {
    let plain = text
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+=:@,".contains(c));
    if plain && !text.is_empty() {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// `out.json` → `out-3.json`.
fn numbered(path: &Path, i: u32) -> PathBuf {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = match path.extension() {
        Some(ext) => format!("{stem}-{i}.{}", ext.to_string_lossy()),
        None => format!("{stem}-{i}"),
    };
    path.with_file_name(name)
}

/// One run; its result's path is added to `written` once the file is complete there.
fn run_once(args: &RunArgs, command_line: Vec<String>, written: &mut Vec<PathBuf>) -> Result<u8> {
    if let Some(line) = super::tune::left_behind_warning() {
        eprintln!("rtgauge: {line}");
    }
    let mut plan = build_plan(args)?;
    let relaxed = super::fallback::relax_unless_asked(args, &mut plan);
    if let (Some(reason), false) = (&relaxed, args.quiet) {
        eprintln!("{}", super::fallback::announce(reason));
    }
    // A bad spec fails before the run, not after it.
    let spec = args
        .spec
        .as_deref()
        .map(rtgauge_report::Spec::load)
        .transpose()?;
    let exe =
        std::env::current_exe().context("cannot find the rtgauge binary to start load workers")?;
    // Every output is checked, and the result's name claimed, before the first sample.
    let output = prepare_outputs(args, !plan.record.is_empty())?;
    let live = Arc::new(rtgauge_core::live::LiveBoard::default());
    let mut estimates = probe_run_estimates(&plan);
    if soak(args) {
        // Until Ctrl-C: no time left to show.
        estimates.fill(None);
    }
    let progress = Progress::new(estimates);
    let display = (!args.quiet)
        .then(|| LiveDisplay::start(live.clone(), &plan.cpus, progress.clone()))
        .flatten();
    let inputs = RunInputs {
        command_line: command_line.clone(),
        live,
        scratch_dir: std::env::temp_dir(),
        exe,
        record_stem: Some(output.with_extension("")),
    };
    let mut writer = CheckpointWriter {
        path: &output,
        error: None,
        written: 0,
        progress: &progress,
        progress_lines: !args.quiet && crate::display::progress_as_lines(),
    };
    super::forced_exit::arm(&output);
    let outcome = if soak(args) {
        super::soak::execute(&plan, &inputs, &mut writer)
    } else {
        runner::execute(&plan, &inputs, &mut writer)
    };
    let checkpoint_error = writer.error.take();
    let writer_checkpointed = writer.written > 0;
    // With every CPU measured, the display thread had nowhere else to run.
    let display_shared_cpus =
        display.is_some() && rtgauge_core::cpus::housekeeping_cpus(&plan.cpus).is_empty();
    drop(display);
    let mut result = match outcome {
        Ok(result) => result,
        Err(e) => {
            release_unused(&output);
            return Err(e.into());
        }
    };
    if let Some(e) = &checkpoint_error {
        eprintln!("rtgauge: a checkpoint of the result could not be saved: {e}");
    }
    // The runner's last checkpoint is the finished document: written again only when
    // something was added since (serialising a large result costs time after measuring).
    let mut saved = !soak(args) && checkpoint_error.is_none() && writer_checkpointed;
    if display_shared_cpus {
        saved = false;
        result.warnings.push(rtgauge_result::Warning::new(
            "display_shares_cpus",
            "the live display ran on the measured CPUs (every CPU is measured): a neighbour that wakes a few times a second can lower the minima; use -q, or leave a CPU unmeasured with --cpus",
        ));
    }
    if !saved && !save_result(&output, &result) {
        // Saved elsewhere: the report beside the requested path is skipped, the run failed.
        return Ok(crate::EXIT_ERROR);
    }
    written.push(output.clone());
    // Only once the file is complete: a history problem can never cost the measurement.
    let kept = (!args.no_store)
        .then(|| super::history::keep(&result, &output, &args.store, "run"))
        .flatten();
    let code = report(args, &result, &output, spec.as_ref())?;
    // -q prints the result path only.
    if let Some(line) = kept.filter(|_| !args.quiet) {
        println!("{line}");
    }
    if let Some(line) = super::fallback::notice(&result, &command_line).filter(|_| !args.quiet) {
        eprintln!(
            "{}",
            crate::display::emphasis(&line, crate::display::color_on_stderr())
        );
    }
    if result.status == RunStatus::Broken {
        return Ok(crate::EXIT_THRESHOLD);
    }
    Ok(interrupted_status(&result).unwrap_or(code))
}

/// An interrupted run exits 128 + the signal (130 for SIGINT, 143 for SIGTERM), as shells
/// and CI runners expect, after its result was saved.
fn interrupted_status(result: &RunResult) -> Option<u8> {
    (result.status == RunStatus::Interrupted).then(|| {
        let sig = rtgauge_core::signals::stop_signal().unwrap_or(libc::SIGINT);
        u8::try_from(128 + sig).unwrap_or(crate::EXIT_ERROR)
    })
}

/// Writes the result at its path; when that fails (disk full, directory removed), writes it
/// to the temporary directory instead and says where, so a measurement is never discarded.
/// False when it had to go elsewhere.
fn save_result(path: &Path, result: &RunResult) -> bool {
    let Err(e) = write_atomically(path, result) else {
        return true;
    };
    match output::save_elsewhere(&rtgauge_result::document_bytes(result), path) {
        Ok(saved) => {
            eprintln!(
                "rtgauge: {e}; the result was saved to {} instead",
                saved.display()
            );
            println!("result: {}", saved.display());
        }
        Err(e2) => eprintln!("rtgauge: {e}; saving it to the temporary directory failed too: {e2}"),
    }
    false
}

/// Checks every file the run will write before it measures, and claims the result's name
/// exclusively: two runs never share a result file, and an existing result is replaced only
/// with --force. Returns the result path.
fn prepare_outputs(args: &RunArgs, records: bool) -> Result<PathBuf> {
    let existing = if args.force {
        Existing::Replace
    } else {
        Existing::Refuse
    };
    let result = match &args.output {
        Some(path) => {
            let report = (!args.no_report).then(|| path.with_extension("html"));
            if report.as_deref() == Some(path.as_path()) {
                anyhow::bail!(
                    "-o {}: the HTML report is written beside the result with the extension .html, so both would be this file; name the result .json (or add --no-report)",
                    path.display()
                );
            }
            let inputs: Vec<&Path> = args
                .spec
                .iter()
                .map(PathBuf::as_path)
                .chain(suite_file(args))
                .collect();
            let mut outputs = vec![("the result", path.as_path())];
            outputs.extend(report.as_deref().map(|r| ("the HTML report", r)));
            output::ensure_distinct(&inputs, &outputs)?;
            output::check(path, existing)?;
            if let Some(report) = &report {
                output::check(report, existing)?;
            }
            output::reserve(path, existing)?;
            path.clone()
        }
        None => claim_default_output(args.no_report).context(
            "cannot write the result in ./rtgauge-results (choose a place with -o FILE)",
        )?,
    };
    if records {
        if let Err(e) = check_recordings(&result, existing) {
            release_unused(&result);
            return Err(e);
        }
    }
    Ok(result)
}

/// The suite, when it was given as a file: an input the outputs must not overwrite.
fn suite_file(args: &RunArgs) -> Option<&Path> {
    args.suite.as_deref().map(Path::new).filter(|p| p.is_file())
}

/// `rtgauge-results/HOST-TIME.json`, or `HOST-TIME-2.json`… when another run (even a
/// concurrent one) already holds that name.
fn claim_default_output(no_report: bool) -> Result<PathBuf, output::OutputError> {
    let host = rtgauge_sysinfo::collect().hostname;
    let host = if host.is_empty() { "host".into() } else { host };
    let stem = format!(
        "{host}-{}",
        compact_utc(rtgauge_core::clock::unix_ns() / 1_000_000_000)
    );
    let dir = PathBuf::from("rtgauge-results");
    output::check(&dir.join(format!("{stem}.json")), Existing::Replace)?;
    for n in 1..=1000 {
        let name = match n {
            1 => format!("{stem}.json"),
            n => format!("{stem}-{n}.json"),
        };
        let path = dir.join(name);
        if !no_report && path.with_extension("html").exists() {
            continue;
        }
        match output::reserve(&path, Existing::Refuse) {
            Err(output::OutputError::Exists { .. }) => continue,
            claimed => return claimed.map(|()| path),
        }
    }
    Err(output::OutputError::Exists {
        path: dir.join(format!("{stem}-1000.json")),
    })
}

/// Recordings are named after the result (`RESULT.probe-mode-load.rtgr`) and created
/// exclusively while measuring: old ones of the same name would make the run fail half-way,
/// so they are refused now, or removed with --force.
fn check_recordings(result: &Path, existing: Existing) -> Result<()> {
    let stem = result
        .file_stem()
        .map(|s| format!("{}.", s.to_string_lossy()))
        .unwrap_or_default();
    let dir = output::directory_of(result);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(());
    };
    // The middle is `probe-mode-load`, made of these characters only, so the recordings of
    // `r.2.json` are never taken for those of `r.json`.
    let is_recording_of_result = |name: &str| {
        name.strip_prefix(&stem)
            .and_then(|rest| rest.strip_suffix(".rtgr"))
            .is_some_and(|middle| {
                middle
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            })
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if is_recording_of_result(&name) {
            let path = entry.path();
            if existing == Existing::Refuse {
                return Err(output::OutputError::Exists { path }.into());
            }
            std::fs::remove_file(&path).with_context(|| {
                format!(
                    "--force: cannot remove the old recording {}",
                    path.display()
                )
            })?;
        }
    }
    Ok(())
}

/// A run that failed before writing anything gives its claimed (still empty) name back.
fn release_unused(path: &Path) {
    if std::fs::metadata(path).is_ok_and(|m| m.len() == 0) {
        let _ = std::fs::remove_file(path);
    }
}

/// Writes the document after every probe so an interrupted or killed run keeps what it
/// measured.
struct CheckpointWriter<'a> {
    path: &'a Path,
    error: Option<rtgauge_result::ResultError>,
    /// Checkpoints written (the last one is the finished document).
    written: u32,
    progress: &'a Progress,
    /// Progress goes to a log as lines (not a terminal, not --quiet).
    progress_lines: bool,
}

impl RunObserver for CheckpointWriter<'_> {
    fn probe_started(&mut self, probe: &str, mode: &str, load: &str) {
        self.progress
            .start_next(format!("{probe} · mode {mode} · load {load}"));
        if self.progress_lines {
            eprint!("{}", self.progress.log_line());
        }
    }

    fn checkpoint(&mut self, result: &RunResult) {
        if self.error.is_none() {
            self.error = write_atomically(self.path, result).err();
            self.written += 1;
        }
    }
}

fn report(
    args: &RunArgs,
    result: &RunResult,
    output: &Path,
    spec: Option<&rtgauge_report::Spec>,
) -> Result<u8> {
    // The spec is checked first: its outcome is part of the summary's verdict line.
    let checked = spec.map(|spec| rtgauge_report::check_result(result, spec));
    if !args.quiet {
        let format = Format::Text(crate::display::text_style());
        // The verdict line leads with a probe's own verdict (a task set's tasks at risk), as
        // in `show` and the report.
        let mut summary = Summary::of(result);
        if let (Some(checked), Some(path)) = (&checked, &args.spec) {
            summary = summary.with_limit(format!(
                "limits of {}: {}",
                path.display(),
                if checked.passed { "held" } else { "EXCEEDED" }
            ));
        }
        let probe_limits = rtgauge_probes::limit_outcomes(result);
        if checked.is_none() && !probe_limits.is_empty() {
            summary = summary.with_limit(probe_limits.join("; "));
        }
        let text = match args.table {
            TableKind::Summary => summary.render(format),
            TableKind::Full => Tables(result).render(format),
        };
        print!("{}", text?);
        // The summary carries each probe's answer (a task set's verdict per task); the full
        // tables end with it.
        if args.table == TableKind::Full {
            for line in rtgauge_report::summary::answers(result) {
                println!("{line}");
            }
        }
        eprint!(
            "{}",
            super::warnings::short_text(result, args.mode.is_empty(), output)
        );
    }
    if result.status == RunStatus::Interrupted {
        eprintln!("rtgauge: interrupted; the result holds what was measured");
    }
    if result.status == RunStatus::Broken {
        eprintln!("rtgauge: --break: a wake-up crossed the limit; the run stopped there");
    }
    println!("result: {}", output.display());
    if !args.quiet && args.table == TableKind::Summary {
        println!("full tables: rtgauge show {}", output.display());
    }
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
    // Before any early exit: a lab gets every measurement, also of a run that failed a probe.
    if args.lava {
        let checked = spec.map(|spec| rtgauge_report::check_result(result, spec));
        super::lava::emit(&rtgauge_report::lava::LabResults::of(
            result,
            checked.as_ref(),
        ))?;
    }
    let failed: Vec<String> = result
        .runs
        .iter()
        .filter_map(|r| match &r.status {
            rtgauge_result::ProbeStatus::Failed { error } => Some(format!("{}: {error}", r.key())),
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
                "rtgauge: max latency {} ({}) exceeds --max-latency {}",
                units::format_duration_ns(max),
                run.series_key(series),
                units::format_duration_ns(limit)
            );
            return Ok(crate::EXIT_THRESHOLD);
        }
    }
    let misses: Vec<String> = result
        .runs
        .iter()
        .flat_map(rtgauge_probes::threshold_failures)
        .collect();
    if !misses.is_empty() {
        for m in &misses {
            eprintln!("rtgauge: {m}");
        }
        return Ok(crate::EXIT_THRESHOLD);
    }
    if let (Some(checked), Some(spec_path)) = (checked, &args.spec) {
        print!(
            "{}",
            checked.render(Format::Text(crate::display::text_style()))?
        );
        if !checked.passed {
            eprintln!("rtgauge: limits of {} exceeded", spec_path.display());
            return Ok(crate::EXIT_THRESHOLD);
        }
    }
    Ok(crate::EXIT_OK)
}

/// How long each probe run should take (warm-up + duration, or the duration alone where the
/// probe shares it among its cells, warm-ups included), in the runner's order: every
/// probe, in every mode (once for a mode-independent one), under every load. None where only
/// a sample count bounds it.
fn probe_run_estimates(plan: &Plan) -> Vec<Option<u64>> {
    let loads = plan.loads.len().max(1);
    (0..loads)
        .flat_map(|_| plan.modes.iter().flat_map(|mode| plan.probes_in(mode)))
        .map(|r| r.probe().wall_time_ns(&r.budget, r.warmup_ns))
        .collect()
}

/// `20261122T051234Z` from Unix seconds.
fn compact_utc(secs: u64) -> String {
    rtgauge_result::units::utc(secs * 1_000_000_000, "%Y%m%dT%H%M%SZ")
}

/// `--duration forever`: a soak run (commands/soak.rs).
fn soak(args: &RunArgs) -> bool {
    args.duration == Some(crate::cli::FOREVER)
}

/// The probes and `--set` values, with `--tasks FILE` as the taskset probe's `tasks`
/// parameter: alone, it selects the taskset probe.
fn task_set(args: &RunArgs) -> Result<(Vec<String>, Vec<String>)> {
    let mut probes = args.probes.clone();
    let mut settings = super::app::settings(args)?;
    if let Some(path) = &args.tasks {
        let runs_taskset = |p: &String| names::selects(p, TASKSET);
        if probes.is_empty() && args.suite.is_none() {
            probes.push(TASKSET.into());
        } else if !probes.is_empty() && !probes.iter().any(runs_taskset) {
            anyhow::bail!(
                "--tasks is the task set of the taskset probe; add taskset to the probes (`rtgauge run taskset --tasks {}`)",
                path.display()
            );
        }
        settings.push(format!("{TASKSET}.tasks={}", path.display()));
    }
    let runs_taskset = probes.iter().any(|p| names::selects(p, TASKSET));
    let tasks_key = format!("{TASKSET}.tasks=");
    let given = settings
        .iter()
        .any(|s| s.starts_with(&tasks_key) || s.starts_with("tasks="));
    if runs_taskset && args.suite.is_none() && !given {
        anyhow::bail!(rtgauge_probes::taskset::NO_TASKS);
    }
    Ok((probes, settings))
}

/// Runs whose probes measure this long (or soaks) explain their late wake-ups by default.
pub const TRACE_BY_DEFAULT_FROM_NS: u64 = 60_000_000_000;

/// The command line as plan options; the core validates them into a plan.
fn build_plan(args: &RunArgs) -> Result<Plan> {
    if soak(args) && !args.record.is_empty() {
        anyhow::bail!("--record cannot be used with --duration forever (each window would replace the last one's recording); give a --duration instead");
    }
    if !soak(args) && args.soak_window.is_some() {
        anyhow::bail!(
            "--soak-window only applies to --duration forever; use --duration alone for one window"
        );
    }
    let defaults = PlanOptions::default();
    let (probes, settings) = task_set(args)?;
    let options = PlanOptions {
        probes,
        suite: args.suite.clone(),
        duration_ns: if soak(args) {
            Some(args.soak_window.unwrap_or(super::soak::DEFAULT_WINDOW_NS))
        } else {
            args.duration
        },
        loops: args.loops,
        warmup_ns: args.warmup,
        period_ns: args.period,
        timer: args.timer.clone(),
        cpus: args.cpus.clone(),
        modes: args.mode.clone(),
        priority: args.priority,
        policy: args.policy,
        dl_runtime_ns: args.dl_runtime.unwrap_or(defaults.dl_runtime_ns),
        load: args.load.clone(),
        load_cpus: args.load_cpus.clone(),
        load_disk_cap_bytes: args.load_disk_cap.unwrap_or(defaults.load_disk_cap_bytes),
        skip_failed_loads: args.skip_failed_loads,
        settings,
        best_effort: args.best_effort,
        record: args.record.clone(),
    };
    let mut plan = plan::build(&options, &rtgauge_sysinfo::online_cpus())?;
    // Long runs explain their spikes unless told not to: the one that matters comes once in
    // hours, and nobody can run it again with --trace.
    let long = soak(args)
        || plan
            .probes
            .iter()
            .any(|r| r.budget.duration_ns >= Some(TRACE_BY_DEFAULT_FROM_NS));
    let by_default = long && !args.trace && !args.no_trace;
    plan.spikes = rtgauge_core::spikes::SpikeSettings {
        trace: args.trace || by_default,
        by_default,
        above_ns: args.trace_above,
        max_spikes: args
            .trace_max
            .unwrap_or(rtgauge_core::spikes::DEFAULT_MAX_SPIKES),
        break_ns: args.break_at,
    };
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spikes_of(line: &str) -> rtgauge_core::spikes::SpikeSettings {
        use clap::Parser;
        let words = ["rtgauge", "run"].into_iter().chain(line.split(' '));
        let cli = crate::cli::Cli::try_parse_from(words).unwrap();
        let crate::cli::Command::Run(args) = cli.command else {
            panic!("not a run");
        };
        rtgauge_probes::register_built_in();
        build_plan(&args).unwrap().spikes
    }

    /// A minute of measuring (or a soak) is traced without --trace, with the flight
    /// recorder only; shorter runs only when asked; --no-trace turns the default off.
    #[test]
    fn runs_of_a_minute_or_more_and_soaks_are_traced_by_default() {
        let short = spikes_of("cyclic --cpus 0 -d 59s");
        assert!(!short.trace && !short.by_default);
        let long = spikes_of("cyclic --cpus 0 -d 1m");
        assert!(long.trace && long.by_default);
        let soak = spikes_of("cyclic --cpus 0 -d forever");
        assert!(soak.trace && soak.by_default);
        let off = spikes_of("cyclic --cpus 0 -d 1m --no-trace");
        assert!(!off.trace);
        let asked = spikes_of("cyclic --cpus 0 -d 1s --trace");
        assert!(asked.trace && !asked.by_default);
        let asked_long = spikes_of("cyclic --cpus 0 -d 10m --trace");
        assert!(asked_long.trace && !asked_long.by_default);
    }

    #[test]
    fn compact_utc_is_a_calendar_date() {
        assert_eq!(compact_utc(0), "19700101T000000Z");
        assert_eq!(compact_utc(1_795_000_000), "20261118T110640Z");
    }
}
