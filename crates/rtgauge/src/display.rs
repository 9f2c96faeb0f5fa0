//! Where a run stands, shown from a thread that stays off the measured CPUs: on a terminal,
//! the live per-CPU view redrawn in place a few times a second under a progress line (probe k
//! of n, elapsed, time left); in a log (stderr not a terminal), that progress line every few
//! seconds, so CI logs show a run is alive.

use crate::cli::ColorChoice;
use rtgauge_core::live::LiveBoard;
use rtgauge_core::units::format_duration_ns;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const REFRESH: Duration = Duration::from_millis(250);
/// How often a log gets a progress line.
const LOG_EVERY: Duration = Duration::from_secs(5);
/// Estimates beyond this are not estimates (`--duration forever`): no time left is shown.
const LONGEST_ESTIMATE_NS: u64 = 366 * 24 * 3600 * 1_000_000_000;

/// Where the run stands: which of its probe runs is measuring, since when, and how long the
/// rest should take.
pub struct Progress {
    started: Instant,
    /// Expected length (warm-up + duration) of each probe run in run order; None where a
    /// sample count, not a time, ends it.
    estimates_ns: Vec<Option<u64>>,
    /// The probe run measuring now (1-based; 0 before the first), when it began, its label.
    current: Mutex<(usize, Instant, String)>,
}

impl Progress {
    pub fn new(estimates_ns: Vec<Option<u64>>) -> Arc<Progress> {
        let now = Instant::now();
        Arc::new(Progress {
            started: now,
            estimates_ns,
            current: Mutex::new((0, now, String::new())),
        })
    }

    /// The next probe run has started.
    pub fn start_next(&self, label: String) {
        if let Ok(mut c) = self.current.lock() {
            *c = (c.0 + 1, Instant::now(), label);
        }
    }

    /// `probe 3 of 8 · clock · mode rt · load none · 0:42 elapsed · about 1:10 left`
    /// [`Progress::line`] as a log prints it: `rtgauge: …`, wrapped to the terminal's width.
    pub fn log_line(&self) -> String {
        let line = format!("rtgauge: {}\n", self.line());
        rtgauge_report::format::fit_lines(line, rtgauge_report::Style::Plain)
    }

    pub fn line(&self) -> String {
        let Ok(c) = self.current.lock() else {
            return String::new();
        };
        let (index, since, label) = (c.0, c.1, c.2.clone());
        drop(c);
        let total = self.estimates_ns.len().max(1);
        // A soak run goes round its probes again and again.
        let mut line = format!("probe {} of {total}", (index.max(1) - 1) % total + 1);
        if !label.is_empty() {
            line.push_str(&format!(" · {label}"));
        }
        line.push_str(&format!(
            " · {} elapsed",
            clock_time(self.started.elapsed())
        ));
        if let Some(left) = self
            .time_left(index, since.elapsed())
            .filter(|_| index <= total)
        {
            // Counted down in whole seconds, rounded up: 4.99 s left is "0:05".
            let left = Duration::from_secs(left.as_secs() + u64::from(left.subsec_nanos() > 0));
            line.push_str(&format!(" · about {} left", clock_time(left)));
        }
        line
    }

    /// The rest of the current probe run and all later ones; None when one of them has no
    /// time estimate.
    fn time_left(&self, index: usize, in_current: Duration) -> Option<Duration> {
        let mut left: u64 = 0;
        for (i, estimate) in self
            .estimates_ns
            .iter()
            .enumerate()
            .skip(index.saturating_sub(1))
        {
            let estimate = (*estimate).filter(|&e| e <= LONGEST_ESTIMATE_NS)?;
            let done = if i + 1 == index {
                u64::try_from(in_current.as_nanos()).unwrap_or(u64::MAX)
            } else {
                0
            };
            left = left.saturating_add(estimate.saturating_sub(done));
        }
        Some(Duration::from_nanos(left))
    }
}

/// `0:42`, `12:05`, `1:02:03`.
fn clock_time(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

/// Whether progress goes to a log as lines (stderr is not a terminal).
pub fn progress_as_lines() -> bool {
    !std::io::stderr().is_terminal()
}

pub struct LiveDisplay {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl LiveDisplay {
    /// Starts the display thread: the live view on a terminal, progress lines in a log. None
    /// in a log when every CPU is measured: a line every few seconds is not worth a wake-up
    /// on a measured CPU (the progress line at each probe's start still comes).
    pub fn start(
        board: Arc<LiveBoard>,
        measured_cpus: &[usize],
        progress: Arc<Progress>,
    ) -> Option<LiveDisplay> {
        let housekeeping = rtgauge_core::cpus::housekeeping_cpus(measured_cpus);
        let as_lines = progress_as_lines();
        if as_lines && housekeeping.is_empty() {
            return None;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let thread = std::thread::Builder::new()
            .name("rtgauge-display".into())
            .spawn(move || {
                rtgauge_core::rt::pin_thread_to_set(&housekeeping);
                if as_lines {
                    log_loop(&progress, &s);
                } else {
                    draw_loop(&board, &s, &progress);
                }
            })
            .ok()?;
        Some(LiveDisplay {
            stop,
            thread: Some(thread),
        })
    }
}

fn log_loop(progress: &Progress, stop: &AtomicBool) {
    let mut last = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(REFRESH);
        if last.elapsed() >= LOG_EVERY {
            last = Instant::now();
            eprint!("{}", progress.log_line());
        }
    }
}

fn draw_loop(board: &LiveBoard, stop: &AtomicBool, progress: &Progress) {
    let mut drawn = 0usize;
    let mut err = std::io::stderr();
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(REFRESH);
        let (_, cells) = board.snapshot();
        let mut frame = String::new();
        if drawn > 0 {
            frame.push_str(&format!("\x1b[{drawn}A"));
        }
        let heading = progress.line();
        frame.push_str(&format!("\r\x1b[K{heading}\n"));
        frame.push_str(&format!(
            "\r\x1b[K  {:<8} {:>10} {:>10} {:>10} {:>10} {:>10} {:>9}\n",
            "thread", "samples", "current", "min", "avg", "max", "overruns"
        ));
        for (label, s) in &cells {
            frame.push_str(&format!(
                "\r\x1b[K  {:<8} {:>10} {:>10} {:>10} {:>10} {:>10} {:>9}\n",
                label,
                s.count,
                format_duration_ns(s.last),
                format_duration_ns(s.min),
                format_duration_ns(s.avg),
                format_duration_ns(s.max),
                s.overruns
            ));
        }
        let lines = 2 + cells.len();
        // Blank lines left over from a previous, longer frame.
        for _ in lines..drawn {
            frame.push_str("\r\x1b[K\n");
        }
        let _ = err.write_all(frame.as_bytes());
        drawn = lines.max(drawn);
    }
    // Erase the view so the final table starts on a clean screen.
    if drawn > 0 {
        let _ = write!(err, "\x1b[{drawn}A\x1b[J");
    }
}

impl Drop for LiveDisplay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The `--color` choice, set once from the command line before any command runs.
static COLOR: OnceLock<ColorChoice> = OnceLock::new();

pub fn set_color(choice: ColorChoice) {
    let _ = COLOR.set(choice);
}

/// Fits text output to the terminal: COLUMNS when set (a script or test asks for a width),
/// else the terminal's own width; piped output keeps the full 100 columns.
pub fn fit_width() {
    let columns = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|c| *c > 0)
        .or_else(rtgauge_os::io::terminal_columns);
    if let Some(columns) = columns {
        rtgauge_report::format::set_width(columns);
    }
}

/// The width text output fits (see [`fit_width`]).
pub fn width() -> usize {
    rtgauge_report::format::width()
}

/// Whether verdicts printed on standard output get colour.
pub fn color_on_stdout() -> bool {
    use_color(
        COLOR.get().copied().unwrap_or(ColorChoice::Auto),
        std::io::stdout().is_terminal(),
        std::env::var_os("NO_COLOR"),
    )
}

/// Whether notices printed on standard error get colour.
pub fn color_on_stderr() -> bool {
    use_color(
        COLOR.get().copied().unwrap_or(ColorChoice::Auto),
        std::io::stderr().is_terminal(),
        std::env::var_os("NO_COLOR"),
    )
}

/// `auto` colours a terminal unless NO_COLOR is set to anything but the empty string
/// (no-color.org); an explicit choice wins over both.
fn use_color(choice: ColorChoice, terminal: bool, no_color: Option<std::ffi::OsString>) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => terminal && no_color.is_none_or(|v| v.is_empty()),
    }
}

/// A notice that must not be missed: bold yellow when colour is on.
pub fn emphasis(text: &str, color: bool) -> String {
    if color {
        format!("\x1b[1;33m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

/// How tables are drawn on standard output: box drawing only on a UTF-8 terminal, ASCII
/// when piped, logged or on a terminal of another charset.
pub fn text_style() -> rtgauge_report::Style {
    if std::io::stdout().is_terminal() && utf8_locale() {
        rtgauge_report::Style::Terminal
    } else {
        rtgauge_report::Style::Plain
    }
}

/// Whether the locale's charset is UTF-8 (the first of LC_ALL, LC_CTYPE, LANG that is set).
fn utf8_locale() -> bool {
    ["LC_ALL", "LC_CTYPE", "LANG"]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
        .is_some_and(|v| {
            let v = v.to_ascii_lowercase();
            v.contains("utf-8") || v.contains("utf8")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_counts_probe_runs_and_estimates_the_time_left() {
        let p = Progress::new(vec![Some(10_000_000_000), Some(20_000_000_000)]);
        p.start_next("clock · mode rt · load none".into());
        let line = p.line();
        assert!(line.starts_with("probe 1 of 2 · clock · mode rt · load none · 0:00 elapsed"));
        // Both runs still to come, give or take the few microseconds since start_next.
        assert!(
            line.ends_with("about 0:29 left") || line.ends_with("about 0:30 left"),
            "{line}"
        );
        p.start_next("cyclic · mode rt · load none".into());
        assert!(p.line().starts_with("probe 2 of 2 · cyclic"));
    }

    #[test]
    fn no_time_left_is_shown_without_an_estimate() {
        let p = Progress::new(vec![Some(1_000_000_000), None]);
        p.start_next("a".into());
        assert!(!p.line().contains("left"), "{}", p.line());
        let forever = Progress::new(vec![Some(u64::MAX)]);
        forever.start_next("cyclic".into());
        assert!(!forever.line().contains("left"));
        assert_eq!(clock_time(Duration::from_secs(3723)), "1:02:03");
    }

    #[test]
    fn no_color_and_pipes_turn_colour_off_unless_asked_for() {
        let set = Some(std::ffi::OsString::from("1"));
        assert!(use_color(ColorChoice::Auto, true, None));
        assert!(!use_color(ColorChoice::Auto, false, None));
        assert!(!use_color(ColorChoice::Auto, true, set.clone()));
        assert!(use_color(ColorChoice::Auto, true, Some("".into())));
        assert!(use_color(ColorChoice::Always, false, set.clone()));
        assert!(!use_color(ColorChoice::Never, true, None));
    }
}
