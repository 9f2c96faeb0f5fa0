//! Files given to `rtgauge import` (other tools' outputs: cyclictest's histogram text, status
//! lines and `-v` samples, oslat 1.x and 2.x text, rt-tests JSON, rtla, hwlatdetect,
//! jitterdebugger): whatever the file holds, it is refused in one line naming the file, or
//! imported into a result rtgauge reads back (no panic, no hang, no invented figure beyond
//! the source's extremes).
//!
//! Seeds: `corpus/import/` (small files written from each format) and the importer's own
//! fixtures (`crates/rtgauge-import/tests/fixtures/`).

use proptest::prelude::*;
use rtgauge_fuzz::*;
use std::path::Path;

/// Every seed: the import corpus and the importer's fixtures (read once).
fn seeds() -> &'static [(String, Vec<u8>)] {
    static SEEDS: std::sync::OnceLock<Vec<(String, Vec<u8>)>> = std::sync::OnceLock::new();
    SEEDS.get_or_init(read_seeds)
}

fn read_seeds() -> Vec<(String, Vec<u8>)> {
    let mut files = corpus("import");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../rtgauge-import/tests/fixtures");
    let mut more: Vec<(String, Vec<u8>)> = std::fs::read_dir(&fixtures)
        .unwrap_or_else(|e| panic!("{}: {e}", fixtures.display()))
        .map(|entry| entry.expect("fixture entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt" || e == "json"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).expect("fixture file"))
        })
        .collect();
    more.sort();
    files.extend(more);
    files
}

/// Imports `bytes` as a file named `name` (by content, and as each family it may be named
/// with); a refusal keeps the contract, a result is valid and within the source's extremes.
fn exercise(name: &str, bytes: Vec<u8>) -> Result<(), TestCaseError> {
    let (_dir, path) = input_file(name, &bytes);
    let shown = path.display().to_string();
    let outcomes = within("importing a file", move || {
        [
            None,
            Some(rtgauge_import::Source::RtTests),
            Some(rtgauge_import::Source::Rtla),
        ]
        .into_iter()
        .map(|source| rtgauge_import::import_file(&path, source))
        .collect::<Vec<_>>()
    })?;
    for outcome in outcomes {
        match outcome {
            Err(e) => check_refusal(&e.to_string(), &shown)?,
            Ok(imported) => {
                let r = &imported.result;
                prop_assert!(
                    rtgauge_result::read::validate(r).is_ok(),
                    "an import rtgauge would refuse to read back: {:?}",
                    rtgauge_result::read::validate(r)
                );
                for s in r.runs.iter().flat_map(|run| &run.series) {
                    if let (Some(min), Some(max), Some(median)) =
                        (s.stats.min_ns, s.stats.max_ns, s.stats.median_ns)
                    {
                        prop_assert!(
                            (min..=max).contains(&median),
                            "median {median} outside {min}..={max}"
                        );
                    }
                }
            }
        }
    }
    Ok(())
}

#[test]
fn the_corpus_files_import() {
    for (name, bytes) in corpus("import") {
        let (_dir, path) = input_file(&name, &bytes);
        let i = rtgauge_import::import_file(&path, None).unwrap_or_else(|e| panic!("{e}"));
        assert!(!i.result.runs[0].series.is_empty(), "{name}");
    }
}

/// A status line, a `-v` sample or an oslat bucket line with hostile numbers. Boxed: the
/// nested strategy types of seven values overflow a test thread's stack unboxed.
fn hostile_line() -> BoxedStrategy<String> {
    let n = || hostile_value_text().boxed();
    let status = (n(), n(), n(), n())
        .prop_flat_map(move |(t, p, i, c)| {
            (n(), n(), n()).prop_map(move |(min, avg, max)| {
                format!(
                    "T:{t} (123456789) P:{p} I:{i} C: {c} Min: {min} Act: 1 Avg: {avg} Max: {max}"
                )
            })
        })
        .boxed();
    prop_oneof![
        status,
        (n(), n(), n())
            .prop_map(|(t, c, l)| format!("{t}:{c}:{l}"))
            .boxed(),
        (n(), n())
            .prop_map(|(t, i)| format!("Thread {t} Interval: {i}"))
            .boxed(),
        (n(), n(), n())
            .prop_map(|(b, x, y)| format!("    {b} (us):\t {x} {y}"))
            .boxed(),
        Just("# cyclictest -a 0-4096 -S -p95".to_string()).boxed(),
        Just("# cyclictest -a 7,3 -t 18446744073709551615".to_string()).boxed(),
        Just("    CPU Freq:\t 2400 2400 (Mhz)".to_string()).boxed(),
        Just("policy: fifo: loadavg: 1 1 1 1/1 1".to_string()).boxed(),
    ]
    .boxed()
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn damaged_imports_are_refused_in_one_line_or_read_back(
        which in any::<usize>(),
        edits in byte_edits(),
    ) {
        let files = seeds();
        let (name, bytes) = &files[which % files.len()];
        exercise(name, apply_edits(bytes, &edits))?;
    }

    #[test]
    fn hostile_console_lines_are_refused_in_one_line_or_read_back(
        which in any::<usize>(),
        lines in proptest::collection::vec((any::<usize>(), hostile_line()), 1..8),
    ) {
        // Hostile lines put into a real file at random places.
        let files = seeds();
        let (name, bytes) = &files[which % files.len()];
        let mut text: Vec<String> =
            String::from_utf8_lossy(bytes).lines().map(str::to_string).collect();
        for (at, line) in lines {
            let at = at % (text.len() + 1);
            text.insert(at, line);
        }
        exercise(name, text.join("\n").into_bytes())?;
    }
}
