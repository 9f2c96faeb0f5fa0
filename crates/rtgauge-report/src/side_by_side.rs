//! Repeated runs of one configuration side by side (`run --repeat N` ends with it): each
//! probe's summary rows, one column per run, so the spread between runs is read at a glance
//! before a gate judges them.

use crate::format::Style;
use crate::summary::{Row, Summary};
use rtgauge_result::RunResult;
use std::fmt::Write as _;

/// A row's figures in one cell: `12.3 / 45.6`, or its status when the run measured nothing.
fn cell(row: Option<&Row>) -> String {
    match row {
        None => "–".into(),
        Some(r) => match &r.status {
            Some(status) => status.clone(),
            None => r.cells.join(" / "),
        },
    }
}

/// Every probe section of the runs' summaries, its rows (those of the first run that has the
/// section), one column per run named by `names`.
pub fn render(results: &[RunResult], names: &[String], style: Style) -> String {
    let summaries: Vec<Summary> = results.iter().map(Summary::of).collect();
    let mut titles: Vec<&str> = Vec::new();
    for s in &summaries {
        for sec in &s.sections {
            if !titles.contains(&sec.probe.as_str()) {
                titles.push(&sec.probe);
            }
        }
    }
    let mut out = String::new();
    for title in titles {
        let sections: Vec<_> = summaries
            .iter()
            .map(|s| s.sections.iter().find(|sec| sec.probe == title))
            .collect();
        let Some(first) = sections.iter().flatten().next() else {
            continue;
        };
        let mut labels: Vec<&str> = Vec::new();
        for sec in sections.iter().flatten() {
            for row in &sec.rows {
                if !labels.contains(&row.label.as_str()) {
                    labels.push(&row.label);
                }
            }
        }
        let _ = writeln!(
            out,
            "{}{} ({} per run)",
            if style == Style::Markdown { "### " } else { "" },
            first.title,
            first.columns.join(" / ")
        );
        let mut t = crate::format::fitted_table(style);
        let mut header = vec![String::new()];
        header.extend(names.iter().cloned());
        t.set_header(header);
        for label in labels {
            let mut cells = vec![label.to_string()];
            cells.extend(
                sections.iter().map(|sec| {
                    cell(sec.and_then(|sec| sec.rows.iter().find(|r| r.label == label)))
                }),
            );
            t.add_row(cells);
        }
        let _ = writeln!(out, "{t}\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_row_and_a_skipped_one_read_as_such() {
        assert_eq!(cell(None), "–");
        let skipped = Row {
            label: "x".into(),
            cells: Vec::new(),
            status: Some("skipped: no port".into()),
        };
        assert_eq!(cell(Some(&skipped)), "skipped: no port");
        let measured = Row {
            label: "cpu 0".into(),
            cells: vec!["12.3".into(), "45.6".into()],
            status: None,
        };
        assert_eq!(cell(Some(&measured)), "12.3 / 45.6");
    }
}
