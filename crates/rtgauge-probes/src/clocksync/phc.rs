//! A PTP hardware clock (`/dev/ptpN`) against the system clock, measured by rtgauge itself
//! with the kernel's cross-timestamps (`rtgauge_os::ptp`): `PTP_SYS_OFFSET_PRECISE` where the
//! device latches both clocks at once (the reading has no width), else
//! `PTP_SYS_OFFSET_EXTENDED`'s 25 bracketed readings, of which the narrowest is kept (its
//! bracket is the reading's `width`).
//!
//! A PHC disciplined by ptp4l counts TAI, 37 s ahead of CLOCK_REALTIME (UTC): when the first
//! reading is nearer the kernel's TAI offset than zero, that offset is taken off every reading
//! (the state says so), as phc2sys does.

use super::Reading;
use rtgauge_os::ptp::{CrossTimestamp, Phc};
use std::path::Path;

/// TAI − UTC since 2017, for kernels no daemon told (adjtimex's `tai` is 0).
const TAI_UTC_S: i64 = 37;

pub struct PhcReference {
    phc: Phc,
    /// None until the first reading: whether the device has hardware cross-timestamps.
    precise: Option<bool>,
    /// Seconds taken off each reading (the PHC counts TAI), decided on the first.
    timescale_s: Option<i64>,
}

impl PhcReference {
    pub fn open(device: &Path) -> Result<PhcReference, String> {
        let phc =
            Phc::open(device).map_err(|e| format!("{} cannot be opened: {e}", device.display()))?;
        Ok(PhcReference {
            phc,
            precise: None,
            timescale_s: None,
        })
    }

    fn read(&mut self) -> Result<CrossTimestamp, String> {
        if self.precise != Some(false) {
            match self.phc.precise() {
                Ok(r) => {
                    self.precise = Some(true);
                    return Ok(r);
                }
                Err(_) if self.precise.is_none() => self.precise = Some(false),
                Err(e) => return Err(format!("the cross-timestamp failed: {e}")),
            }
        }
        let readings = self
            .phc
            .extended(rtgauge_os::ptp::MAX_SAMPLES)
            .map_err(|e| {
                format!("the device has no cross-timestamp (PTP_SYS_OFFSET_EXTENDED: {e})")
            })?;
        narrowest(&readings).ok_or_else(|| "the driver returned no reading".to_string())
    }

    pub fn poll(&mut self) -> Result<Reading, String> {
        let r = self.read()?;
        let tai_s = *self
            .timescale_s
            .get_or_insert_with(|| timescale(r.offset_ns()));
        let offset = r.offset_ns() - i128::from(tai_s) * 1_000_000_000;
        let kind = if self.precise == Some(true) {
            "hardware cross-timestamp"
        } else {
            "bracketed reads"
        };
        let scale = if tai_s != 0 { "TAI" } else { "UTC" };
        Ok(Reading {
            offset_ns: Some(offset.clamp(i64::MIN.into(), i64::MAX.into()) as i64),
            width_ns: Some(r.width_ns().max(0) as u64),
            locked: true,
            state: format!("{kind}, PHC on {scale}"),
            ..Reading::default()
        })
    }
}

/// The reading with the narrowest bracket: the one the system clock pins down best.
pub fn narrowest(readings: &[CrossTimestamp]) -> Option<CrossTimestamp> {
    readings
        .iter()
        .filter(|r| r.width_ns() >= 0)
        .min_by_key(|r| r.width_ns())
        .copied()
}

/// Seconds to take off a PHC reading: TAI − UTC when the PHC counts TAI, else 0.
fn timescale(offset_ns: i128) -> i64 {
    let tai = rtgauge_os::ptp::kernel_time()
        .map(|k| k.tai_offset_s)
        .ok()
        .filter(|&t| t != 0)
        .unwrap_or(TAI_UTC_S);
    let tai_ns = i128::from(tai) * 1_000_000_000;
    if (offset_ns - tai_ns).abs() < offset_ns.abs() {
        tai
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(before: i128, phc: i128, after: i128) -> CrossTimestamp {
        CrossTimestamp {
            sys_before_ns: before,
            phc_ns: phc,
            sys_after_ns: after,
        }
    }

    #[test]
    fn the_narrowest_bracket_is_kept() {
        let rs = [
            reading(0, 600, 1_000),
            reading(2_000, 2_300, 2_400),
            reading(5_000, 5_900, 6_500),
        ];
        let best = narrowest(&rs).unwrap();
        assert_eq!(best.width_ns(), 400);
        assert_eq!(best.offset_ns(), 100);
        assert!(narrowest(&[]).is_none());
        // A bracket that runs backwards (a stepped clock) is no reading.
        assert!(narrowest(&[reading(10, 5, 0)]).is_none());
    }

    #[test]
    fn a_phc_on_tai_is_compared_on_utc() {
        assert_eq!(timescale(37_000_000_123), 37);
        assert_eq!(timescale(-2_000), 0);
        assert_eq!(timescale(5_000_000_000), 0);
    }
}
