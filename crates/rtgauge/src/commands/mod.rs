//! One function per sub-command; each returns the exit status.

mod ab;
mod app;
mod check;
mod compare;
mod doctor;
mod export;
mod fallback;
mod forced_exit;
mod history;
mod import;
mod lava;
mod loads;
mod monitor;
mod probes;
mod recordings;
mod report;
mod run;
mod show;
mod soak;
#[cfg(feature = "network")]
mod submit;
/// The small build has no network client: `submit squad` stays and says so.
#[cfg(not(feature = "network"))]
mod submit {
    pub fn squad(_: crate::cli::SquadArgs) -> anyhow::Result<u8> {
        anyhow::bail!(
            "submit squad: this build has no network client (the small build leaves it out); use the full build (rtgauge-VERSION-ARCH-linux.tar.gz), or copy the results to a machine that has it and submit from there"
        )
    }
}
mod suites;
mod trend;
mod tune;
mod warnings;

use crate::cli::{Cli, Command};
use anyhow::Result;
use clap::CommandFactory;
use rtgauge_result::output;
use std::path::Path;
pub use tune::TuneArgs;

pub fn dispatch(cli: Cli, args: Vec<String>) -> Result<u8> {
    match cli.command {
        Command::Run(run_args) => run::run(*run_args, args),
        Command::Attach(a) => run::run(app::attach(*a)?, args),
        Command::Probes(a) => probes::list(a.json),
        Command::Doctor(a) => doctor::doctor(a),
        Command::Loads(a) => loads::list(a.json),
        Command::Suites { suite, json } => suites::suites(suite, json),
        Command::Show(a) => show::show(a),
        Command::Report(a) => report::report(a),
        Command::Compare(a) => compare::compare(a),
        Command::Check(a) => check::check(a),
        Command::Export(a) => export::export(a),
        Command::History(a) => history::history(a),
        Command::Baseline(a) => history::baseline(a),
        Command::Ab(a) => ab::ab(a),
        Command::Import(a) => import::import(a),
        Command::Trend(a) => trend::trend(a),
        Command::Monitor(a) => monitor::monitor(*a, args),
        Command::Tune(a) => tune::tune(*a),
        Command::Submit(crate::cli::SubmitTarget::Squad(a)) => submit::squad(a),
        Command::Schema { tune } => {
            print!("{}", if tune { tune_schema() } else { result_schema() });
            Ok(crate::EXIT_OK)
        }
        Command::Man { dir } => {
            output::check_directory(&dir)?;
            let mut cli = Cli::command().disable_help_subcommand(true);
            cli.build();
            write_man_pages(cli, &dir)?;
            Ok(crate::EXIT_OK)
        }
        Command::Completions { shell, dir } => {
            std::fs::create_dir_all(&dir)?;
            let file = clap_complete::generate_to(shell, &mut Cli::command(), "rtgauge", &dir)?;
            println!("{}", file.display());
            Ok(crate::EXIT_OK)
        }
    }
}

/// One page per command and visible sub-command (as clap_mangen::generate_to names them),
/// each written through the output module like every other file.
/// The result document's JSON Schema. The full build derives it from the types, so
/// `rtgauge schema > docs/result.schema.json` regenerates the committed file (a test compares
/// the two); the small build prints that committed file, embedded, and leaves the generator
/// out (docs/targets.md gives the bytes saved).
#[cfg(feature = "schema-generator")]
fn result_schema() -> String {
    rtgauge_result::json_schema()
}

#[cfg(not(feature = "schema-generator"))]
fn result_schema() -> String {
    include_str!("../../../../docs/result.schema.json").to_string()
}

/// The trials document's JSON Schema (docs/tune.schema.json), as [`result_schema`].
#[cfg(feature = "schema-generator")]
fn tune_schema() -> String {
    rtgauge_result::tune::json_schema()
}

#[cfg(not(feature = "schema-generator"))]
fn tune_schema() -> String {
    include_str!("../../../../docs/tune.schema.json").to_string()
}

fn write_man_pages(cmd: clap::Command, dir: &Path) -> Result<()> {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        write_man_pages(sub.clone(), dir)?;
    }
    let page = clap_mangen::Man::new(cmd);
    let mut roff = Vec::new();
    page.render(&mut roff)?;
    output::write(&dir.join(page.get_filename()), &roff)?;
    Ok(())
}

/// A mistyped probe or suite name gets a "did you mean" (`cyclc` → `cyclic`); other errors
/// pass unchanged.
pub fn with_suggestion(e: anyhow::Error) -> anyhow::Error {
    use rtgauge_core::plan::PlanError;
    use rtgauge_result::units::did_you_mean;
    match e.downcast_ref::<PlanError>() {
        Some(PlanError::UnknownProbe(name)) => {
            let known = rtgauge_core::registry::names();
            let typed = name.split('@').next().unwrap_or(name);
            let hint = did_you_mean(typed, known.split(", "));
            anyhow::anyhow!("unknown probe '{name}'{hint}; known probes: {known}")
        }
        Some(PlanError::UnknownSuite(name)) => {
            let hint = did_you_mean(name, ["quick", "standard", "full"]);
            anyhow::anyhow!(
                "unknown suite '{name}'{hint}; built-in suites: quick, standard, full, or give the path of a suite file (.toml)"
            )
        }
        _ => e,
    }
}
