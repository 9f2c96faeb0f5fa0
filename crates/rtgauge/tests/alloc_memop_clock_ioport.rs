//! End-to-end tests of the alloc, memop, clock and ioport probes. They run the real
//! binary with short budgets and assert properties that a wrong implementation would fail on
//! any machine, never absolute times.

mod common;
use common::*;

use rtgauge_core::units::parse_size;
use serde_json::Value;
use std::path::Path;

/// Runs `rtgauge run ARGS --best-effort` (ARGS space-separated, as on a command line) and
/// returns the result document.
fn run(args: &str) -> Value {
    run_line(&format!("{args} --best-effort"))
}

fn runs(result: &Value) -> &Vec<Value> {
    result["runs"].as_array().unwrap()
}

fn series(run: &Value) -> &Vec<Value> {
    run["series"].as_array().unwrap()
}

/// The series of `run` called `name` whose labels include all of `labels`.
fn find<'a>(run: &'a Value, name: &str, labels: &[(&str, &str)]) -> Option<&'a Value> {
    series(run)
        .iter()
        .find(|s| s["name"] == name && labels.iter().all(|(k, v)| s["labels"][*k] == *v))
}

fn get<'a>(run: &'a Value, name: &str, labels: &[(&str, &str)]) -> &'a Value {
    find(run, name, labels).unwrap_or_else(|| panic!("no series {name} {labels:?} in {run}"))
}

fn median(s: &Value) -> u64 {
    s["stats"]["median_ns"].as_u64().unwrap()
}

fn metric(s: &Value, key: &str) -> f64 {
    s["metrics"][key]
        .as_f64()
        .unwrap_or_else(|| panic!("no metric {key} in {}", s["metrics"]))
}

fn size_of(s: &Value) -> u64 {
    parse_size(s["labels"]["size"].as_str().unwrap()).unwrap()
}

/// Median of series `name` of `allocator`, per size label.
fn medians(run: &Value, name: &str, allocator: &str) -> Vec<(u64, u64)> {
    series(run)
        .iter()
        .filter(|s| s["name"] == name && s["labels"]["allocator"] == allocator)
        .map(|s| (size_of(s), median(s)))
        .collect()
}

fn spread(values: &[(u64, u64)]) -> f64 {
    let max = values.iter().map(|v| v.1).max().unwrap() as f64;
    let min = values.iter().map(|v| v.1).min().unwrap().max(1) as f64;
    max / min
}

const SWEEP_SIZES: &str = "alloc.sizes=16,4KiB,64KiB,1MiB,16MiB,64MiB";

#[test]
fn tlsf_alloc_time_stays_bounded_across_sizes_while_mmap_touch_grows() {
    let _serial = exclusive();
    let result = run(&format!(
        "alloc --mode normal,rt -d 4s --warmup 300ms --set {SWEEP_SIZES} \
         --set alloc.scenarios=sweep"
    ));
    assert_eq!(runs(&result).len(), 2);
    for run in runs(&result) {
        let mode = run["mode"].as_str().unwrap();
        assert_eq!(run["status"]["state"], "ok", "{run}");
        // Every size of every allocator has its three series, each with samples.
        for allocator in ["malloc", "tlsf", "mmap"] {
            for name in ["alloc", "free", "first_touch"] {
                let m = medians(run, name, allocator);
                assert_eq!(m.len(), 6, "{mode} {allocator} {name}: {m:?}");
            }
        }
        // TLSF: constant time whatever the size (a size-proportional allocator would spread
        // by ~10^6 from 16 B to 64 MiB; 20× leaves room for cache and TLB misses).
        let tlsf = medians(run, "alloc", "tlsf");
        assert!(spread(&tlsf) <= 20.0, "{mode}: TLSF alloc medians {tlsf:?}");
        let tlsf_max = series(run)
            .iter()
            .filter(|s| s["name"] == "alloc" && s["labels"]["allocator"] == "tlsf")
            .map(|s| s["stats"]["max_ns"].as_u64().unwrap())
            .collect::<Vec<_>>();
        assert!(tlsf_max.iter().all(|&m| m > 0), "{tlsf_max:?}");

        // mmap: the memory handed out is not there yet. Getting it (mapping + first touch)
        // grows with size: 1024× more pages at 64 MiB than at 64 KiB. In normal mode the
        // faults come at first touch; under mlockall (rt) mmap itself populates the pages.
        let at = |name: &str, allocator: &str, size: u64| -> u64 {
            medians(run, name, allocator)
                .iter()
                .find(|t| t.0 == size)
                .unwrap_or_else(|| panic!("{mode}: no {name} {allocator} {size}"))
                .1
        };
        let get_memory = |allocator: &str, size: u64| {
            at("alloc", allocator, size) + at("first_touch", allocator, size)
        };
        let (small, large) = (get_memory("mmap", 64 << 10), get_memory("mmap", 64 << 20));
        assert!(
            large >= 50 * small,
            "{mode}: mmap 64KiB {small} ns, 64MiB {large} ns"
        );
        if mode == "normal" {
            let (small, large) = (
                at("first_touch", "mmap", 64 << 10),
                at("first_touch", "mmap", 64 << 20),
            );
            assert!(
                large >= 50 * small,
                "first touch of fresh mmap memory must grow with size: {small} vs {large} ns"
            );
        }
        // malloc serves 64 MiB from mmap (above glibc's largest mmap threshold), so getting
        // it grows with size too, unlike TLSF.
        let (small, large) = (get_memory("malloc", 16), get_memory("malloc", 64 << 20));
        assert!(
            large > 10 * small,
            "{mode}: malloc 16B {small} ns, 64MiB {large} ns"
        );
    }
}

#[test]
fn fragment_scenario_reports_worst_case_and_fragmentation() {
    let _serial = exclusive();
    let result = run(
        "alloc --mode normal -d 1500ms --warmup 200ms --set alloc.scenarios=fragment \
         --set alloc.fragment-slots=256",
    );
    let run = &runs(&result)[0];
    assert_eq!(run["status"]["state"], "ok", "{run}");
    assert!(
        find(run, "alloc", &[]).is_none(),
        "only the fragment scenario was asked for"
    );
    for allocator in ["malloc", "tlsf", "mmap"] {
        let a = get(run, "fragment_alloc", &[("allocator", allocator)]);
        let f = get(run, "fragment_free", &[("allocator", allocator)]);
        for s in [a, f] {
            assert!(s["stats"]["count"].as_u64().unwrap() > 10, "{s}");
            assert!(s["stats"]["max_ns"].as_u64() >= s["stats"]["median_ns"].as_u64());
        }
        assert_eq!(a["counters"]["failed"], 0, "{allocator}");
        let requested = metric(a, "requested_bytes");
        assert!(requested > 0.0 && metric(a, "requested_peak_bytes") >= requested);
        assert!(metric(a, "live_blocks") > 0.0);
        match allocator {
            "tlsf" => {
                // A block is the request plus a header, rounded up: never less than asked.
                assert!(metric(a, "footprint_ratio") >= 1.0, "{}", a["metrics"]);
                let ext = metric(a, "external_fragmentation");
                assert!((0.0..=1.0).contains(&ext), "{ext}");
                assert!(metric(a, "largest_free_block_bytes") < metric(a, "pool_bytes"));
            }
            "mmap" => assert!(metric(a, "footprint_ratio") >= 1.0, "{}", a["metrics"]),
            _ => {
                // The heap malloc holds covers the live blocks.
                assert!(metric(a, "heap_bytes") >= requested, "{}", a["metrics"]);
                assert!(metric(a, "footprint_ratio") > 0.0);
            }
        }
    }
}

#[test]
fn tlsf_sizes_that_do_not_fit_the_pool_are_reported() {
    let _serial = exclusive();
    let result = run(
        "alloc --mode normal --loops 200 --warmup 10ms --set alloc.allocators=tlsf \
         --set alloc.sizes=64KiB,4MiB --set alloc.tlsf-pool=1MiB --set alloc.scenarios=sweep",
    );
    let run = &runs(&result)[0];
    assert_eq!(run["status"]["state"], "ok", "{run}");
    assert_eq!(
        get(run, "alloc", &[("size", "64KiB")])["stats"]["count"],
        200
    );
    assert!(find(run, "alloc", &[("size", "4MiB")]).is_none());
    let warned = result["warnings"].as_array().unwrap().iter().any(|w| {
        let m = w["message"].as_str().unwrap_or_default();
        m.contains("4MiB") && m.contains("do not fit") && m.contains("tlsf-pool")
    });
    assert!(warned, "{}", result["warnings"]);
}

/// The smallest power of two that is at least 4× the last-level cache and at least 64 MiB.
fn beyond_last_level_cache() -> u64 {
    rtgauge_probes::memop::default_max_size()
}

#[test]
fn memcpy_and_memset_are_slower_per_byte_beyond_the_last_level_cache() {
    let _serial = exclusive();
    let large = beyond_last_level_cache();
    let result = run(&format!(
        "memop --mode normal -d 2s --warmup 200ms --set memop.sizes=4KiB,{large}"
    ));
    let run = &runs(&result)[0];
    assert_eq!(run["status"]["state"], "ok", "{run}");
    for op in ["memcpy", "memset"] {
        let small = get(run, op, &[("size", "4KiB")]);
        let big = series(run)
            .iter()
            .find(|s| s["name"] == op && size_of(s) == large)
            .unwrap();
        let (bw_small, bw_big) = (
            metric(small, "bandwidth_bytes_per_s"),
            metric(big, "bandwidth_bytes_per_s"),
        );
        assert!(bw_small > 0.0 && bw_big > 0.0);
        // Far beyond the last-level cache every byte comes from memory; a 4 KiB block stays
        // in L1. The median time per byte must show it (even with the clock read included in
        // the small block's time).
        assert!(
            bw_big < 0.75 * bw_small,
            "{op}: {bw_small:.3e} B/s at 4KiB vs {bw_big:.3e} B/s at {large} B"
        );
        // Bigger blocks take longer in absolute terms.
        assert!(median(big) > median(small));
    }
}

/// "cpu MHz" of the first CPU in /proc/cpuinfo, if present.
fn cpuinfo_mhz() -> Option<f64> {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()?
        .lines()
        .find(|l| l.starts_with("cpu MHz"))?
        .split_once(':')?
        .1
        .trim()
        .parse()
        .ok()
}

#[test]
fn clocks_are_monotonic_cost_something_and_the_tsc_rate_matches_the_cpu() {
    let _serial = exclusive();
    let result = run("clock --mode normal -d 3s --warmup 200ms");
    let run = &runs(&result)[0];
    assert_eq!(run["status"]["state"], "ok", "{run}");
    for clock in ["monotonic", "monotonic-raw", "realtime", "boottime", "tai"] {
        let s = get(run, "read_cost", &[("clock", clock)]);
        assert!(median(s) > 0, "{clock}: a clock read takes time");
        assert!(metric(s, "resolution_ns") >= 1.0, "{clock}");
        assert!(
            s["counters"]["reads"].as_u64().unwrap() >= 2 * s["stats"]["count"].as_u64().unwrap()
        );
        if clock.starts_with("monotonic") || clock == "boottime" {
            assert_eq!(s["counters"]["backward_steps"], 0, "{clock} went backwards");
        }
    }
    if !cfg!(target_arch = "x86_64") {
        assert!(find(run, "read_cost", &[("clock", "tsc")]).is_none());
        return;
    }
    let tsc = get(run, "read_cost", &[("clock", "tsc")]);
    assert!(tsc["stats"]["count"].as_u64().unwrap() > 1000);
    assert_eq!(
        tsc["counters"]["backward_steps"], 0,
        "one pinned CPU's TSC never goes back"
    );
    let hz = metric(tsc, "tsc_hz");
    assert!(hz > 1e7, "{hz}");
    assert!((metric(tsc, "resolution_ns") - 1e9 / hz).abs() < 1e-9);
    // 3 s of 100 ms windows: the stability figure exists and is a finite, non-negative ppb.
    assert!(metric(tsc, "tsc_windows") >= 10.0);
    let ppb = metric(tsc, "tsc_stability_ppb");
    assert!(ppb.is_finite() && ppb >= 0.0, "{ppb}");
    assert!(
        metric(tsc, "tsc_rate_min_hz") <= hz && hz <= metric(tsc, "tsc_rate_max_hz") * 1.000_001
    );
    // With constant_tsc the TSC runs at the nominal frequency the kernel reports as "cpu MHz"
    // (exactly so in a VM, near it on bare metal with frequency scaling).
    let flags_say_constant = std::fs::read_to_string("/proc/cpuinfo")
        .map(|s| s.contains(" constant_tsc"))
        .unwrap_or(false);
    if let (Some(mhz), true) = (cpuinfo_mhz(), flags_say_constant) {
        let ratio = hz / (mhz * 1e6);
        assert!((0.9..=1.1).contains(&ratio), "TSC {hz} Hz vs cpu MHz {mhz}");
    }
}

/// Whether this kernel offers ioperm at all (giving up a permission never held needs none).
fn kernel_has_ioperm() -> bool {
    if !cfg!(any(target_arch = "x86", target_arch = "x86_64")) {
        return false;
    }
    // SAFETY: turning port access off has no effect on a process that never had it.
    unsafe { libc::ioperm(0x80, 1, 0) == 0 }
}

fn assert_skipped_with_reason(run: &Value) -> String {
    assert_eq!(run["status"]["state"], "skipped", "{run}");
    assert!(
        series(run).is_empty(),
        "a skipped probe reports no numbers: {run}"
    );
    let reason = run["status"]["reason"].as_str().unwrap().to_string();
    assert!(
        reason.starts_with("ioport: ") && reason.len() > 30,
        "{reason}"
    );
    reason
}

#[test]
fn ioport_measures_as_root_or_says_why_not() {
    let _serial = exclusive();
    let result = run("ioport --mode normal -d 400ms --warmup 50ms");
    let run = &runs(&result)[0];
    if is_root() && kernel_has_ioperm() {
        assert_eq!(run["status"]["state"], "ok", "{run}");
        for name in ["inb", "outb"] {
            let s = get(run, name, &[("port", "0x80")]);
            assert!(s["stats"]["count"].as_u64().unwrap() > 0);
            assert!(
                s["stats"]["min_ns"].as_u64().unwrap() > 0,
                "{name}: a port access takes time"
            );
        }
    } else {
        let reason = assert_skipped_with_reason(run);
        if !kernel_has_ioperm() && cfg!(target_arch = "x86_64") {
            assert!(reason.contains("CONFIG_X86_IOPL_IOPERM"), "{reason}");
        }
    }
}

#[test]
fn ioport_as_nobody_is_skipped_with_a_reason_not_zeros() {
    let _serial = exclusive();
    let Some(dir) = nobody_workdir() else {
        return;
    };
    let out = as_nobody()
        .args([
            "run", "ioport", "--mode", "normal", "-d", "200ms", "--warmup", "20ms",
        ])
        .args(["--best-effort", "-q", "-o", "r.json"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_success(&out);
    let result = read_json(&dir.path().join("r.json"));
    let reason = assert_skipped_with_reason(&runs(&result)[0]);
    if kernel_has_ioperm() {
        assert!(
            reason.contains("CAP_SYS_RAWIO") && reason.contains("setcap"),
            "{reason}"
        );
    }
}

#[test]
fn bad_input_gives_a_one_line_error() {
    let cases = [
        (
            "alloc.sizes=0",
            "probe alloc: parameter sizes: '0' is not a positive size",
        ),
        ("alloc.allocators=jemalloc", "unknown allocators 'jemalloc'"),
        (
            "alloc.touch=maybe",
            "parameter touch: 'maybe' is not yes or no",
        ),
        (
            "memop.sizes=4KiB,0",
            "probe memop: parameter sizes: '0' is not a positive size",
        ),
        ("memop.ops=memmove", "unknown ops 'memmove'"),
        ("clock.clocks=sundial", "unknown clocks 'sundial'"),
        ("clock.window=1us", "shorter than 1ms"),
    ];
    for (setting, needle) in cases {
        let probe = setting.split('.').next().unwrap();
        let out = rtgauge()
            .args([
                "run",
                probe,
                "-d",
                "1s",
                "--set",
                setting,
                "-o",
                "/nonexistent/x.json",
            ])
            .assert()
            .code(1);
        let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(stderr.contains(needle), "{setting}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{setting}: {stderr}");
    }
    let out = rtgauge()
        .args(["run", "ioport", "--set", "ioport.port=0x3f8"])
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(stderr.contains("port"), "{stderr}");
}

/// The port access path itself (ioperm, `in al, dx`, `out dx, al`) on a kernel that offers
/// ioperm, for machines whose own kernel does not (this one is built without
/// CONFIG_X86_IOPL_IOPERM): boots Debian's standard kernel under QEMU through
/// `tests/qemu/run-guest.sh` (see `qemu_kernels.rs`). Slow, so only with `RTGAUGE_QEMU=1`.
#[test]
fn ioport_measures_port_0x80_in_a_guest_kernel_with_ioperm() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/qemu/run-guest.sh");
    if std::env::var("RTGAUGE_QEMU").as_deref() != Ok("1") || !script.exists() {
        eprintln!("skipped: set RTGAUGE_QEMU=1 (needs qemu-system-x86_64 and busybox-static)");
        return;
    }
    let _serial = exclusive();
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("qemu-ioport");
    let outdir = base.join("vanilla");
    std::fs::create_dir_all(&outdir).unwrap();
    let commands = base.join("commands");
    std::fs::write(
        &commands,
        "ioport rtgauge run ioport --mode normal,rt --duration 1s --warmup 100ms --best-effort -q -o /tmp/io.json\nresult cat /tmp/io.json\n",
    )
    .unwrap();
    let output = std::process::Command::new("bash")
        .arg(&script)
        .arg("vanilla")
        .arg(env!("CARGO_BIN_EXE_rtgauge"))
        .arg(&outdir)
        .env("RTGAUGE_QEMU_CMDS", &commands)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "run-guest.sh failed: {stderr}");
    let rc = std::fs::read_to_string(outdir.join("ioport.rc")).unwrap();
    let err = std::fs::read_to_string(outdir.join("ioport.err")).unwrap_or_default();
    assert_eq!(rc.trim(), "0", "guest rtgauge failed: {err}");
    let result = read_json(&outdir.join("result.json"));
    for run in runs(&result) {
        assert_eq!(run["status"]["state"], "ok", "{run}");
        for name in ["inb", "outb"] {
            let s = get(run, name, &[("port", "0x80")]);
            assert!(s["stats"]["count"].as_u64().unwrap() > 100, "{s}");
            assert!(
                s["stats"]["min_ns"].as_u64().unwrap() > 0,
                "{name}: a port access takes time"
            );
        }
    }
    let says_trap = result["warnings"].as_array().unwrap().iter().any(|w| {
        w["message"]
            .as_str()
            .is_some_and(|m| m.contains("ioport") && m.contains("traps to the hypervisor"))
    });
    assert!(
        says_trap,
        "the result must say a VM's port access is a trap: {}",
        result["warnings"]
    );
}
