//! `rtgauge compare a-trials.json b-trials.json`: two tunes (two machines, two days) setting
//! by setting — how each verdict and effect on the maximum differs, which changes helped on
//! both, which on one only.

use crate::format::{new_table, Format, Render, Style, Unsupported};
use crate::tune::change_text;
use rtgauge_result::tune::{Trial, TuneDocument, Verdict};
use serde::Serialize;
use std::fmt::Write as _;

/// One side's outcome for a setting.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum Outcome {
    /// Measured: the verdict, and the maximum's change and p-value when both sides had one.
    Measured {
        verdict: Verdict,
        max_change: Option<f64>,
        p: Option<f64>,
    },
    /// Tried but not measured (it failed to apply, a round failed).
    Failed { why: String },
    /// Not tried, and why (the setting was right already, absent, left out).
    NotTried { why: String },
}

impl Outcome {
    fn of(doc: &TuneDocument, name: &str) -> Outcome {
        let trial = doc
            .trials
            .iter()
            .chain(&doc.combination)
            .find(|t| t.name == name);
        match trial {
            Some(t) => Outcome::of_trial(t),
            None if name == "together" => Outcome::NotTried {
                why: "fewer than two changes helped".into(),
            },
            None => Outcome::NotTried {
                why: doc
                    .skipped
                    .iter()
                    .find(|s| s.name == name)
                    .map_or("not in this tune".into(), |s| s.reason.clone()),
            },
        }
    }

    fn of_trial(t: &Trial) -> Outcome {
        match &t.judgement {
            Some(j) => Outcome::Measured {
                verdict: j.verdict,
                max_change: t.effect("max").map(|e| e.change),
                p: t.effect("max").map(|e| e.p),
            },
            None => Outcome::Failed {
                why: t.failed.clone().unwrap_or_else(|| "not measured".into()),
            },
        }
    }

    fn verdict(&self) -> Option<Verdict> {
        match self {
            Outcome::Measured { verdict, .. } => Some(*verdict),
            _ => None,
        }
    }

    /// `better, max ÷587 (p 4.8e-5)`, `not tried: already 0`.
    fn text(&self) -> String {
        match self {
            Outcome::Measured {
                verdict,
                max_change,
                p,
            } => {
                let max = match (max_change, p) {
                    (Some(c), Some(p)) => {
                        format!(
                            ", max {} (p {})",
                            change_text(*c),
                            crate::compare::format_p(*p)
                        )
                    }
                    _ => String::new(),
                };
                format!("{}{max}", verdict.word())
            }
            Outcome::Failed { why } => format!("not measured: {why}"),
            Outcome::NotTried { why } => format!("not tried: {why}"),
        }
    }
}

/// How the two sides' verdicts relate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Agreement {
    HelpedOnBoth,
    HelpedOnAOnly,
    HelpedOnBOnly,
    /// Better on one side, worse on the other.
    Opposite,
    WorseOnBoth,
    WorseOnOne,
    /// Measured on both, neither told apart from the rounds' variation.
    NeitherCanTell,
    /// Not measured on at least one side.
    NotOnBoth,
}

impl Agreement {
    fn of(a: &Outcome, b: &Outcome) -> Agreement {
        use Verdict::*;
        match (a.verdict(), b.verdict()) {
            (Some(Better), Some(Better)) => Agreement::HelpedOnBoth,
            (Some(Better), Some(Worse)) | (Some(Worse), Some(Better)) => Agreement::Opposite,
            (Some(Better), _) => Agreement::HelpedOnAOnly,
            (_, Some(Better)) => Agreement::HelpedOnBOnly,
            (Some(Worse), Some(Worse)) => Agreement::WorseOnBoth,
            (Some(Worse), _) | (_, Some(Worse)) => Agreement::WorseOnOne,
            (Some(CannotTell), Some(CannotTell)) => Agreement::NeitherCanTell,
            _ => Agreement::NotOnBoth,
        }
    }

    pub fn words(self) -> &'static str {
        match self {
            Agreement::HelpedOnBoth => "helped on both",
            Agreement::HelpedOnAOnly => "helped on A only",
            Agreement::HelpedOnBOnly => "helped on B only",
            Agreement::Opposite => "better on one, worse on the other",
            Agreement::WorseOnBoth => "worse on both",
            Agreement::WorseOnOne => "worse on one",
            Agreement::NeitherCanTell => "cannot tell on either",
            Agreement::NotOnBoth => "not measured on both",
        }
    }
}

/// One setting on both sides.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SettingRow {
    pub setting: String,
    pub a: Outcome,
    pub b: Outcome,
    pub agreement: Agreement,
}

/// One side's identity: its name (file), loop, machine and verdict line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TuneSide {
    pub name: String,
    pub the_loop: String,
    pub host: String,
    pub kernel_release: String,
    pub started_unix_ns: u64,
    pub verdict: String,
}

/// Two tunes, setting by setting.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TuneComparison {
    pub a: TuneSide,
    pub b: TuneSide,
    /// Every setting tried on either side, in A's order then B's; the combination last.
    pub rows: Vec<SettingRow>,
}

fn side(doc: &TuneDocument, name: &str) -> TuneSide {
    TuneSide {
        name: name.into(),
        the_loop: doc.the_loop.clone(),
        host: doc.host.clone(),
        kernel_release: doc.kernel_release.clone(),
        started_unix_ns: doc.started_unix_ns,
        verdict: doc.verdict.clone(),
    }
}

/// Compares two tunes setting by setting.
pub fn compare_tunes(a: &TuneDocument, b: &TuneDocument, names: [&str; 2]) -> TuneComparison {
    let mut settings: Vec<&str> = Vec::new();
    for t in a.trials.iter().chain(&b.trials) {
        if !settings.contains(&t.name.as_str()) {
            settings.push(&t.name);
        }
    }
    if a.combination.is_some() || b.combination.is_some() {
        settings.push("together");
    }
    let rows = settings
        .into_iter()
        .map(|s| {
            let (oa, ob) = (Outcome::of(a, s), Outcome::of(b, s));
            SettingRow {
                setting: s.into(),
                agreement: Agreement::of(&oa, &ob),
                a: oa,
                b: ob,
            }
        })
        .collect();
    TuneComparison {
        a: side(a, names[0]),
        b: side(b, names[1]),
        rows,
    }
}

impl TuneComparison {
    /// The settings of one agreement, for the summary lines (the combination left out).
    fn settings(&self, agreement: Agreement) -> Vec<&str> {
        self.rows
            .iter()
            .filter(|r| r.agreement == agreement && r.setting != "together")
            .map(|r| r.setting.as_str())
            .collect()
    }

    fn render_text(&self, style: Style) -> String {
        let mut out = String::new();
        for (letter, s) in [("A", &self.a), ("B", &self.b)] {
            let machine = match (s.host.as_str(), s.kernel_release.as_str()) {
                ("", _) => String::new(),
                (host, "") => format!(" on {host}"),
                (host, kernel) => format!(" on {host} ({kernel})"),
            };
            let when = if s.started_unix_ns == 0 {
                String::new()
            } else {
                format!(
                    ", {}",
                    rtgauge_result::units::utc(s.started_unix_ns, "%Y-%m-%d %H:%M UTC")
                )
            };
            let _ = writeln!(out, "{letter}: {}{machine}{when}", s.name);
            let _ = writeln!(out, "   {}", s.verdict);
        }
        if self.a.the_loop != self.b.the_loop {
            let _ = writeln!(
                out,
                "the loops differ (A: {}; B: {}): each effect is of its own loop",
                self.a.the_loop, self.b.the_loop
            );
        }
        out.push('\n');
        let mut table = new_table(style);
        table.set_header(vec!["Setting", "A", "B", "Agreement"]);
        for r in &self.rows {
            table.add_row(vec![
                r.setting.clone(),
                r.a.text(),
                r.b.text(),
                r.agreement.words().to_string(),
            ]);
        }
        let _ = writeln!(out, "{table}\n");
        for (what, agreement) in [
            ("helped on both", Agreement::HelpedOnBoth),
            ("helped on A only", Agreement::HelpedOnAOnly),
            ("helped on B only", Agreement::HelpedOnBOnly),
            ("better on one, worse on the other", Agreement::Opposite),
            ("worse on both", Agreement::WorseOnBoth),
            ("worse on one", Agreement::WorseOnOne),
        ] {
            let names = self.settings(agreement);
            if !names.is_empty() || matches!(agreement, Agreement::HelpedOnBoth) {
                let list = if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                };
                let _ = writeln!(out, "{what}: {list}");
            }
        }
        out
    }
}

impl Render for TuneComparison {
    const WHAT: &'static str = "a comparison of two tunes";

    fn formats(&self) -> &'static [Format] {
        &[
            Format::Text(Style::Terminal),
            Format::Text(Style::Plain),
            Format::Text(Style::Markdown),
            Format::Json,
        ]
    }

    fn render(&self, format: Format) -> Result<String, Unsupported> {
        match format {
            Format::Text(style) => Ok(self.render_text(style)),
            Format::Json => Ok(serde_json::to_string_pretty(self).expect("serialises") + "\n"),
            other => Err(self.unsupported(other)),
        }
    }
}
