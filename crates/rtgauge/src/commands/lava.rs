//! LAVA test cases from a result (`show --format lava`, `run --lava`): run through the
//! job's `lava-test-case` and `lava-test-set` when they are on PATH, printed otherwise.

use super::check::{judge, Baselines};
use crate::cli::{JudgeArgs, StoreArgs};
use anyhow::{Context, Result};
use rtgauge_report::lava::LabResults;
use rtgauge_report::{CheckReport, Spec};
use rtgauge_result::RunResult;
use std::path::{Path, PathBuf};

/// The verdict `--spec`/`--baseline` ask for, if any.
pub fn verdict(
    results: &[RunResult],
    judge_args: &JudgeArgs,
    store: &StoreArgs,
    imported: bool,
) -> Result<Option<CheckReport>> {
    let spec = judge_args.spec.as_deref().map(Spec::load).transpose()?;
    judge(
        results,
        spec.as_ref(),
        &Baselines {
            names: &judge_args.baseline,
            store,
            imported,
            regress: judge_args.regress.percent,
            stats: &judge_args.regress.stats,
        },
        judge_args.allow_incomplete,
    )
}

/// The exit status of a judged result, as `check` gives it: 2 a limit failed (or a case the
/// result judges itself, a missed deadline, failed), 3 a statistic undecided, else 0.
pub fn exit_status(check: Option<&CheckReport>, lab: &LabResults) -> u8 {
    match check {
        Some(c) if !c.passed => crate::EXIT_THRESHOLD,
        _ if rtgauge_report::lava::any_failed(lab) => crate::EXIT_THRESHOLD,
        Some(c) if c.inconclusive() > 0 => crate::EXIT_INCONCLUSIVE,
        _ => crate::EXIT_OK,
    }
}

/// `name` on PATH, as a shell would find it.
fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Reports the test cases: inside a LAVA job (`lava-test-case` on PATH) each line is run,
/// so LAVA records it; elsewhere the same lines are printed.
pub fn emit(lab: &LabResults) -> Result<()> {
    let Some(test_case) = on_path("lava-test-case") else {
        print!("{}", lab.render_shell());
        return Ok(());
    };
    // lava-test-set sits beside lava-test-case in every LAVA overlay.
    let test_set =
        on_path("lava-test-set").unwrap_or_else(|| test_case.with_file_name("lava-test-set"));
    for argv in lab.commands() {
        let program = if argv[0] == "lava-test-case" {
            &test_case
        } else {
            &test_set
        };
        let status = std::process::Command::new(program)
            .args(&argv[1..])
            .status()
            .with_context(|| {
                format!(
                    "cannot start {}; run outside LAVA, or repair the job's test shell",
                    program.display()
                )
            })?;
        anyhow::ensure!(
            status.success(),
            "{} {} failed ({status}); the remaining test cases were not reported",
            program.display(),
            argv[1..].join(" ")
        );
    }
    Ok(())
}
