//! Recordings (`.rtgr`): cut, damaged and made-up files are refused in one line naming the
//! file, or salvaged; whatever opens streams and exports to the end without a panic.

use proptest::prelude::*;
use rtgauge_fuzz::*;
use rtgauge_record::{export, ExportFormat, Recording};

/// Opens, salvages, streams and exports `bytes` as a recording; every refusal keeps the
/// contract.
fn exercise(bytes: Vec<u8>) -> Result<(), TestCaseError> {
    let (dir, path) = input_file("run.rtgr", &bytes);
    let name = path.display().to_string();
    let out = dir.path().join("run.csv");
    let messages = within("reading a recording", move || {
        let mut messages = Vec::new();
        for salvage in [false, true] {
            let opened = if salvage {
                Recording::salvage(&path)
            } else {
                Recording::open(&path)
            };
            match opened {
                Err(e) => messages.push(e.to_string()),
                Ok(rec) => {
                    let mut batch = Vec::new();
                    let mut streamed = 0u64;
                    match rec.samples() {
                        Err(e) => messages.push(e.to_string()),
                        Ok(mut samples) => loop {
                            match samples.next_batch(&mut batch, 1000) {
                                Err(e) => {
                                    messages.push(e.to_string());
                                    break;
                                }
                                Ok(()) if batch.is_empty() => break,
                                Ok(()) => streamed += batch.len() as u64,
                            }
                        },
                    }
                    assert!(streamed <= rec.sample_count(), "more records than counted");
                }
            }
        }
        if let Err(e) = export(&path, ExportFormat::Csv, &out) {
            messages.push(e.to_string());
        }
        messages
    })?;
    for message in messages {
        check_refusal(&message, &name)?;
    }
    Ok(())
}

#[test]
fn the_corpus_recordings_open() {
    for (name, bytes) in corpus("recording") {
        let (_dir, path) = input_file(&name, &bytes);
        let rec = Recording::open(&path).unwrap_or_else(|e| panic!("{e}"));
        assert!(rec.sample_count() > 0, "{name}");
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn damaged_recordings_are_refused_in_one_line_or_read_to_the_end(
        bytes in damaged_corpus_file("recording"),
    ) {
        exercise(bytes)?;
    }

    #[test]
    fn random_bytes_after_the_magic_are_refused_in_one_line(
        tail in proptest::collection::vec(any::<u8>(), 0..256),
    ) {
        let mut bytes = rtgauge_record::format::MAGIC.to_vec();
        bytes.extend(tail);
        exercise(bytes)?;
    }

    #[test]
    fn a_header_that_claims_anything_is_refused_in_one_line(
        version in any::<u32>(),
        record_size in prop_oneof![Just(18u32), any::<u32>()],
        header_len in prop_oneof![Just(u64::MAX), Just(0u64), 0u64..4096, any::<u64>()],
        tail_claims in proptest::collection::vec(any::<u64>(), 3),
    ) {
        let files = corpus("recording");
        let mut bytes = files[0].1.clone();
        bytes[8..12].copy_from_slice(&version.to_le_bytes());
        bytes[12..16].copy_from_slice(&record_size.to_le_bytes());
        bytes[16..24].copy_from_slice(&header_len.to_le_bytes());
        // The tail's trailer length, sample and dropped counts.
        let tail = bytes.len() - 32;
        for (i, claim) in tail_claims.iter().enumerate() {
            bytes[tail + 8 * i..tail + 8 * i + 8].copy_from_slice(&claim.to_le_bytes());
        }
        exercise(bytes)?;
    }
}
