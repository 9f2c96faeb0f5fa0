//! Hostile inputs for every reader rtgauge has, and the contract each reader must keep.
//!
//! The readers (result documents, `.rtgr` recordings, suite files, spec files, files given to
//! `import`, command-line values) are fed mutations of the committed corpus (`corpus/`: real documents and files)
//! and inputs generated from scratch: random bytes, cut files, flipped bytes, extreme numbers,
//! wrong types, deep nesting, huge strings. The contract ([`check_refusal`], [`within`]):
//! no panic, no abort, no hang, and a refusal is one line that names the input and the
//! problem without echoing a huge value whole.
//!
//! The tests run as ordinary `cargo test` with a few hundred cases per reader; CI runs more
//! (`RTGAUGE_FUZZ_CASES`, see `.ci/run`). A failing case is shrunk by proptest and stored in
//! `tests/*.proptest-regressions`, which are committed and replayed first on every run.

use proptest::prelude::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

/// How long one reader may take on one input before it counts as a hang.
pub const HANG_LIMIT: Duration = Duration::from_secs(10);

/// The longest refusal accepted, beyond the input's name: a message that long is echoing
/// its input.
pub const MESSAGE_LIMIT: usize = 600;

/// Cases per reader: `RTGAUGE_FUZZ_CASES`, else a number small enough for every test run.
pub fn cases() -> u32 {
    std::env::var("RTGAUGE_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200)
}

/// The proptest configuration of every reader test.
pub fn config() -> ProptestConfig {
    ProptestConfig {
        cases: cases(),
        // Shrinking a slow case can take long (each hanging try waits out HANG_LIMIT); a
        // finding is reported either way, with its seed saved for replay.
        max_shrink_iters: 256,
        max_shrink_time: 120_000,
        ..ProptestConfig::default()
    }
}

/// A file of the corpus (`corpus/KIND/NAME`).
pub fn corpus_path(kind: &str, name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus")
        .join(kind)
        .join(name)
}

/// Every file of one corpus kind, in name order.
pub fn corpus(kind: &str) -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus")
        .join(kind);
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("corpus {}: {e}", dir.display()))
        .map(|entry| {
            let path = entry.expect("corpus entry").path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&path).expect("corpus file"))
        })
        .collect();
    files.sort();
    files
}

/// `bytes` written to a fresh file named `name`, as users hand files to rtgauge; the
/// directory lives as long as the returned guard.
pub fn input_file(name: &str, bytes: &[u8]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).expect("temporary file");
    (dir, path)
}

/// A file of corpus `kind` with a few byte edits (see [`byte_edits`]).
pub fn damaged_corpus_file(kind: &'static str) -> impl Strategy<Value = Vec<u8>> {
    (any::<usize>(), byte_edits()).prop_map(move |(which, edits)| {
        let files = corpus(kind);
        apply_edits(&files[which % files.len()].1, &edits)
    })
}

/// One of `choices`, or any short text made of `pattern`.
pub fn word_or(choices: &[&str], pattern: &'static str) -> BoxedStrategy<String> {
    let choices: Vec<String> = choices.iter().map(|s| s.to_string()).collect();
    prop_oneof![
        3 => proptest::sample::select(choices),
        1 => proptest::string::string_regex(pattern).expect("a valid pattern"),
    ]
    .boxed()
}

/// Runs `f` on its own thread and fails if it panics or takes longer than [`HANG_LIMIT`].
pub fn within<T: Send + 'static>(
    what: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, TestCaseError> {
    let (tx, rx) = mpsc::channel();
    let worker = std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(HANG_LIMIT) {
        Ok(value) => {
            let _ = worker.join();
            Ok(value)
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            let panic = worker.join().err().map(|p| {
                p.downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default()
            });
            Err(TestCaseError::fail(format!(
                "{what} panicked: {}",
                panic.unwrap_or_default()
            )))
        }
        Err(mpsc::RecvTimeoutError::Timeout) => Err(TestCaseError::fail(format!(
            "{what} did not return within {HANG_LIMIT:?}"
        ))),
    }
}

/// A refusal keeps the contract: one line, naming `input` (a path or the value's name), not
/// echoing a huge value.
pub fn check_refusal(message: &str, input: &str) -> Result<(), TestCaseError> {
    prop_assert!(!message.trim().is_empty(), "empty message for {input}");
    prop_assert!(
        !message.trim_end().contains('\n'),
        "more than one line: {message}"
    );
    prop_assert!(message.contains(input), "does not name {input}: {message}");
    prop_assert!(
        message.len() <= MESSAGE_LIMIT + input.len(),
        "{} characters, echoing its input: {}…",
        message.len(),
        message.chars().take(200).collect::<String>()
    );
    Ok(())
}

/// One edit of a byte string.
#[derive(Debug, Clone)]
pub enum ByteEdit {
    /// Keep the first `at` bytes (a killed writer, a full disk).
    Truncate { at: usize },
    /// Replace one byte.
    Set { at: usize, byte: u8 },
    /// Insert bytes.
    Insert { at: usize, bytes: Vec<u8> },
    /// Remove a range.
    Remove { at: usize, len: usize },
    /// Copy a range over another place (repeated structure, shifted records).
    Splice { from: usize, to: usize, len: usize },
}

/// A few edits anywhere in the input (positions are taken modulo its length).
pub fn byte_edits() -> impl Strategy<Value = Vec<ByteEdit>> {
    let edit =
        prop_oneof![
            any::<usize>().prop_map(|at| ByteEdit::Truncate { at }),
            (any::<usize>(), interesting_byte()).prop_map(|(at, byte)| ByteEdit::Set { at, byte }),
            (
                any::<usize>(),
                proptest::collection::vec(interesting_byte(), 1..32)
            )
                .prop_map(|(at, bytes)| ByteEdit::Insert { at, bytes }),
            (any::<usize>(), 1usize..64).prop_map(|(at, len)| ByteEdit::Remove { at, len }),
            (any::<usize>(), any::<usize>(), 1usize..64)
                .prop_map(|(from, to, len)| ByteEdit::Splice { from, to, len }),
        ];
    proptest::collection::vec(edit, 1..6)
}

/// Bytes that mean something to the formats: digits, JSON and TOML punctuation, 0 and 0xff.
fn interesting_byte() -> impl Strategy<Value = u8> {
    prop_oneof![
        any::<u8>(),
        proptest::sample::select(b"0123456789-.,:[]{}\"'=\n#@ \\eE+".to_vec()),
        Just(0u8),
        Just(0xffu8),
    ]
}

/// `input` with `edits` applied.
pub fn apply_edits(input: &[u8], edits: &[ByteEdit]) -> Vec<u8> {
    let mut out = input.to_vec();
    for edit in edits {
        let n = out.len().max(1);
        match edit {
            ByteEdit::Truncate { at } => out.truncate(at % n),
            ByteEdit::Set { at, byte } => {
                if !out.is_empty() {
                    out[at % n] = *byte;
                }
            }
            ByteEdit::Insert { at, bytes } => {
                let at = at % (out.len() + 1);
                out.splice(at..at, bytes.iter().copied());
            }
            ByteEdit::Remove { at, len } => {
                let at = at % n;
                let end = (at + len).min(out.len());
                if at < end {
                    out.drain(at..end);
                }
            }
            ByteEdit::Splice { from, to, len } => {
                if out.is_empty() {
                    continue;
                }
                let from = from % out.len();
                let len = (*len).min(out.len() - from);
                let chunk = out[from..from + len].to_vec();
                let to = to % (out.len() + 1);
                out.splice(to..to, chunk);
            }
        }
    }
    out
}

/// A JSON value chosen to break assumptions: extremes, wrong types, deep nesting, long text.
pub fn hostile_json() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::from(u64::MAX)),
        Just(Value::from(0u64)),
        Just(Value::from(1u64)),
        Just(Value::from(-1i64)),
        Just(Value::from(i64::MIN)),
        Just(Value::from(1e300)),
        Just(Value::from(-0.5)),
        Just(Value::from(1u64 << 53)),
        Just(Value::from(255u64)),
        any::<u64>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        Just(Value::Null),
        Just(Value::Bool(true)),
        Just(Value::String(String::new())),
        Just(Value::String("../../etc/passwd".into())),
        (1usize..200_000).prop_map(|n| Value::String("9".repeat(n))),
        ".{0,20}".prop_map(Value::String),
        Just(Value::Array(vec![])),
        Just(serde_json::json!({})),
        (1usize..300).prop_map(deep_array),
        Just(serde_json::json!([[0, u64::MAX], [0, u64::MAX]])),
        Just(serde_json::json!([[5, 1], [1, 1]])),
    ]
}

/// `[[[…]]]`, `depth` levels.
pub fn deep_array(depth: usize) -> Value {
    (0..depth).fold(Value::Array(vec![]), |inner, _| Value::Array(vec![inner]))
}

/// One change to a JSON document: at the node reached by following `path` choices (each
/// taken modulo the number of children), replace, remove or duplicate.
#[derive(Debug, Clone)]
pub enum JsonEdit {
    Replace {
        path: Vec<usize>,
        with: Value,
    },
    Remove {
        path: Vec<usize>,
    },
    /// Swap two children of an array or object (unsorted buckets, reordered series).
    Swap {
        path: Vec<usize>,
        a: usize,
        b: usize,
    },
}

pub fn json_edits() -> impl Strategy<Value = Vec<JsonEdit>> {
    let path = proptest::collection::vec(any::<usize>(), 0..9);
    let edit = prop_oneof![
        4 => (path.clone(), hostile_json()).prop_map(|(path, with)| JsonEdit::Replace { path, with }),
        1 => path.clone().prop_map(|path| JsonEdit::Remove { path }),
        1 => (path, any::<usize>(), any::<usize>()).prop_map(|(path, a, b)| JsonEdit::Swap { path, a, b }),
    ];
    proptest::collection::vec(edit, 1..4)
}

/// `doc` with `edits` applied.
pub fn apply_json_edits(doc: &Value, edits: &[JsonEdit]) -> Value {
    let mut doc = doc.clone();
    for edit in edits {
        match edit {
            JsonEdit::Replace { path, with } => *node(&mut doc, path) = with.clone(),
            JsonEdit::Remove { path } => {
                if let Some((last, parent)) = path.split_last() {
                    match node(&mut doc, parent) {
                        Value::Object(map) if !map.is_empty() => {
                            let key = map.keys().nth(last % map.len()).unwrap().clone();
                            map.remove(&key);
                        }
                        Value::Array(items) if !items.is_empty() => {
                            let at = last % items.len();
                            items.remove(at);
                        }
                        _ => {}
                    }
                }
            }
            JsonEdit::Swap { path, a, b } => match node(&mut doc, path) {
                Value::Array(items) if !items.is_empty() => {
                    let n = items.len();
                    items.swap(a % n, b % n);
                }
                Value::Object(map) if !map.is_empty() => {
                    let n = map.len();
                    let ka = map.keys().nth(a % n).unwrap().clone();
                    let kb = map.keys().nth(b % n).unwrap().clone();
                    let va = map[&ka].clone();
                    let vb = std::mem::replace(map.get_mut(&kb).unwrap(), va);
                    map.insert(ka, vb);
                }
                _ => {}
            },
        }
    }
    doc
}

/// The node reached by following `path` as far as the document goes.
fn node<'a>(mut at: &'a mut Value, path: &[usize]) -> &'a mut Value {
    for &choice in path {
        let len = match &*at {
            Value::Object(map) => map.len(),
            Value::Array(items) => items.len(),
            _ => 0,
        };
        if len == 0 {
            break;
        }
        at = match at {
            Value::Object(map) => map.values_mut().nth(choice % len).unwrap(),
            Value::Array(items) => &mut items[choice % len],
            _ => unreachable!("only containers have children"),
        };
    }
    at
}

/// Text a person might type for a value, or something hostile: numbers with and without
/// units, extremes, signs, exponents, separators, very long input.
pub fn hostile_value_text() -> impl Strategy<Value = String> {
    let number = prop_oneof![
        any::<u64>().prop_map(|n| n.to_string()),
        any::<i64>().prop_map(|n| n.to_string()),
        any::<f64>().prop_map(|n| n.to_string()),
        Just("18446744073709551616".to_string()),
        Just("1e400".to_string()),
        Just("NaN".to_string()),
        Just("inf".to_string()),
        Just("0".to_string()),
        Just("".to_string()),
    ];
    let unit = proptest::sample::select(vec![
        "", "ns", "us", "µs", "ms", "s", "m", "h", "d", "B", "KiB", "MiB", "GiB", "TiB", "EiB",
        "K", "kB", "x", " ", "s s",
    ]);
    prop_oneof![
        4 => (number, unit).prop_map(|(n, u)| format!("{n}{u}")),
        1 => "\\PC{0,40}",
        1 => (1usize..100_000).prop_map(|n| "7".repeat(n)),
    ]
}

/// A CPU list as typed after `--cpus`: numbers, ranges (some huge), separators, junk.
pub fn hostile_cpu_list() -> impl Strategy<Value = String> {
    let number = prop_oneof![
        0u64..8,
        Just(u64::MAX),
        Just(4_000_000_000),
        Just(65_535),
        Just(65_536),
        any::<u64>()
    ];
    let part = prop_oneof![
        number.clone().prop_map(|n| n.to_string()),
        (number.clone(), number).prop_map(|(a, b)| format!("{a}-{b}")),
        Just("all".to_string()),
        Just(String::new()),
        "\\PC{0,6}",
    ];
    proptest::collection::vec(part, 0..12).prop_map(|parts| parts.join(","))
}
