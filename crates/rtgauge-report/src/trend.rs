//! `rtgauge trend`: one series over the stored runs of a host — median, p99 and max per run —
//! as a terminal table with sparklines, or a self-contained HTML page with an SVG chart.
//! Where the kernel or the machine changed between two runs is marked: that is where a step
//! in the line most likely comes from.

use crate::format::{Format, Render, Style, TimeUnit};
use crate::html::esc;
pub use rtgauge_result::TrendPoint;
use serde::Serialize;
use std::fmt::Write as _;

/// The series and its points, oldest first.
#[derive(Debug, Clone, Serialize)]
pub struct Trend {
    /// `cyclic rt none latency cpu=1`.
    pub title: String,
    pub points: Vec<TrendPoint>,
}

impl Trend {
    /// What changed before point `i`: the kernel, the machine, or nothing.
    pub fn change_at(&self, i: usize) -> Option<String> {
        let (prev, cur) = (self.points.get(i.checked_sub(1)?)?, self.points.get(i)?);
        let mut what = Vec::new();
        if prev.kernel_release != cur.kernel_release {
            what.push(format!("kernel {}", cur.kernel_release));
        }
        if prev.machine_key != cur.machine_key {
            what.push("machine changed".to_string());
        }
        (!what.is_empty()).then(|| what.join(", "))
    }

    fn columns(&self) -> [(&'static str, Vec<Option<u64>>); 3] {
        [
            ("median", self.points.iter().map(|p| p.median_ns).collect()),
            ("p99", self.points.iter().map(|p| p.p99_ns).collect()),
            ("max", self.points.iter().map(|p| p.max_ns).collect()),
        ]
    }

    fn unit(&self) -> TimeUnit {
        let max = self
            .points
            .iter()
            .filter_map(|p| p.max_ns.or(p.p99_ns).or(p.median_ns))
            .max()
            .unwrap_or(0);
        TimeUnit::for_max(max)
    }
}

const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// One character per value, scaled between the smallest and largest; a gap is a space.
pub fn sparkline(values: &[Option<u64>]) -> String {
    let present = values.iter().flatten();
    let (Some(&lo), Some(&hi)) = (present.clone().min(), present.max()) else {
        return " ".repeat(values.len());
    };
    values
        .iter()
        .map(|v| match v {
            None => ' ',
            Some(_) if hi == lo => BARS[3],
            Some(v) => BARS[((v - lo) as f64 / (hi - lo) as f64 * 7.0).round() as usize],
        })
        .collect()
}

fn render_text(t: &Trend, style: Style) -> String {
    let unit = t.unit();
    let mut out = String::new();
    let _ = writeln!(out, "{} over {} stored runs", t.title, t.points.len());
    for (name, values) in t.columns() {
        let _ = writeln!(out, "  {name:<6} {}", sparkline(&values));
    }
    out.push('\n');
    let mut table = crate::format::new_table(style);
    table.set_header(vec![
        "Run".to_string(),
        "Started (UTC)".into(),
        "Kernel".into(),
        format!("Median {}", unit.label()),
        format!("p99 {}", unit.label()),
        format!("Max {}", unit.label()),
        "Changed".into(),
    ]);
    let fmt = |v: Option<u64>| {
        v.map(|v| unit.format(v as f64))
            .unwrap_or_else(|| "–".into())
    };
    for (i, p) in t.points.iter().enumerate() {
        table.add_row(vec![
            p.run_id.to_string(),
            rtgauge_result::units::utc(p.started_unix_ns, "%Y-%m-%d %H:%M"),
            p.kernel_release.clone(),
            fmt(p.median_ns),
            fmt(p.p99_ns),
            fmt(p.max_ns),
            t.change_at(i).unwrap_or_default(),
        ]);
    }
    let _ = writeln!(out, "{table}");
    out
}

/// A page with one SVG chart: three lines on a logarithmic time axis (tails span decades),
/// runs evenly spaced in time order, a dashed rule where the kernel or machine changed.
fn render_html(t: &Trend) -> String {
    let (w, h, left, right, top, bottom) = (900.0, 420.0, 70.0, 20.0, 30.0, 60.0);
    let all: Vec<u64> = t
        .columns()
        .iter()
        .flat_map(|c| c.1.clone())
        .flatten()
        .filter(|v| *v > 0)
        .collect();
    let lo = all.iter().copied().min().unwrap_or(1) as f64;
    let hi = all.iter().copied().max().unwrap_or(1) as f64;
    let (llo, lhi) = (
        lo.log10().floor(),
        hi.log10().ceil().max(lo.log10().floor() + 1.0),
    );
    let n = t.points.len().max(1);
    let x = |i: usize| {
        if n == 1 {
            left + (w - left - right) / 2.0
        } else {
            left + (w - left - right) * i as f64 / (n - 1) as f64
        }
    };
    let y = |v: u64| top + (h - top - bottom) * (1.0 - ((v as f64).log10() - llo) / (lhi - llo));
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"12\">"
    );
    let unit = TimeUnit::for_max(hi as u64);
    let mut decade = llo;
    while decade <= lhi {
        let v = 10f64.powf(decade) as u64;
        let yy = y(v);
        let _ = write!(
            svg,
            "<line x1=\"{left}\" x2=\"{}\" y1=\"{yy:.1}\" y2=\"{yy:.1}\" stroke=\"#ddd\"/><text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{} {}</text>",
            w - right,
            left - 6.0,
            yy + 4.0,
            unit.format(v as f64),
            unit.label()
        );
        decade += 1.0;
    }
    for i in 0..t.points.len() {
        if let Some(what) = t.change_at(i) {
            let xx = (x(i - 1) + x(i)) / 2.0;
            let _ = write!(
                svg,
                "<line x1=\"{xx:.1}\" x2=\"{xx:.1}\" y1=\"{top}\" y2=\"{}\" stroke=\"#888\" stroke-dasharray=\"4 3\"/><text x=\"{:.1}\" y=\"{}\" fill=\"#555\">{}</text>",
                h - bottom,
                xx + 3.0,
                top - 8.0,
                esc(&what)
            );
        }
    }
    for ((name, values), colour) in t.columns().iter().zip(["#1f77b4", "#ff7f0e", "#d62728"]) {
        let pts: Vec<String> = values
            .iter()
            .enumerate()
            .filter_map(|(i, v)| {
                v.filter(|v| *v > 0)
                    .map(|v| format!("{:.1},{:.1}", x(i), y(v)))
            })
            .collect();
        let _ = write!(
            svg,
            "<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\" points=\"{}\"><title>{name}</title></polyline>",
            pts.join(" ")
        );
        for p in &pts {
            let (px, py) = p.split_once(',').unwrap_or(("0", "0"));
            let _ = write!(
                svg,
                "<circle cx=\"{px}\" cy=\"{py}\" r=\"3\" fill=\"{colour}\"/>"
            );
        }
    }
    for (i, p) in t.points.iter().enumerate() {
        let _ = write!(
            svg,
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            x(i),
            h - bottom + 18.0,
            p.run_id
        );
    }
    let _ = write!(
        svg,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">stored run (oldest left)</text>",
        left + (w - left - right) / 2.0,
        h - 12.0
    );
    svg.push_str("</svg>");
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>rtgauge trend: {title}</title></head>\n<body style=\"font-family:sans-serif\"><h1>{title}</h1>\n<p><span style=\"color:#1f77b4\">median</span> · <span style=\"color:#ff7f0e\">p99</span> · <span style=\"color:#d62728\">max</span> per stored run; dashed lines: the kernel or machine changed.</p>\n{svg}\n</body></html>\n",
        title = esc(&t.title)
    )
}

impl Render for Trend {
    const WHAT: &'static str = "a trend";

    fn formats(&self) -> &'static [Format] {
        &[
            Format::Text(Style::Terminal),
            Format::Text(Style::Plain),
            Format::Text(Style::Markdown),
            Format::Html,
        ]
    }

    fn render(&self, format: Format) -> Result<String, crate::format::Unsupported> {
        match format {
            Format::Text(style) => Ok(render_text(self, style)),
            Format::Html => Ok(render_html(self)),
            other => Err(self.unsupported(other)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(id: i64, kernel: &str, median: u64) -> TrendPoint {
        TrendPoint {
            run_id: id,
            started_unix_ns: id as u64 * 1_000_000_000,
            kernel_release: kernel.into(),
            machine_key: "m".into(),
            median_ns: Some(median),
            p99_ns: Some(median * 3),
            max_ns: Some(median * 10),
        }
    }

    #[test]
    fn sparkline_scales_between_extremes_and_keeps_gaps() {
        assert_eq!(sparkline(&[Some(1), Some(8), None, Some(1)]), "▁█ ▁");
        assert_eq!(sparkline(&[Some(5), Some(5)]), "▄▄");
        assert_eq!(sparkline(&[None]), " ");
    }

    #[test]
    fn a_kernel_change_is_marked_in_table_and_chart() {
        let t = Trend {
            title: "cyclic rt none latency cpu=1".into(),
            points: vec![
                point(1, "6.1", 1000),
                point(2, "6.1", 1100),
                point(3, "6.6", 2000),
            ],
        };
        assert_eq!(t.change_at(1), None);
        assert_eq!(t.change_at(2).as_deref(), Some("kernel 6.6"));
        let text = t.render(Format::Text(Style::Plain)).unwrap();
        assert!(text.contains("kernel 6.6"), "{text}");
        let html = t.render(Format::Html).unwrap();
        assert_eq!(html.matches("<polyline").count(), 3);
        assert_eq!(html.matches("stroke-dasharray").count(), 1);
        assert_eq!(html.matches("<circle").count(), 9);
    }
}
