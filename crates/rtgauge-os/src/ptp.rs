//! PTP hardware clocks (`/dev/ptpN`): the kernel's cross-timestamps between a NIC's clock and
//! the system clock (CLOCK_REALTIME), and the kernel's own synchronisation status (adjtimex).
//!
//! Two ioctls, as `linux/ptp_clock.h` defines them:
//! - `PTP_SYS_OFFSET_PRECISE`: the device latches both clocks at one instant (hardware
//!   cross-timestamp, e.g. Intel's ART on e1000e/igc); a reading has no width.
//! - `PTP_SYS_OFFSET_EXTENDED`: the driver reads the system clock just before and just after
//!   the PHC register read, up to 25 times; the bracket is the reading's width.
//!
//! The answers are decoded from the bytes the kernel fills ([`decode_precise`],
//! [`decode_extended`]), so the decoding is tested against answers without a device.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;

/// `PTP_MAX_SAMPLES`: the most readings one `PTP_SYS_OFFSET_EXTENDED` call returns.
pub const MAX_SAMPLES: usize = 25;
/// `struct ptp_clock_time`: s64 seconds, u32 nanoseconds, u32 reserved.
const TIME_SIZE: usize = 16;
/// `struct ptp_sys_offset_precise`: device, sys_realtime, sys_monoraw, 4 reserved u32.
pub const PRECISE_SIZE: usize = 3 * TIME_SIZE + 16;
/// `struct ptp_sys_offset_extended`: n_samples, 3 reserved u32, then 25 × 3 times.
pub const EXTENDED_SIZE: usize = 16 + MAX_SAMPLES * 3 * TIME_SIZE;

/// `_IOWR(magic, nr, size)` as asm-generic/ioctl.h builds it.
const fn iowr(magic: u8, nr: u8, size: usize) -> libc::c_ulong {
    ((3 << 30) | ((size as u32) << 16) | ((magic as u32) << 8) | nr as u32) as libc::c_ulong
}
/// `PTP_CLK_MAGIC` is `'='`.
const PTP_SYS_OFFSET_PRECISE: libc::c_ulong = iowr(b'=', 8, PRECISE_SIZE);
const PTP_SYS_OFFSET_EXTENDED: libc::c_ulong = iowr(b'=', 9, EXTENDED_SIZE);

/// One reading of the PHC against CLOCK_REALTIME: the system clock just before and just after
/// the PHC was read (equal for a hardware cross-timestamp). Nanoseconds since each clock's
/// epoch, signed and wide so no answer can overflow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CrossTimestamp {
    pub sys_before_ns: i128,
    pub phc_ns: i128,
    pub sys_after_ns: i128,
}

impl CrossTimestamp {
    /// PHC minus the system clock at the middle of the bracket.
    pub fn offset_ns(&self) -> i128 {
        self.phc_ns - (self.sys_before_ns + self.sys_after_ns) / 2
    }

    /// How long the bracket was: the reading's uncertainty (0 for a hardware cross-timestamp).
    pub fn width_ns(&self) -> i128 {
        self.sys_after_ns - self.sys_before_ns
    }
}

fn time_at(bytes: &[u8], at: usize) -> i128 {
    let mut sec = [0u8; 8];
    sec.copy_from_slice(&bytes[at..at + 8]);
    let mut nsec = [0u8; 4];
    nsec.copy_from_slice(&bytes[at + 8..at + 12]);
    i128::from(i64::from_ne_bytes(sec)) * 1_000_000_000 + i128::from(u32::from_ne_bytes(nsec))
}

/// The answer of `PTP_SYS_OFFSET_PRECISE` (device, then CLOCK_REALTIME at the same instant).
pub fn decode_precise(bytes: &[u8; PRECISE_SIZE]) -> CrossTimestamp {
    let sys = time_at(bytes, TIME_SIZE);
    CrossTimestamp {
        sys_before_ns: sys,
        phc_ns: time_at(bytes, 0),
        sys_after_ns: sys,
    }
}

/// The answer of `PTP_SYS_OFFSET_EXTENDED`: as many readings as the kernel says it filled
/// (at most [`MAX_SAMPLES`]), each `[system before, PHC, system after]`.
pub fn decode_extended(bytes: &[u8; EXTENDED_SIZE]) -> Vec<CrossTimestamp> {
    let mut n = [0u8; 4];
    n.copy_from_slice(&bytes[..4]);
    let n = (u32::from_ne_bytes(n) as usize).min(MAX_SAMPLES);
    (0..n)
        .map(|i| {
            let at = 16 + i * 3 * TIME_SIZE;
            CrossTimestamp {
                sys_before_ns: time_at(bytes, at),
                phc_ns: time_at(bytes, at + TIME_SIZE),
                sys_after_ns: time_at(bytes, at + 2 * TIME_SIZE),
            }
        })
        .collect()
}

/// An open PTP hardware clock.
pub struct Phc {
    fd: OwnedFd,
}

impl Phc {
    /// Opens `/dev/ptpN` for reading (the ioctls here only read).
    pub fn open(path: &Path) -> io::Result<Phc> {
        let file = std::fs::File::open(path)?;
        Ok(Phc { fd: file.into() })
    }

    /// A hardware cross-timestamp; `EOPNOTSUPP` (or `ENOTTY` on old kernels) where the device
    /// has none.
    pub fn precise(&self) -> io::Result<CrossTimestamp> {
        let mut buf = [0u8; PRECISE_SIZE];
        // SAFETY: buf has the size the request number encodes; the kernel writes into it.
        let rc = unsafe {
            libc::ioctl(
                self.fd.as_raw_fd(),
                PTP_SYS_OFFSET_PRECISE as _,
                buf.as_mut_ptr(),
            )
        };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(decode_precise(&buf))
    }

    /// `samples` (1..=25) bracketed readings.
    pub fn extended(&self, samples: usize) -> io::Result<Vec<CrossTimestamp>> {
        let mut buf = [0u8; EXTENDED_SIZE];
        let n = samples.clamp(1, MAX_SAMPLES) as u32;
        buf[..4].copy_from_slice(&n.to_ne_bytes());
        // SAFETY: buf has the size the request number encodes; the kernel reads n_samples and
        // writes the readings into it.
        let rc = unsafe {
            libc::ioctl(
                self.fd.as_raw_fd(),
                PTP_SYS_OFFSET_EXTENDED as _,
                buf.as_mut_ptr(),
            )
        };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(decode_extended(&buf))
    }
}

/// The kernel's clock discipline as `adjtimex` reports it (read only, any user).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KernelTime {
    /// The kernel considers the clock synchronised (STA_UNSYNC clear, state not TIME_ERROR).
    pub synchronised: bool,
    /// The frequency correction applied to the system clock, parts per billion.
    pub frequency_ppb: f64,
    /// The daemon's estimated error and maximum error, ns.
    pub est_error_ns: u64,
    pub max_error_ns: u64,
    /// TAI − UTC in seconds as the kernel holds it (0 where no daemon set it).
    pub tai_offset_s: i64,
}

/// Reads the kernel's time status without changing anything (`modes = 0`).
pub fn kernel_time() -> io::Result<KernelTime> {
    // SAFETY: an all-zero timex is valid; modes 0 asks adjtimex to only read.
    let mut tx: libc::timex = unsafe { std::mem::zeroed() };
    // SAFETY: tx is a valid, writable timex.
    let state = unsafe { libc::adjtimex(&mut tx) };
    if state < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(KernelTime {
        synchronised: state != libc::TIME_ERROR && tx.status & libc::STA_UNSYNC == 0,
        // freq is ppm with a 16-bit fraction.
        frequency_ppb: tx.freq as f64 / 65_536.0 * 1_000.0,
        est_error_ns: (tx.esterror.max(0) as u64).saturating_mul(1_000),
        max_error_ns: (tx.maxerror.max(0) as u64).saturating_mul(1_000),
        tai_offset_s: i64::from(tx.tai),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put_time(buf: &mut [u8], at: usize, ns: i128) {
        let sec = ns.div_euclid(1_000_000_000) as i64;
        let nsec = ns.rem_euclid(1_000_000_000) as u32;
        buf[at..at + 8].copy_from_slice(&sec.to_ne_bytes());
        buf[at + 8..at + 12].copy_from_slice(&nsec.to_ne_bytes());
    }

    #[test]
    fn request_numbers_are_the_kernels() {
        // From linux/ptp_clock.h on x86_64 (printf("%#lx", PTP_SYS_OFFSET_PRECISE) …).
        assert_eq!(PTP_SYS_OFFSET_PRECISE, 0xc0403d08);
        assert_eq!(PTP_SYS_OFFSET_EXTENDED, 0xc4c03d09);
    }

    /// A hardware cross-timestamp: the PHC in TAI, 37 s ahead of CLOCK_REALTIME, plus 250 ns.
    #[test]
    fn a_precise_answer_is_one_reading_without_width() {
        let mut buf = [0u8; PRECISE_SIZE];
        let realtime = 1_795_854_927_997_751_162i128;
        put_time(&mut buf, 0, realtime + 37_000_000_250);
        put_time(&mut buf, TIME_SIZE, realtime);
        put_time(&mut buf, 2 * TIME_SIZE, 5_000_000_000);
        let r = decode_precise(&buf);
        assert_eq!(r.offset_ns(), 37_000_000_250);
        assert_eq!(r.width_ns(), 0);
    }

    /// An extended answer as a driver fills it: the count it really took (it may take fewer
    /// than asked), each reading bracketed; a count beyond 25 is not trusted past 25.
    #[test]
    fn an_extended_answer_yields_the_readings_the_kernel_filled() {
        let mut buf = [0u8; EXTENDED_SIZE];
        buf[..4].copy_from_slice(&3u32.to_ne_bytes());
        let base = 1_700_000_000_000_000_000i128;
        for (i, (width, offset)) in [(900, -120), (1_500, 40), (700, -95)].iter().enumerate() {
            let at = 16 + i * 48;
            let before = base + i as i128 * 10_000;
            put_time(&mut buf, at, before);
            put_time(&mut buf, at + 16, before + width / 2 + offset);
            put_time(&mut buf, at + 32, before + width);
        }
        let readings = decode_extended(&buf);
        assert_eq!(readings.len(), 3);
        let w: Vec<i128> = readings.iter().map(CrossTimestamp::width_ns).collect();
        assert_eq!(w, [900, 1_500, 700]);
        let o: Vec<i128> = readings.iter().map(CrossTimestamp::offset_ns).collect();
        assert_eq!(o, [-120, 40, -95]);
        buf[..4].copy_from_slice(&1000u32.to_ne_bytes());
        assert_eq!(decode_extended(&buf).len(), MAX_SAMPLES);
    }

    #[test]
    fn a_clock_before_the_epoch_decodes_signed() {
        let mut buf = [0u8; PRECISE_SIZE];
        put_time(&mut buf, 0, -1_500_000_000);
        put_time(&mut buf, TIME_SIZE, 0);
        assert_eq!(decode_precise(&buf).offset_ns(), -1_500_000_000);
    }

    #[test]
    fn the_kernels_time_status_reads_without_privileges() {
        let k = kernel_time().unwrap();
        assert!(k.frequency_ppb.abs() < 1e6, "{k:?}");
    }
}
