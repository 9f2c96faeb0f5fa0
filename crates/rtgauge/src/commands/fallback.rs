//! A first run without privileges: when no `--mode` was asked for and real-time priority
//! cannot be had, `rtgauge run` measures as best it can instead of stopping, and says in one
//! line which rows are not real-time and the command that makes them so. An explicit
//! `--mode rt` stays strict.

use crate::cli::RunArgs;
use rtgauge_core::plan::Plan;
use rtgauge_result::RunResult;

/// Switches the plan to best effort when the user left the mode to rtgauge and the real-time
/// modes cannot be entered here; returns why, for the notice. The plan is untouched
/// otherwise (an explicit `--mode` or `--best-effort` means what it says).
pub fn relax_unless_asked(args: &RunArgs, plan: &mut Plan) -> Option<String> {
    if !args.mode.is_empty() || plan.best_effort {
        return None;
    }
    let refusal = plan
        .modes
        .iter()
        .filter(|m| m.policy.is_realtime())
        .find_map(|m| rtgauge_core::rt::preflight(m).err())?;
    plan.best_effort = true;
    Some(refusal.to_string())
}

/// The run's start: what is about to happen instead of a refusal.
pub fn announce(reason: &str) -> String {
    let why = reason.split("; fix:").next().unwrap_or(reason);
    format!(
        "rtgauge: real-time mode is not available ({why}); measuring what can be measured, rows that are not real-time are labelled"
    )
}

/// One line naming the rows measured short of their mode, and the command that fixes it;
/// None when every row got what it asked for.
pub fn notice(result: &RunResult, command_line: &[String]) -> Option<String> {
    // `rt asked, normal obtained for cyclic, clock`: one group per label.
    let short = result
        .runs
        .iter()
        .filter(|r| !r.obtained.shortfalls.is_empty())
        .map(|run| (run.mode_label(), run.title()));
    let rows = super::warnings::titles_by_label(short)?;
    Some(format!(
        "NOT REAL-TIME: {rows}; run as root (or grant CAP_SYS_NICE and a memlock limit) for real-time numbers: sudo {}",
        shell_command(&without_output(command_line))
    ))
}

/// The command line without `-o FILE`: the repeated run would otherwise refuse to replace the
/// result this one wrote, and gets a fresh name instead.
fn without_output(words: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut skip_next = false;
    for w in words {
        if std::mem::take(&mut skip_next) {
            continue;
        }
        match w.as_str() {
            "-o" | "--output" => skip_next = true,
            _ if w.starts_with("--output=") || (w.starts_with("-o") && !w.starts_with("--")) => {}
            _ => out.push(w.clone()),
        }
    }
    out
}

/// The command line as it can be pasted back into a shell.
fn shell_command(words: &[String]) -> String {
    let quoted: Vec<String> = words
        .iter()
        .map(|w| {
            let plain = !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "@%+=:,./_-".contains(c));
            if plain {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', r"'\''"))
            }
        })
        .collect();
    quoted.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggested_command_leaves_out_the_result_path() {
        let words = [
            "rtgauge",
            "run",
            "-o",
            "a.json",
            "--output=b.json",
            "-oc.json",
            "-q",
        ];
        let words = words.map(String::from);
        assert_eq!(without_output(&words), ["rtgauge", "run", "-q"]);
    }

    #[test]
    fn command_is_quoted_for_the_shell() {
        let words = ["rtgauge", "run", "--load", "exec:sleep 1", "it's"].map(String::from);
        assert_eq!(
            shell_command(&words),
            r"rtgauge run --load 'exec:sleep 1' 'it'\''s'"
        );
    }
}
