//! cyclictest's console output without a histogram:
//! - its status lines alone (`T: 0 (1234) P:95 I:1000 C: 100000 Min: 3 Act: 5 Avg: 4 Max: 30`,
//!   with or without the `policy:` header), the form most people paste: per thread the count,
//!   minimum, average and maximum, the interval and the priority; no distribution. A line cut
//!   off (the live display stopped by Ctrl-C) keeps the figures it has, flagged.
//! - `-v` (verbose): one line per sample, `thread:cycle:latency` (µs), after `Thread N
//!   Interval: US` lines; every sample, so the full distribution.

use crate::cyclictest_text::Console;
use crate::{count_lost_periods, document, malformed, series_of, shown, ImportError, Reported};
use rtgauge_probes::names::CYCLIC;
use rtgauge_result::{RunResult, Series, Warning};
use std::collections::BTreeMap;
use std::path::Path;

/// Per-thread counters of the imported series (the threads may differ in both).
const INTERVAL_COUNTER: &str = "interval_ns";
const PRIORITY_COUNTER: &str = "priority";

pub fn parse_status(path: &Path, text: &str) -> Result<RunResult, ImportError> {
    let mut console = Console::default();
    // Lines that start like a status line but stop before its count: nothing to import.
    let mut unreadable = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if !line.is_empty() && !console.read(line, i + 1) && line.starts_with("T:") {
            unreadable.push(i + 1);
        }
    }
    if console.status.is_empty() {
        return Err(malformed(
            path,
            1,
            "no status line (`T: 0 (1234) P:95 I:1000 C: 100000 Min: 3 Act: 5 Avg: 4 Max: 30`)",
        ));
    }
    let threads: Vec<usize> = console.status.keys().copied().collect();
    let labels = console.labels(&threads);
    let mut warnings = Vec::new();
    let mut series = Vec::new();
    for (&t, st) in &console.status {
        let us = |v: Option<u64>| v.map(|v| v.saturating_mul(1000));
        let r = Reported {
            count: st.cycles,
            min_ns: us(st.min_us),
            mean_ns: us(st.avg_us),
            max_ns: us(st.max_us),
            ..Default::default()
        };
        let what = format!("cyclictest thread {t}");
        // One note for the whole file says there is no distribution (below), not one a thread.
        let mut s = series_of("latency", &labels[&t], &r, &mut Vec::new(), &what);
        per_thread(&mut s, st.interval_us, st.priority);
        count_lost_periods(
            &mut s,
            &r,
            st.interval_us.saturating_mul(1000),
            &mut warnings,
            &what,
        );
        if !st.cut.is_empty() {
            warnings.push(Warning::new(
                "imported_cut_off",
                format!(
                    "{what}: its status line (line {}) was cut off before {} (the display was stopped): imported with what it has, no figure assumed",
                    st.line,
                    st.cut.join(", ")
                ),
            ));
        }
        series.push(s);
    }
    for line in unreadable {
        warnings.push(Warning::new(
            "imported_cut_off",
            format!("line {line} is a status line cut off before its count: not imported"),
        ));
    }
    warnings.insert(
        0,
        Warning::new(
            "imported_without_histogram",
            "cyclictest's status lines give count, minimum, average and maximum per thread only (no distribution): median, percentiles and histograms are absent; cyclictest -h US, --histfile, --json or -v keeps them",
        ),
    );
    let mut shell = console.shell();
    shell
        .lacks
        .push("status lines only: no distribution (count, min, avg and max per thread)".into());
    let cut: Vec<String> = console
        .status
        .values()
        .filter(|s| !s.cut.is_empty())
        .map(|s| {
            format!(
                "thread {}'s line was cut off (no {})",
                s.thread,
                s.cut.join(", ")
            )
        })
        .collect();
    shell.lacks.extend(cut);
    Ok(document(path, shell, CYCLIC, series, warnings))
}

/// The interval and priority a thread ran at, kept on its series.
fn per_thread(s: &mut Series, interval_us: u64, priority: i32) {
    s.counters
        .insert(INTERVAL_COUNTER.into(), interval_us.saturating_mul(1000));
    if let Ok(p) = u64::try_from(priority) {
        s.counters.insert(PRIORITY_COUNTER.into(), p);
    }
}

/// Each thread's interval, µs, from what `-v` printed: cyclictest prints `Thread N Interval:`
/// after adding the distance to the next thread (`-d`, 500 µs by default; not added with
/// `-h`), so each printed value is the thread's interval plus that distance. Two threads or
/// more tell the distance (the printed values' step); one thread needs the command line.
/// Empty when neither does.
fn true_intervals(printed: &BTreeMap<usize, u64>, console: &Console) -> BTreeMap<usize, u64> {
    let values: Vec<(usize, u64)> = printed.iter().map(|(&t, &us)| (t, us)).collect();
    let distance = match values[..] {
        [] => return BTreeMap::new(),
        [_] => {
            if console.command.is_empty() {
                return BTreeMap::new();
            }
            let opts = crate::cyclictest::Options::parse("cyclictest", &console.command);
            if opts.has("histogram") || opts.has("histofall") {
                0
            } else {
                match opts.get("distance") {
                    Some(d) => match d.parse() {
                        Ok(d) => d,
                        Err(_) => return BTreeMap::new(),
                    },
                    None => 500,
                }
            }
        }
        _ => {
            // Consecutive thread numbers one distance apart, every step the same.
            let steps: Vec<Option<u64>> = values
                .windows(2)
                .map(|w| {
                    let threads_apart = (w[1].0 - w[0].0) as u64;
                    let step = w[1].1.checked_sub(w[0].1)?;
                    (threads_apart > 0 && step % threads_apart == 0).then(|| step / threads_apart)
                })
                .collect();
            match steps[..] {
                [Some(d), ..] if steps.iter().all(|s| *s == Some(d)) => d,
                _ => return BTreeMap::new(),
            }
        }
    };
    values
        .into_iter()
        .filter_map(|(t, us)| Some((t, us.checked_sub(distance).filter(|&i| i > 0)?)))
        .collect()
}

/// `       0:       4:      65` → (thread, cycle, latency µs).
pub(crate) fn sample_line(line: &str) -> Option<(usize, u64, u64)> {
    let mut fields = line.split(':').map(str::trim);
    let sample = (
        fields.next()?.parse().ok()?,
        fields.next()?.parse().ok()?,
        fields.next()?.parse().ok()?,
    );
    fields.next().is_none().then_some(sample)
}

/// The samples of one thread: latency µs → count.
#[derive(Default)]
struct Samples {
    histogram: BTreeMap<u64, u64>,
    count: u64,
}

pub fn parse_verbose(path: &Path, text: &str) -> Result<RunResult, ImportError> {
    let mut console = Console::default();
    let mut printed: BTreeMap<usize, u64> = BTreeMap::new();
    let mut threads: BTreeMap<usize, Samples> = BTreeMap::new();
    let mut warnings = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    let last = lines
        .iter()
        .rposition(|l| !l.trim().is_empty())
        .unwrap_or(0);
    for (i, raw) in lines.iter().enumerate() {
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if let Some((t, _, us)) = sample_line(line) {
            let s = threads.entry(t).or_default();
            *s.histogram.entry(us).or_default() += 1;
            s.count += 1;
            continue;
        }
        // `Thread 0 Interval: 1000`
        if let Some(rest) = line.strip_prefix("Thread ") {
            if let Some((t, us)) = rest.split_once("Interval:") {
                if let (Ok(t), Ok(us)) = (t.trim().parse(), us.trim().parse()) {
                    printed.insert(t, us);
                    continue;
                }
            }
        }
        if console.read(line, i + 1) {
            continue;
        }
        let sample_like = line.split(':').count() >= 2
            && line.split(':').all(|f| {
                let f = f.trim();
                f.is_empty()
                    || f.trim_start_matches('-')
                        .chars()
                        .all(|c| c.is_ascii_digit())
            });
        if !sample_like {
            // Headers (`Max CPUs = 8`, `# /dev/cpu_dma_latency set to 0us`) are not data.
            continue;
        }
        if i == last {
            warnings.push(Warning::new(
                "imported_cut_off",
                format!(
                    "the last line (line {}, `{}`) was cut off: not imported",
                    i + 1,
                    shown(line)
                ),
            ));
            continue;
        }
        return Err(malformed(
            path,
            i + 1,
            format!(
                "`{}` is not a sample (thread:cycle:latency, in whole µs)",
                shown(line)
            ),
        ));
    }
    if threads.is_empty() {
        return Err(malformed(
            path,
            1,
            "no sample line (`thread:cycle:latency`, as cyclictest -v prints them)",
        ));
    }
    let labels = console.labels(&threads.keys().copied().collect::<Vec<_>>());
    let intervals = true_intervals(&printed, &console);
    if intervals.is_empty() && !printed.is_empty() {
        warnings.push(Warning::new(
            "imported_interval_unknown",
            "cyclictest -v prints each thread's interval plus the distance to the next thread's (-d, 500 µs unless given); with one thread and no command line in the file that distance is unknown, so the period and the periods lost are not given",
        ));
    }
    let mut series = Vec::new();
    for (&t, samples) in &threads {
        let r = Reported {
            buckets: samples
                .histogram
                .iter()
                .map(|(&us, &n)| (us.saturating_mul(1000), n))
                .collect(),
            count: samples.count,
            min_ns: samples
                .histogram
                .keys()
                .next()
                .map(|v| v.saturating_mul(1000)),
            max_ns: samples
                .histogram
                .keys()
                .last()
                .map(|v| v.saturating_mul(1000)),
            ..Default::default()
        };
        let what = format!("cyclictest thread {t}");
        let mut s = series_of("latency", &labels[&t], &r, &mut warnings, &what);
        if let Some(&us) = intervals.get(&t) {
            s.counters
                .insert(INTERVAL_COUNTER.into(), us.saturating_mul(1000));
            count_lost_periods(&mut s, &r, us.saturating_mul(1000), &mut warnings, &what);
        }
        series.push(s);
    }
    let mut shell = console.shell();
    let mut distinct: Vec<u64> = intervals.values().copied().collect();
    distinct.sort_unstable();
    distinct.dedup();
    if let [us] = distinct[..] {
        shell.params.insert("period".into(), format!("{us}us"));
    } else if !distinct.is_empty() {
        shell.params.remove("period");
        let all: Vec<String> = distinct.iter().map(|i| format!("{i}us")).collect();
        shell.params.insert("periods".into(), all.join(","));
    }
    Ok(document(path, shell, CYCLIC, series, warnings))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_lines_are_three_whole_numbers() {
        assert_eq!(sample_line("       0:       4:      65"), Some((0, 4, 65)));
        assert_eq!(sample_line("1:2"), None);
        assert_eq!(sample_line("1:2:3:4"), None);
        assert_eq!(sample_line("T: 0 (1) P:95"), None);
        assert_eq!(sample_line("0:1:-3"), None);
    }

    #[test]
    fn verbose_samples_give_the_exact_distribution_and_lost_periods() {
        // Printed with the distance to the next thread added: -i1000 -d500.
        let text = "# cyclictest -v -t1 -i1000\nThread 0 Interval: 1500\n0:0:10\n0:1:2016\n0:2:20\n0:3:10\n";
        let r = parse_verbose(Path::new("v.txt"), text).unwrap();
        let s = &r.runs[0].series[0];
        assert_eq!(s.stats.count, 4);
        assert_eq!(s.stats.min_ns, Some(10_000));
        assert_eq!(s.stats.max_ns, Some(2_016_000));
        assert_eq!(s.stats.mean_ns, Some(514_000));
        // 2016 µs late at a 1 ms interval: two periods skipped.
        assert_eq!(s.counters["overruns"], 2);
        assert_eq!(r.runs[0].params["period"], "1000us");
    }

    #[test]
    fn verbose_intervals_are_printed_one_distance_late() {
        let printed = |pairs: &[(usize, u64)]| pairs.iter().copied().collect::<BTreeMap<_, _>>();
        let none = Console::default();
        // -d0: the same; -i1000 -d500 over three threads: 1500, 2000, 2500 printed.
        assert_eq!(
            true_intervals(&printed(&[(0, 1000), (1, 1000)]), &none),
            printed(&[(0, 1000), (1, 1000)])
        );
        assert_eq!(
            true_intervals(&printed(&[(0, 1500), (1, 2000), (2, 2500)]), &none),
            printed(&[(0, 1000), (1, 1500), (2, 2000)])
        );
        // One thread: the distance is the command line's, or unknown.
        assert!(true_intervals(&printed(&[(0, 1500)]), &none).is_empty());
        let mut with_d = Console::default();
        with_d.read("# cyclictest -v -d 200 -i 1000", 1);
        assert_eq!(
            true_intervals(&printed(&[(0, 1200)]), &with_d),
            printed(&[(0, 1000)])
        );
        // Steps that disagree: not a distance.
        assert!(true_intervals(&printed(&[(0, 1500), (1, 2000), (2, 2600)]), &none).is_empty());
    }

    #[test]
    fn a_cut_last_sample_is_left_out_and_said() {
        let text = "0:0:10\n0:1:12\n0:2:";
        let r = parse_verbose(Path::new("v.txt"), text).unwrap();
        assert_eq!(r.runs[0].series[0].stats.count, 2);
        assert!(r.warnings.iter().any(|w| w.code == "imported_cut_off"));
        let broken = "0:0:10\n0:1:\n0:2:12\n";
        let e = parse_verbose(Path::new("v.txt"), broken).unwrap_err();
        assert!(e.to_string().contains("v.txt:2:"), "{e}");
    }

    #[test]
    fn status_lines_past_one_period_do_not_claim_no_lost_period() {
        let text = "T: 0 (1) P:95 I:1000 C: 100 Min: 3 Act: 5 Avg: 4 Max: 2016\n\
                    T: 1 (2) P:95 I:1000 C: 100 Min: 3 Act: 5 Avg: 4 Max: 30\n";
        let r = parse_status(Path::new("s.txt"), text).unwrap();
        let s = &r.runs[0].series;
        assert!(!s[0].counters.contains_key("overruns"));
        assert_eq!(s[1].counters["overruns"], 0);
        assert!(r
            .warnings
            .iter()
            .any(|w| w.code == "imported_lost_periods_unknown" && w.message.contains("thread 0")));
    }
}
