//! The live per-CPU view while a probe measures: redrawn in place on a terminal, a few times
//! a second, from a thread that stays off the measured CPUs. Silent when stderr is not a
//! terminal.

use crate::cli::ColorChoice;
use rtgauge_core::live::LiveBoard;
use rtgauge_core::units::format_duration_ns;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::Duration;

const REFRESH: Duration = Duration::from_millis(250);

pub struct LiveDisplay {
    stop: Arc<AtomicBool>,
    note: Arc<Mutex<String>>,
    thread: Option<JoinHandle<()>>,
}

impl LiveDisplay {
    /// Starts the display thread, or returns None when stderr is not a terminal.
    pub fn start(board: Arc<LiveBoard>, measured_cpus: &[usize]) -> Option<LiveDisplay> {
        if !std::io::stderr().is_terminal() {
            return None;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let note = Arc::new(Mutex::new(String::new()));
        let housekeeping = rtgauge_core::cpus::housekeeping_cpus(measured_cpus);
        let (s, n) = (stop.clone(), note.clone());
        let thread = std::thread::Builder::new()
            .name("rtgauge-display".into())
            .spawn(move || {
                rtgauge_core::rt::pin_thread_to_set(&housekeeping);
                draw_loop(&board, &s, &n);
            })
            .ok()?;
        Some(LiveDisplay {
            stop,
            note,
            thread: Some(thread),
        })
    }

    /// Sets the heading line (what is being measured).
    pub fn note(&self, text: String) {
        if let Ok(mut n) = self.note.lock() {
            *n = text;
        }
    }
}

fn draw_loop(board: &LiveBoard, stop: &AtomicBool, note: &Mutex<String>) {
    let mut drawn = 0usize;
    let mut err = std::io::stderr();
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(REFRESH);
        let (_, cells) = board.snapshot();
        let mut frame = String::new();
        if drawn > 0 {
            frame.push_str(&format!("\x1b[{drawn}A"));
        }
        let heading = note.lock().map(|n| n.clone()).unwrap_or_default();
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
