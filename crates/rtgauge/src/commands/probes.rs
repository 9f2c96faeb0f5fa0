//! `rtgauge probes`: the catalogue, what can run here, and every probe's parameters.

use anyhow::Result;

/// Lines of the parameter help are wrapped to fit this many columns unless the terminal is
/// narrower (`crate::display::width`).
#[cfg(test)]
const COLUMNS: usize = 100;

pub fn list(json: bool) -> Result<u8> {
    if json {
        println!("{}", serde_json::to_string_pretty(&catalogue_json())?);
    } else {
        print!("{}", catalogue());
    }
    Ok(crate::EXIT_OK)
}

/// The catalogue for scripts: every probe, whether it can run here, and its parameters.
fn catalogue_json() -> serde_json::Value {
    let probes: Vec<serde_json::Value> = rtgauge_core::registry::all()
        .iter()
        .map(|p| {
            let parameters: Vec<serde_json::Value> = p
                .parameters()
                .iter()
                .map(|s| serde_json::json!({"name": s.name, "help": s.help, "default": s.default}))
                .collect();
            serde_json::json!({
                "name": p.name(),
                "description": p.describe(),
                "available": p.availability().is_ok(),
                "unavailable_because": p.availability().err(),
                "parameters": parameters,
            })
        })
        .collect();
    serde_json::Value::Array(probes)
}

fn catalogue() -> String {
    let mut out = String::new();
    for (i, p) in rtgauge_core::registry::all().iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let here = match p.availability() {
            Ok(()) => "available".to_string(),
            Err(why) => format!("unavailable: {why}"),
        };
        out.push_str(&format!("{}: {}  [{here}]\n", p.name(), p.describe()));
        let specs = p.parameters();
        if specs.is_empty() {
            out.push_str("  no parameters\n");
            continue;
        }
        let width = specs.iter().map(|s| s.name.len()).max().unwrap_or(0);
        let indent = 4 + width;
        for spec in specs {
            let first = format!("  {:width$}  ", spec.name);
            wrap_into(&mut out, &first, indent, spec.help);
            wrap_into(
                &mut out,
                &" ".repeat(indent),
                indent,
                &format!("default: {}", spec.default),
            );
        }
    }
    out.push_str("\nSet a parameter with --set PROBE.KEY=VALUE (or KEY=VALUE for every probe that takes it), or in a suite file.\n");
    out
}

/// Appends `text` after `first` (the start of the first line), wrapped at word boundaries to
/// the terminal's width, continuation lines indented by `indent` spaces.
pub(super) fn wrap_into(out: &mut String, first: &str, indent: usize, text: &str) {
    let mut line = first.to_string();
    let mut empty = true;
    for word in text.split_whitespace() {
        if !empty && line.chars().count() + 1 + word.chars().count() > crate::display::width() {
            out.push_str(line.trim_end());
            out.push('\n');
            line = " ".repeat(indent);
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    out.push_str(line.trim_end());
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapping_keeps_words_whole_and_lines_within_the_columns() {
        let mut out = String::new();
        let text = "word ".repeat(60);
        wrap_into(&mut out, "  name  ", 8, &text);
        assert!(out.lines().count() > 2);
        for line in out.lines() {
            assert!(line.chars().count() <= COLUMNS, "{line}");
        }
        assert_eq!(out.split_whitespace().filter(|w| *w == "word").count(), 60);
        assert!(out.lines().skip(1).all(|l| l.starts_with("        word")));
    }

    #[test]
    fn every_parameter_is_listed_with_help_and_default() {
        rtgauge_probes::register_built_in();
        let text = catalogue();
        assert!(rtgauge_core::registry::all().len() >= rtgauge_probes::BUILT_IN.len());
        for p in rtgauge_core::registry::all() {
            assert!(text.contains(&format!("{}: ", p.name())));
            for spec in p.parameters() {
                assert!(!spec.help.trim().is_empty(), "{}.{}", p.name(), spec.name);
                assert!(
                    !spec.default.trim().is_empty(),
                    "{}.{}",
                    p.name(),
                    spec.name
                );
                assert!(
                    text.lines().any(|l| l.trim_start().starts_with(spec.name)),
                    "{}.{} not listed",
                    p.name(),
                    spec.name
                );
            }
        }
    }
}
