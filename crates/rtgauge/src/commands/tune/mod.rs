//! `rtgauge tune`: tries each runtime fix doctor's findings call for on this machine, one at
//! a time against the unchanged machine in interleaved rounds, keeps what helps (with
//! --keep) and restores everything else.
//!
//! The stages: the options and the loop to measure ([`Loop`]) · the settings that apply here
//! ([`settings`]) · the state file and lock that make every change undoable ([`state`]) · the
//! trials ([`trial`]) · the boot-time fixes ([`boot`]) · the output ([`render`], [`profile`]).

mod boot;
mod profile;
mod render;
mod settings;
mod state;
mod trial;

use anyhow::{Context, Result};
use clap::Args;
use rtgauge_probes::names;
use rtgauge_sysinfo::format_cpu_list;
use settings::{Candidate, Finding, Root, Skipped};
use state::{Lock, State};
use std::path::{Path, PathBuf};
use trial::{Rounds, Trial, TrialError, Verdict};

pub use state::left_behind_warning;

#[derive(Debug, Args)]
pub struct TuneArgs {
    /// CPUs the loop runs on [default: the last online CPU; the others keep the housekeeping
    /// work that tune moves away]
    #[arg(short, long, value_name = "CPUS")]
    pub cpus: Option<String>,

    /// The probe that measures the loop: cyclic (a periodic wake-up at --period) or taskset
    /// (your tasks, --tasks).
    #[arg(long, value_name = "PROBE", default_value = names::CYCLIC, value_parser = [names::CYCLIC, names::TASKSET])]
    pub probe: String,

    /// Your task set (as `run --tasks`); implies --probe taskset.
    #[arg(long, value_name = "FILE")]
    pub tasks: Option<PathBuf>,

    /// Period of the cyclic loop.
    #[arg(short, long, value_name = "PERIOD", default_value = "1ms", value_parser = crate::cli::period)]
    pub period: u64,

    /// Background load during every round (as `run --load`), e.g. cpu or cpu+io.
    #[arg(short, long, value_name = "LOAD")]
    pub load: Option<String>,

    /// Rounds of each side per trial (A B, B A, …).
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u32).range(2..=50))]
    pub rounds: u32,

    /// Time for all trials together; each round gets its share (at least 1 s).
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = crate::cli::duration)]
    pub budget: u64,

    /// Try only these settings (comma-separated names, as the dry run lists them).
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    pub only: Vec<String>,

    /// Never touch these settings.
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    pub skip: Vec<String>,

    /// Change settings and measure. Without it, a dry run: what would be tried, why, and how
    /// it would be restored; nothing is written anywhere.
    #[arg(long)]
    pub apply: bool,

    /// Leave the changes that helped in place (until reboot); everything else is restored.
    #[arg(long, requires = "apply")]
    pub keep: bool,

    /// Write the trials (every setting, its values, both sides' figures, the verdict) as
    /// JSON; the rounds' results go beside it, in FILE's name with .rounds.
    #[arg(short, long, value_name = "FILE", requires = "apply")]
    pub output: Option<PathBuf>,

    /// Write what helped as a profile into DIR: a sysctl.d file, a tuned profile, a systemd
    /// unit for the other writes, and the kernel command line.
    #[arg(long, value_name = "DIR", requires = "apply")]
    pub write_profile: Option<PathBuf>,

    /// Do not keep this tune in the run history (where `history` lists it).
    #[arg(long, env = "RTGAUGE_NO_STORE", value_parser = clap::builder::BoolishValueParser::new(), action = clap::ArgAction::SetTrue)]
    pub no_store: bool,

    #[command(flatten)]
    pub store: crate::cli::StoreArgs,

    /// Put back what the state file of a tune that did not finish (killed, power cut) holds.
    #[arg(long, conflicts_with_all = ["apply", "only", "skip", "tasks", "load"])]
    pub restore: bool,
}

/// The loop being tuned, as `rtgauge run` words and as the user reads it.
struct Loop {
    measured: Vec<usize>,
    housekeeping: Vec<usize>,
    run_words: Vec<String>,
    description: String,
}

impl Loop {
    fn of(args: &TuneArgs) -> Result<Loop> {
        let online = rtgauge_sysinfo::online_cpus();
        let measured = match &args.cpus {
            Some(list) => rtgauge_core::cpus::parse_cpus(list, &online)
                .map_err(|e| anyhow::anyhow!("--cpus: {e}"))?,
            None => online.last().copied().into_iter().collect(),
        };
        let housekeeping: Vec<usize> = online
            .iter()
            .copied()
            .filter(|c| !measured.contains(c))
            .collect();
        let cpus = format_cpu_list(&measured);
        let plural = if measured.len() == 1 { "" } else { "s" };
        let mut words = Vec::new();
        let mut description = match &args.tasks {
            Some(file) => {
                words.extend(["--tasks".to_string(), file.display().to_string()]);
                format!("the task set {} on CPU{plural} {cpus}", file.display())
            }
            None if args.probe == names::TASKSET => {
                anyhow::bail!("--probe taskset needs your tasks: add --tasks FILE")
            }
            None => {
                let p = rtgauge_result::units::format_duration_exact(args.period);
                words.extend([names::CYCLIC.into(), "-p".into(), p.clone()]);
                format!(
                    "a {} loop on CPU{plural} {cpus}",
                    rtgauge_result::units::format_duration_ns(args.period)
                )
            }
        };
        words.extend(["-c".to_string(), cpus]);
        if let Some(load) = &args.load {
            words.extend(["--load".to_string(), load.clone()]);
            description.push_str(&format!(" under load {load}"));
        }
        check_run_words(&words)?;
        Ok(Loop {
            measured,
            housekeeping,
            run_words: words,
            description,
        })
    }
}

/// Parses the round's command line as `run` would, so a bad --load or task file is refused
/// before anything changes.
fn check_run_words(words: &[String]) -> Result<()> {
    use clap::Parser;
    let line = ["rtgauge", "run"]
        .into_iter()
        .map(String::from)
        .chain(words.iter().cloned());
    crate::cli::Cli::try_parse_from(line).map_err(|e| {
        let text = e.render().to_string();
        let first = text.lines().next().unwrap_or("invalid options").to_string();
        anyhow::anyhow!("{}", first.trim_start_matches("error: "))
    })?;
    if let Some(at) = words.iter().position(|w| w == "--tasks") {
        let file = Path::new(&words[at + 1]);
        if !file.is_file() {
            anyhow::bail!("--tasks {}: no such file", file.display());
        }
    }
    Ok(())
}

pub fn tune(args: TuneArgs) -> Result<u8> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        anyhow::bail!(
            "rtgauge tune reads and changes kernel settings (sysctl, sysfs, debugfs): run it as \
             root (sudo rtgauge tune …); nothing was changed"
        );
    }
    if args.restore {
        return restore_left();
    }
    for name in args.only.iter().chain(&args.skip) {
        if !settings::NAMES.contains(&name.as_str()) {
            let hint = rtgauge_result::units::did_you_mean(name, settings::NAMES);
            anyhow::bail!(
                "unknown setting '{name}'{hint}; known: {}",
                settings::NAMES.join(", ")
            );
        }
    }
    let the_loop = Loop::of(&args)?;
    if args.apply {
        apply(&args, &the_loop)
    } else {
        dry_run(&args, &the_loop)
    }
}

/// The reason of the settings --only leaves out.
const NOT_IN_ONLY: &str = "not named by --only";

/// The catalogue for this loop, with --only and --skip applied.
fn findings(args: &TuneArgs, the_loop: &Loop, root: &Root) -> (Vec<Candidate>, Vec<Skipped>) {
    let scope = settings::Scope {
        root,
        measured: the_loop.measured.clone(),
        housekeeping: the_loop.housekeeping.clone(),
        config: rtgauge_sysinfo::kernel::kernel_config(&rtgauge_sysinfo::SysRoot::live()).ok(),
    };
    let (mut tried, mut skipped) = (Vec::new(), Vec::new());
    for f in settings::catalogue(&scope) {
        let name = match &f {
            Finding::Try(c) => c.name,
            Finding::Skip(s) => s.name,
        };
        let excluded = if args.skip.iter().any(|s| s == name) {
            Some("--skip names it: not touched")
        } else if !args.only.is_empty() && !args.only.iter().any(|s| s == name) {
            Some(NOT_IN_ONLY)
        } else {
            None
        };
        match (f, excluded) {
            (_, Some(why)) => skipped.push(Skipped {
                name,
                reason: why.into(),
            }),
            (Finding::Try(c), None) => tried.push(c),
            (Finding::Skip(s), None) => skipped.push(s),
        }
    }
    (tried, skipped)
}

fn dry_run(args: &TuneArgs, the_loop: &Loop) -> Result<u8> {
    let root = Root::live();
    let (tried, skipped) = findings(args, the_loop, &root);
    let boot = boot::fixes(&the_loop.measured, &the_loop.housekeeping);
    let round = round_ns(args, tried.len())?;
    print!(
        "{}",
        render::dry_run(&the_loop.description, &tried, &skipped, &boot, args, round)
    );
    Ok(crate::EXIT_OK)
}

/// Each round's share of the budget: every trial, and the combination, has 2 × rounds.
fn round_ns(args: &TuneArgs, trials: usize) -> Result<u64> {
    let rounds = (trials as u64 + 1) * 2 * u64::from(args.rounds);
    let ns = args.budget / rounds.max(1);
    if ns < 1_000_000_000 && trials > 0 {
        anyhow::bail!(
            "--budget {} leaves {} per round for {trials} change(s) × {} rounds (each side, plus \
             the combination): give at least {}",
            rtgauge_result::units::format_duration_ns(args.budget),
            rtgauge_result::units::format_duration_ns(ns),
            args.rounds,
            rtgauge_result::units::format_duration_exact(rounds * 1_000_000_000)
        );
    }
    // Whole milliseconds, so the round's -d is exact.
    Ok(ns / 1_000_000 * 1_000_000)
}

/// `tune --restore`: what the state file of an unfinished tune holds, put back.
fn restore_left() -> Result<u8> {
    let _lock = Lock::take()?;
    let Some(state) = State::load()? else {
        println!("nothing to restore: no tune left changes behind");
        return Ok(crate::EXIT_OK);
    };
    let errors = state.restore(&Root::live());
    // The killed tune's rounds, when they went to a temporary directory.
    let _ = std::fs::remove_dir_all(temporary_rounds_dir(state.pid));
    if errors.is_empty() {
        State::remove().context("removing the state file")?;
        println!(
            "restored {} file(s) as the tune of pid {} found them",
            state.writes.len(),
            state.pid
        );
        return Ok(crate::EXIT_OK);
    }
    for e in &errors {
        eprintln!("rtgauge: {e}");
    }
    anyhow::bail!(
        "{} setting(s) could not be restored; the state file {} is kept",
        errors.len(),
        state::state_path().display()
    )
}

/// Restores everything the state lists when dropped (normal end, error, panic), except what
/// `keep` left in place, then removes the state file.
struct Restorer {
    root: Root,
    state: State,
    done: bool,
}

impl Restorer {
    fn finish(&mut self) -> Vec<String> {
        self.done = true;
        let errors = self.state.restore(&self.root);
        if errors.is_empty() {
            if let Err(e) = State::remove() {
                return vec![format!("cannot remove the state file: {e}")];
            }
        }
        errors
    }
}

impl Drop for Restorer {
    fn drop(&mut self) {
        if !self.done {
            for e in self.finish() {
                eprintln!("rtgauge: {e}");
            }
        }
    }
}

pub use rtgauge_result::tune::TuneDocument;

fn apply(args: &TuneArgs, the_loop: &Loop) -> Result<u8> {
    let _lock = Lock::take()?;
    if let Some(path) = state::left_behind() {
        anyhow::bail!(
            "an earlier tune did not restore its changes ({} is left): run `rtgauge tune \
             --restore` first",
            path.display()
        );
    }
    let started = rtgauge_os::clock::unix_ns();
    rtgauge_core::signals::install();
    state::arm_forced_exit();
    let root = Root::live();
    let (mut guard, tried, skipped) = save_originals(args, the_loop, &root)?;
    if let Some(dir) = &args.write_profile {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("--write-profile {}", dir.display()))?;
    }
    let round = round_ns(args, tried.len())?;
    let rounds_dir = rounds_dir(args)?;
    let rounds = Rounds {
        exe: std::env::current_exe().context("cannot find the rtgauge binary")?,
        run_words: the_loop.run_words.clone(),
        rounds: args.rounds,
        round_ns: round,
        dir: rounds_dir.path(),
        root: &root,
    };
    print!(
        "{}",
        render::wrap(
            &format!(
                "{} change(s) to try on {}, {} rounds of {} per side; the state file {} holds \
                 the originals",
                tried.len(),
                the_loop.description,
                args.rounds,
                rtgauge_result::units::format_duration_ns(round),
                state::state_path().display()
            ),
            ""
        )
    );
    let (trials, combination) = match run_trials(&rounds, &tried) {
        Ok(t) => t,
        Err(TrialError::Interrupted) => {
            let sig = rtgauge_core::signals::stop_signal().unwrap_or(libc::SIGINT);
            println!("interrupted: restoring every setting");
            report_restore_errors(&guard.finish());
            return Ok(u8::try_from(128 + sig).unwrap_or(crate::EXIT_ERROR));
        }
        Err(e) => return Err(e.into()),
    };
    // Everything back as it was; then, with --keep, what helped goes in again.
    let errors = guard.finish();
    report_restore_errors(&errors);
    let kept = if args.keep && errors.is_empty() {
        keep(&root, &trials)
    } else {
        Vec::new()
    };
    let mut boot = boot::fixes(&the_loop.measured, &the_loop.housekeeping);
    boot::estimate(&mut boot, &trials);
    let boot = render::boot_fixes(boot);
    let read = |f: &str| std::fs::read_to_string(f).map(|s| s.trim().to_string());
    let document = TuneDocument {
        kind: rtgauge_result::tune::TUNE_KIND.into(),
        schema_version: rtgauge_result::tune::TUNE_SCHEMA_VERSION,
        tool: Some(rtgauge_result::Tool {
            name: "rtgauge".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        }),
        started_unix_ns: started,
        finished_unix_ns: rtgauge_os::clock::unix_ns(),
        host: read("/proc/sys/kernel/hostname").unwrap_or_default(),
        kernel_release: read("/proc/sys/kernel/osrelease").unwrap_or_default(),
        verdict: render::verdict_line(&the_loop.description, &trials, &combination, &boot),
        the_loop: the_loop.description.clone(),
        measured: format_cpu_list(&the_loop.measured),
        housekeeping: format_cpu_list(&the_loop.housekeeping),
        run_words: the_loop.run_words.clone(),
        rounds: args.rounds,
        round_ns: round,
        trials,
        combination,
        skipped: render::skipped(&skipped),
        boot,
        kept,
    };
    print!("{}", render::applied(&document));
    write_outputs(args, &document)?;
    Ok(if errors.is_empty() {
        crate::EXIT_OK
    } else {
        crate::EXIT_ERROR
    })
}

/// The settings to try, with every original saved to the state file before anything changes
/// (debugfs is mounted first when a setting needs it, and that is recorded before too).
fn save_originals(
    args: &TuneArgs,
    the_loop: &Loop,
    root: &Root,
) -> Result<(Restorer, Vec<Candidate>, Vec<Skipped>)> {
    let mut guard = Restorer {
        root: root.clone(),
        state: State {
            pid: std::process::id(),
            writes: Vec::new(),
            mounted_debugfs: false,
        },
        done: false,
    };
    let (mut tried, mut skipped) = findings(args, the_loop, root);
    if tried.iter().any(|c| c.needs_debugfs) {
        // Recorded before mounting: a killed tune's --restore unmounts it too.
        guard.state.mounted_debugfs = true;
        guard.state.save()?;
        if let Err(e) = state::mount_debugfs() {
            guard.state.mounted_debugfs = false;
            guard.state.save()?;
            eprintln!("rtgauge: cannot mount debugfs: {e}");
        }
        (tried, skipped) = findings(args, the_loop, root);
        tried.retain(|c| !c.needs_debugfs);
    }
    guard.state.writes = tried.iter().flat_map(|c| c.writes.clone()).collect();
    guard.state.save()?;
    Ok((guard, tried, skipped))
}

/// With --keep: the changes that were better, applied again; their names.
fn keep(root: &Root, trials: &[Trial]) -> Vec<String> {
    let mut kept = Vec::new();
    for t in trials
        .iter()
        .filter(|t| t.verdict() == Some(Verdict::Better))
    {
        match settings::apply(root, &candidate_of(t)) {
            Ok(_) => kept.push(t.name.clone()),
            Err(e) => eprintln!("rtgauge: {}: could not be kept: {e}", t.name),
        }
    }
    kept
}

fn write_outputs(args: &TuneArgs, document: &TuneDocument) -> Result<()> {
    if let Some(path) = &args.output {
        rtgauge_result::output::write(path, &rtgauge_result::tune::tune_bytes(document))?;
        println!("trials: {}", path.display());
    }
    if !args.no_store {
        let file = args.output.as_deref().map(|p| {
            std::path::absolute(p)
                .unwrap_or_else(|_| p.to_path_buf())
                .display()
                .to_string()
        });
        if let Some(line) = super::history::keep_tune(document, file.as_deref(), &args.store) {
            println!("{line}");
        }
    }
    if let Some(dir) = &args.write_profile {
        for written in profile::write(dir, document)? {
            println!("profile: {}", written.display());
        }
    }
    Ok(())
}

fn report_restore_errors(errors: &[String]) {
    for e in errors {
        eprintln!("rtgauge: not restored: {e}");
    }
    if !errors.is_empty() {
        eprintln!(
            "rtgauge: the state file {} is kept: run `rtgauge tune --restore` once the cause is \
             fixed",
            state::state_path().display()
        );
    }
}

/// The rounds' results: beside --output (kept), else in a directory removed at the end.
enum RoundsDir {
    Kept(PathBuf),
    Temporary(PathBuf),
}

impl RoundsDir {
    fn path(&self) -> &Path {
        match self {
            RoundsDir::Kept(p) | RoundsDir::Temporary(p) => p,
        }
    }
}

impl Drop for RoundsDir {
    fn drop(&mut self) {
        if let RoundsDir::Temporary(p) = self {
            let _ = std::fs::remove_dir_all(p);
        }
    }
}

/// Where the rounds of the tune with this pid go without --output.
fn temporary_rounds_dir(pid: u32) -> PathBuf {
    std::env::temp_dir().join(format!("rtgauge-tune-{pid}"))
}

fn rounds_dir(args: &TuneArgs) -> Result<RoundsDir> {
    let dir = match &args.output {
        Some(out) => RoundsDir::Kept(out.with_extension("rounds")),
        None => RoundsDir::Temporary(temporary_rounds_dir(std::process::id())),
    };
    std::fs::create_dir_all(dir.path())
        .with_context(|| format!("cannot create {}", dir.path().display()))?;
    Ok(dir)
}

fn candidate_of(t: &Trial) -> Candidate {
    Candidate {
        name: "",
        check: "",
        title: "",
        cost: "",
        change: t.change.clone(),
        writes: trial::setting_writes(&t.writes),
        needs_debugfs: false,
    }
}

/// Every candidate alone, then the ones that helped together (when more than one did).
fn run_trials(
    rounds: &Rounds,
    tried: &[Candidate],
) -> Result<(Vec<Trial>, Option<Trial>), TrialError> {
    let mut trials = Vec::new();
    for (i, c) in tried.iter().enumerate() {
        println!("{} of {}: {} ({})", i + 1, tried.len(), c.name, c.change);
        let mut t = trial::planned(c);
        trial::record(&mut t, rounds.trial(c.name, &c.writes))?;
        if let Some(j) = &t.judgement {
            let word = j.verdict.word();
            let back = if j.verdict == Verdict::Better {
                "restored until the end"
            } else {
                "restored"
            };
            println!("  {word}: {back}");
        }
        trials.push(t);
    }
    let Some(mut combination) = trial::combination_of(&trials) else {
        return Ok((trials, None));
    };
    println!("together: {}", combination.change);
    let writes = trial::setting_writes(&combination.writes);
    trial::record(&mut combination, rounds.trial("together", &writes))?;
    Ok((trials, Some(combination)))
}
