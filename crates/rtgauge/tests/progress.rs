//! Progress of a run in a log (stderr not a terminal): a line at each probe's start and every
//! few seconds, with probe k of n, the elapsed time and the time left.

mod common;

#[test]
fn a_log_gets_progress_lines_with_probe_count_elapsed_and_time_left() {
    let _serial = common::exclusive();
    let dir = tempfile::tempdir().unwrap();
    let out = common::rtgauge()
        .args(["run", "clock", "cyclic", "--mode", "normal", "--cpus", "0"])
        .args(["-d", "3s", "--warmup", "100ms", "--no-report", "-o"])
        .arg(dir.path().join("r.json"))
        .output()
        .unwrap();
    common::assert_success(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("rtgauge: probe "))
        .collect();
    assert!(
        lines[0].starts_with("rtgauge: probe 1 of 2 · clock · mode normal"),
        "{err}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("rtgauge: probe 2 of 2 · cyclic")),
        "{err}"
    );
    // The periodic line (every 5 s) comes during the 6 s of measuring, from a CPU not measured.
    assert!(lines.len() >= 3, "{err}");
    assert!(lines.iter().all(|l| l.contains(" elapsed")), "{err}");
    assert!(lines[0].contains(" left"), "{err}");
}
