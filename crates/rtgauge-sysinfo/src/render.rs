//! Presenting doctor verdicts: the text report, the fix script, the exit code and the short
//! warnings attached to a measurement run.

use crate::checks::{Check, Status};

/// Width at which `why` and `fix` texts are wrapped.
const WRAP: usize = 100;

fn colored(status: Status, text: &str, color: bool) -> String {
    if !color {
        return text.to_string();
    }
    let code = match status {
        Status::Ok => "32",
        Status::Warn => "33",
        Status::Fail => "1;31",
        Status::Unknown => "90",
    };
    format!("\x1b[{code}m{text}\x1b[0m")
}

/// Greedy word wrap of one paragraph; every line gets `indent` in front.
fn wrap(text: &str, indent: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && indent.len() + line.len() + 1 + word.len() > width {
            out.push_str(indent);
            out.push_str(&line);
            out.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        out.push_str(indent);
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// The human report: one block per check, status tag and title aligned, then what was found.
/// For anything but ok, `why` and `fix` follow on indented lines (fix lines kept as written,
/// since they are commands).
pub fn render_text(checks: &[Check], color: bool) -> String {
    let title_w = checks
        .iter()
        .map(|c| c.title.chars().count())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for c in checks {
        let tag = format!("[{:^4}]", c.status.tag());
        let pad = title_w - c.title.chars().count();
        out.push_str(&format!(
            "{} {}{}  {}\n",
            colored(c.status, &tag, color),
            c.title,
            " ".repeat(pad),
            c.found
        ));
        if c.status != Status::Ok {
            out.push_str(&wrap(&format!("why: {}", c.why), "       ", WRAP));
            if let Some(fix) = &c.fix {
                // Each fix line is one command or remedy: wrapped lines get a deeper indent so
                // they read as continuations, not as separate commands.
                for (i, line) in fix.lines().enumerate() {
                    let prefix = if i == 0 { "fix: " } else { "     " };
                    let wrapped = if line.chars().count() <= WRAP - 12 {
                        format!("{line}\n") // fits: keep the command exactly as written
                    } else {
                        wrap(line, "", WRAP - 14)
                    };
                    for (j, part) in wrapped.lines().enumerate() {
                        let lead = if j == 0 { prefix } else { "       " };
                        out.push_str(&format!("       {lead}{part}\n"));
                    }
                }
            }
        }
    }
    let count = |s: Status| checks.iter().filter(|c| c.status == s).count();
    out.push_str(&format!(
        "\n{} ok, {} warn, {} fail, {} unknown\n",
        count(Status::Ok),
        count(Status::Warn),
        count(Status::Fail),
        count(Status::Unknown)
    ));
    out
}

/// Programs a fix line may start with to be offered as a command in the fix script. A line
/// that starts otherwise is an explanation (boot parameters, configuration file lines).
const COMMANDS: [&str; 9] = [
    "sysctl",
    "echo",
    "cpupower",
    "systemctl",
    "setcap",
    "swapoff",
    "for",
    "chrt",
    "taskset",
];

/// One line of a fix as the script shows it: explanations first, then the commands in it.
enum ScriptLine<'a> {
    Explanation(&'a str),
    Command(&'a str),
}

/// Splits one fix line into its explanation and the commands it names: a command after the
/// last `: ` (or the whole line) that starts with one of [`COMMANDS`], and every `quoted`
/// span with a space in it (single words in backquotes are boot parameters, not commands).
fn script_lines(line: &str) -> Vec<ScriptLine<'_>> {
    let is_command = |text: &str| {
        text.split_whitespace()
            .next()
            .is_some_and(|w| COMMANDS.contains(&w))
    };
    let (prose, tail) = match line.rsplit_once(": ") {
        Some((before, after)) if is_command(after) => (Some(before), Some(after)),
        _ if is_command(line) => (None, Some(line)),
        _ => (Some(line), None),
    };
    let mut out = Vec::new();
    if let Some(prose) = prose {
        out.push(ScriptLine::Explanation(prose));
        let quoted = prose.split('`').skip(1).step_by(2);
        out.extend(quoted.filter(|q| q.contains(' ')).map(ScriptLine::Command));
    }
    out.extend(tail.map(ScriptLine::Command));
    out
}

/// The fixes of all non-ok checks as a shell script that does nothing as it stands: every
/// command is commented out with `# ` (a reviewer removes the `# ` of what they want) and
/// every explanation with `## `, so that it stays a comment. rtgauge never runs any of it.
pub fn render_fix_hints(checks: &[Check]) -> String {
    let mut out = String::from(
        "#!/bin/sh\n\
         ## rtgauge doctor: suggested fixes. Nothing here has been run.\n\
         ## Lines starting with '# ' are commands: remove the '# ' to run one; lines starting\n\
         ## with '## ' explain. Most need root, boot parameters need a reboot, and some trade\n\
         ## security or power for latency.\n",
    );
    let mut any = false;
    for c in checks.iter().filter(|c| c.status != Status::Ok) {
        let Some(fix) = &c.fix else { continue };
        any = true;
        out.push_str(&format!(
            "\n## [{}] {} ({}): {}\n",
            c.status.tag().to_lowercase(),
            c.title,
            c.id,
            c.found.replace('\n', " ")
        ));
        for line in fix.lines() {
            for part in script_lines(line) {
                match part {
                    ScriptLine::Explanation(text) => out.push_str(&format!("##   {text}\n")),
                    ScriptLine::Command(command) => out.push_str(&format!("# {command}\n")),
                }
            }
        }
    }
    if !any {
        out.push_str("\n## nothing to fix\n");
    }
    out
}

/// The process exit status for `rtgauge doctor`: 2 when any check is [`Status::Fail`]
/// (measurements on this machine would be invalid), 0 otherwise. Warnings and unknowns do
/// not change it, so scripts can gate on "measurable at all" (exit status 1 stays reserved
/// for errors of the tool itself).
pub fn exit_code(checks: &[Check]) -> i32 {
    if checks.iter().any(|c| c.status == Status::Fail) {
        2
    } else {
        0
    }
}

/// One-line warnings to attach to a measurement run: every warn and fail, shortest form
/// (`title: found`, failures marked). Unknowns are left out: they say the doctor could not
/// look, not that the run is weakened; `rtgauge doctor` reports them.
pub fn run_warnings(checks: &[Check]) -> Vec<String> {
    checks
        .iter()
        .filter_map(|c| match c.status {
            Status::Warn => Some(format!("{}: {}", c.title, c.found)),
            Status::Fail => Some(format!("{} (invalidates results): {}", c.title, c.found)),
            Status::Ok | Status::Unknown => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(id: &str, status: Status, fix: Option<&str>) -> Check {
        Check {
            id: id.into(),
            title: format!("Title {id}"),
            status,
            found: format!("found {id}"),
            why: "because ".repeat(30),
            fix: fix.map(String::from),
        }
    }

    #[test]
    fn text_aligns_and_shows_why_and_fix_only_when_not_ok() {
        let checks = vec![
            check("a", Status::Ok, Some("never shown")),
            check("long_one", Status::Warn, Some("cmd one\ncmd two")),
        ];
        let t = render_text(&checks, false);
        assert!(t.starts_with("[ OK ] Title a         found a\n"), "{t}");
        assert!(t.contains("[WARN] Title long_one  found long_one\n"));
        assert!(!t.contains("never shown"));
        assert!(t.contains("       fix: cmd one\n            cmd two\n"));
        assert!(t.lines().all(|l| l.chars().count() <= WRAP), "{t}");
        assert!(t.ends_with("1 ok, 1 warn, 0 fail, 0 unknown\n"));
        assert!(render_text(&checks, true).contains("\x1b[33m[WARN]\x1b[0m"));
    }

    #[test]
    fn fix_hints_are_all_comments() {
        let checks = vec![
            check("a", Status::Ok, Some("rm -rf /")),
            check("b", Status::Fail, Some("sysctl -w x=1\necho y")),
        ];
        let s = render_fix_hints(&checks);
        assert!(s.lines().all(|l| l.is_empty() || l.starts_with('#')), "{s}");
        assert!(s.contains("# sysctl -w x=1\n# echo y\n"));
        assert!(!s.contains("rm -rf"));
        assert!(render_fix_hints(&checks[..1]).contains("## nothing to fix"));
    }

    #[test]
    fn fix_lines_split_into_explanations_and_the_commands_they_name() {
        let parts = |line| {
            script_lines(line)
                .into_iter()
                .map(|p| match p {
                    ScriptLine::Explanation(t) => format!("## {t}"),
                    ScriptLine::Command(t) => format!("# {t}"),
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(
            parts("now: for i in 1; do echo 0 > /proc/irq/$i/smp_affinity_list; done"),
            [
                "## now",
                "# for i in 1; do echo 0 > /proc/irq/$i/smp_affinity_list; done"
            ]
        );
        assert_eq!(
            parts("add `preempt=full` (or `echo full > /x`)"),
            [
                "## add `preempt=full` (or `echo full > /x`)",
                "# echo full > /x"
            ]
        );
        assert_eq!(
            parts("add to the kernel command line: isolcpus=1"),
            ["## add to the kernel command line: isolcpus=1"]
        );
    }

    #[test]
    fn exit_code_and_run_warnings() {
        let ok = check("a", Status::Ok, None);
        let warn = check("b", Status::Warn, None);
        let fail = check("c", Status::Fail, None);
        let unk = check("d", Status::Unknown, None);
        assert_eq!(exit_code(&[ok.clone(), warn.clone(), unk.clone()]), 0);
        assert_eq!(exit_code(&[ok.clone(), fail.clone()]), 2);
        assert_eq!(
            run_warnings(&[ok, warn, fail, unk]),
            vec![
                "Title b: found b".to_string(),
                "Title c (invalidates results): found c".to_string()
            ]
        );
    }
}
