//! cyclictest's console output around its figures: the status lines of its live display
//! (`T: 0 (1234) P:95 I:1000 C: 100000 Min: 3 Act: 5 Avg: 4 Max: 30`), the `policy:`
//! header, a pasted command line; and its histogram text (`-h US`/`-H US` on stdout, after
//! its status lines unless `-q`, or `--histfile`).

use crate::cyclictest::{settings, Options};
use crate::{
    count_lost_periods, document, malformed, series_of, shown, strip_escapes, to_ns, ImportError,
    Reported, Shell,
};
use rtgauge_probes::names::CYCLIC;
use rtgauge_result::RunResult;
use std::collections::BTreeMap;
use std::path::Path;

/// One status line: `T: 0 (17745) P:95 I:500 C:   2000 Min: 7 Act: 9 Avg: 24 Max: 2250`.
/// The TID in brackets is skipped (wider TIDs overflow cyclictest's column: words, not
/// columns, are read).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Status {
    pub thread: usize,
    pub priority: i32,
    pub interval_us: u64,
    pub cycles: u64,
    pub min_us: Option<u64>,
    pub avg_us: Option<u64>,
    pub max_us: Option<u64>,
    /// The figures missing at the end of a line cut off (a live display stopped by Ctrl-C).
    pub cut: Vec<&'static str>,
    pub line: usize,
}

impl Status {
    /// The status line in `raw` (escape sequences and text before `T:` skipped), or None when
    /// it has no thread, priority, interval and count.
    pub(crate) fn parse(raw: &str, line: usize) -> Option<Status> {
        let cleaned = strip_escapes(raw);
        let at = cleaned.find("T:")?;
        let mut fields = BTreeMap::new();
        let tokens: Vec<&str> = cleaned[at..].split_whitespace().collect();
        let mut i = 0;
        while i < tokens.len() {
            let tok = tokens[i];
            if let Some((k, v)) = tok.split_once(':') {
                if v.is_empty() {
                    let next = tokens.get(i + 1).copied().unwrap_or("");
                    // `Max:` at the end of a cut line, or followed by the next key.
                    if next.contains(':') {
                        fields.insert(k, "");
                        i += 1;
                        continue;
                    }
                    fields.insert(k, next);
                    i += 2;
                    continue;
                }
                fields.insert(k, v);
            }
            i += 1;
        }
        let number = |k: &str| fields.get(k).and_then(|v| v.parse::<u64>().ok());
        let mut cut = Vec::new();
        let mut figure = |k: &'static str| {
            let v = number(k);
            if v.is_none() {
                cut.push(k);
            }
            v
        };
        let (min_us, avg_us, max_us) = (figure("Min"), figure("Avg"), figure("Max"));
        Some(Status {
            thread: fields.get("T")?.parse().ok()?,
            priority: fields.get("P")?.parse().ok()?,
            interval_us: fields.get("I")?.parse().ok()?,
            cycles: fields.get("C")?.parse().ok()?,
            min_us,
            avg_us,
            max_us,
            cut,
            line,
        })
    }
}

/// What cyclictest prints around its figures.
#[derive(Debug, Default)]
pub(crate) struct Console {
    /// The last status line of each thread (the live display rewrites them in place).
    pub status: BTreeMap<usize, Status>,
    /// `policy: fifo: loadavg: …` → fifo.
    pub policy: Option<String>,
    /// The words of a cyclictest command line pasted with the output (a prompt line).
    pub command: Vec<String>,
    /// `Thread 0 using cpu 3.` (what cyclictest -v prints): thread → CPU.
    pub thread_cpus: BTreeMap<usize, usize>,
}

impl Console {
    /// Takes `line` if it is a status line, the policy header or a command line.
    pub(crate) fn read(&mut self, line: &str, line_no: usize) -> bool {
        if let Some(rest) = line.find("policy:").map(|at| &line[at + 7..]) {
            self.policy = rest.split(':').next().map(|p| p.trim().to_string());
            return true;
        }
        if let Some(s) = Status::parse(line, line_no) {
            self.status.insert(s.thread, s);
            return true;
        }
        if let Some((t, cpu)) = line
            .strip_prefix("Thread ")
            .and_then(|rest| rest.trim_end_matches('.').split_once(" using cpu "))
        {
            if let (Ok(t), Ok(cpu)) = (t.trim().parse(), cpu.trim().parse()) {
                self.thread_cpus.insert(t, cpu);
                return true;
            }
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        if let Some(at) = words
            .iter()
            .position(|w| *w == "cyclictest" || w.ends_with("/cyclictest"))
        {
            if self.command.is_empty() && words[at + 1..].iter().any(|w| w.starts_with('-')) {
                self.command = words[at..].iter().map(|w| w.to_string()).collect();
                return true;
            }
        }
        false
    }

    /// Where the command line puts the threads: `-a LIST` thread N on the (N mod length)th
    /// CPU of the list; `--smp` and a bare `-a` thread N on the Nth online CPU, CPU N when
    /// none is offline. None when the file has no command line or it does not say.
    fn placement(&self) -> Option<Vec<usize>> {
        if self.command.is_empty() {
            return None;
        }
        let opts = Options::parse("cyclictest", &self.command);
        match opts.get("affinity") {
            Some(list) => cpu_list(list),
            // Thread N on CPU N: the empty list stands for that.
            None if opts.has("smp") || opts.has("affinity") => Some(Vec::new()),
            None => None,
        }
    }

    /// The labels of each of `threads`: `cpu=N` where the CPU is known (with `thread` too
    /// when two threads share it), else `thread=N`.
    pub(crate) fn labels(&self, threads: &[usize]) -> BTreeMap<usize, Vec<(&'static str, String)>> {
        let placement = self.placement();
        let cpu_of = |t: usize| {
            if let Some(&cpu) = self.thread_cpus.get(&t) {
                return Some(cpu);
            }
            let list = placement.as_ref()?;
            Some(if list.is_empty() {
                t
            } else {
                list[t % list.len()]
            })
        };
        let mut sharing: BTreeMap<usize, usize> = BTreeMap::new();
        for &t in threads {
            if let Some(cpu) = cpu_of(t) {
                *sharing.entry(cpu).or_default() += 1;
            }
        }
        threads
            .iter()
            .map(|&t| {
                let labels = match cpu_of(t) {
                    None => vec![("thread", t.to_string())],
                    Some(cpu) if sharing[&cpu] > 1 => {
                        vec![("cpu", cpu.to_string()), ("thread", t.to_string())]
                    }
                    Some(cpu) => vec![("cpu", cpu.to_string())],
                };
                (t, labels)
            })
            .collect()
    }

    /// The run's settings: from the command line where there is one, then the status lines
    /// (priority, interval) and the policy header.
    pub(crate) fn shell(&self) -> Shell {
        let mut shell = Shell {
            tool: "cyclictest".into(),
            command_line: self.command.clone(),
            ..Default::default()
        };
        if !self.command.is_empty() {
            let opts = Options::parse("cyclictest", &self.command);
            settings(&mut shell, "cyclictest", &opts, &[], false);
        }
        if let Some(first) = self.status.values().next() {
            shell.priority = Some(first.priority);
            shell.policy =
                Some(self.policy.clone().unwrap_or_else(|| {
                    if first.priority > 0 { "fifo" } else { "other" }.to_string()
                }));
            let mut intervals: Vec<u64> = self.status.values().map(|s| s.interval_us).collect();
            intervals.dedup();
            if let [interval] = intervals[..] {
                shell
                    .params
                    .insert("period".into(), format!("{interval}us"));
            } else {
                // Threads at different intervals (--smp without -d0): each series has its own.
                shell.params.remove("period");
                let all: Vec<String> = intervals.iter().map(|i| format!("{i}us")).collect();
                shell.params.insert("periods".into(), all.join(","));
            }
        }
        shell
    }
}

/// `0-3,6` → [0, 1, 2, 3, 6]; None for what is not a plain CPU list.
fn cpu_list(list: &str) -> Option<Vec<usize>> {
    let mut cpus = Vec::new();
    for part in list.split(',') {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (a.parse().ok()?, b.parse().ok()?);
                if b < a || b - a > 4096 {
                    return None;
                }
                cpus.extend(a..=b);
            }
            None => cpus.push(part.parse().ok()?),
        }
    }
    (!cpus.is_empty()).then_some(cpus)
}

/// cyclictest's histogram text: `# Histogram`, one row per µs (`000012 000040 000033`, a
/// column per thread, with `-H` one more for all threads), then `# Total:`, `# Min
/// Latencies:`, `# Avg Latencies:`, `# Max Latencies:`, `# Histogram Overflows:` (the
/// older versions lack some of them). Status lines (`T: 0 (1234) P:95 I:1000 C: …`) before
/// the histogram give the priority, interval and cycles.
pub fn parse_text(path: &Path, text: &str) -> Result<RunResult, ImportError> {
    let mut rows: Vec<(u64, Vec<u64>)> = Vec::new();
    let mut summary: BTreeMap<&str, (usize, Vec<u64>)> = BTreeMap::new();
    let mut avg: Option<Vec<f64>> = None;
    let mut console = Console::default();
    let mut in_histogram = false;
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        // Status lines move the cursor with escape sequences; the text around them counts.
        let cleaned = strip_escapes(raw);
        let line = cleaned.trim();
        if line.is_empty() {
            continue;
        }
        if !in_histogram && console.read(line, line_no) {
            continue;
        }
        if line == "# Histogram" {
            in_histogram = true;
            continue;
        }
        if let Some(comment) = line.strip_prefix('#') {
            let comment = comment.trim();
            for key in [
                "Total:",
                "Min Latencies:",
                "Max Latencies:",
                "Histogram Overflows:",
            ] {
                if let Some(values) = comment.strip_prefix(key) {
                    let parsed = numbers(values).ok_or_else(|| {
                        let what = format!("`# {key}` is followed by `{}`", shown(values.trim()));
                        malformed(path, line_no, format!("{what}, not whole numbers"))
                    })?;
                    summary.insert(key, (line_no, parsed));
                }
            }
            if let Some(values) = comment.strip_prefix("Avg Latencies:") {
                avg = Some(numbers(values).ok_or_else(|| {
                    let what = format!(
                        "`# Avg Latencies:` is followed by `{}`",
                        shown(values.trim())
                    );
                    malformed(path, line_no, format!("{what}, not numbers"))
                })?);
            }
            continue;
        }
        if !in_histogram {
            // What cyclictest prints before measuring (WARN:, policy lines) is not data.
            continue;
        }
        let not_a_row = || {
            let what = "a latency in µs, then one count per thread";
            malformed(
                path,
                line_no,
                format!("`{}` is not a histogram row ({what})", shown(line)),
            )
        };
        let cells: Vec<u64> = numbers(line).ok_or_else(not_a_row)?;
        if cells.len() < 2 {
            return Err(not_a_row());
        }
        if let Some(first) = rows.first() {
            if first.1.len() != cells.len() - 1 {
                return Err(malformed(
                    path,
                    line_no,
                    format!(
                        "{} counts where the first row has {}",
                        cells.len() - 1,
                        first.1.len()
                    ),
                ));
            }
        }
        rows.push((cells[0], cells[1..].to_vec()));
    }
    if rows.is_empty() && !summary.contains_key("Max Latencies:") {
        return Err(malformed(
            path,
            1,
            "no `# Histogram` rows and no `# Max Latencies:` line: not cyclictest -h/--histfile output",
        ));
    }
    // Threads: the Min line has one value per thread (-H adds a column to rows, Total, Max
    // and Overflows, never to Min and Avg).
    let columns = rows.first().map_or(0, |r| r.1.len());
    let threads = summary
        .get("Min Latencies:")
        .map(|m| m.1.len())
        .or_else(|| avg.as_ref().map(Vec::len))
        .unwrap_or(columns.max(1));
    if columns > 0 && columns != threads && columns != threads + 1 {
        return Err(malformed(
            path,
            rows.len(),
            format!("{columns} histogram columns for {threads} threads (the Min Latencies line)"),
        ));
    }
    let limit_ns = rows
        .last()
        .map(|r| r.0.saturating_add(1).saturating_mul(1000));
    let at = |key: &str, t: usize| summary.get(key).and_then(|v| v.1.get(t).copied());
    let mut warnings = Vec::new();
    let mut series = Vec::new();
    let shell = console.shell();
    let period_us = shell
        .params
        .get("period")
        .and_then(|p| p.strip_suffix("us")?.parse::<u64>().ok());
    let labels = console.labels(&(0..threads).collect::<Vec<_>>());
    for t in 0..threads {
        let buckets: Vec<(u64, u64)> = rows
            .iter()
            .map(|r| (r.0.saturating_mul(1000), r.1[t]))
            .collect();
        let in_hist: u64 = buckets.iter().fold(0u64, |a, b| a.saturating_add(b.1));
        let overflow = at("Histogram Overflows:", t);
        let cycles = console.status.get(&t).map(|s| s.cycles);
        let count = match (at("Total:", t), overflow) {
            (Some(total), Some(o)) => total.saturating_add(o),
            (Some(total), None) => total,
            (None, Some(o)) => in_hist.saturating_add(o),
            (None, None) => cycles.unwrap_or(in_hist),
        };
        let r = Reported {
            buckets,
            count,
            overflow: overflow.or_else(|| cycles.map(|c| c.saturating_sub(in_hist))),
            limit_ns: limit_ns.filter(|_| !rows.is_empty()),
            min_ns: at("Min Latencies:", t).map(|v| v.saturating_mul(1000)),
            max_ns: at("Max Latencies:", t).map(|v| v.saturating_mul(1000)),
            mean_ns: avg
                .as_ref()
                .and_then(|a| a.get(t))
                .and_then(|&v| to_ns(v, 1000)),
            ..Default::default()
        };
        let what = format!("cyclictest thread {t}");
        let mut s = series_of("latency", &labels[&t], &r, &mut warnings, &what);
        // The thread's own interval (they differ with --smp and no -d0), else the run's.
        let interval = console.status.get(&t).map(|s| s.interval_us).or(period_us);
        if let Some(us) = interval {
            count_lost_periods(&mut s, &r, us.saturating_mul(1000), &mut warnings, &what);
        }
        series.push(s);
    }
    Ok(document(path, shell, CYCLIC, series, warnings))
}

/// Every whitespace-separated word of `text` as a number; None when one is not.
fn numbers<T: std::str::FromStr>(text: &str) -> Option<Vec<T>> {
    text.split_whitespace().map(|v| v.parse().ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_lines_give_priority_cycles_interval_and_figures() {
        let s = Status::parse(
            "T: 0 (17745) P:95 I:500 C:   2000 Min:      7 Act:   9 Avg:   24 Max:    2250",
            3,
        )
        .unwrap();
        assert_eq!(
            (s.thread, s.priority, s.cycles, s.interval_us),
            (0, 95, 2000, 500)
        );
        assert_eq!(
            (s.min_us, s.avg_us, s.max_us),
            (Some(7), Some(24), Some(2250))
        );
        assert!(s.cut.is_empty());
        // A TID wider than cyclictest's column, thread numbers of two digits.
        let s = Status::parse(
            "T:12 (1045071) P:95 I:1000 C:  69385 Min: 4 Act: 10 Avg: 8 Max: 34",
            1,
        )
        .unwrap();
        assert_eq!((s.thread, s.max_us), (12, Some(34)));
    }

    #[test]
    fn a_cut_off_status_line_keeps_what_it_has() {
        let s = Status::parse(
            "T: 7 (29072) P:95 I:4500 C:    110 Min:      2 Act:    2 Avg:    2 Max:",
            12,
        )
        .unwrap();
        assert_eq!(
            (s.cycles, s.min_us, s.avg_us, s.max_us),
            (110, Some(2), Some(2), None)
        );
        assert_eq!(s.cut, ["Max"]);
        let s = Status::parse("T: 7 (29072) P:95 I:4500 C:    110 Min:", 12).unwrap();
        assert_eq!(s.cut, ["Min", "Avg", "Max"]);
        assert_eq!(Status::parse("T: 7 (29072) P:95 I:4500 C:", 12), None);
    }

    #[test]
    fn a_pasted_command_line_tells_the_cpus() {
        let labels = |line: &str, threads: &[usize]| {
            let mut c = Console::default();
            c.read(line, 1);
            c.labels(threads)
                .into_values()
                .map(|l| {
                    l.iter()
                        .map(|(k, v)| format!("{k}={v}"))
                        .collect::<Vec<_>>()
                        .join(",")
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(
            labels("[root@host ~]# cyclictest --smp -p95 -m", &[0, 1, 2]),
            ["cpu=0", "cpu=1", "cpu=2"]
        );
        assert_eq!(
            labels("$ sudo cyclictest -t2 -a 4-5 -p 80", &[0, 1]),
            ["cpu=4", "cpu=5"]
        );
        assert_eq!(
            labels("# cyclictest -t2 -a 3 -p 80", &[0, 1]),
            ["cpu=3,thread=0", "cpu=3,thread=1"]
        );
        // Without a command line the CPU is not known…
        assert_eq!(labels("policy: fifo: loadavg: 0.05", &[0]), ["thread=0"]);
        // …unless cyclictest said it (-v prints where each thread runs).
        assert_eq!(labels("Thread 0 using cpu 3.", &[0]), ["cpu=3"]);
    }
}
