//! Any bytes as a result document: refused with one line, or accepted; never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    if let Err(problem) = rtgauge_result::parse_result(bytes) {
        let message = problem.at(std::path::Path::new("fuzzed.json")).to_string();
        assert!(!message.contains('\n'), "{message}");
        assert!(message.len() < 1000, "{message}");
    }
});
