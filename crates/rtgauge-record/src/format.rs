//! The `.rtgr` file layout (format version 1), documented for readers in `docs/recording.md`.
//!
//! ```text
//! offset 0   magic             8 bytes  89 52 54 47 52 0D 0A 1A  ("\x89RTGR\r\n\x1a")
//!        8   format version    u32 LE   1
//!       12   record size       u32 LE   18
//!       16   header length H   u64 LE
//!       24   header            H bytes of UTF-8 JSON (`Header`: probe, mode, load, series table)
//!   24 + H   records           N × 18 bytes: series u16 LE, at_ns u64 LE, value_ns u64 LE
//!            trailer           T bytes of UTF-8 JSON (`Trailer`: per-series written/dropped)
//!  end − 32  trailer length T  u64 LE
//!  end − 24  samples written N u64 LE
//!  end − 16  samples dropped   u64 LE
//!  end −  8  end magic         8 bytes  "RTGREND\n"
//! ```
//!
//! Records are packed and fixed-size so a reader can map them directly (numpy `fromfile` with
//! an 18-byte structured dtype) and a writer never needs to seek. The fixed-size tail lets a
//! reader find the record count without scanning and tells a finished file from one whose
//! writer was killed (no end magic).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// First bytes of every recording. The high byte and the CR LF / SUB bytes catch transfers
/// that mangle binary files, as PNG's signature does.
pub const MAGIC: [u8; 8] = *b"\x89RTGR\r\n\x1a";
/// Last bytes of a recording whose writer finished.
pub const END_MAGIC: [u8; 8] = *b"RTGREND\n";
/// The version this crate writes and the newest it reads.
pub const FORMAT_VERSION: u32 = 1;
/// Bytes of one record on disk: series u16 + at_ns u64 + value_ns u64, little-endian, packed.
pub const RECORD_SIZE: usize = 18;
/// Bytes before the header JSON.
pub const PREAMBLE_SIZE: usize = 24;
/// Bytes of the fixed tail after the trailer JSON.
pub const TAIL_SIZE: usize = 32;

/// One raw sample as it travels through the ring and sits in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Sample {
    /// Index into the header's series table.
    pub series: u16,
    /// When the sample was taken, in ns since the probe's measurement start (see the header's
    /// `time_origin`).
    pub at_ns: u64,
    /// The measured time (e.g. wake-up latency), in ns.
    pub value_ns: u64,
}

impl Sample {
    #[inline]
    pub fn encode(&self) -> [u8; RECORD_SIZE] {
        let mut b = [0u8; RECORD_SIZE];
        b[0..2].copy_from_slice(&self.series.to_le_bytes());
        b[2..10].copy_from_slice(&self.at_ns.to_le_bytes());
        b[10..18].copy_from_slice(&self.value_ns.to_le_bytes());
        b
    }

    #[inline]
    pub fn decode(b: &[u8]) -> Sample {
        let mut u16b = [0u8; 2];
        let mut a = [0u8; 8];
        let mut v = [0u8; 8];
        u16b.copy_from_slice(&b[0..2]);
        a.copy_from_slice(&b[2..10]);
        v.copy_from_slice(&b[10..18]);
        Sample {
            series: u16::from_le_bytes(u16b),
            at_ns: u64::from_le_bytes(a),
            value_ns: u64::from_le_bytes(v),
        }
    }
}

/// One entry of the series table: what the samples with this id measure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeriesDef {
    /// Equal to the entry's index in the table; written out so the JSON reads on its own.
    pub id: u16,
    /// The series name as in the result document (latency, …).
    pub name: String,
    /// The labels of the matching series in the result document (cpu, …).
    pub labels: BTreeMap<String, String>,
}

impl SeriesDef {
    /// A series with no id yet (the hub numbers them in table order).
    pub fn new(name: impl Into<String>) -> SeriesDef {
        SeriesDef {
            id: 0,
            name: name.into(),
            labels: BTreeMap::new(),
        }
    }

    pub fn label(mut self, key: &str, value: impl ToString) -> SeriesDef {
        self.labels.insert(key.to_string(), value.to_string());
        self
    }
}

/// What a recording holds; written before the first record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    /// `rtgauge <version>`.
    pub tool: String,
    pub probe: String,
    pub mode: String,
    pub load: String,
    /// The probe's parameters as given.
    #[serde(default)]
    pub params: BTreeMap<String, String>,
    /// Wall clock (ns since the Unix epoch) when the recording was opened.
    pub started_unix_ns: u64,
    /// What `at_ns` counts from, in words.
    pub time_origin: String,
    /// Describes the record layout for humans; readers rely on the preamble's record size.
    pub record: String,
    pub series: Vec<SeriesDef>,
}

/// Per-series counts in the trailer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeriesCount {
    pub id: u16,
    pub written: u64,
    /// Samples the measuring thread could not hand over because its ring was full.
    pub dropped: u64,
}

/// What the writer reports when it closes the file; the fixed tail repeats the totals.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trailer {
    pub finished_unix_ns: u64,
    pub samples_written: u64,
    pub samples_dropped: u64,
    pub series: Vec<SeriesCount>,
    /// Slots of each measuring thread's ring.
    pub ring_capacity: u64,
    /// Whether the writer thread ran pinned off the measured CPUs.
    pub writer_pinned: bool,
}

/// The fixed tail of a finished recording.
pub fn encode_tail(trailer_len: u64, written: u64, dropped: u64) -> [u8; TAIL_SIZE] {
    let mut b = [0u8; TAIL_SIZE];
    b[0..8].copy_from_slice(&trailer_len.to_le_bytes());
    b[8..16].copy_from_slice(&written.to_le_bytes());
    b[16..24].copy_from_slice(&dropped.to_le_bytes());
    b[24..32].copy_from_slice(&END_MAGIC);
    b
}

/// The preamble: magic, version, record size, header length.
pub fn encode_preamble(header_len: u64) -> [u8; PREAMBLE_SIZE] {
    let mut b = [0u8; PREAMBLE_SIZE];
    b[0..8].copy_from_slice(&MAGIC);
    b[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    b[12..16].copy_from_slice(&(RECORD_SIZE as u32).to_le_bytes());
    b[16..24].copy_from_slice(&header_len.to_le_bytes());
    b
}

pub(crate) fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(x)
}

pub(crate) fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut x = [0u8; 4];
    x.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_little_endian() {
        let s = Sample {
            series: 0x0102,
            at_ns: 0x1122_3344_5566_7788,
            value_ns: u64::MAX - 1,
        };
        let b = s.encode();
        assert_eq!(&b[0..2], &[0x02, 0x01]);
        assert_eq!(b[2], 0x88);
        assert_eq!(Sample::decode(&b), s);
    }
}
