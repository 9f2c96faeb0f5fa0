//! Ctrl-C twice: the first asks the run to stop and save, the second exits at once.

mod common;

use std::time::{Duration, Instant};

#[test]
fn second_interrupt_exits_at_once_without_waiting_for_the_save() {
    let _serial = common::exclusive();
    let (_dir, out) = common::scratch_result();
    let child = common::spawn(
        "run cyclic --mode normal --cpus 0 -d 60s --warmup 100ms --no-report -q",
        &out,
        std::process::Stdio::piped(),
    );
    std::thread::sleep(Duration::from_millis(1500));
    // Twice in a row, as an impatient user does: the first asks the probe to stop and the
    // result to be saved, which takes tens of milliseconds; the second, 10 ms later (sooner,
    // the kernel would merge the two into one pending signal), must not wait for that.
    common::interrupt(&child);
    std::thread::sleep(Duration::from_millis(10));
    common::interrupt(&child);
    let sent = Instant::now();
    let output = child.wait_with_output().unwrap();
    assert!(sent.elapsed() < Duration::from_secs(3));
    assert_eq!(output.status.code(), Some(130));
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(err.contains("second interrupt: exiting now"), "{err}");
    // No probe finished, so the empty result file claimed at the start is given back (a
    // checkpoint, had one been written, would be a whole document).
    if out.exists() {
        common::read_json(&out);
    }
}
