//! The Linux GPIO character device, v2 uAPI (include/uapi/linux/gpio.h), declared here
//! because libc does not carry it. Layouts are checked at compile time against the sizes
//! and offsets the kernel header gives.

use crate::probe::{os_error, ProbeError};
use rtgauge_os::io::{cvt, retry};
use std::io;
use std::mem::{offset_of, size_of};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};

// The core knows no probe: the probe that opens a wire names itself (`Wire::open`), and
// errors are reported as that probe's own.
fn invalid(probe: &'static str, message: String) -> ProbeError {
    ProbeError::Invalid { probe, message }
}

/// A GPIO line named by the user: `/dev/gpiochipN:LINE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineName {
    pub chip: String,
    pub offset: u32,
}

/// The lines the response probe is given: the input line with edge events, and the output
/// line wired to it. Without an output line the input must belong to a simulated chip (the
/// kernel's gpio-sim), whose sysfs `pull` attribute drives it with no wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lines {
    pub output: Option<LineName>,
    pub input: LineName,
}

impl std::fmt::Display for LineName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.chip, self.offset)
    }
}

/// Why a source cannot be opened: not on this machine (skip), or a real error.
pub enum Open {
    Skip(String),
    Fail(ProbeError),
}

impl Open {
    pub fn into_error(self) -> ProbeError {
        match self {
            Open::Skip(reason) => ProbeError::Unavailable(reason),
            Open::Fail(e) => e,
        }
    }
}

const GPIO_V2_LINES_MAX: usize = 64;
const GPIO_MAX_NAME_SIZE: usize = 32;
const GPIO_V2_LINE_NUM_ATTRS_MAX: usize = 10;

const GPIO_V2_LINE_FLAG_INPUT: u64 = 1 << 2;
const GPIO_V2_LINE_FLAG_OUTPUT: u64 = 1 << 3;
const GPIO_V2_LINE_FLAG_EDGE_RISING: u64 = 1 << 4;
const GPIO_V2_LINE_FLAG_EDGE_FALLING: u64 = 1 << 5;
// Neither GPIO_V2_LINE_FLAG_EVENT_CLOCK_REALTIME (1 << 11) nor _HTE (1 << 12) is set:
// edge timestamps then come from CLOCK_MONOTONIC, the clock rtgauge reads.

/// struct gpio_v2_line_attribute; the union (flags / values / debounce_period_us) is
/// only ever used here as flags or values, both u64.
#[repr(C, align(8))]
#[derive(Clone, Copy)]
struct LineAttribute {
    id: u32,
    padding: u32,
    value: u64,
}

/// struct gpio_v2_line_config_attribute.
#[repr(C, align(8))]
#[derive(Clone, Copy)]
struct LineConfigAttribute {
    attr: LineAttribute,
    mask: u64,
}

/// struct gpio_v2_line_config.
#[repr(C, align(8))]
struct LineConfig {
    flags: u64,
    num_attrs: u32,
    padding: [u32; 5],
    attrs: [LineConfigAttribute; GPIO_V2_LINE_NUM_ATTRS_MAX],
}

/// struct gpio_v2_line_request.
#[repr(C, align(8))]
struct LineRequest {
    offsets: [u32; GPIO_V2_LINES_MAX],
    consumer: [u8; GPIO_MAX_NAME_SIZE],
    config: LineConfig,
    num_lines: u32,
    event_buffer_size: u32,
    padding: [u32; 5],
    fd: i32,
}

/// struct gpio_v2_line_values.
#[repr(C, align(8))]
struct LineValues {
    bits: u64,
    mask: u64,
}

/// struct gpio_v2_line_event.
#[repr(C, align(8))]
struct LineEvent {
    timestamp_ns: u64,
    id: u32,
    offset: u32,
    seqno: u32,
    line_seqno: u32,
    padding: [u32; 6],
}

// The sizes and offsets of include/uapi/linux/gpio.h (checked against the header with a
// C program printing sizeof/offsetof on x86_64).
const _: () = {
    assert!(size_of::<LineAttribute>() == 16);
    assert!(size_of::<LineConfigAttribute>() == 24);
    assert!(size_of::<LineConfig>() == 272);
    assert!(offset_of!(LineConfig, num_attrs) == 8);
    assert!(offset_of!(LineConfig, attrs) == 32);
    assert!(size_of::<LineRequest>() == 592);
    assert!(offset_of!(LineRequest, consumer) == 256);
    assert!(offset_of!(LineRequest, config) == 288);
    assert!(offset_of!(LineRequest, num_lines) == 560);
    assert!(offset_of!(LineRequest, event_buffer_size) == 564);
    assert!(offset_of!(LineRequest, fd) == 588);
    assert!(size_of::<LineValues>() == 16);
    assert!(size_of::<LineEvent>() == 48);
    assert!(offset_of!(LineEvent, id) == 8);
    assert!(offset_of!(LineEvent, line_seqno) == 20);
};

/// _IOWR(0xB4, nr, size): direction read|write (3 << 30; the 3-bit direction field of
/// mips/powerpc/sparc gives the same value for read|write), size in bits 16.., type, nr.
const fn iowr(nr: u64, size: usize) -> u64 {
    (3 << 30) | ((size as u64) << 16) | (0xB4 << 8) | nr
}
const GPIO_V2_GET_LINE_IOCTL: u64 = iowr(0x07, size_of::<LineRequest>());
const GPIO_V2_LINE_SET_VALUES_IOCTL: u64 = iowr(0x0F, size_of::<LineValues>());
const _: () = assert!(GPIO_V2_GET_LINE_IOCTL == 0xC250_B407);
const _: () = assert!(GPIO_V2_LINE_SET_VALUES_IOCTL == 0xC010_B40F);

/// What a gpio-sim `pull` attribute is written to set the line low (0) or high (1).
const PULL: [&[u8]; 2] = [b"pull-down", b"pull-up"];

/// The sysfs `pull` attribute of `line` when its chip is a simulated one (gpio-sim puts a
/// `sim_gpioN` group beside each line of its chips): opened for writing, its path, and the
/// line's level now.
fn simulated_pull(probe: &'static str, line: &LineName) -> Result<(OwnedFd, String, u64), Open> {
    let chip = line.chip.rsplit('/').next().unwrap_or(&line.chip);
    let path = format!("/sys/bus/gpio/devices/{chip}/sim_gpio{}/pull", line.offset);
    let not_simulated = || {
        Open::Fail(invalid(
            probe,
            format!("gpio-in {line} alone needs a simulated chip (gpio-sim; {path} is absent): name the output line wired to it with gpio-out=/dev/gpiochipN:LINE"),
        ))
    };
    let now = std::fs::read_to_string(&path).map_err(|_| not_simulated())?;
    let level = match now.trim() {
        "pull-up" => 1,
        "pull-down" => 0,
        _ => return Err(not_simulated()),
    };
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .map_err(|e| {
            Open::Fail(os_error(
                probe,
                &format!("opening {path} to drive gpio-in {line}"),
                e,
            ))
        })?;
    Ok((file.into(), path, level))
}

/// How long the wiring check waits for the edge of its test toggle.
const WIRE_CHECK_MS: i32 = 100;

/// What the trigger drives to make an edge on the input line.
enum Drive {
    /// An output line wired to the input line.
    Line(OwnedFd),
    /// The `pull` attribute of the input line on a simulated chip (gpio-sim): writing
    /// `pull-up` or `pull-down` sets the line's level and raises its edge interrupt through
    /// the kernel's interrupt simulator, the whole path an edge takes but the wire.
    SimulatedPull(OwnedFd),
}

/// An input line with edge events enabled, and what drives it: an output line wired to it,
/// or a simulated chip's pull attribute.
pub struct Wire {
    drive: Drive,
    input: OwnedFd,
    /// Wakes the handler's poll when the run ends, even if no edge ever comes.
    quit: OwnedFd,
    level: AtomicU64,
    pub out_name: String,
    pub in_name: String,
    /// The probe that opened the wire, whose errors these are.
    probe: &'static str,
}

fn chips() -> Vec<String> {
    let mut chips: Vec<String> = std::fs::read_dir("/dev")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("gpiochip"))
                .map(|n| format!("/dev/{n}"))
                .collect()
        })
        .unwrap_or_default();
    chips.sort();
    chips
}

fn request(probe: &'static str, line: &LineName, flags: u64, what: &str) -> Result<OwnedFd, Open> {
    let chip = std::fs::File::open(&line.chip).map_err(|e| {
        let here = chips();
        Open::Fail(invalid(
            probe,
            format!(
                "{what} {line}: cannot open {}: {e}; GPIO chips here: {}",
                line.chip,
                if here.is_empty() {
                    "none".into()
                } else {
                    here.join(", ")
                }
            ),
        ))
    })?;
    // SAFETY: LineRequest is plain data; all-zero is a valid empty request.
    let mut req: LineRequest = unsafe { std::mem::zeroed() };
    req.offsets[0] = line.offset;
    req.num_lines = 1;
    let consumer = b"rtgauge";
    req.consumer[..consumer.len()].copy_from_slice(consumer);
    req.config.flags = flags;
    // SAFETY: the ioctl reads and writes a LineRequest of the size encoded in the request
    // number; the chip descriptor is open.
    let rc = unsafe { libc::ioctl(chip.as_raw_fd(), GPIO_V2_GET_LINE_IOCTL as _, &mut req) };
    if rc < 0 || req.fd < 0 {
        let e = io::Error::last_os_error();
        let hint = match e.raw_os_error() {
            Some(libc::EBUSY) => " (the line is in use; `gpioinfo` shows by whom)",
            Some(libc::EINVAL) => " (no such line on this chip, or it cannot be configured so)",
            _ => "",
        };
        return Err(Open::Fail(os_error(
            probe,
            &format!("requesting GPIO line {line} as {what}{hint}"),
            e,
        )));
    }
    // SAFETY: the kernel returned a fresh line descriptor owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(req.fd) })
}

impl Wire {
    /// Opens the lines `probe` was given (its `gpio-out` and `gpio-in` parameters), or says
    /// why it cannot (a skip when no lines are named or none exist here).
    pub fn open(probe: &'static str, lines: Option<&Lines>) -> Result<Wire, Open> {
        let Some(lines) = lines else {
            return Err(Open::Skip(if chips().is_empty() {
                "no GPIO chip (/dev/gpiochip*) on this machine".into()
            } else {
                format!("no GPIO lines named: wire an output line to an input line and pass --set {probe}.gpio-out=/dev/gpiochipN:LINE --set {probe}.gpio-in=/dev/gpiochipM:LINE (on a simulated chip, gpio-in alone)")
            }));
        };
        let in_line = &lines.input;
        // The input first: a chip that does not exist is reported as such, with the chips here.
        let input = request(
            probe,
            in_line,
            GPIO_V2_LINE_FLAG_INPUT
                | GPIO_V2_LINE_FLAG_EDGE_RISING
                | GPIO_V2_LINE_FLAG_EDGE_FALLING,
            "input with edge events",
        )?;
        let (drive, out_name, level) = match &lines.output {
            Some(out_line) => {
                let output = request(probe, out_line, GPIO_V2_LINE_FLAG_OUTPUT, "output")?;
                (Drive::Line(output), out_line.to_string(), 0)
            }
            None => {
                let (pull, path, level) = simulated_pull(probe, in_line)?;
                (Drive::SimulatedPull(pull), path, level)
            }
        };
        // SAFETY: plain syscall; the descriptor is owned below.
        let quit = cvt(unsafe { libc::eventfd(0, libc::EFD_CLOEXEC) } as isize)
            .map_err(|e| Open::Fail(os_error(probe, "eventfd", e)))?;
        let wire = Wire {
            drive,
            input,
            // SAFETY: a fresh descriptor owned by nobody else.
            quit: unsafe { OwnedFd::from_raw_fd(quit as i32) },
            level: AtomicU64::new(level),
            out_name,
            in_name: in_line.to_string(),
            probe,
        };
        wire.check()?;
        Ok(wire)
    }

    /// What to check when no edge arrives, in words.
    pub fn check_hint(&self) -> String {
        match self.drive {
            Drive::Line(_) => format!(
                "wire the output line {} to the input line {}",
                self.out_name, self.in_name
            ),
            Drive::SimulatedPull(_) => format!(
                "writing {} did not change the simulated input line {}",
                self.out_name, self.in_name
            ),
        }
    }

    /// Toggles once and expects an edge on the input: a missing wire is reported now, in
    /// words, instead of as a timeout later. Drains the events so measuring starts clean.
    fn check(&self) -> Result<(), Open> {
        self.toggle()
            .map_err(|e| Open::Fail(os_error(self.probe, "driving the GPIO line", e)))?;
        if !self.poll_input(WIRE_CHECK_MS) {
            return Err(Open::Fail(invalid(
                self.probe,
                format!(
                    "no edge on gpio-in {} within {WIRE_CHECK_MS}ms of driving it: {}",
                    self.in_name,
                    self.check_hint()
                ),
            )));
        }
        while self.poll_input(0) {
            self.read_event()
                .map_err(|e| Open::Fail(os_error(self.probe, "reading a GPIO edge event", e)))?;
        }
        Ok(())
    }

    fn poll_input(&self, timeout_ms: i32) -> bool {
        let mut pfd = libc::pollfd {
            fd: self.input.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let n = retry(|| cvt(unsafe { libc::poll(&mut pfd, 1, timeout_ms) } as isize));
        matches!(n, Ok(1..))
    }

    #[inline]
    fn read_event(&self) -> io::Result<u64> {
        // SAFETY: LineEvent is plain data.
        let mut ev: LineEvent = unsafe { std::mem::zeroed() };
        // SAFETY: reads at most one event into a buffer of its size.
        let n = retry(|| {
            cvt(unsafe {
                libc::read(
                    self.input.as_raw_fd(),
                    (&mut ev as *mut LineEvent).cast(),
                    size_of::<LineEvent>(),
                )
            })
        })?;
        if n as usize != size_of::<LineEvent>() {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "short read of a GPIO edge event",
            ));
        }
        Ok(ev.timestamp_ns)
    }

    /// Drives the input line to the other level (trigger thread).
    #[inline]
    pub fn toggle(&self) -> io::Result<()> {
        let level = self.level.load(Ordering::Relaxed) ^ 1;
        self.level.store(level, Ordering::Relaxed);
        match &self.drive {
            Drive::Line(output) => {
                let mut values = LineValues {
                    bits: level,
                    mask: 1,
                };
                // SAFETY: the ioctl reads a LineValues of the size encoded in the request
                // number.
                let rc = unsafe {
                    libc::ioctl(
                        output.as_raw_fd(),
                        GPIO_V2_LINE_SET_VALUES_IOCTL as _,
                        &mut values,
                    )
                };
                cvt(rc as isize).map(drop)
            }
            Drive::SimulatedPull(pull) => {
                let text = PULL[level as usize];
                // SAFETY: writes `text`, a static byte string, at offset 0 of the attribute.
                retry(|| {
                    cvt(unsafe {
                        libc::pwrite(pull.as_raw_fd(), text.as_ptr().cast(), text.len(), 0)
                    })
                })
                .map(drop)
            }
        }
    }

    /// Waits for an edge (or the quit wake-up) as libgpiod does: poll, then read one
    /// event. Returns the kernel's timestamp of the edge.
    #[inline]
    pub fn wait_edge(&self) -> io::Result<Option<u64>> {
        let mut fds = [
            libc::pollfd {
                fd: self.input.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: self.quit.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: two valid pollfds; no timeout.
        retry(|| cvt(unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) } as isize))?;
        if fds[0].revents & libc::POLLIN != 0 {
            return self.read_event().map(Some);
        }
        Ok(None)
    }

    pub fn wake_for_quit(&self) {
        let one = 1u64;
        // SAFETY: writes the 8-byte counter increment the eventfd ABI defines.
        unsafe { libc::write(self.quit.as_raw_fd(), (&one as *const u64).cast(), 8) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_chip_is_a_failure_that_lists_the_chips_here() {
        let line = LineName {
            chip: "/dev/gpiochip-does-not-exist".into(),
            offset: 3,
        };
        match request("some-probe", &line, GPIO_V2_LINE_FLAG_OUTPUT, "output") {
            Err(Open::Fail(e)) => {
                let e = e.to_string();
                assert!(e.starts_with("probe some-probe: "), "{e}");
                assert!(e.contains("GPIO chips here"), "{e}");
                assert!(e.contains("gpiochip-does-not-exist:3"), "{e}");
            }
            _ => panic!("expected a failure"),
        }
    }

    #[test]
    fn an_input_line_alone_on_a_chip_that_is_not_simulated_says_what_to_name() {
        let line = LineName {
            chip: "/dev/gpiochip-real".into(),
            offset: 4,
        };
        match simulated_pull("some-probe", &line) {
            Err(Open::Fail(e)) => {
                let e = e.to_string();
                assert!(
                    e.contains("simulated chip") && e.contains("gpio-out="),
                    "{e}"
                );
                assert!(
                    e.contains("/sys/bus/gpio/devices/gpiochip-real/sim_gpio4/pull"),
                    "{e}"
                );
            }
            _ => panic!("expected a failure"),
        }
    }
}
