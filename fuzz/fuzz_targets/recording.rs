//! Any bytes as a `.rtgr` recording: opened, salvaged and streamed to the end, or refused
//! with one line; never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rtgauge_record::Recording;
use std::io::Write;

fuzz_target!(|bytes: &[u8]| {
    // The reader works on files; one per process, rewritten for each input.
    let path = std::env::temp_dir().join(format!("rtgauge-fuzz-{}.rtgr", std::process::id()));
    std::fs::File::create(&path)
        .and_then(|mut f| f.write_all(bytes))
        .expect("temporary file");
    for opened in [Recording::open(&path), Recording::salvage(&path)] {
        match opened {
            Err(e) => assert!(!e.to_string().contains('\n'), "{e}"),
            Ok(rec) => {
                let Ok(mut samples) = rec.samples() else { continue };
                let mut batch = Vec::new();
                let mut streamed = 0u64;
                while samples.next_batch(&mut batch, 4096).is_ok() && !batch.is_empty() {
                    streamed += batch.len() as u64;
                }
                assert!(streamed <= rec.sample_count());
            }
        }
    }
});
