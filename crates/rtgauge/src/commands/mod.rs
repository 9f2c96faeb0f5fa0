//! One function per sub-command; each returns the exit status.

mod check;
mod compare;
mod doctor;
mod export;
mod loads;
mod probes;
mod recordings;
mod report;
mod run;
mod show;
mod suites;

use crate::cli::{Cli, Command};
use anyhow::Result;
use clap::CommandFactory;

pub fn dispatch(cli: Cli, args: Vec<String>) -> Result<u8> {
    match cli.command {
        Command::Run(run_args) => run::run(*run_args, args),
        Command::Probes => probes::list(),
        Command::Doctor(a) => doctor::doctor(a),
        Command::Loads => loads::list(),
        Command::Suites { suite } => suites::suites(suite),
        Command::Show(a) => show::show(a),
        Command::Report(a) => report::report(a),
        Command::Compare(a) => compare::compare(a),
        Command::Check(a) => check::check(a),
        Command::Export(a) => export::export(a),
        Command::Schema => {
            print!("{}", rtgauge_result::json_schema());
            Ok(crate::EXIT_OK)
        }
        Command::Man { dir } => {
            std::fs::create_dir_all(&dir)?;
            clap_mangen::generate_to(Cli::command(), &dir)?;
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
