//! `rtgauge ab`: two configurations measured in alternating rounds, compared run by run.

use crate::cli::{AbArgs, Cli, Command, RunArgs};
use anyhow::Result;
use clap::Parser;
use rtgauge_report::compare::compare_repeated;
use rtgauge_report::Render;
use rtgauge_result::{output, read_result};
use std::path::{Path, PathBuf};

/// Options `ab` sets itself; a configuration that names them is refused.
const OWN_OPTIONS: [&str; 5] = ["-o", "--output", "--repeat", "--force", "--no-report"];

pub fn ab(args: AbArgs) -> Result<u8> {
    output::check_directory(&args.output_dir)?;
    // Both configurations are parsed before the first sample.
    let a = configuration("CONFIG-A", &args.a, &args)?;
    let b = configuration("CONFIG-B", &args.b, &args)?;
    let (mut files_a, mut files_b) = (Vec::new(), Vec::new());
    for round in 1..=args.rounds {
        // A B, then B A: a slow drift of the machine weighs on both sides alike.
        let order = if round % 2 == 1 { [0, 1] } else { [1, 0] };
        for side in order {
            let (letter, config, files) = match side {
                0 => ("A", &a, &mut files_a),
                _ => ("B", &b, &mut files_b),
            };
            let path = round_file(&args.output_dir, letter, round);
            println!("round {round} of {}: {letter}", args.rounds);
            let (mut run_args, command_line) = config.clone();
            run_args.output = Some(path.clone());
            let code = super::run::run(run_args, command_line)?;
            if code != crate::EXIT_OK && code != crate::EXIT_THRESHOLD {
                return Ok(code);
            }
            files.push(path);
        }
    }
    let read = |files: &[PathBuf]| {
        files
            .iter()
            .map(|p| read_result(p))
            .collect::<Result<Vec<_>, _>>()
    };
    let name = |letter: &str, config: &str| format!("{letter} ({config})");
    let comparison = compare_repeated(
        &read(&files_a)?,
        &read(&files_b)?,
        [name("A", &args.a), name("B", &args.b)],
    );
    print!("{}", comparison.render(args.format.render())?);
    Ok(crate::EXIT_OK)
}

/// `rtgauge run` options in one string, parsed as `run` parses them, quiet and without a
/// report; the result path is set per round.
fn configuration(which: &str, text: &str, args: &AbArgs) -> Result<(RunArgs, Vec<String>)> {
    let words: Vec<String> = text.split_whitespace().map(str::to_string).collect();
    if let Some(own) = words
        .iter()
        .find(|w| OWN_OPTIONS.iter().any(|o| w.split('=').next() == Some(o)))
    {
        anyhow::bail!("{which} \"{text}\": {own} is set by `ab` itself (results go to --output-dir); leave it out");
    }
    let mut line = vec!["rtgauge".to_string(), "run".to_string()];
    line.extend(words);
    line.extend(["-q", "--no-report", "--force"].map(String::from));
    let cli = Cli::try_parse_from(&line).map_err(|e| {
        let text = e.render().to_string();
        let first = text
            .lines()
            .next()
            .unwrap_or("invalid options")
            .trim_start_matches("error: ");
        anyhow::anyhow!("{which} \"{}\": {first}", line[2..line.len() - 3].join(" "))
    })?;
    let Command::Run(mut run) = cli.command else {
        unreachable!("parsed as `rtgauge run`")
    };
    run.store = args.store.clone();
    Ok((*run, line))
}

/// Where round `round` of side `letter` is written.
fn round_file(dir: &Path, letter: &str, round: u32) -> PathBuf {
    dir.join(format!("{letter}-{round}.json"))
}
