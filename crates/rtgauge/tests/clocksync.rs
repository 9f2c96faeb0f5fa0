//! End-to-end tests of the clocksync probe against real daemons that the tests start
//! themselves, with their own configuration files naming only 127.0.0.1 or the test's own
//! network namespaces, and stop (a guard with Drop) even when the test fails. The packaged
//! services are never started. Without root, chronyd, ptp4l or `ip`, a test prints why it is
//! skipped.
//!
//! What is asserted are properties the daemons are configured to show (a known offset
//! correction, a known path asymmetry, a server stopped), with margins, never absolute
//! offsets of this noisy machine.

mod common;
use common::daemons::*;
use common::*;

use serde_json::Value;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

const PROBE: &str = "clocksync";

/// The probe run's series named `name` of the reference `reference`.
fn series<'a>(result: &'a Value, name: &str, reference: &str) -> &'a Value {
    result["runs"][0]["series"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name && s["labels"]["reference"] == reference)
        .unwrap_or_else(|| panic!("no {name} series of {reference}: {result}"))
}

fn counter(s: &Value, key: &str) -> u64 {
    s["counters"][key].as_u64().unwrap()
}

fn metric(s: &Value, key: &str) -> f64 {
    s["metrics"][key]
        .as_f64()
        .unwrap_or_else(|| panic!("no {key} in {s}"))
}

/// `rtgauge run clocksync -d DURATION --set clocksync.K=V…` into `out`: its exit code and
/// stderr.
fn run_probe(out: &Path, duration: &str, settings: &[String]) -> (Option<i32>, String) {
    let (code, err, _) = run_probe_with_summary(out, duration, settings);
    (code, err)
}

/// [`run_probe`], and the summary it printed (at 100 columns).
fn run_probe_with_summary(
    out: &Path,
    duration: &str,
    settings: &[String],
) -> (Option<i32>, String, String) {
    let mut cmd = rtgauge_process();
    cmd.args(["run", PROBE, "-d", duration, "--no-report", "-o"])
        .arg(out)
        .env("COLUMNS", "100");
    for s in settings {
        cmd.args(["--set", &format!("{PROBE}.{s}")]);
    }
    let o = cmd.output().unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
    )
}

#[test]
fn bad_input_is_refused_in_one_line_before_measuring() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    let cases = [
        (
            "profile=space",
            "unknown profile 'space'; accepted: telecom (30ns), industrial (1us), robotics (100us)",
        ),
        (
            "limit=fast",
            "parameter limit: 'fast' is not a positive duration",
        ),
        ("limit=1us", "give either limit or profile, not both"),
    ];
    for (setting, expected) in cases {
        let mut args: Vec<String> = ["run", PROBE, "-d", "5s", "--set"]
            .map(String::from)
            .to_vec();
        args.push(format!("{PROBE}.{setting}"));
        if setting == "limit=1us" {
            args.extend(["--set".into(), format!("{PROBE}.profile=telecom")]);
        }
        args.extend(["-o".into(), out.display().to_string()]);
        let t = Instant::now();
        let err = one_line_error(&args);
        assert!(err.contains(expected), "{setting}: {err}");
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "measured before refusing"
        );
        assert!(!out.exists(), "a result was written for {setting}");
    }
}

#[test]
fn without_a_reference_the_probe_is_skipped_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    let off = ["chrony=off", "ptp4l=off", "phc=off"].map(String::from);
    let (code, err) = run_probe(&out, "1s", &off);
    assert_eq!(code, Some(0), "{err}");
    let run = &read_json(&out)["runs"][0];
    assert_eq!(run["status"]["state"], "skipped", "{run}");
    let reason = run["status"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("no synchronisation reference here"),
        "{reason}"
    );
}

/// A daemon socket that never answers and one that answers garbage: each poll fails within
/// the timeout, the run ends on time, and with no reference answering it fails (exit 1)
/// giving each one's reason. (Beside a reference that answers, a failing one fails the
/// verdict: see the chrony test.)
#[test]
fn daemons_that_hang_or_answer_garbage_fail_their_polls_not_the_run() {
    if !installed("chronyc") || !installed("pmc") {
        eprintln!("skipped: needs chronyc (chrony) and pmc (linuxptp)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let silent = dir.path().join("silent.sock");
    let _silent = std::os::unix::net::UnixDatagram::bind(&silent).unwrap();
    let garbage = dir.path().join("garbage.sock");
    let noisy = std::os::unix::net::UnixDatagram::bind(&garbage).unwrap();
    noisy
        .set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stop_answering = stop.clone();
    let answerer = std::thread::spawn(move || {
        let mut buf = [0u8; 2048];
        while !stop_answering.load(std::sync::atomic::Ordering::Relaxed) {
            if let Ok((_, Some(from))) = noisy
                .recv_from(&mut buf)
                .map(|(n, a)| (n, a.as_pathname().map(Path::to_path_buf)))
            {
                let _ = noisy.send_to(b"\x02\x00garbage, not an answer", from);
            }
        }
    });
    let out = dir.path().join("r.json");
    let settings = [
        format!("chrony={}", silent.display()),
        format!("ptp4l={}", garbage.display()),
        "phc=off".into(),
        "interval=500ms".into(),
        "timeout=300ms".into(),
        "limit=1ms".into(),
    ];
    let t = Instant::now();
    let (code, err) = run_probe(&out, "2s", &settings);
    let took = t.elapsed();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    answerer.join().unwrap();
    eprintln!("took {took:?}\n{err}");
    assert_eq!(code, Some(1), "{err}");
    // 2 s of polls, each reference at most 300 ms a poll, and the program's start and end.
    assert!(took < Duration::from_secs(15), "{took:?}");
    assert!(err.contains("no reference answered"), "{err}");
    assert!(
        err.contains(&format!(
            "chrony {}: chronyc got no answer within 300 ms",
            silent.display()
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!("ptp4l {}: ", garbage.display())),
        "{err}"
    );
}

#[test]
fn chrony_offset_and_lock_are_read_and_a_stopped_server_fails_the_verdict() {
    let Some(_turn) = exclusive_as_root("chronyd") else {
        return;
    };
    let Some(mut pair) = ChronyPair::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let base = [
        format!("chrony={}", pair.client_socket().display()),
        "ptp4l=off".into(),
        "phc=off".into(),
        "interval=250ms".into(),
        "limit=10ms".into(),
    ];
    // Held: the 5 ms correction is within 10 ms, and the client stays locked.
    let held = dir.path().join("held.json");
    let (code, err, summary) = run_probe_with_summary(&held, "2s", &base);
    assert_eq!(code, Some(0), "{err}");
    assert!(summary.contains("clocksync limit 10ms: held"), "{summary}");
    assert!(
        summary.contains("every reference held the 10ms limit in every poll"),
        "{summary}"
    );
    assert!(summary.contains("not verifiable from inside"), "{summary}");
    let result = read_json(&held);
    let s = series(&result, "offset", "chrony");
    let mean = metric(s, "offset_mean_ns");
    eprintln!("offset mean {mean} ns (5 ms correction configured)");
    // chrony says the clock is 5 ms slow of its source: this clock minus the reference is -5 ms.
    assert!(
        (mean + 5e6).abs() <= 0.5e6,
        "mean {mean} ns, expected -5 ms ± 10 %"
    );
    assert!(counter(s, "polls") >= 4, "{s}");
    assert_eq!(counter(s, "locked_polls"), counter(s, "polls"), "{s}");
    assert_eq!(counter(s, "lock_losses"), 0, "{s}");
    let state = result["runs"][0]["params"]
        [format!("state of chrony {}", pair.client_socket().display())]
    .as_str()
    .unwrap();
    assert!(state.starts_with("Normal, selected 127.0.0.1"), "{state}");
    assert!(metric(s, "error_bound_ns") >= 5e6, "{s}");
    // A tight limit fails on the offset, saying which reference, how far and how often.
    // Beside it, a command socket where nothing answers fails the verdict too.
    let silent = dir.path().join("silent.sock");
    let _silent = std::os::unix::net::UnixDatagram::bind(&silent).unwrap();
    let mut tight = base.to_vec();
    tight[0] = format!(
        "chrony={},{}",
        pair.client_socket().display(),
        silent.display()
    );
    tight[4] = "limit=1ms".into();
    tight.push("timeout=300ms".into());
    let (code, err, summary) = run_probe_with_summary(&dir.path().join("tight.json"), "1s", &tight);
    eprintln!("{summary}{err}");
    assert_eq!(code, Some(2), "{err}");
    assert!(
        summary.contains("clocksync limit 1ms: EXCEEDED"),
        "{summary}"
    );
    assert!(summary.contains("FAILS the 1ms limit:"), "{summary}");
    assert!(
        err.contains("|offset| reached") && err.contains("over the 1ms limit in"),
        "{err}"
    );
    assert!(
        err.contains(&format!("chrony {}: no answer to", silent.display())),
        "{err}"
    );

    // Lost: the server stops a second into the run; the client's source stops answering.
    let lost = dir.path().join("lost.json");
    let mut cmd = rtgauge_process();
    cmd.args(["run", PROBE, "-d", "7s", "--no-report", "-q", "-o"])
        .arg(&lost)
        .stderr(Stdio::piped());
    for s in &base {
        cmd.args(["--set", &format!("{PROBE}.{s}")]);
    }
    let child = cmd.spawn().unwrap();
    std::thread::sleep(Duration::from_secs(1));
    pair.daemons.stop("server");
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    eprintln!("{err}");
    assert_eq!(o.status.code(), Some(2), "{err}");
    let result = read_json(&lost);
    let s = series(&result, "offset", "chrony");
    assert!(counter(s, "lock_losses") >= 1, "{s}");
    assert!(counter(s, "source_losses") >= 1, "{s}");
    assert!(counter(s, "state_changes") >= 1, "{s}");
    assert!(err.contains("lost its lock"), "{err}");
}

/// The mean offset and the state the probe read from the slave, over `duration`.
fn ptp_run(pair: &PtpPair, out: &Path) -> (f64, String, Value) {
    let settings = [
        format!("ptp4l={}", pair.slave_socket().display()),
        "chrony=off".into(),
        "phc=off".into(),
        "interval=200ms".into(),
    ];
    let (code, err) = run_probe(out, "2s", &settings);
    assert_eq!(code, Some(0), "{err}");
    let result = read_json(out);
    let s = series(&result, "offset", "ptp4l").clone();
    assert_eq!(counter(&s, "failed_polls"), 0, "{s}");
    let state = result["runs"][0]["params"]
        [format!("state of ptp4l {}", pair.slave_socket().display())]
    .as_str()
    .unwrap()
    .to_string();
    (metric(&s, "offset_mean_ns"), state, result)
}

#[test]
fn ptp4l_offset_moves_by_a_known_path_asymmetry_and_its_states_are_read() {
    let Some(_turn) = exclusive_as_root("network namespaces and ptp4l") else {
        return;
    };
    let Some(mut pair) = PtpPair::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    const ASYMMETRY_NS: i64 = 500_000;
    // Up to three rounds, each a run without and with the asymmetry, every one printed: the
    // software timestamps of this VM can stall for a millisecond now and then.
    let mut shifts = Vec::new();
    for round in 1..=3 {
        let veth = pair.veth();
        pair.start_slave(&veth, 0);
        let (plain, state, result) = ptp_run(&pair, &dir.path().join(format!("plain{round}.json")));
        assert!(
            state.starts_with("port UNCALIBRATED, servo not locked, grandmaster ")
                || state.starts_with("port SLAVE, servo locked"),
            "{state}"
        );
        assert!(
            series(&result, "path_delay", "ptp4l")["stats"]["count"]
                .as_u64()
                .unwrap()
                > 0
        );
        pair.start_slave(&veth, ASYMMETRY_NS);
        let (shifted, _, _) = ptp_run(&pair, &dir.path().join(format!("shifted{round}.json")));
        let shift = shifted - plain;
        eprintln!("round {round}: offset {plain:.0} ns without, {shifted:.0} ns with a {ASYMMETRY_NS} ns asymmetry: shift {shift:.0} ns; {state}");
        shifts.push(shift);
        // ptp4l applies delayAsymmetry as IEEE 1588 defines it: master-to-slave slower by
        // the asymmetry, so this clock reads that much behind.
        if (shift + ASYMMETRY_NS as f64).abs() <= 0.2 * ASYMMETRY_NS as f64 {
            return;
        }
    }
    panic!("no round shifted the offset by -{ASYMMETRY_NS} ns ± 20 %: {shifts:?}");
}

/// Where the machine has a PTP hardware clock, each one is read against the system clock
/// through the kernel's cross-timestamps: a reading with its width, or the device's reason.
#[test]
fn ptp_hardware_clocks_are_read_where_there_are_some() {
    let devices: Vec<String> = std::fs::read_dir("/dev")
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| {
                    n.strip_prefix("ptp")
                        .is_some_and(|i| i.parse::<u32>().is_ok())
                })
                .collect()
        })
        .unwrap_or_default();
    if devices.is_empty() {
        eprintln!("skipped: no PTP hardware clock here (/dev/ptpN); the cross-timestamp decoding is unit-tested in rtgauge-os");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    let settings = ["chrony=off", "ptp4l=off", "phc=auto", "interval=200ms"].map(String::from);
    let (code, err) = run_probe(&out, "1s", &settings);
    eprintln!("{err}");
    if code == Some(1) {
        // Not one device gave a reading: the reasons are the kernel's (e.g. no cross-timestamp).
        assert!(
            err.contains("no reference answered") && err.contains("/dev/ptp"),
            "{err}"
        );
        return;
    }
    assert_eq!(code, Some(0), "{err}");
    let result = read_json(&out);
    let s = series(&result, "offset", "phc");
    assert!(counter(s, "polls") >= 2, "{s}");
    let answered = counter(s, "polls") - counter(s, "failed_polls");
    assert_eq!(s["stats"]["count"].as_u64().unwrap(), answered, "{s}");
}
