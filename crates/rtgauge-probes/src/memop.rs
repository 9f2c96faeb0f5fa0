//! `memop`: memcpy and memset time versus size (Arm et al. 2016), from cache-resident blocks to blocks
//! far beyond the last-level cache, with the bandwidth derived from the median.
//!
//! Both buffers are mapped and faulted in before measuring, so a sample is the C library's
//! `memcpy`/`memset` on resident memory and nothing else (plus one clock read, recorded in the
//! run's calibration). Repeating the same block keeps a block that fits a cache level in that
//! level: the curve of bandwidth against size shows each cache level and, past the last-level
//! cache, the memory bus.
//!
//! Budget: `loops` is samples per size and operation; a duration (and the warm-up) is split
//! evenly over the sizes × operations.

use rtgauge_core::clock::now_ns;
use rtgauge_core::probe::size_list;
use rtgauge_core::probe::{
    About, ParamSpec, Params, ProbeConfig, ProbeContext, ProbeError, ProbeOutput, TypedProbe,
};
use rtgauge_core::sys::memory::Region;
use rtgauge_core::threads::{describe_split, on_first_cpu, split, warm_up};
use rtgauge_core::units::{format_size, format_size_exact, format_size_list};
use rtgauge_result::Series;
use rtgauge_stats::{Recorder, DEFAULT_INTERVAL_NS};
use std::collections::BTreeMap;

const PROBE: &str = crate::names::MEMOP;
pub const OPS: [&str; 2] = ["memcpy", "memset"];
const DESCRIPTION: &str =
    "memcpy and memset time vs size, cache-resident to beyond the last-level cache, with bandwidth";
const ABOUT: About = About::new(PROBE, DESCRIPTION, &PARAMS);
const PARAMS: [ParamSpec; 4] = [
    ParamSpec::new(
        "sizes",
        "powers of two from min-size to max-size",
        "explicit buffer sizes, e.g. 64,4KiB,64MiB (instead of min-size/max-size)",
    ),
    ParamSpec::new("min-size", "64B", "smallest size of the power-of-two sweep"),
    ParamSpec::new(
        "max-size",
        "4 x the last-level cache, at least 64MiB",
        "largest size of the power-of-two sweep",
    ),
    ParamSpec::new("ops", "all", "memcpy, memset; a list or all"),
];
pub const DEFAULT_MIN_SIZE: u64 = 64;
/// The default largest size is at least this, and at least 4× the last-level cache.
pub const FLOOR_MAX_SIZE: u64 = 64 << 20;

pub struct Memop;

impl TypedProbe for Memop {
    const ABOUT: About = ABOUT;
    type Config = Config;

    fn measure(&self, ctx: &ProbeContext, cfg: &mut Config) -> Result<ProbeOutput, ProbeError> {
        let cells = cfg.sizes.len() * cfg.ops.len();
        let cell = split(ctx, cells);
        let (obtained, (series, measured_ns)) = on_first_cpu(PROBE, ctx, |_, _| measure(ctx, cfg))?;
        let mut out = ProbeOutput::measured(obtained, series, Vec::new(), measured_ns);
        if let Some(llc) = last_level_cache_bytes() {
            out.params
                .insert("last-level-cache".into(), format_size_exact(llc));
        }
        out.params.insert("cells".into(), cells.to_string());
        out.params
            .insert("budget-per-cell".into(), describe_split(&cell));
        Ok(out)
    }
}

/// The size of the last-level data (or unified) cache of CPU 0, from sysfs.
pub fn last_level_cache_bytes() -> Option<u64> {
    let dir = std::fs::read_dir("/sys/devices/system/cpu/cpu0/cache").ok()?;
    let mut best: Option<(u32, u64)> = None;
    for entry in dir.flatten() {
        let path = entry.path();
        if !entry.file_name().to_string_lossy().starts_with("index") {
            continue;
        }
        let read = |f: &str| std::fs::read_to_string(path.join(f)).map(|s| s.trim().to_string());
        if read("type").is_ok_and(|t| t == "Instruction") {
            continue;
        }
        let (Ok(level), Ok(size)) = (read("level"), read("size")) else {
            continue;
        };
        let (Ok(level), Some(bytes)) = (level.parse::<u32>(), parse_cache_size(&size)) else {
            continue;
        };
        if best.is_none_or(|(l, _)| level > l) {
            best = Some((level, bytes));
        }
    }
    best.map(|(_, b)| b)
}

/// sysfs cache sizes: `32K`, `1024K`, `32768K`, sometimes `8M`.
fn parse_cache_size(s: &str) -> Option<u64> {
    let (num, scale) = match s.as_bytes().last()? {
        b'K' => (&s[..s.len() - 1], 1 << 10),
        b'M' => (&s[..s.len() - 1], 1 << 20),
        b'G' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.parse::<u64>().ok().map(|n| n * scale)
}

/// 4× the last-level cache, at least 64 MiB, rounded up to a power of two.
pub fn default_max_size() -> u64 {
    last_level_cache_bytes()
        .map(|llc| llc.saturating_mul(4))
        .unwrap_or(0)
        .max(FLOOR_MAX_SIZE)
        .next_power_of_two()
}

#[derive(Debug, Clone)]
pub struct Config {
    sizes: Vec<u64>,
    ops: Vec<String>,
}

fn config(params: &Params) -> Result<Config, ProbeError> {
    let sizes = size_list(PROBE, params, DEFAULT_MIN_SIZE, default_max_size())?;
    if sizes.is_empty() {
        return Err(ProbeError::Invalid {
            probe: PROBE,
            message: "parameter sizes: no size given; e.g. sizes=64,4KiB,64MiB".into(),
        });
    }
    if let Some(&s) = sizes.iter().find(|&&s| s > isize::MAX as u64 / 4) {
        return Err(ProbeError::Invalid {
            probe: PROBE,
            message: format!(
                "parameter sizes: {} is larger than this machine can address; use at most a few GiB",
                format_size(s)
            ),
        });
    }
    Ok(Config {
        sizes,
        ops: params.choices("ops", "all", &OPS)?,
    })
}

impl ProbeConfig for Config {
    fn parse(params: &Params) -> Result<Config, ProbeError> {
        config(params)
    }

    fn resolved(&self) -> BTreeMap<String, String> {
        BTreeMap::from([
            ("sizes".into(), format_size_list(&self.sizes)),
            ("ops".into(), self.ops.join(",")),
        ])
    }
}

/// Bytes per second moved by one operation on `size` bytes taking `ns`.
fn bandwidth(size: u64, ns: Option<u64>) -> Option<f64> {
    ns.filter(|&n| n > 0).map(|n| size as f64 * 1e9 / n as f64)
}

fn measure(ctx: &ProbeContext, cfg: &Config) -> Result<(Vec<Series>, u64), ProbeError> {
    let largest = cfg.sizes.iter().copied().max().unwrap_or(0) as usize;
    let cell = split(ctx, cfg.sizes.len() * cfg.ops.len());
    // The mode decides locking (mlockall in rt); here the buffers are only faulted in.
    let src = Region::new(PROBE, largest, false)?;
    let dst = Region::new(PROBE, largest, false)?;
    // SAFETY: src spans `largest` bytes; a non-zero pattern so no page stays the zero page.
    unsafe { std::ptr::write_bytes(src.ptr, 0x5a, largest) };
    let live = ctx.live.register("memop".into());
    let mut series = Vec::new();
    let mut measured = 0u64;

    for op in &cfg.ops {
        let copy = op == "memcpy";
        for &size in &cfg.sizes {
            if ctx.stopped() {
                break;
            }
            let n = size as usize;
            let (s, d) = (src.ptr, dst.ptr);
            // The C library's own routines, as the seeds time them; black_box keeps the
            // compiler from proving the destination unused and removing the call.
            let run = || unsafe {
                // SAFETY: both buffers hold at least `largest` ≥ n bytes and do not overlap.
                if copy {
                    libc::memcpy(
                        std::hint::black_box(d) as *mut _,
                        std::hint::black_box(s) as *const _,
                        n,
                    );
                } else {
                    libc::memset(std::hint::black_box(d) as *mut _, 0x33, n);
                }
                std::hint::black_box(d);
            };
            let mut rec = Recorder::new(DEFAULT_INTERVAL_NS);
            warm_up(ctx, cell.warmup_ns, 1, run);
            let start = now_ns();
            let mut now = start;
            while !ctx.stopped() && !cell.budget.done(start, now, rec.count()) {
                let t0 = now_ns();
                run();
                let t1 = now_ns();
                rec.record(t1 - t0, t0 - start);
                live.publish(t1 - t0, 0);
                now = t1;
            }
            measured += now - start;
            let stats = rec.summary();
            let mut s = Series::new(op.as_str(), stats).label("size", format_size_exact(size));
            s.metrics.insert("size_bytes".into(), size as f64);
            if let Some(bw) = bandwidth(size, s.stats.median_ns) {
                s.metrics.insert("bandwidth_bytes_per_s".into(), bw);
            }
            if let Some(bw) = bandwidth(size, s.stats.min_ns) {
                s.metrics.insert("best_bandwidth_bytes_per_s".into(), bw);
            }
            series.push(s);
        }
    }
    Ok((series, measured))
}

/// How this probe's runs read in the summary at the end of a run (and atop `show` and the
/// report): the renderer asks the probe, it knows no probe names.
mod summary_rows {
    use rtgauge_report::format::{per_op, TimeUnit};
    use rtgauge_report::summary::{bend_size, size_groups, size_of, Cells, SummaryRows};
    use rtgauge_result::units::format_size;
    use rtgauge_result::{ProbeRun, Series};

    impl SummaryRows for super::Memop {
        fn probe(&self) -> &'static str {
            super::ABOUT.name
        }

        fn question(&self) -> &'static str {
            "memory operations"
        }

        fn timed(&self) -> bool {
            false
        }

        fn columns(&self, _runs: &[&ProbeRun]) -> Vec<String> {
            vec![
                "best GB/s".into(),
                "worst max÷median".into(),
                "at size".into(),
                "bends at".into(),
            ]
        }

        fn rows(&self, run: &ProbeRun, _runs: &[&ProbeRun], unit: TimeUnit) -> Vec<Cells> {
            let _ = unit;
            memop_rows(run)
        }
    }

    /// Median bandwidth of a sized series in bytes/s: the probe's own figure when it kept one.
    fn bandwidth(s: &Series) -> Option<f64> {
        s.metrics.get("bandwidth_bytes_per_s").copied().or_else(|| {
            per_op(s, s.stats.median_ns)
                .filter(|t| *t > 0.0)
                .map(|t| size_of(s) as f64 / t * 1e9)
        })
    }

    /// Per operation: the best median bandwidth; the worst case as the largest slowdown of one
    /// operation against its size's median (max ÷ median) and that size; and where the cost
    /// per byte bends (a cache level left behind).
    fn memop_rows(run: &ProbeRun) -> Vec<Cells> {
        size_groups(run, "", "")
            .into_iter()
            .map(|(op, series)| {
                let best = series
                    .iter()
                    .filter_map(|s| bandwidth(s))
                    .fold(0.0f64, f64::max);
                let worst = series
                    .iter()
                    .filter_map(|s| match (s.stats.max_ns, s.stats.median_ns) {
                        (Some(max), Some(median)) if median > 0 => {
                            Some((max as f64 / median as f64, *s))
                        }
                        _ => None,
                    })
                    .max_by(|a, b| a.0.total_cmp(&b.0));
                let (worst, at) = match worst {
                    Some((ratio, s)) if ratio >= 100.0 => {
                        (format!("{ratio:.0}"), format_size(size_of(s)))
                    }
                    Some((ratio, s)) => (format!("{ratio:.1}"), format_size(size_of(s))),
                    None => ("–".into(), "–".into()),
                };
                (
                    op,
                    vec![
                        format!("{:.1}", best / 1e9),
                        worst,
                        at,
                        bend_size(&series, true),
                    ],
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_sizes_from_sysfs_parse() {
        assert_eq!(parse_cache_size("32K"), Some(32 << 10));
        assert_eq!(parse_cache_size("32768K"), Some(32 << 20));
        assert_eq!(parse_cache_size("8M"), Some(8 << 20));
        assert_eq!(parse_cache_size("x"), None);
    }

    #[test]
    fn default_range_reaches_beyond_four_times_the_last_level_cache() {
        let cfg = config(&Params::of(PROBE, &[])).unwrap();
        let max = *cfg.sizes.last().unwrap();
        assert_eq!(cfg.sizes[0], 64);
        assert!(max >= FLOOR_MAX_SIZE);
        if let Some(llc) = last_level_cache_bytes() {
            assert!(max >= 4 * llc, "{max} vs LLC {llc}");
        }
        assert_eq!(cfg.ops, ["memcpy", "memset"]);
    }

    #[test]
    fn bad_parameters_are_refused() {
        let e = config(&Params::of(PROBE, &[("sizes", "4KiB,0")]))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("parameter sizes: '0' is not a positive size"),
            "{e}"
        );
        let e = config(&Params::of(PROBE, &[("ops", "memmove")]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown ops 'memmove'"), "{e}");
    }

    #[test]
    fn bandwidth_comes_from_size_and_time() {
        assert_eq!(bandwidth(1000, Some(1000)), Some(1e9));
        assert_eq!(bandwidth(1000, Some(0)), None);
    }
}
