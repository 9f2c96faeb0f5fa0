//! `rtgauge probes` lists every probe, what it measures, whether it can run here,
//! and each `--set` parameter with its meaning and default.

mod common;

use common::rtgauge;

fn catalogue() -> String {
    let out = rtgauge().arg("probes").output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn probes_lists_every_probe_with_availability_and_parameters() {
    let text = catalogue();
    for probe in [
        "cyclic",
        "response",
        "switch",
        "primitive",
        "alloc",
        "memop",
        "clock",
        "clocksync",
        "ioport",
        "timerlat",
    ] {
        let head = text
            .lines()
            .find(|l| l.starts_with(&format!("{probe}: ")))
            .unwrap_or_else(|| panic!("{probe} missing:\n{text}"));
        assert!(
            head.contains("[available]") || head.contains("[unavailable: "),
            "{head}"
        );
    }
    // A parameter line, its wrapped help and its default.
    assert!(text.contains("\n  phase "), "{text}");
    assert!(text.contains("default: from the clock at start"), "{text}");
    assert!(text.contains("default: 1ms (--period)"), "{text}");
    assert!(text
        .lines()
        .all(|l| l.chars().count() <= 100 || !l.starts_with("  ")));
}

/// Every parameter the catalogue documents is one `run --set` accepts, and a key it does not
/// document is refused with a pointer to the catalogue.
#[test]
fn documented_parameters_are_the_accepted_ones() {
    let text = catalogue();
    let mut section = String::new();
    let mut checked = 0;
    for line in text.lines() {
        if let Some((name, _)) = line.split_once(": ").filter(|_| !line.starts_with(' ')) {
            section = name.to_string();
            continue;
        }
        // "  KEY  help": two spaces, the key, two spaces.
        let Some(rest) = line.strip_prefix("  ").filter(|r| !r.starts_with(' ')) else {
            continue;
        };
        let Some((key, _)) = rest.split_once("  ") else {
            continue;
        };
        if section != "cyclic" {
            continue;
        }
        // A dry check: validation runs before anything is measured, so a wrong value would be
        // refused, an unknown key too; a known key with a bad value names the key.
        let out = rtgauge()
            .args(["run", "cyclic", "--set"])
            .arg(format!("cyclic.{key}=not-a-value"))
            .args(["-d", "100ms", "--best-effort", "-q", "--no-report", "-o"])
            .arg(std::env::temp_dir().join("rtgauge-catalogue.json"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{key}: {stderr}");
        assert!(stderr.contains(key), "{key}: {stderr}");
        assert!(
            !stderr.contains("takes parameter"),
            "{key} refused as unknown: {stderr}"
        );
        checked += 1;
    }
    assert_eq!(checked, 5, "cyclic has five parameters:\n{text}");
    let out = rtgauge()
        .args(["run", "cyclic", "--set", "cyclic.bogus=1", "-q"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("bogus") && stderr.contains("rtgauge probes"),
        "{stderr}"
    );
}
