//! The static aarch64 release binary on Debian's arm64 PREEMPT_RT kernel, booted in
//! `qemu-system-aarch64` (TCG, the `virt` machine) by `tests/qemu/run-arm64-guest.sh`: `doctor`
//! audits the guest and `run cyclic --mode rt` measures there. Emulated timing is meaningless,
//! so only the shape is asserted: the kernel is PREEMPT_RT, the result is valid and complete,
//! measured under SCHED_FIFO, and its fingerprint says aarch64 and PREEMPT_RT.
//!
//! It needs the aarch64 binary of `scripts/build-release.sh`, `qemu-system-aarch64` (package
//! qemu-system-arm) and apt lists with the arm64 architecture, so it runs only when
//! `RTGAUGE_CROSS=1`, as CI's `.ci/cross` sets it (about 20 s once the kernel is downloaded):
//!
//!     RTGAUGE_CROSS=1 cargo test -p rtgauge --test arm64_rt_guest -- --nocapture

mod common;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn aarch64_binary_audits_and_measures_on_the_arm64_preempt_rt_kernel() {
    if std::env::var_os("RTGAUGE_CROSS").is_none() {
        eprintln!(
            "skipped: set RTGAUGE_CROSS=1 after scripts/build-release.sh to boot the arm64 guest"
        );
        return;
    }
    let dist = std::env::var_os("RTGAUGE_CROSS_DIST")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join("target/release-static/dist"));
    // The full build when there is one, else the small one (the build for boards; CI builds
    // only that one for aarch64).
    let binary = ["aarch64", "aarch64-small"]
        .iter()
        .map(|build| dist.join(build).join("rtgauge"))
        .find(|b| b.is_file())
        .unwrap_or_else(|| {
            panic!(
                "no aarch64 build in {}: run scripts/build-release.sh",
                dist.display()
            )
        });
    eprintln!("testing {}", binary.display());
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("arm64-rt-guest");
    let _ = std::fs::remove_dir_all(&out);
    let script = workspace().join("tests/qemu/run-arm64-guest.sh");
    let started = std::time::Instant::now();
    let guest = Command::new("bash")
        .arg(&script)
        .arg(&binary)
        .arg(&out)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
    let console = std::fs::read_to_string(out.join("console.log")).unwrap_or_default();
    assert!(
        guest.status.success(),
        "{}\nconsole:\n{console}",
        String::from_utf8_lossy(&guest.stderr)
    );
    eprintln!("guest done in {:.0} s", started.elapsed().as_secs_f64());
    let read = |name: &str| std::fs::read_to_string(out.join(name)).unwrap_or_default();

    let uname = read("uname.txt");
    assert!(
        uname.contains("aarch64") && uname.contains("PREEMPT_RT"),
        "{uname}"
    );
    assert_eq!(read("realtime.txt").trim(), "1", "/sys/kernel/realtime");

    // doctor: 0 when nothing fails, 2 when a check fails (an emulated guest is not tuned).
    assert!(
        matches!(read("doctor.rc").trim(), "0" | "2"),
        "doctor: {}",
        read("doctor.rc")
    );
    let doctor: Value =
        serde_json::from_str(&read("doctor.json")).expect("doctor --json prints JSON");
    assert!(doctor.to_string().contains("clocksource"), "{doctor}");

    assert_eq!(
        read("run.rc").trim(),
        "0",
        "run: {}\nconsole:\n{console}",
        read("run.log")
    );
    let result: Value = serde_json::from_str(&read("result.json")).expect("the result is JSON");
    common::assert_follows_committed_schema(&result);
    assert_eq!(result["status"], "complete", "{result}");
    assert_eq!(result["fingerprint"]["architecture"], "aarch64");
    assert_eq!(result["fingerprint"]["preempt_rt"], true);
    let run = &result["runs"][0];
    assert_eq!(run["probe"], "cyclic");
    assert_eq!(
        run["obtained"]["policy"], "fifo",
        "measured without SCHED_FIFO: {run}"
    );
    let series = run["series"].as_array().expect("series");
    assert!(!series.is_empty());
    for s in series {
        assert!(
            s["stats"]["count"].as_u64().unwrap_or(0) > 0,
            "an empty series: {s}"
        );
    }
}
