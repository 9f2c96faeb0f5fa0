//! The fingerprint tells two boards apart: `compare` lists the hardware among the differences,
//! and documents written before those fields existed still read.

mod common;

use common::{assert_success, report_fixture, rtgauge};
use serde_json::Value;

/// A copy of the idle fixture measured on another board.
fn on_board(dir: &std::path::Path, name: &str, set: &[(&str, Value)]) -> std::path::PathBuf {
    let text = std::fs::read_to_string(report_fixture("idle.json")).unwrap();
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    for (field, value) in set {
        doc["fingerprint"][field] = value.clone();
    }
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string(&doc).unwrap()).unwrap();
    path
}

#[test]
fn compare_lists_board_firmware_memory_and_architecture_among_differences() {
    let dir = tempfile::tempdir().unwrap();
    let pi = on_board(
        dir.path(),
        "pi.json",
        &[
            ("architecture", "aarch64".into()),
            ("board", "Raspberry Pi 5 Model B Rev 1.0".into()),
            ("memory_bytes", 8_442_880_000u64.into()),
            ("governor", "ondemand".into()),
        ],
    );
    let pc = on_board(
        dir.path(),
        "pc.json",
        &[
            ("architecture", "x86_64".into()),
            ("board", "Supermicro SYS-511E-WR".into()),
            ("firmware", "American Megatrends 2.1".into()),
            ("memory_bytes", 68_719_476_736u64.into()),
            ("microcode", "0x2b0004d0".into()),
            ("governor", "performance".into()),
        ],
    );
    let out = rtgauge()
        .args(["compare", "-f", "json"])
        .arg(&pi)
        .arg(&pc)
        .output()
        .unwrap();
    assert_success(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    for field in [
        "fingerprint.architecture",
        "fingerprint.board",
        "fingerprint.firmware",
        "fingerprint.memory_bytes",
        "fingerprint.microcode",
        "fingerprint.governor",
    ] {
        assert!(text.contains(field), "{field} missing from:\n{text}");
    }
    // The table names them too, so a reader sees why the boards differ.
    let table = rtgauge().arg("compare").arg(&pi).arg(&pc).output().unwrap();
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(table.contains("Raspberry Pi 5"), "{table}");
}

#[test]
fn documents_without_hardware_fields_still_read() {
    // The fixture as rtgauge wrote it before the hardware fields (and block histograms).
    let text = std::fs::read_to_string(report_fixture("written-before-blocks.json")).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    assert!(
        doc["fingerprint"].get("board").is_none(),
        "fixture predates the field"
    );
    rtgauge()
        .arg("show")
        .arg(report_fixture("written-before-blocks.json"))
        .assert()
        .success();
}
