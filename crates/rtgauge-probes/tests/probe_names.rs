//! Probe knowledge lives with the probes: outside `crates/rtgauge-probes` (and the suite
//! files, which are TOML), no Rust source names a probe. A renderer asks the registered probe
//! (its `SummaryRows`) or reads what the result document carries; a command or an importer
//! that works for one probe takes its name from `rtgauge_probes::names`.
//!
//! The names come from the probe registry, not from a list here, so a new probe is covered
//! the day it is registered. A hit is a string literal that is a probe's name, or starts with
//! it followed by `@` (a variant) or `.` (a parameter key). Test code is not counted: files
//! under `tests/`, `tests.rs` files and items marked `#[cfg(test)]`; nor are comments.

use std::path::{Path, PathBuf};

/// A literal that equals a probe's name but is not that probe's identity.
struct Allowed {
    /// From the workspace root.
    path: &'static str,
    /// The whole line, trimmed.
    line: &'static str,
    /// What the word means there.
    why: &'static str,
}

const ALLOWED: &[Allowed] = &[
    Allowed {
        path: "crates/rtgauge/src/commands/tune/trial.rs",
        line: r#".filter(|s| s.name == "latency" || s.name == "response")"#,
        why: "series names: the loop's wake-up latency (cyclic) and a task's response (taskset)",
    },
    Allowed {
        path: "crates/rtgauge-trace/src/timerlat.rs",
        line: r#"pub const TIMERLAT: &str = "timerlat";"#,
        why: "the kernel tracer's name in available_tracers and current_tracer",
    },
    Allowed {
        path: "crates/rtgauge-import/src/rtla.rs",
        line: r#"const RTLA_TIMERLAT: &str = "timerlat";"#,
        why: "rtla's tool, as its command line and its output name it",
    },
    Allowed {
        path: "crates/rtgauge-import/src/rtla.rs",
        line: r#"const OSNOISE_SERIES: &str = "noise";"#,
        why: "the name of the series an osnoise CPU column becomes",
    },
    Allowed {
        path: "crates/rtgauge-import/src/cyclictest.rs",
        line: r#"("cyclictest", 'c') => ("clock", 1),"#,
        why: "cyclictest's --clock option",
    },
    Allowed {
        path: "crates/rtgauge-import/src/cyclictest.rs",
        line: r#""clock","#,
        why: "cyclictest's --clock option, among the long options taking a value",
    },
    Allowed {
        path: "crates/rtgauge-report/src/worst_case.rs",
        line: r#"pub const HEADLINE_SERIES: [&str; 5] = ["latency", "irq", "thread", "response", "gap"];"#,
        why: "series names (the response probe's series is called response), of any probe, imported ones too",
    },
    Allowed {
        path: "crates/rtgauge-report/src/check/spec.rs",
        line: r#""probe" => "cyclic","#,
        why: "an example value in a one-line hint about a spec file, as its documentation gives it; nothing depends on it",
    },
    Allowed {
        path: "crates/rtgauge-sysinfo/src/render.rs",
        line: r#""taskset","#,
        why: "util-linux's taskset command in a fix script",
    },
];

/// A string literal in a source file.
#[derive(Debug, PartialEq)]
struct Literal {
    line: usize,
    value: String,
    /// Inside an item marked `#[cfg(test)]`.
    in_test: bool,
}

/// The string literals of Rust source (plain, byte and raw), skipping comments, char
/// literals and lifetimes, each marked when inside an item under `#[cfg(test)]`.
fn literals(source: &str) -> Vec<Literal> {
    let c: Vec<char> = source.chars().collect();
    let at = |i: usize| c.get(i).copied().unwrap_or('\0');
    let ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    let mut out = Vec::new();
    let (mut i, mut line, mut depth) = (0, 1, 0usize);
    // `#[cfg(test)]` seen, its item not opened yet; then the depth the item opened at.
    let mut pending = false;
    let mut test_at: Option<usize> = None;
    while i < c.len() {
        let in_test = pending || test_at.is_some();
        match c[i] {
            '\n' => {
                line += 1;
                i += 1;
            }
            '/' if at(i + 1) == '/' => {
                while i < c.len() && c[i] != '\n' {
                    i += 1;
                }
            }
            '/' if at(i + 1) == '*' => {
                let mut nested = 0;
                while i < c.len() {
                    if c[i] == '/' && at(i + 1) == '*' {
                        nested += 1;
                        i += 2;
                    } else if c[i] == '*' && at(i + 1) == '/' {
                        nested -= 1;
                        i += 2;
                        if nested == 0 {
                            break;
                        }
                    } else {
                        line += usize::from(c[i] == '\n');
                        i += 1;
                    }
                }
            }
            '"' => {
                let start = line;
                let mut value = String::new();
                i += 1;
                while i < c.len() && c[i] != '"' {
                    if c[i] == '\\' {
                        value.push(c[i]);
                        i += 1;
                    }
                    line += usize::from(at(i) == '\n');
                    value.push(at(i));
                    i += 1;
                }
                i += 1;
                out.push(Literal {
                    line: start,
                    value,
                    in_test,
                });
            }
            'r' | 'b' if i == 0 || !ident(c[i - 1]) => {
                // r"…", r#"…"#, br"…": up to the quote followed by as many hashes.
                let mut j = i + usize::from(c[i] == 'b' && at(i + 1) == 'r') + 1;
                if c[i] == 'b' && at(i + 1) != 'r' {
                    i += 1; // b"…" is a plain string from its quote
                    continue;
                }
                let hashes = (j..).take_while(|&k| at(k) == '#').count();
                j += hashes;
                if at(j) != '"' {
                    i += 1;
                    continue;
                }
                let start = line;
                let close: String = std::iter::once('"')
                    .chain(std::iter::repeat_n('#', hashes))
                    .collect();
                let rest: String = c[j + 1..].iter().collect();
                let end = rest.find(&close).unwrap_or(rest.len());
                let value = rest[..end].to_string();
                line += value.matches('\n').count();
                i = j + 1 + value.chars().count() + close.chars().count();
                out.push(Literal {
                    line: start,
                    value,
                    in_test,
                });
            }
            '\'' => {
                // '\n', 'x' (char literals) or 'a (a lifetime).
                if at(i + 1) == '\\' {
                    i += 3;
                    while i < c.len() && c[i] != '\'' {
                        i += 1;
                    }
                    i += 1;
                } else if at(i + 2) == '\'' {
                    i += 3;
                } else {
                    i += 1;
                }
            }
            '#' if c[i..].starts_with(&"#[cfg(test)]".chars().collect::<Vec<_>>()) => {
                pending = test_at.is_none();
                i += "#[cfg(test)]".len();
            }
            '{' => {
                if pending {
                    test_at = Some(depth);
                    pending = false;
                }
                depth += 1;
                i += 1;
            }
            '}' => {
                depth = depth.saturating_sub(1);
                if test_at == Some(depth) {
                    test_at = None;
                }
                i += 1;
            }
            ';' => {
                // `#[cfg(test)] mod tests;` or `use …;`: an item without a body.
                pending = false;
                i += 1;
            }
            _ => i += 1,
        }
    }
    out
}

/// Every Rust source of the workspace outside `crates/rtgauge-probes`, test files left out.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if !matches!(name.as_str(), "target" | "tests" | "rtgauge-probes")
                && !name.starts_with('.')
            {
                sources(&path, out);
            }
        } else if name.ends_with(".rs") && name != "tests.rs" {
            out.push(path);
        }
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn probe_names() -> Vec<&'static str> {
    rtgauge_probes::register_built_in();
    rtgauge_core::registry::all()
        .iter()
        .map(|p| p.name())
        .collect()
}

/// Whether `value` names the probe `name`: the name, a variant of it, or one of its keys.
fn names_probe(value: &str, name: &str) -> bool {
    value
        .strip_prefix(name)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('@') || rest.starts_with('.'))
}

#[test]
fn no_probe_name_outside_the_probes() {
    let names = probe_names();
    assert!(names.len() >= 12, "the registry holds {names:?}");
    let root = root();
    let mut files = Vec::new();
    for top in ["crates", "fuzz"] {
        sources(&root.join(top), &mut files);
    }
    files.sort();
    assert!(files.len() > 50, "found only {} sources", files.len());
    let mut hits = Vec::new();
    let mut used = vec![false; ALLOWED.len()];
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let path = file
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        for lit in literals(&text) {
            let Some(name) = names.iter().find(|n| names_probe(&lit.value, n)) else {
                continue;
            };
            if lit.in_test {
                continue;
            }
            let line = lines[lit.line - 1].trim();
            match ALLOWED
                .iter()
                .position(|a| a.path == path && a.line == line)
            {
                Some(k) => used[k] = true,
                None => hits.push(format!(
                    "{path}:{}: probe name {name:?} in `{line}`",
                    lit.line
                )),
            }
        }
    }
    assert!(
        hits.is_empty(),
        "probe names outside crates/rtgauge-probes: take them from rtgauge_probes::names, or \
         ask the probe (SummaryRows) or the document instead; add a line to ALLOWED only for a \
         word that is not the probe's identity, with why:\n{}",
        hits.join("\n")
    );
    let stale: Vec<String> = ALLOWED
        .iter()
        .zip(&used)
        .filter(|(_, used)| !**used)
        .map(|(a, _)| format!("{}: `{}` ({})", a.path, a.line, a.why))
        .collect();
    assert!(
        stale.is_empty(),
        "allowed lines no longer found: remove them from ALLOWED:\n{}",
        stale.join("\n")
    );
}

#[test]
fn the_scanner_finds_literals_outside_tests_only() {
    let source = r##"
// "cyclic" in a comment
/* "noise" in /* a nested */ block */
fn f<'a>(x: &'a str) -> char { let _ = "cyclic"; let _ = br"noise@x"; 'c' }
const K: &str = r#"taskset.tasks="#;
#[cfg(test)]
use x::y;
const L: char = '\'';
static M: &str = "app";
#[cfg(test)]
mod tests {
    fn g() { let _ = "switch"; if true { } }
}
const N: &str = "multi
line";
const O: &str = "clock";
"##;
    let found: Vec<(usize, String, bool)> = literals(source)
        .into_iter()
        .map(|l| (l.line, l.value, l.in_test))
        .collect();
    assert_eq!(
        found,
        [
            (4, "cyclic".to_string(), false),
            (4, "noise@x".to_string(), false),
            (5, "taskset.tasks=".to_string(), false),
            (9, "app".to_string(), false),
            (12, "switch".to_string(), true),
            (14, "multi\nline".to_string(), false),
            (16, "clock".to_string(), false),
        ]
    );
    assert!(names_probe("taskset.tasks=", "taskset"));
    assert!(names_probe("cyclic@1ms", "cyclic"));
    assert!(!names_probe("clocksource", "clock"));
}
