//! The reading side: checks a recording's structure up front (magic, version, tail, sizes)
//! and then streams its records in batches, so files of 10^8 samples read in bounded memory.

use crate::error::RecordError;
use crate::format::{
    self, Header, Sample, Trailer, END_MAGIC, FORMAT_VERSION, MAGIC, PREAMBLE_SIZE, RECORD_SIZE,
    TAIL_SIZE,
};
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// Records read per batch: 8192 × 18 bytes = 144 KiB.
pub const BATCH: usize = 8192;

/// An opened, structurally valid recording.
#[derive(Debug, Clone)]
pub struct Recording {
    path: PathBuf,
    pub header: Header,
    /// None only for a salvaged recording whose writer never finished (see
    /// [`Recording::salvage`]): then how many samples were dropped is unknown.
    pub trailer: Option<Trailer>,
    data_offset: u64,
    samples: u64,
}

impl Recording {
    /// Opens `path` and checks everything that can be checked without reading the records.
    /// A file whose writer never finished (no end marker) is refused.
    pub fn open(path: &Path) -> Result<Recording, RecordError> {
        Self::open_checked(path, false)
    }

    /// Like [`Recording::open`], but a file whose writer never finished (the run was killed,
    /// the disk filled up) yields its complete records instead of an error: every record
    /// before the cut, none of a record the cut went through. It has no trailer, so the
    /// per-series counts and the number of dropped samples are unknown.
    pub fn salvage(path: &Path) -> Result<Recording, RecordError> {
        Self::open_checked(path, true)
    }

    /// Whether the writer finished the file (it has its trailer).
    pub fn finished(&self) -> bool {
        self.trailer.is_some()
    }

    fn open_checked(path: &Path, salvage: bool) -> Result<Recording, RecordError> {
        let read_err = |source| RecordError::Read {
            path: path.to_path_buf(),
            source,
        };
        let truncated = |detail: String| RecordError::Truncated {
            path: path.to_path_buf(),
            detail,
        };
        let corrupt = |detail: String| RecordError::Corrupt {
            path: path.to_path_buf(),
            detail,
        };
        let mut file = File::open(path).map_err(read_err)?;
        let len = file.metadata().map_err(read_err)?.len();

        let mut pre = [0u8; PREAMBLE_SIZE];
        let got = read_up_to(&mut file, &mut pre).map_err(read_err)?;
        if got < MAGIC.len() || pre[..MAGIC.len()] != MAGIC {
            return Err(RecordError::NotARecording {
                path: path.to_path_buf(),
                detail: "it does not start with the .rtgr magic bytes; give a file written by `rtgauge run --record`".into(),
            });
        }
        if got < PREAMBLE_SIZE {
            return Err(truncated(format!("{len} bytes, shorter than the preamble")));
        }
        let version = format::u32_at(&pre, 8);
        if version > FORMAT_VERSION {
            return Err(RecordError::FutureVersion {
                path: path.to_path_buf(),
                found: version,
                supported: FORMAT_VERSION,
            });
        }
        if version == 0 {
            return Err(corrupt("format version 0 does not exist".into()));
        }
        let record_size = format::u32_at(&pre, 12);
        if record_size as usize != RECORD_SIZE {
            return Err(corrupt(format!(
                "record size {record_size}, format version {version} has {RECORD_SIZE}"
            )));
        }
        let header_len = format::u64_at(&pre, 16);
        let data_offset = (PREAMBLE_SIZE as u64)
            .checked_add(header_len)
            .filter(|&end| end <= len)
            .ok_or_else(|| {
                truncated(format!(
                    "{len} bytes, but the header alone claims {header_len}"
                ))
            })?;
        let mut header_json = vec![0u8; header_len as usize];
        file.read_exact(&mut header_json).map_err(read_err)?;
        let header: Header =
            serde_json::from_slice(&header_json).map_err(|e| corrupt(format!("header: {e}")))?;
        if header.series.is_empty() || header.series.len() > usize::from(u16::MAX) + 1 {
            return Err(corrupt(format!(
                "header has {} series",
                header.series.len()
            )));
        }
        if let Some((i, s)) = header
            .series
            .iter()
            .enumerate()
            .find(|(i, s)| usize::from(s.id) != *i)
        {
            return Err(corrupt(format!("series table entry {i} has id {}", s.id)));
        }

        // The fixed tail tells a finished file from one whose writer never closed it.
        let complete_records = len.saturating_sub(data_offset) / RECORD_SIZE as u64;
        let unfinished = Recording {
            path: path.to_path_buf(),
            header,
            trailer: None,
            data_offset,
            samples: complete_records,
        };
        let killed = |mut unfinished: Recording| {
            // The cut may have gone through the trailer, whose bytes would read as records:
            // count only the prefix that reads as valid records, in the refusal too.
            unfinished.samples = valid_prefix(&unfinished).map_err(read_err)?;
            if salvage {
                Ok(unfinished)
            } else {
                Err(truncated(format!(
                    "no end marker; {} complete records precede the cut, \
                     which `rtgauge export --salvage` exports",
                    unfinished.samples
                )))
            }
        };
        if len < data_offset + TAIL_SIZE as u64 {
            return killed(unfinished);
        }
        let mut tail = [0u8; TAIL_SIZE];
        file.seek(SeekFrom::Start(len - TAIL_SIZE as u64))
            .and_then(|_| file.read_exact(&mut tail))
            .map_err(read_err)?;
        if tail[24..32] != END_MAGIC {
            return killed(unfinished);
        }
        let trailer_len = format::u64_at(&tail, 0);
        let samples = format::u64_at(&tail, 8);
        let dropped = format::u64_at(&tail, 16);
        let expected = samples
            .checked_mul(RECORD_SIZE as u64)
            .and_then(|r| r.checked_add(data_offset))
            .and_then(|r| r.checked_add(trailer_len))
            .and_then(|r| r.checked_add(TAIL_SIZE as u64));
        if expected != Some(len) {
            return Err(corrupt(format!(
                "the file has {len} bytes but its header, {samples} records and trailer need {}",
                expected.map_or("more than 2^64".into(), |e| e.to_string())
            )));
        }
        let mut trailer_json = vec![0u8; trailer_len as usize];
        file.seek(SeekFrom::Start(len - TAIL_SIZE as u64 - trailer_len))
            .and_then(|_| file.read_exact(&mut trailer_json))
            .map_err(read_err)?;
        let trailer: Trailer =
            serde_json::from_slice(&trailer_json).map_err(|e| corrupt(format!("trailer: {e}")))?;
        if trailer.samples_written != samples || trailer.samples_dropped != dropped {
            return Err(corrupt(format!(
                "trailer says {} written / {} dropped, the tail {samples} / {dropped}",
                trailer.samples_written, trailer.samples_dropped
            )));
        }
        if trailer.series.iter().map(|s| s.written).sum::<u64>() != samples {
            return Err(corrupt(
                "per-series counts in the trailer do not add up to the record count".into(),
            ));
        }
        Ok(Recording {
            trailer: Some(trailer),
            samples,
            ..unfinished
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Records in the file.
    pub fn sample_count(&self) -> u64 {
        self.samples
    }

    /// Streams the records from the start.
    pub fn samples(&self) -> Result<Samples, RecordError> {
        let read_err = |source| RecordError::Read {
            path: self.path.clone(),
            source,
        };
        let mut file = File::open(&self.path).map_err(read_err)?;
        file.seek(SeekFrom::Start(self.data_offset))
            .map_err(read_err)?;
        Ok(Samples {
            path: self.path.clone(),
            reader: BufReader::with_capacity(1 << 16, file),
            remaining: self.samples,
            index: 0,
            series: self.header.series.len(),
            bytes: vec![0u8; BATCH * RECORD_SIZE],
        })
    }
}

/// How many of a salvaged recording's leading records are plausible: each names a series of
/// the header and, within its series, does not go back in time (the writer keeps each
/// series in time order). The first record that fails ends the prefix; after a cut through
/// the trailer, that is where the JSON text begins.
fn valid_prefix(recording: &Recording) -> std::io::Result<u64> {
    let mut file = File::open(&recording.path)?;
    file.seek(SeekFrom::Start(recording.data_offset))?;
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let mut last_at = vec![0u64; recording.header.series.len()];
    let mut record = [0u8; RECORD_SIZE];
    for index in 0..recording.samples {
        reader.read_exact(&mut record)?;
        let s = Sample::decode(&record);
        match last_at.get_mut(usize::from(s.series)) {
            Some(last) if s.at_ns >= *last => *last = s.at_ns,
            _ => return Ok(index),
        }
    }
    Ok(recording.samples)
}

/// Reads until `buf` is full or the file ends; returns the bytes read.
fn read_up_to(file: &mut File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match file.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// A streaming reader over a recording's records.
pub struct Samples {
    path: PathBuf,
    reader: BufReader<File>,
    remaining: u64,
    index: u64,
    series: usize,
    bytes: Vec<u8>,
}

impl Samples {
    /// Replaces `out` with the next batch of at most `max` records; empty at the end.
    /// Every record's series id is checked against the series table.
    pub fn next_batch(&mut self, out: &mut Vec<Sample>, max: usize) -> Result<(), RecordError> {
        out.clear();
        let mut want = (max as u64).min(self.remaining) as usize;
        while want > 0 {
            let n = want.min(BATCH);
            let bytes = &mut self.bytes[..n * RECORD_SIZE];
            self.reader.read_exact(bytes).map_err(|e| {
                if e.kind() == std::io::ErrorKind::UnexpectedEof {
                    RecordError::Truncated {
                        path: self.path.clone(),
                        detail: format!("it ends inside record {}", self.index),
                    }
                } else {
                    RecordError::Read {
                        path: self.path.clone(),
                        source: e,
                    }
                }
            })?;
            for (i, rec) in bytes.chunks_exact(RECORD_SIZE).enumerate() {
                let s = Sample::decode(rec);
                if usize::from(s.series) >= self.series {
                    return Err(RecordError::Corrupt {
                        path: self.path.clone(),
                        detail: format!(
                            "record {} has series id {}, but the header defines {} series",
                            self.index + i as u64,
                            s.series,
                            self.series
                        ),
                    });
                }
                out.push(s);
            }
            self.index += n as u64;
            self.remaining -= n as u64;
            want -= n;
        }
        Ok(())
    }
}
