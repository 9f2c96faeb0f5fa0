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
/// Exit status of `check --baseline` when a statistic could not be decided from the runs.
pub const EXIT_INCONCLUSIVE: u8 = 3;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    // Load workers are this same binary re-executed, so one file carries everything.
    if args.get(1).map(String::as_str) == Some(rtgauge_load::WORKER_ARG) {
        std::process::exit(rtgauge_load::worker_main(&args[2..]));
    }
    // Output piped into `head` ends quietly instead of panicking on a closed pipe.
    // SAFETY: restoring the default disposition of a signal before any thread exists.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    rtgauge_probes::register_built_in();
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            // --help and --version.
            let _ = e.print();
            return ExitCode::from(EXIT_OK);
        }
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            // Bare `rtgauge`: the short help says what it can do. Clap's own status would be
            // 2, which rtgauge reserves for exceeded thresholds.
            let _ = e.print();
            return ExitCode::from(EXIT_ERROR);
        }
        Err(e) => {
            eprintln!("rtgauge: {}", clap_error_line(&e.render().to_string()));
            eprintln!("rtgauge: see `{} --help`", help_for(&args));
            return ExitCode::from(EXIT_ERROR);
        }
    };
    display::set_color(cli.color);
    display::fit_width();
    match commands::dispatch(cli, args) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("rtgauge: {}", one_line(&commands::with_suggestion(e)));
            ExitCode::from(EXIT_ERROR)
        }
    }
}

/// The command whose help explains a refused command line: `rtgauge run` for a bad value
/// given to `run`, `rtgauge baseline set` for one of `baseline set`, else `rtgauge`.
fn help_for(args: &[String]) -> String {
    use clap::CommandFactory;
    let mut command = cli::Cli::command();
    let mut path = vec!["rtgauge".to_string()];
    for arg in args.iter().skip(1) {
        if arg == "--" {
            break;
        }
        let Some(sub) = command
            .get_subcommands()
            .find(|s| s.get_name() == arg || s.get_all_aliases().any(|a| a == arg))
            .cloned()
        else {
            continue;
        };
        path.push(sub.get_name().to_string());
        command = sub;
    }
    path.join(" ")
}

/// Clap's error on one line: its first paragraph, whose lines after the first name what it is
/// about (the missing arguments), joined; the usage and the hint that follow are dropped.
fn clap_error_line(rendered: &str) -> String {
    let mut lines = rendered
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .map(str::trim);
    let first = lines
        .next()
        .unwrap_or("invalid arguments")
        .trim_start_matches("error: ");
    let named: Vec<&str> = lines.collect();
    if named.is_empty() {
        first.to_string()
    } else {
        format!("{} {}", first, named.join(", "))
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

#[cfg(test)]
mod tests {
    use super::{clap_error_line, help_for};

    #[test]
    fn a_refused_command_line_points_at_its_subcommand_help() {
        let args = |line: &str| line.split(' ').map(String::from).collect::<Vec<_>>();
        assert_eq!(
            help_for(&args("rtgauge run cyclic --period abc")),
            "rtgauge run"
        );
        assert_eq!(
            help_for(&args("rtgauge baseline set latest --nme x")),
            "rtgauge baseline set"
        );
        assert_eq!(help_for(&args("rtgauge --bogus")), "rtgauge");
    }

    #[test]
    fn missing_arguments_are_named_on_the_error_line() {
        let rendered = "error: the following required arguments were not provided:\n  \
                        --spec <SPEC>\n  <RESULT>\n\nUsage: rtgauge check --spec <SPEC> \
                        <RESULT>\n\nFor more information, try '--help'.\n";
        assert_eq!(
            clap_error_line(rendered),
            "the following required arguments were not provided: --spec <SPEC>, <RESULT>"
        );
        assert_eq!(
            clap_error_line("error: unexpected argument '--x' found\n\nUsage: rtgauge\n"),
            "unexpected argument '--x' found"
        );
    }
}
