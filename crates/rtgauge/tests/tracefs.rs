//! tracefs not mounted (a fresh virtual machine: the kernel has it, nothing mounted it): the
//! doctor, `--trace` and the timerlat probe say "not mounted" with the mount command rather
//! than "no tracefs in the kernel", and as root they mount it. Played in a private mount
//! namespace (`unshare --mount`), where tracefs is unmounted for the namespace alone: the
//! machine's own mount is never touched, which the test checks too. The decision itself
//! (mounted, not mounted, not built) is unit-tested on fixture roots in rtgauge-trace.

mod common;

use common::{exclusive, nobody_workdir, read_json};
use std::path::Path;
use std::process::Command;

fn tracefs_mounted_here() -> bool {
    std::fs::read_to_string("/proc/self/mounts")
        .is_ok_and(|m| rtgauge_trace::tracefs_in_mount_table(&m).is_some())
}

#[test]
fn unmounted_tracefs_is_named_with_the_mount_command_and_mounted_as_root() {
    // Root (to unshare and to drop to nobody) and setpriv; tracefs mounted on this machine.
    let Some(dir) = nobody_workdir() else { return };
    if !tracefs_mounted_here() {
        eprintln!("skipped: tracefs is not mounted on this machine to start from");
        return;
    }
    let unshare = Command::new("unshare").arg("--version").output();
    if !unshare.is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: needs unshare (util-linux)");
        return;
    }
    let _turn = exclusive();
    let out = |name: &str| dir.path().join(name);
    let rtgauge = assert_cmd::cargo::cargo_bin("rtgauge");
    // Inside the namespace: unmount every tracefs (lazily: a tracer elsewhere may hold files
    // open), then the doctor, a traced run as nobody, the timerlat probe and a traced run as
    // root, with the mount table after each step.
    let script = r#"
        set -u
        grep ' tracefs ' /proc/self/mounts | while read -r _ target _; do umount -l "$target"; done
        grep -c ' tracefs ' /proc/self/mounts > "$DIR/mounts-0"
        "$RTG" doctor --json > "$DIR/doctor.json"
        setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all \
            "$RTG" run cyclic --mode normal -d 200ms --warmup 50ms --trace -q --no-report \
            -o "$DIR/nobody.json" 2> "$DIR/nobody.err"
        grep -c ' tracefs ' /proc/self/mounts > "$DIR/mounts-1"
        "$RTG" run timerlat -d 500ms --warmup 100ms -q --no-report -o "$DIR/timerlat.json" \
            2> "$DIR/timerlat.err"
        grep -c ' tracefs ' /proc/self/mounts > "$DIR/mounts-2"
        umount -l /sys/kernel/tracing
        RTGAUGE_TRACE_RECORDER=tracefs "$RTG" run cyclic --mode normal --cpus 1 -d 300ms \
            --warmup 100ms --trace -q --no-report -o "$DIR/root.json" 2> "$DIR/root.err"
        grep -c ' tracefs ' /proc/self/mounts > "$DIR/mounts-3"
        true
    "#;
    let status = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c", script])
        .env("RTG", &rtgauge)
        .env("DIR", dir.path())
        .env("RTGAUGE_NO_STORE", "1")
        .status()
        .unwrap();
    assert!(status.success(), "unshare: {status}");
    assert!(
        tracefs_mounted_here(),
        "the machine's own tracefs must stay mounted"
    );
    let count = |name: &str| -> u32 {
        let text = std::fs::read_to_string(out(name)).unwrap_or_default();
        text.trim().parse().unwrap_or(u32::MAX)
    };
    let err = |name: &str| std::fs::read_to_string(out(name)).unwrap_or_default();
    assert_eq!(
        count("mounts-0"),
        0,
        "tracefs still mounted in the namespace"
    );

    let doctor = read_json(&out("doctor.json"));
    let check = doctor["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "tracing")
        .expect("a tracing check")
        .clone();
    let found = check["found"].as_str().unwrap();
    assert!(found.contains("not mounted"), "{check}");
    assert!(found.contains(rtgauge_trace::MOUNT_COMMAND), "{check}");
    assert!(!found.contains("CONFIG_FTRACE"), "{check}");

    // nobody cannot mount: the run goes on untraced and says the command.
    let nobody = read_json(&out("nobody.json"));
    assert_eq!(nobody["tracing"]["active"], false, "{}", err("nobody.err"));
    let reason = nobody["tracing"]["reason"].as_str().unwrap();
    assert!(reason.contains("not mounted"), "{reason}");
    assert!(reason.contains(rtgauge_trace::MOUNT_COMMAND), "{reason}");
    assert!(!reason.contains("CONFIG_FTRACE"), "{reason}");
    assert_eq!(count("mounts-1"), 0);

    // The timerlat probe as root mounts it to read the kernel's tracers: either it runs, or
    // it is skipped for the tracer alone (this kernel may lack timerlat), never for tracefs.
    let timerlat = read_json(&out("timerlat.json"));
    let state = &timerlat["runs"][0]["status"];
    let why = state["reason"].as_str().unwrap_or("");
    assert!(
        state["state"] == "ok" || why.contains("no timerlat tracer"),
        "{state} {}",
        err("timerlat.err")
    );
    assert!(!why.contains("no tracefs"), "{why}");
    assert_eq!(count("mounts-2"), 1, "timerlat did not mount tracefs");

    // A traced run as root through tracefs (the flight recorder needs no tracefs, so the
    // run is told to use tracefs) mounts it and traces.
    let root = read_json(&out("root.json"));
    assert_eq!(root["tracing"]["active"], true, "{}", err("root.err"));
    assert_eq!(count("mounts-3"), 1, "--trace did not mount tracefs");
    assert!(Path::new("/sys/kernel/tracing/instances").is_dir());
}
