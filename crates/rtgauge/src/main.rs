//! rtgauge: parse the command line, run the command, map the outcome to an exit status.

mod cli;
mod commands;
mod display;

use clap::Parser;
use std::process::ExitCode;

/// Exit status of a successful command.
pub const EXIT_OK: u8 = 0;
/// Exit status of any error a user can cause or the machine imposes.
pub const EXIT_ERROR: u8 = 1;
/// Exit status when a threshold was exceeded (or doctor found a failing check).
pub const EXIT_THRESHOLD: u8 = 2;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    // Load workers are this same binary re-executed, so one file carries everything.
    if args.get(1).map(String::as_str) == Some(rtgauge_load::WORKER_ARG) {
        std::process::exit(rtgauge_load::worker_main(&args[2..]));
    }
    // Output piped into `head` ends quietly instead of panicking on a closed pipe.
    // SAFETY: restoring the default disposition of a signal before any thread exists.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            // --help and --version.
            let _ = e.print();
            return ExitCode::from(EXIT_OK);
        }
        Err(e) => {
            // Clap would exit 2, which rtgauge reserves for exceeded thresholds.
            let rendered = e.render().to_string();
            let first = rendered.lines().next().unwrap_or("invalid arguments");
            eprintln!("rtgauge: {}", first.trim_start_matches("error: "));
            eprintln!("rtgauge: see `rtgauge --help`");
            return ExitCode::from(EXIT_ERROR);
        }
    };
    match commands::dispatch(cli, args) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("rtgauge: {}", one_line(&e));
            ExitCode::from(EXIT_ERROR)
        }
    }
}

/// The error and its causes on one line; a cause whose text the message already quotes
/// (library errors name their cause) is not repeated.
fn one_line(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if !line.contains(&text) {
            if !line.is_empty() {
                line.push_str(": ");
            }
            line.push_str(&text);
        }
    }
    line
}
