//! A check report as a terminal table or Markdown, CSV, JSON and JUnit XML.

use super::{CheckCase, CheckReport, Style, Verdict};
use crate::format::csv_field;
use std::fmt::Write as _;
use std::path::Path;

fn case_title(c: &CheckCase) -> String {
    let name = c.name.clone().unwrap_or_else(|| c.limit.to_string());
    if c.line == 0 {
        name
    } else {
        format!("{name} (line {})", c.line)
    }
}

fn case_bounds_text(c: &CheckCase) -> String {
    if let Some(p) = &c.problem {
        return p.clone();
    }
    c.bounds
        .iter()
        .map(|b| match b.verdict {
            Verdict::NotApplicable => format!("{}: n/a ({})", b.stat, b.message),
            _ => b.message.clone(),
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Terminal table or Markdown: one line per case with its result and the number of its note,
/// then the notes (what was measured against which limit, and why it passed or not) and the
/// totals. The table stays narrow; the explanations wrap below it.
pub fn render_text(r: &CheckReport, style: Style) -> String {
    let md = style == Style::Markdown;
    let mut t = crate::format::fitted_table(style);
    t.set_header(vec!["Limit", "Probe run", "Series", "Result", "Note"]);
    let mut notes = Vec::new();
    for c in &r.cases {
        let result = if !c.passed {
            "FAIL"
        } else if c.bounds.iter().any(|b| b.verdict == Verdict::Inconclusive) {
            "INCONCLUSIVE"
        } else {
            "pass"
        };
        notes.push(case_bounds_text(c));
        t.add_row(vec![
            case_title(c),
            [c.probe.as_str(), c.mode.as_str(), c.load.as_str()]
                .iter()
                .filter(|s| !s.is_empty())
                .copied()
                .collect::<Vec<_>>()
                .join(" "),
            c.series.clone(),
            result.to_string(),
            notes.len().to_string(),
        ]);
    }
    let mut out = String::new();
    if md {
        let _ = writeln!(out, "## Check against {}\n", r.spec);
    } else {
        let _ = writeln!(out, "check against {}", r.spec);
    }
    let _ = writeln!(out, "{t}\n");
    out.push_str(&crate::format::numbered_notes(&notes, md));
    if let Some(m) = r.incomplete_message() {
        let _ = writeln!(out, "{m}");
    }
    let inconclusive = r.inconclusive();
    let _ = write!(
        out,
        "{}: {} of {} checks failed",
        if !r.passed {
            "FAIL"
        } else if inconclusive > 0 {
            "INCONCLUSIVE"
        } else {
            "PASS"
        },
        r.failures(),
        r.total()
    );
    if inconclusive > 0 {
        let _ = write!(out, ", {inconclusive} could not be decided from these runs");
    }
    out.push('\n');
    out
}

/// CSV: one line per bound evaluated (a case without bounds gets one line with its problem).
pub fn render_csv(r: &CheckReport) -> String {
    let mut out = String::from(
        "limit,line,name,probe,mode,load,series,stat,limit_value,value,verdict,message\n",
    );
    if let Some(m) = r.incomplete_message() {
        let verdict = if r.incomplete_fails() { "fail" } else { "pass" };
        let _ = writeln!(out, "0,0,,*,*,*,*,complete,,,{verdict},{}", csv_field(&m));
    }
    for c in &r.cases {
        let head = [
            c.limit.to_string(),
            c.line.to_string(),
            c.name.clone().unwrap_or_default(),
            c.probe.clone(),
            c.mode.clone(),
            c.load.clone(),
            c.series.clone(),
        ]
        .iter()
        .map(|f| csv_field(f))
        .collect::<Vec<_>>()
        .join(",");
        if let Some(p) = &c.problem {
            let _ = writeln!(out, "{head},,,,fail,{}", csv_field(p));
        }
        for b in &c.bounds {
            let verdict = match b.verdict {
                Verdict::Pass => "pass",
                Verdict::Fail => "fail",
                Verdict::NotApplicable => "not_applicable",
                Verdict::Inconclusive => "inconclusive",
            };
            let value = b
                .value
                .map(|v| {
                    if v.fract() == 0.0 {
                        format!("{}", v as i64)
                    } else {
                        format!("{v:.3}")
                    }
                })
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "{head},{},{},{value},{verdict},{}",
                csv_field(&b.stat),
                csv_field(&b.limit),
                csv_field(&b.message)
            );
        }
    }
    out
}

pub fn render_json(r: &CheckReport) -> String {
    crate::format::json_text(r)
}

fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Control characters are not allowed in XML 1.0.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// JUnit XML: one test case per limit × matching series.
pub fn render_junit(r: &CheckReport) -> String {
    let suite = Path::new(&r.spec)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| r.spec.clone());
    let failures = r.failures();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"rtgauge check\" tests=\"{}\" failures=\"{failures}\" errors=\"0\">",
        r.total()
    );
    let _ = writeln!(
        out,
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"0\">",
        xml_escape(&suite),
        r.total()
    );
    for c in &r.cases {
        let limit_name = c
            .name
            .clone()
            .unwrap_or_else(|| format!("limit {} (line {})", c.limit, c.line));
        let _ = write!(
            out,
            "    <testcase classname=\"rtgauge.{}.{}.{}\" name=\"{}: {}\"",
            xml_escape(&c.probe),
            xml_escape(&c.mode),
            xml_escape(&c.load),
            xml_escape(&limit_name),
            xml_escape(&c.series)
        );
        let undecided = c.bounds.iter().any(|b| b.verdict == Verdict::Inconclusive);
        match c.failure_message() {
            None if undecided => {
                let _ = writeln!(out, ">");
                let _ = writeln!(
                    out,
                    "      <skipped message=\"inconclusive: {}\"/>",
                    xml_escape(&case_bounds_text(c))
                );
                let _ = writeln!(out, "    </testcase>");
            }
            None => {
                let _ = writeln!(out, ">");
                let _ = writeln!(
                    out,
                    "      <system-out>{}</system-out>",
                    xml_escape(&case_bounds_text(c))
                );
                let _ = writeln!(out, "    </testcase>");
            }
            Some(message) => {
                let _ = writeln!(out, ">");
                let _ = writeln!(
                    out,
                    "      <failure type=\"limit exceeded\" message=\"{}\">{}</failure>",
                    xml_escape(&message),
                    xml_escape(&case_bounds_text(c))
                );
                let _ = writeln!(out, "    </testcase>");
            }
        }
    }
    if let Some(m) = r.incomplete_message() {
        let _ = write!(
            out,
            "    <testcase classname=\"rtgauge.result\" name=\"the result is complete\">\n      "
        );
        if r.incomplete_fails() {
            let _ = writeln!(
                out,
                "<failure type=\"incomplete result\" message=\"{0}\">{0}</failure>",
                xml_escape(&m)
            );
        } else {
            let _ = writeln!(out, "<system-out>{}</system-out>", xml_escape(&m));
        }
        out.push_str("    </testcase>\n");
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

impl crate::format::Render for CheckReport {
    const WHAT: &'static str = "a check report";

    fn formats(&self) -> &'static [crate::format::Format] {
        use crate::format::{Format, Style};
        &[
            Format::Text(Style::Terminal),
            Format::Text(Style::Plain),
            Format::Text(Style::Markdown),
            Format::Csv,
            Format::Json,
            Format::Junit,
        ]
    }

    fn render(&self, format: crate::format::Format) -> Result<String, crate::format::Unsupported> {
        use crate::format::Format;
        match format {
            Format::Text(style) => Ok(crate::format::fit_lines(render_text(self, style), style)),
            Format::Csv => Ok(render_csv(self)),
            Format::Json => Ok(render_json(self)),
            Format::Junit => Ok(render_junit(self)),
            other => Err(self.unsupported(other)),
        }
    }
}
