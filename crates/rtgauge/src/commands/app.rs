//! The app probe's command line: `rtgauge run app -- APPLICATION` and `rtgauge attach PID`,
//! both turned into the app probe's parameters so the plan, the runner and the result treat
//! the application like any probe.

use crate::cli::{AttachArgs, RunArgs};
use anyhow::{bail, Result};
use rtgauge_probes::names::{self, APP};

/// Whether the run's probes include the app probe (`app` or `app@variant`).
fn runs_app(args: &RunArgs) -> bool {
    args.probes.iter().any(|p| names::selects(p, APP))
}

/// The run's `--set` values, plus `app.command` from the words after `--`.
pub fn settings(args: &RunArgs) -> Result<Vec<String>> {
    let mut settings = args.settings.clone();
    if args.application.is_empty() {
        let given = |key: &str| {
            settings
                .iter()
                .any(|s| s.starts_with(&format!("{APP}.{key}=")))
        };
        if runs_app(args) && !given("command") && !given("pid") {
            bail!(rtgauge_probes::app::NO_APPLICATION);
        }
        return Ok(settings);
    }
    if !runs_app(args) {
        bail!(
            "the words after -- are the application of the app probe; run `rtgauge run app -- {}`",
            args.application.join(" ")
        );
    }
    let words = args.application.iter().map(String::as_str);
    let Ok(command) = shlex::try_join(words) else {
        bail!("the application's arguments hold a NUL byte; remove it");
    };
    settings.push(format!("{APP}.command={command}"));
    Ok(settings)
}

/// `rtgauge attach PID [run options]` as the run it is: the app probe on that process.
pub fn attach(args: AttachArgs) -> Result<RunArgs> {
    let mut run = args.run;
    if !run.probes.is_empty() {
        bail!(
            "attach collects one application's points and runs no probe; drop '{}' or use `rtgauge run`",
            run.probes.join(" ")
        );
    }
    if !run.application.is_empty() {
        bail!(
            "attach joins a running process; to start the application use `rtgauge run app -- {}`",
            run.application.join(" ")
        );
    }
    rtgauge_probes::app::check_attachable(args.pid).map_err(anyhow::Error::msg)?;
    run.probes = vec![APP.into()];
    run.settings.push(format!("{APP}.pid={}", args.pid));
    Ok(run)
}
