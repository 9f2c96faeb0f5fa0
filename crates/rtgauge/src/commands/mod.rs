//! One function per sub-command; each returns the exit status.

mod probes;
mod run;

use crate::cli::{Cli, Command};
use anyhow::Result;
use clap::CommandFactory;

pub fn dispatch(cli: Cli, args: Vec<String>) -> Result<u8> {
    match cli.command {
        Command::Run(run_args) => run::run(run_args, args),
        Command::Probes => probes::list(),
        Command::Doctor(_) => anyhow::bail!("doctor is not available in this build"),
        Command::Schema => {
            print!("{}", rtgauge_result::json_schema());
            Ok(crate::EXIT_OK)
        }
        Command::Man => {
            let man = clap_mangen::Man::new(Cli::command());
            man.render(&mut std::io::stdout())?;
            Ok(crate::EXIT_OK)
        }
    }
}
