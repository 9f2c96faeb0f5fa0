//! The trials document of `rtgauge tune` (see [`rtgauge_result::tune`]): its figures in words,
//! as the terminal table prints them, and drawn in an HTML page — for every trial the two
//! sides' rounds (max, tail, missed periods) A against B with the verdict, the combination,
//! and the ranked table.

use crate::html::{esc, utc};
use rtgauge_result::tune::{command_line, Effect, Figures, Trial, TuneDocument, Verdict};
use rtgauge_result::units::format_duration_ns;
use std::fmt::Write as _;

/// A time in ns for people (`1.241s`, `92µs`); `-` for what is not a time.
pub fn ns(v: f64) -> String {
    if v.is_finite() && v >= 0.0 {
        format_duration_ns(v.round() as u64)
    } else {
        "-".into()
    }
}

/// A relative change for people: `-35 %`, `+12 %`, and a large drop as a factor (`÷221`).
pub fn change_text(change: f64) -> String {
    if change <= -0.5 {
        format!("÷{:.0}", 1.0 / (1.0 + change).max(1e-9))
    } else {
        format!("{:+.0} %", change * 100.0)
    }
}

/// An effect's sides and change, `1.241s → 7.745ms (÷160)`, and the rounds' spread, `± 35 %`
/// (the ranked table's two columns); empty without the effect.
pub fn before_after_spread(e: Option<&Effect>) -> (String, String) {
    e.map(|e| {
        (
            format!(
                "{} → {} ({})",
                ns(e.before),
                ns(e.after),
                change_text(e.change)
            ),
            format!("± {:.0} %", e.spread * 100.0),
        )
    })
    .unwrap_or_default()
}

/// One effect: `max 1.241s → 7.745ms (÷160, p 0.002)`; missed periods as totals.
pub fn effect_text(e: &Effect) -> String {
    let p = crate::compare::format_p(e.p);
    if e.figure == "missed" {
        // Counts: the numbers say it; a factor of counts plus one would not.
        return format!(
            "missed {:.0} → {:.0} in all rounds (p {p})",
            e.before, e.after
        );
    }
    format!(
        "{} {} → {} ({}, p {p})",
        e.figure,
        ns(e.before),
        ns(e.after),
        change_text(e.change)
    )
}

/// The page of one or more trials documents (`rtgauge report trials.json`), each with a short
/// name: self-contained (styles inlined, charts as static SVG, no script).
pub fn render_html(docs: &[TuneDocument], names: &[String]) -> String {
    let mut body = String::from("<header><h1>rtgauge tune report</h1>");
    for (i, d) in docs.iter().enumerate() {
        let who = if docs.len() > 1 {
            format!("{}: ", esc(&names[i]))
        } else {
            String::new()
        };
        let _ = write!(
            body,
            "<p class=\"verdict\"><strong>{who}{}</strong></p>",
            esc(&d.verdict)
        );
    }
    body.push_str("<div class=\"scroll\"><table class=\"results\"><thead><tr><th>Trials</th><th>Host</th><th>Kernel</th><th>Started</th><th>Loop</th><th>Rounds</th></tr></thead><tbody>");
    for (i, d) in docs.iter().enumerate() {
        let _ = write!(
            body,
            "<tr><th scope=\"row\">{}</th><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{} of {} per side</td></tr>",
            esc(&names[i]),
            esc(or_unknown(&d.host)),
            esc(or_unknown(&d.kernel_release)),
            if d.started_unix_ns == 0 {
                "not recorded".to_string()
            } else {
                esc(&utc(d.started_unix_ns))
            },
            esc(&d.the_loop),
            d.rounds,
            esc(&format_duration_ns(d.round_ns))
        );
    }
    body.push_str("</tbody></table></div></header><main>");
    for (i, d) in docs.iter().enumerate() {
        body.push_str(&section(d, &names[i], docs.len() > 1));
    }
    let _ = write!(
        body,
        "</main><footer><p>Written by rtgauge {}. Each trial measured the loop in rounds A B, B A, …: A is the machine as it was, B with the change. How to read it: tune.md in /usr/share/doc/rtgauge from the Debian package, or doc/ in the release tarball.</p></footer>",
        esc(env!("CARGO_PKG_VERSION"))
    );
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><link rel=\"icon\" href=\"data:,\"><title>rtgauge tune report</title><style>{}\n{TUNE_CSS}</style></head><body>{body}</body></html>\n",
        crate::html::REPORT_CSS
    )
}

/// The three small panels of a trial side by side where the page is wide enough.
const TUNE_CSS: &str = ".charts.trial { grid-template-columns: repeat(auto-fill, minmax(min(100%, 260px), 1fr)); }\narticle.trial { margin-bottom: 18px; }\ntable.ranked td.status .badge { white-space: nowrap; }";

fn or_unknown(s: &str) -> &str {
    if s.is_empty() {
        "not recorded"
    } else {
        s
    }
}

/// One document: the ranked table, what was kept, not tried and needs a reboot, then every
/// trial drawn.
pub fn section(d: &TuneDocument, name: &str, titled: bool) -> String {
    let mut out = String::new();
    let _ = write!(out, "<section class=\"tune\" id=\"tune-{}\">", esc(name));
    if titled {
        let _ = write!(out, "<h2>{}</h2>", esc(name));
    }
    out.push_str(&ranked_table(d));
    let kept = if d.kept.is_empty() {
        "Every setting was restored.".to_string()
    } else {
        format!(
            "Kept until reboot (--keep): {}; everything else was restored.",
            d.kept.join(", ")
        )
    };
    let _ = write!(out, "<p class=\"note\">{}</p>", esc(&kept));
    if !d.skipped.is_empty() {
        out.push_str("<h3>Not tried</h3><ul>");
        // Settings with the same reason (all those --only leaves out) share one line.
        let mut reasons: Vec<(&str, Vec<String>)> = Vec::new();
        for s in &d.skipped {
            let name = format!("<code>{}</code>", esc(&s.name));
            match reasons.iter_mut().find(|(r, _)| *r == s.reason) {
                Some((_, names)) => names.push(name),
                None => reasons.push((&s.reason, vec![name])),
            }
        }
        for (reason, names) in reasons {
            let _ = write!(out, "<li>{}: {}</li>", names.join(", "), esc(reason));
        }
        out.push_str("</ul>");
    }
    if !d.boot.is_empty() {
        out.push_str("<h3>Need a reboot (not measured)</h3><ul>");
        for f in &d.boot {
            let param = if f.param.is_empty() {
                String::new()
            } else {
                format!(" <code>{}</code>", esc(&f.param))
            };
            let _ = write!(out, "<li>{}{param}: {}</li>", esc(&f.what), esc(&f.why));
        }
        out.push_str("</ul>");
        let line = command_line(&d.boot);
        if !line.is_empty() {
            let _ = write!(
                out,
                "<p>Kernel command line: <code>{}</code></p>",
                esc(&line)
            );
        }
    }
    out.push_str("<h3>The trials</h3>");
    for t in d.ranked() {
        out.push_str(&trial_html(t));
    }
    out.push_str("</section>");
    out
}

fn verdict_badge(t: &Trial) -> String {
    let (class, word) = match t.verdict() {
        Some(Verdict::Better) => ("good", "better"),
        Some(Verdict::Worse) => ("bad", "worse"),
        Some(Verdict::CannotTell) => ("neutral", "cannot tell"),
        None => ("warn", "not measured"),
    };
    format!("<span class=\"badge {class}\">{word}</span>")
}

/// The table the terminal prints: ranked, the combination first.
fn ranked_table(d: &TuneDocument) -> String {
    let mut out = String::from("<div class=\"scroll\"><table class=\"ranked\"><thead><tr><th class=\"num\">#</th><th>Setting</th><th>Verdict</th><th>Max: before → after</th><th class=\"num\">Rounds vary</th><th>Change made</th><th>Every figure</th></tr></thead><tbody>");
    for (i, t) in d.ranked().into_iter().enumerate() {
        let (figures, spread) = before_after_spread(t.effect("max"));
        let every = match &t.judgement {
            Some(j) => j
                .effects
                .iter()
                .map(effect_text)
                .collect::<Vec<_>>()
                .join("; "),
            None => t.failed.clone().unwrap_or_default(),
        };
        let _ = write!(
            out,
            "<tr><td class=\"num\">{}</td><th scope=\"row\"><a href=\"#trial-{}\">{}</a></th><td class=\"status\">{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td></tr>",
            i + 1,
            esc(&t.name),
            esc(&t.name),
            verdict_badge(t),
            esc(&figures),
            esc(&spread),
            esc(&t.change),
            esc(&every)
        );
    }
    out.push_str("</tbody></table></div>");
    out
}

/// One trial: what changed, the three figures drawn A against B, and its rounds.
fn trial_html(t: &Trial) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "<article class=\"trial\" id=\"trial-{}\"><h4>{} {}</h4><p>{} — {}. Costs: {}.</p>",
        esc(&t.name),
        esc(&t.name),
        verdict_badge(t),
        esc(&t.title),
        esc(&t.change),
        esc(&t.cost)
    );
    if let Some(why) = &t.failed {
        let _ = write!(out, "<p class=\"note\">Not measured: {}</p>", esc(why));
    }
    for r in &t.refused {
        let _ = write!(
            out,
            "<p class=\"note\">Refused (left as it was): {}</p>",
            esc(r)
        );
    }
    if t.before.is_empty() && t.after.is_empty() {
        out.push_str("</article>");
        return out;
    }
    let tail = t
        .before
        .iter()
        .chain(&t.after)
        .map(|f| f.tail.as_str())
        .next()
        .unwrap_or("tail");
    let time = |f: fn(&Figures) -> Option<u64>| {
        let side = |v: &[Figures]| -> Vec<Option<f64>> {
            v.iter().map(|x| f(x).map(|n| n as f64)).collect()
        };
        (side(&t.before), side(&t.after))
    };
    let (max_a, max_b) = time(|f| Some(f.max_ns));
    let (tail_a, tail_b) = time(|f| f.tail_ns);
    let (miss_a, miss_b) = time(|f| Some(f.misses));
    out.push_str("<div class=\"charts trial\">");
    out.push_str(&panel(t, "max", "max", &max_a, &max_b, true));
    out.push_str(&panel(t, tail, tail, &tail_a, &tail_b, true));
    out.push_str(&panel(
        t,
        "missed",
        "missed periods",
        &miss_a,
        &miss_b,
        false,
    ));
    out.push_str("</div>");
    out.push_str(&rounds_table(t));
    out.push_str("</article>");
    out
}

const PANEL_W: f64 = 240.0;
const PANEL_H: f64 = 180.0;
const TOP: f64 = 18.0;
const BOTTOM: f64 = 30.0;
const LEFT: f64 = 62.0;

/// One figure of a trial: each round a dot, side A (as it was) left and B (changed) right,
/// the side's mean as a bar (geometric for times, on a log axis; arithmetic for counts).
fn panel(
    t: &Trial,
    figure: &str,
    title: &str,
    a: &[Option<f64>],
    b: &[Option<f64>],
    times: bool,
) -> String {
    let values: Vec<f64> = a.iter().chain(b).flatten().copied().collect();
    let caption = match t.effect(figure) {
        Some(e) => effect_text(e),
        None if values.is_empty() => format!("{title}: not measured"),
        None => format!("{title}: not compared"),
    };
    let mut out = format!(
        "<figure class=\"chart\"><figcaption>{}</figcaption>",
        esc(&caption)
    );
    if values.is_empty() {
        out.push_str("</figure>");
        return out;
    }
    let log = times && values.iter().all(|v| *v > 0.0);
    let scale = |v: f64| if log { v.log10() } else { v };
    let (mut lo, mut hi) = values.iter().fold((f64::MAX, f64::MIN), |(l, h), v| {
        (l.min(scale(*v)), h.max(scale(*v)))
    });
    if !log {
        lo = lo.min(0.0);
    }
    if hi - lo < 1e-9 {
        (lo, hi) = (lo - 0.5, hi + 0.5);
    }
    let pad = (hi - lo) * 0.08;
    let (lo, hi) = (lo - pad, hi + pad);
    let y = |v: f64| TOP + (PANEL_H - TOP - BOTTOM) * (1.0 - (scale(v) - lo) / (hi - lo));
    let label = |v: f64| if times { ns(v) } else { format!("{v:.0}") };
    let unscale = |s: f64| if log { 10f64.powf(s) } else { s };
    let _ = write!(
        out,
        "<svg viewBox=\"0 0 {PANEL_W} {PANEL_H}\" width=\"100%\" role=\"img\" aria-label=\"{} per round, as it was against changed\" style=\"max-width:{PANEL_W}px;height:auto\" font-family=\"sans-serif\" font-size=\"11\">",
        esc(title)
    );
    // The axis: its extremes labelled (a log axis when every value is a positive time).
    for s in [lo + pad, hi - pad] {
        let v = unscale(s);
        let yy = y(v);
        let _ = write!(
            out,
            "<line x1=\"{LEFT}\" x2=\"{PANEL_W}\" y1=\"{yy:.1}\" y2=\"{yy:.1}\" stroke=\"#ddd\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            LEFT - 4.0,
            yy + 4.0,
            esc(&label(v))
        );
    }
    let column = (PANEL_W - LEFT) / 2.0;
    for (i, (side, name, colour)) in [(a, "A as it was", "#1f77b4"), (b, "B changed", "#d62728")]
        .into_iter()
        .enumerate()
    {
        let x0 = LEFT + column * i as f64;
        let centre = x0 + column / 2.0;
        let present: Vec<f64> = side.iter().flatten().copied().collect();
        let n = side.len().max(1) as f64;
        for (r, v) in side.iter().enumerate() {
            let Some(v) = v else { continue };
            // Rounds spread across the column in their order, so a drift shows.
            let x = x0 + column * (0.25 + 0.5 * (r as f64 + 0.5) / n);
            let _ = write!(
                out,
                "<circle cx=\"{x:.1}\" cy=\"{:.1}\" r=\"3.5\" fill=\"{colour}\"><title>{name}, round {}: {}</title></circle>",
                y(*v),
                r + 1,
                esc(&label(*v))
            );
        }
        if let Some(m) = mean(&present, log) {
            let yy = y(m);
            let _ = write!(
                out,
                "<line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{yy:.1}\" y2=\"{yy:.1}\" stroke=\"{colour}\" stroke-width=\"2\"><title>{name}: mean {}</title></line>",
                x0 + column * 0.2,
                x0 + column * 0.8,
                esc(&label(m))
            );
        }
        let _ = write!(
            out,
            "<text x=\"{centre:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{name}</text>",
            PANEL_H - 10.0
        );
    }
    out.push_str("</svg></figure>");
    out
}

/// The geometric mean on a log axis, else the arithmetic one.
fn mean(v: &[f64], log: bool) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let n = v.len() as f64;
    Some(if log {
        (v.iter().map(|x| x.ln()).sum::<f64>() / n).exp()
    } else {
        v.iter().sum::<f64>() / n
    })
}

/// Every round's figures, A and B side by side, with the round's result file.
fn rounds_table(t: &Trial) -> String {
    let mut out = String::from("<details><summary>Rounds</summary><div class=\"scroll\"><table><thead><tr><th class=\"num\">Round</th><th>Side</th><th class=\"num\">Max</th><th class=\"num\">Tail</th><th class=\"num\">Missed</th><th>Result</th></tr></thead><tbody>");
    let rounds = t.before.len().max(t.after.len());
    for r in 0..rounds {
        for (side, figures) in [("A", &t.before), ("B", &t.after)] {
            let Some(f) = figures.get(r) else { continue };
            let _ = write!(
                out,
                "<tr><td class=\"num\">{}</td><td>{side}</td><td class=\"num\">{}</td><td class=\"num\">{} {}</td><td class=\"num\">{}</td><td><code>{}</code></td></tr>",
                r + 1,
                esc(&format_duration_ns(f.max_ns)),
                esc(&f.tail),
                esc(&f.tail_ns.map(format_duration_ns).unwrap_or_else(|| "–".into())),
                f.misses,
                esc(&f.result.display().to_string())
            );
        }
    }
    out.push_str("</tbody></table></div></details>");
    out
}
