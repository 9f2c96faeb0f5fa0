//! `report --images DIR`: every chart of the report as SVG and PNG, for papers.
//!
//! Drawn by plotters from the same plot model the HTML page uses, with an embedded font
//! (DejaVu Sans), so no fontconfig or system fonts are needed on the target. A build without
//! the `png` feature (the small target build) writes SVG only.

use crate::plots::{Chart, ChartKind, Scale};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");
const SVG_SIZE: (u32, u32) = (960, 600);
#[cfg(feature = "png")]
const PNG_SIZE: (u32, u32) = (1600, 1000);

/// The image formats [`write_images`] writes for each chart, as users read them.
pub const IMAGE_FORMATS: &str = if cfg!(feature = "png") {
    "SVG and PNG"
} else {
    "SVG"
};

const PALETTE: [RGBColor; 12] = [
    RGBColor(0x1f, 0x5f, 0xa8),
    RGBColor(0xd1, 0x49, 0x5b),
    RGBColor(0x2a, 0x9d, 0x8f),
    RGBColor(0xe9, 0xa0, 0x3b),
    RGBColor(0x6c, 0x4f, 0x9c),
    RGBColor(0x4d, 0x7c, 0x0f),
    RGBColor(0xc2, 0x18, 0x5b),
    RGBColor(0x00, 0x83, 0x8f),
    RGBColor(0x8d, 0x6e, 0x63),
    RGBColor(0x54, 0x6e, 0x7a),
    RGBColor(0xef, 0x6c, 0x00),
    RGBColor(0x28, 0x35, 0x93),
];

#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    #[error(
        "cannot create the image directory {path}: {source} (choose a writable --images directory)"
    )]
    Dir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot draw {path}: {message}")]
    Draw { path: PathBuf, message: String },
    #[error(transparent)]
    Write(rtgauge_result::output::OutputError),
    #[error("the embedded font cannot be loaded; this build of rtgauge is broken")]
    Font,
}

fn register_font() -> Result<(), ImageError> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        plotters::style::register_font("sans-serif", FontStyle::Normal, FONT).is_ok()
    });
    if ok {
        Ok(())
    } else {
        Err(ImageError::Font)
    }
}

/// Writes `<id>.svg` and (with the `png` feature) `<id>.png` for every chart into `dir`;
/// returns the files written.
pub fn write_images(charts: &[Chart], dir: &Path) -> Result<Vec<PathBuf>, ImageError> {
    register_font()?;
    std::fs::create_dir_all(dir).map_err(|source| ImageError::Dir {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut written = Vec::new();
    for chart in charts {
        let svg = dir.join(format!("{}.svg", chart.id));
        write(
            &svg,
            svg_of(chart).map_err(|message| draw_error(&svg, message))?,
        )?;
        written.push(svg);
        #[cfg(feature = "png")]
        {
            let png = dir.join(format!("{}.png", chart.id));
            write(
                &png,
                png_of(chart).map_err(|message| draw_error(&png, message))?,
            )?;
            written.push(png);
        }
    }
    Ok(written)
}

fn draw_error(path: &Path, message: String) -> ImageError {
    ImageError::Draw {
        path: path.to_path_buf(),
        message,
    }
}

/// Through the output module, like every file rtgauge writes (exclusive temporary file,
/// renamed into place), so an image never replaces anything half-written.
fn write(path: &Path, bytes: Vec<u8>) -> Result<(), ImageError> {
    rtgauge_result::output::write(path, &bytes).map_err(ImageError::Write)
}

/// The chart as an SVG document, drawn in memory.
fn svg_of(chart: &Chart) -> Result<Vec<u8>, String> {
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, SVG_SIZE).into_drawing_area();
        draw(&root, chart, 1.0)?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(text.into_bytes())
}

#[cfg(feature = "png")]
/// The chart as a PNG file, drawn into an RGB buffer in memory and encoded.
fn png_of(chart: &Chart) -> Result<Vec<u8>, String> {
    let (width, height) = PNG_SIZE;
    let mut rgb = vec![0u8; width as usize * height as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, PNG_SIZE).into_drawing_area();
        draw(&root, chart, width as f64 / SVG_SIZE.0 as f64)?;
        root.present().map_err(|e| e.to_string())?;
    }
    let mut file = Vec::new();
    let mut encoder = png::Encoder::new(&mut file, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder
        .write_header()
        .and_then(|mut w| w.write_image_data(&rgb))
        .map_err(|e| e.to_string())?;
    Ok(file)
}

/// Maps a value to the linear drawing coordinate of its axis (log axes are drawn as the
/// logarithm, labelled with the value).
fn forward(scale: Scale, v: f64) -> Option<f64> {
    match scale {
        Scale::Linear | Scale::Nines => v.is_finite().then_some(v),
        Scale::Log => (v > 0.0).then(|| v.log10()),
        Scale::Bytes => (v > 0.0).then(|| v.log2()),
    }
}

fn tick_label(scale: Scale, v: f64) -> String {
    match scale {
        Scale::Linear => fmt(v),
        Scale::Log => fmt(10f64.powf(v)),
        Scale::Bytes => crate::units::format_size(2f64.powf(v).round().max(1.0) as u64),
        Scale::Nines => {
            if v.abs() < 1e-9 {
                "min".into()
            } else {
                let n = v.round().max(1.0);
                let p = 100.0 - 100.0 * 10f64.powf(-n);
                format!("p{:.*}", (n as usize).saturating_sub(2), p)
            }
        }
    }
}

fn fmt(v: f64) -> String {
    let a = v.abs();
    // Decade ticks of log axes are round numbers: 1, 10, 0.1 without trailing zeros.
    if (v - v.round()).abs() < 1e-9 * a.max(1.0) || a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 0.1 && (v * 10.0 - (v * 10.0).round()).abs() < 1e-9 {
        format!("{v:.1}")
    } else if a == 0.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// Range of drawing coordinates; log axes are widened to whole decades (powers of two for
/// sizes) so ticks fall on round values.
fn range(scale: Scale, values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter_map(|v| forward(scale, v)) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    match scale {
        Scale::Log | Scale::Bytes | Scale::Nines => {
            // A value on the lowest decade line (a count of 1) would hide in the axis.
            let pad = if scale == Scale::Log { 0.15 } else { 0.0 };
            let (a, b) = ((lo - pad).floor(), hi.ceil());
            (a, if b > a { b } else { a + 1.0 })
        }
        Scale::Linear => {
            let pad = if hi > lo {
                (hi - lo) * 0.04
            } else {
                hi.abs().max(1.0) * 0.1
            };
            let bottom = if lo >= 0.0 && lo - pad < 0.0 {
                0.0
            } else {
                lo - pad
            };
            (bottom, hi + pad)
        }
    }
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart,
    k: f64,
) -> Result<(), String> {
    let px = |v: f64| (v * k).round() as u32;
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    if chart.kind == ChartKind::Boxes {
        return draw_boxes(root, chart, k);
    }
    let (x0, x1) = range(chart.x_scale, chart.x.iter().copied());
    let (y0, y1) = range(
        chart.y_scale,
        chart
            .lines
            .iter()
            .flat_map(|l| l.values.iter().flatten().copied()),
    );
    let mut ctx = ChartBuilder::on(root)
        .caption(&chart.title, ("sans-serif", px(20.0)))
        .margin(px(12.0))
        .margin_right(px(36.0))
        .x_label_area_size(px(50.0))
        .y_label_area_size(px(70.0))
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(|e| e.to_string())?;
    let (xs, ys) = (chart.x_scale, chart.y_scale);
    let x_labels = match xs {
        Scale::Nines | Scale::Log | Scale::Bytes => ((x1 - x0).round() as usize + 1).min(24),
        Scale::Linear => 10,
    };
    ctx.configure_mesh()
        .x_desc(&chart.x_label)
        .y_desc(&chart.y_label)
        .x_labels(x_labels)
        .y_labels(if ys == Scale::Log {
            ((y1 - y0).round() as usize + 1).min(20)
        } else {
            10
        })
        .x_label_formatter(&|v| tick_label(xs, *v))
        .y_label_formatter(&|v| tick_label(ys, *v))
        .label_style(("sans-serif", px(13.0)))
        .axis_desc_style(("sans-serif", px(15.0)))
        .light_line_style(RGBColor(0xee, 0xee, 0xee))
        .draw()
        .map_err(|e| e.to_string())?;
    for line in &chart.lines {
        let color = PALETTE[line.color % PALETTE.len()];
        let style =
            ShapeStyle::from(&color).stroke_width(px(if chart.step { 1.5 } else { 2.0 }).max(1));
        // Segments between gaps; histogram bins are drawn as steps.
        let mut segments: Vec<Vec<(f64, f64)>> = vec![Vec::new()];
        for (i, v) in line.values.iter().enumerate() {
            let point = v.and_then(|v| Some((forward(xs, chart.x[i])?, forward(ys, v)?)));
            match point {
                Some((x, y)) => {
                    let seg = segments.last_mut().expect("one segment always exists");
                    if chart.step {
                        let next = chart
                            .x
                            .get(i + 1)
                            .and_then(|&nx| forward(xs, nx))
                            .unwrap_or(x + (x - seg.last().map_or(x, |p| p.0)).max(0.0));
                        seg.push((x, y));
                        seg.push((next, y));
                    } else {
                        seg.push((x, y));
                    }
                }
                None if chart.step => segments.push(Vec::new()),
                None => {}
            }
        }
        let mut first = true;
        for seg in segments.into_iter().filter(|s| !s.is_empty()) {
            let anno = if line.dashed {
                ctx.draw_series(DashedLineSeries::new(seg, px(6.0), px(4.0), style))
                    .map_err(|e| e.to_string())?
            } else {
                ctx.draw_series(LineSeries::new(seg, style))
                    .map_err(|e| e.to_string())?
            };
            if first {
                let legend_style = style;
                anno.label(line.label.clone()).legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], legend_style)
                });
                first = false;
            }
        }
    }
    if !chart.lines.is_empty() {
        ctx.configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(0xbb, 0xbb, 0xbb))
            .label_font(("sans-serif", px(13.0)))
            .position(SeriesLabelPosition::UpperRight)
            .draw()
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

fn draw_boxes<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart,
    k: f64,
) -> Result<(), String> {
    let px = |v: f64| (v * k).round() as u32;
    let n = chart.boxes.len();
    let ys = chart.y_scale;
    let (y0, y1) = range(ys, chart.boxes.iter().flat_map(|b| [b.min, b.max]));
    let labels: Vec<String> = chart
        .boxes
        .iter()
        .map(|b| {
            if b.label.chars().count() > 30 {
                b.label.chars().take(29).collect::<String>() + "…"
            } else {
                b.label.clone()
            }
        })
        .collect();
    let mut ctx = ChartBuilder::on(root)
        .caption(&chart.title, ("sans-serif", px(20.0)))
        .margin(px(12.0))
        .x_label_area_size(px(40.0))
        .y_label_area_size(px(70.0))
        .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), y0..y1)
        .map_err(|e| e.to_string())?;
    ctx.configure_mesh()
        .disable_x_mesh()
        .x_labels(n.max(1))
        .x_label_formatter(&|v| {
            let i = v.round();
            if (v - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < labels.len() && n <= 8 {
                labels[i as usize].clone()
            } else if (v - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < labels.len() {
                // Too many boxes for their names: number them; the legend below names them.
                format!("{}", i as usize + 1)
            } else {
                String::new()
            }
        })
        .y_labels(if ys == Scale::Log {
            ((y1 - y0).round() as usize + 1).min(20)
        } else {
            10
        })
        .y_label_formatter(&|v| tick_label(ys, *v))
        .y_desc(&chart.y_label)
        .label_style(("sans-serif", px(12.0)))
        .axis_desc_style(("sans-serif", px(15.0)))
        .light_line_style(RGBColor(0xee, 0xee, 0xee))
        .draw()
        .map_err(|e| e.to_string())?;
    let y = |v: f64| forward(ys, v).unwrap_or(y0);
    let half = 0.3;
    for (i, b) in chart.boxes.iter().enumerate() {
        let x = i as f64;
        let color = PALETTE[b.color % PALETTE.len()];
        let stroke = ShapeStyle::from(&color).stroke_width(px(1.5).max(1));
        if !b.violin.is_empty() {
            // The density outline, mirrored around the box's axis, under the box.
            let right = b.violin.iter().map(|&[v, d]| (x + 0.45 * d, y(v)));
            let left = b.violin.iter().rev().map(|&[v, d]| (x - 0.45 * d, y(v)));
            let outline: Vec<(f64, f64)> = right.chain(left).collect();
            ctx.draw_series([
                Polygon::new(outline.clone(), color.mix(0.12).filled()).into_dyn(),
                PathElement::new(outline, ShapeStyle::from(&color.mix(0.5)).stroke_width(1))
                    .into_dyn(),
            ])
            .map_err(|e| e.to_string())?;
        }
        let elements: Vec<DynElement<DB, (f64, f64)>> = vec![
            PathElement::new(vec![(x, y(b.min)), (x, y(b.upper))], stroke).into_dyn(),
            PathElement::new(
                vec![(x - half / 2.0, y(b.min)), (x + half / 2.0, y(b.min))],
                stroke,
            )
            .into_dyn(),
            PathElement::new(
                vec![(x - half / 2.0, y(b.upper)), (x + half / 2.0, y(b.upper))],
                stroke,
            )
            .into_dyn(),
            Rectangle::new(
                [(x - half, y(b.p75)), (x + half, y(b.p25))],
                color.mix(0.25).filled(),
            )
            .into_dyn(),
            Rectangle::new([(x - half, y(b.p75)), (x + half, y(b.p25))], stroke).into_dyn(),
            PathElement::new(
                vec![(x - half, y(b.median)), (x + half, y(b.median))],
                ShapeStyle::from(&color).stroke_width(px(3.0).max(2)),
            )
            .into_dyn(),
            Circle::new((x, y(b.max)), px(4.0), color.filled()).into_dyn(),
        ];
        ctx.draw_series(elements).map_err(|e| e.to_string())?;
    }
    if n > 8 {
        // Name the numbered boxes in a legend.
        for (i, b) in chart.boxes.iter().enumerate() {
            let color = PALETTE[b.color % PALETTE.len()];
            ctx.draw_series(std::iter::empty::<Circle<(f64, f64), u32>>())
                .map_err(|e| e.to_string())?
                .label(format!("{}: {}", i + 1, labels[i]))
                .legend(move |(x, y)| Circle::new((x + 8, y), 4, color.filled()));
        }
        ctx.configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(0xbb, 0xbb, 0xbb))
            .label_font(("sans-serif", px(11.0)))
            .position(SeriesLabelPosition::UpperLeft)
            .draw()
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}
