//! `rtgauge monitor --probe clocksync` end to end, against a chronyd pair the test starts itself
//! (a server on 127.0.0.1 and a client that does not steer the clock, its source configured 5 ms
//! off: common::daemons::ChronyPair, as the clocksync probe's own tests): the scraped offset is
//! that offset within 10 %, the lock is read, the counters go on across a restart, and a server
//! stopped is a lock loss. Everything bounded in time; what a user can get wrong is refused in
//! one line before the first poll.

mod common;
use common::daemons::*;
use common::prometheus::{contrib, free_port, query, start_prometheus};
use common::*;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// `/metrics` of the monitor on `port` (text format), or None when it does not answer.
fn scrape(port: u16) -> Option<String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    write!(stream, "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut text = String::new();
    stream.read_to_string(&mut text).ok()?;
    Some(text.split_once("\r\n\r\n")?.1.to_string())
}

/// The value of `name{labels}` in an exposition.
fn value(metrics: &str, name: &str, labels: &str) -> Option<f64> {
    let prefix = format!("{name}{{{labels}}} ");
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .map(|v| v.parse().unwrap())
}

/// A monitor process, stopped (SIGTERM, then killed) when dropped.
struct Monitor(Child);

impl Monitor {
    /// Polling chronyd's command socket `socket` only, its textfile in `tf` beside `store`.
    fn start(port: u16, store: &Path, socket: &Path) -> Monitor {
        let textfile = store.with_file_name("tf");
        std::fs::create_dir_all(&textfile).unwrap();
        let chrony = format!("chrony={}", socket.display());
        Monitor::polling(port, store, &chrony, "ptp4l=off", Some(&textfile))
    }

    /// Polling the references `chrony` and `ptp4l` (`--set clocksync.…`), every 250 ms.
    fn polling(
        port: u16,
        store: &Path,
        chrony: &str,
        ptp4l: &str,
        textfile: Option<&Path>,
    ) -> Monitor {
        let mut cmd = rtgauge_with_store(store);
        cmd.args(["monitor", "--probe", "clocksync", "--listen"])
            .arg(format!("127.0.0.1:{port}"))
            .args(["--period", "250ms", "--interval", "2s", "--set"])
            .arg(format!("clocksync.{chrony}"))
            .arg("--set")
            .arg(format!("clocksync.{ptp4l}"))
            .args(["--set", "clocksync.phc=off"])
            .stdout(Stdio::piped());
        if let Some(dir) = textfile {
            cmd.arg("--textfile").arg(dir);
        }
        Monitor(cmd.spawn().unwrap())
    }

    /// SIGTERM and the exit status and stdout, within 10 s.
    fn stop(mut self) -> (Option<i32>, String) {
        // SAFETY: signalling our own child.
        unsafe { libc::kill(self.0.id() as libc::pid_t, libc::SIGTERM) };
        let end = Instant::now() + Duration::from_secs(10);
        while Instant::now() < end {
            if let Ok(Some(status)) = self.0.try_wait() {
                let mut out = String::new();
                if let Some(mut s) = self.0.stdout.take() {
                    let _ = s.read_to_string(&mut out);
                }
                return (status.code(), out);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("the monitor did not stop within 10 s of SIGTERM");
    }
}

impl Drop for Monitor {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Scrapes until `ready` holds of the exposition (every 250 ms, at most `limit`), printing each
/// attempt; the exposition that held.
fn scrape_until(port: u16, what: &str, limit: Duration, ready: impl Fn(&str) -> bool) -> String {
    let mut last = String::new();
    let ok = wait_for(what, limit, || match scrape(port) {
        Some(m) if ready(&m) => {
            last = m;
            Ok(())
        }
        Some(m) => {
            last = m;
            Err("not yet".into())
        }
        None => Err("no answer".into()),
    });
    assert!(ok, "{what}: not within {limit:?}; last scrape:\n{last}");
    last
}

#[test]
fn a_chrony_clients_offset_lock_and_lock_loss_are_exported_and_counted_across_restarts() {
    let Some(_turn) = exclusive_as_root("chronyd") else {
        return;
    };
    let Some(mut pair) = ChronyPair::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("h.sqlite");
    let socket = pair.client_socket();
    let labels = format!("reference=\"chrony\",source=\"{}\"", socket.display());
    let port = free_port();
    let t = Instant::now();
    let monitor = Monitor::start(port, &store, &socket);
    // An interval (2 s) has ended with polls in it: its maximum |offset| is exported.
    let m = scrape_until(port, "interval maximum", Duration::from_secs(20), |m| {
        value(m, "rtgauge_clocksync_offset_interval_max_seconds", &labels).is_some()
    });
    eprintln!(
        "first scrape with an interval maximum after {:?}",
        t.elapsed()
    );
    let offset = value(&m, "rtgauge_clocksync_offset_seconds", &labels).unwrap();
    let interval_max = value(&m, "rtgauge_clocksync_offset_interval_max_seconds", &labels).unwrap();
    eprintln!("offset {offset} s, interval maximum |offset| {interval_max} s (5 ms configured)");
    // chrony says this clock is 5 ms slow of its source: this clock minus the reference is -5 ms.
    assert!(
        (offset + 0.005).abs() <= 0.0005,
        "offset {offset} s, expected -5 ms ± 10 %"
    );
    assert!((interval_max - 0.005).abs() <= 0.0005, "{interval_max} s");
    assert_eq!(
        value(&m, "rtgauge_clocksync_locked", &labels),
        Some(1.0),
        "{m}"
    );
    assert_eq!(value(&m, "rtgauge_clocksync_up", &labels), Some(1.0), "{m}");
    assert!(value(&m, "rtgauge_clocksync_error_bound_seconds", &labels).unwrap() >= 0.005);
    assert!(
        value(&m, "rtgauge_clocksync_path_delay_seconds", &labels).is_some(),
        "{m}"
    );
    assert!(
        value(&m, "rtgauge_clocksync_frequency_ppb", &labels).is_some(),
        "{m}"
    );
    assert!(
        !m.contains("rtgauge_clocksync_port_state{"),
        "chrony has no port: {m}"
    );
    assert!(m.contains("probe=\"clocksync\""), "{m}");
    let polls = value(&m, "rtgauge_clocksync_polls_total", &labels).unwrap();
    assert!(polls >= 1.0, "{m}");
    assert_eq!(
        value(&m, "rtgauge_clocksync_lock_losses_total", &labels),
        Some(0.0)
    );
    lint(&m);
    dashboard_against_prometheus(port, dir.path());
    // node_exporter's textfile: the same figures, rewritten every 5 s, removed at the stop.
    let textfile = dir.path().join("tf/rtgauge.prom");
    let written = wait_for("textfile", Duration::from_secs(12), || {
        let text = std::fs::read_to_string(&textfile).unwrap_or_default();
        match value(&text, "rtgauge_clocksync_offset_seconds", &labels) {
            Some(o) if (o + 0.005).abs() <= 0.0005 => Ok(()),
            other => Err(format!("offset {other:?}")),
        }
    });
    assert!(written, "{} never held the offset", textfile.display());
    let (code, out) = monitor.stop();
    assert!(!textfile.exists(), "the textfile outlived the monitor");
    eprintln!("{out}");
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("rtgauge monitor: polling chrony "), "{out}");
    assert!(out.contains("rtgauge monitor: stopped after"), "{out}");

    // Restarted on the same history: the counters go on from at least what was shown; the
    // server stops, the client loses its source and its lock: a lock loss, counted.
    let monitor = Monitor::start(port, &store, &socket);
    let m = scrape_until(
        port,
        "restarted and polling",
        Duration::from_secs(20),
        |m| value(m, "rtgauge_clocksync_offset_seconds", &labels).is_some(),
    );
    let polls_after = value(&m, "rtgauge_clocksync_polls_total", &labels).unwrap();
    assert!(
        polls_after > polls,
        "{polls_after} after {polls}: the counter went back"
    );
    pair.daemons.stop("server");
    let m = scrape_until(port, "lock lost", Duration::from_secs(30), |m| {
        value(m, "rtgauge_clocksync_lock_losses_total", &labels).is_some_and(|v| v >= 1.0)
    });
    assert_eq!(
        value(&m, "rtgauge_clocksync_locked", &labels),
        Some(0.0),
        "{m}"
    );
    assert!(value(&m, "rtgauge_clocksync_state_changes_total", &labels).unwrap() >= 1.0);
    // Killed (SIGKILL: nothing written at the end) and started again: no counter goes back
    // from what the last scrape showed.
    let shown: Vec<(&str, f64)> = [
        "rtgauge_clocksync_polls_total",
        "rtgauge_clocksync_failed_polls_total",
        "rtgauge_clocksync_lock_losses_total",
        "rtgauge_clocksync_state_changes_total",
    ]
    .into_iter()
    .map(|name| (name, value(&m, name, &labels).unwrap()))
    .collect();
    drop(monitor);
    let monitor = Monitor::start(port, &store, &socket);
    let m = scrape_until(
        port,
        "restarted after SIGKILL",
        Duration::from_secs(20),
        |m| value(m, "rtgauge_clocksync_up", &labels).is_some(),
    );
    for (name, before) in shown {
        let after = value(&m, name, &labels).unwrap();
        eprintln!("{name}: {before} shown before SIGKILL, {after} after the restart");
        assert!(after >= before, "{name} went back: {before} → {after}");
    }
    let (code, out) = monitor.stop();
    assert_eq!(code, Some(0), "{out}");
    eprintln!("whole test {:?}", t.elapsed());
}

/// ptp4l as a slave that does not steer the clock (free_running), over a veth pair between two
/// namespaces of the test: its port state is exported as one series per IEEE 1588 state, with
/// UNCALIBRATED (or SLAVE) the one at 1, the grandmaster's clock class, the offset and path
/// delay; locked follows the port.
#[test]
fn a_ptp4l_slaves_port_state_clock_class_and_offset_are_exported() {
    let Some(_turn) = exclusive_as_root("network namespaces and ptp4l") else {
        return;
    };
    let Some(mut pair) = PtpPair::start() else {
        return;
    };
    let veth = pair.veth();
    pair.start_slave(&veth, 0);
    let dir = tempfile::tempdir().unwrap();
    let socket = pair.slave_socket();
    let labels = format!("reference=\"ptp4l\",source=\"{}\"", socket.display());
    let port = free_port();
    let monitor = Monitor::polling(
        port,
        &dir.path().join("h.sqlite"),
        "chrony=off",
        &format!("ptp4l={}", socket.display()),
        None,
    );
    let m = scrape_until(port, "ptp4l polled", Duration::from_secs(20), |m| {
        value(m, "rtgauge_clocksync_offset_seconds", &labels).is_some()
    });
    let states: Vec<(String, f64)> = m
        .lines()
        .filter_map(|l| l.strip_prefix(&format!("rtgauge_clocksync_port_state{{{labels},state=\"")))
        .filter_map(|l| {
            let (state, v) = l.split_once("\"} ")?;
            Some((state.to_string(), v.parse().ok()?))
        })
        .collect();
    for line in m.lines().filter(|l| l.contains("reference=\"ptp4l\"")) {
        eprintln!("{line}");
    }
    assert_eq!(states.len(), 9, "{m}");
    let on: Vec<&str> = states
        .iter()
        .filter(|(_, v)| *v == 1.0)
        .map(|(s, _)| s.as_str())
        .collect();
    assert!(on == ["UNCALIBRATED"] || on == ["SLAVE"], "{on:?}\n{m}");
    let locked = value(&m, "rtgauge_clocksync_locked", &labels).unwrap();
    assert_eq!(locked, f64::from(u8::from(on == ["SLAVE"])), "{m}");
    assert!(
        value(&m, "rtgauge_clocksync_clock_class", &labels).is_some(),
        "{m}"
    );
    assert!(
        value(&m, "rtgauge_clocksync_path_delay_seconds", &labels).unwrap() > 0.0,
        "{m}"
    );
    assert!(!m.contains("rtgauge_clocksync_frequency_ppb{"), "{m}");
    let (code, out) = monitor.stop();
    assert_eq!(code, Some(0), "{out}");
}

/// The clocksync dashboard's queries (Grafana's variables given values) against Debian's
/// Prometheus scraping the monitor on `port` every second: each one is valid, and each one has
/// data but ptp4l's (port state, clock class: chrony has neither). The offset PromQL reads is
/// the configured 5 ms within 10 %.
fn dashboard_against_prometheus(port: u16, dir: &Path) {
    if std::process::Command::new("prometheus")
        .arg("--version")
        .output()
        .is_err()
    {
        assert!(
            std::env::var_os("RTGAUGE_LAB").is_none(),
            "prometheus (Debian's) is missing"
        );
        eprintln!("dashboard not checked against Prometheus: prometheus not installed");
        return;
    }
    let (_prometheus, prom) = start_prometheus(dir, &[port], &[]);
    let has_data = |q: &str| {
        let answer = query(prom, q);
        assert_eq!(answer["status"], "success", "{q}: {answer}");
        answer["data"]["result"]
            .as_array()
            .is_some_and(|r| !r.is_empty())
    };
    // increase() over the range needs two scrapes, the interval maxima an interval ended.
    let ready = wait_for(
        "prometheus has two scrapes",
        Duration::from_secs(30),
        || match has_data("increase(rtgauge_clocksync_polls_total[5m])")
            && has_data("rtgauge_clocksync_offset_interval_max_seconds")
        {
            true => Ok(()),
            false => Err("not yet".into()),
        },
    );
    assert!(
        ready,
        "Prometheus never had two scrapes of the clocksync monitor"
    );
    let answer = query(prom, "rtgauge_clocksync_offset_seconds");
    let offset: f64 = answer["data"]["result"][0]["value"][1]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((offset + 0.005).abs() <= 0.0005, "{answer}");
    let dashboard: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(contrib().join("grafana-dashboard-clocksync.json")).unwrap(),
    )
    .unwrap();
    let mut checked = 0;
    for panel in dashboard["panels"].as_array().unwrap() {
        for target in panel["targets"].as_array().unwrap() {
            let q = target["expr"]
                .as_str()
                .unwrap()
                .replace("$__rate_interval", "1m")
                .replace("$__range", "5m")
                .replace("$instance", ".*")
                .replace("$reference", ".*");
            let ptp4l_only = q.contains("port_state") || q.contains("clock_class");
            assert!(
                has_data(&q) != ptp4l_only,
                "{}: {q}: data expected {}",
                panel["title"],
                !ptp4l_only
            );
            checked += 1;
        }
    }
    eprintln!("{checked} dashboard queries answered by Prometheus (offset {offset} s)");
}

/// `promtool check metrics` accepts the exposition, where promtool is installed.
fn lint(metrics: &str) {
    let Ok(mut promtool) = std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    else {
        eprintln!("promtool not installed: the exposition is not linted");
        return;
    };
    promtool
        .stdin
        .take()
        .unwrap()
        .write_all(metrics.as_bytes())
        .unwrap();
    let out = promtool.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "promtool check metrics: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn what_a_clocksync_monitor_cannot_use_is_refused_in_one_line_before_polling() {
    let dir = tempfile::tempdir().unwrap();
    let listen = format!("127.0.0.1:{}", free_port());
    let base = ["monitor", "--probe", "clocksync", "--listen", &listen];
    let cases: [(&[&str], &str); 6] = [
        (
            &[
                "--set",
                "clocksync.chrony=off",
                "--set",
                "clocksync.ptp4l=off",
                "--set",
                "clocksync.phc=off",
            ],
            "--probe clocksync: clocksync: no synchronisation reference here",
        ),
        (
            &["--set", "clocksync.limit=1us"],
            "a monitor's limit is its alert rule's",
        ),
        (
            &["--runtime", "10%"],
            "--runtime is for the latency monitors",
        ),
        (
            &["--set", "cyclic.period=1ms"],
            "not a parameter of the clocksync monitor; it takes clocksync.chrony,",
        ),
        (&["--period", "10ms"], "shorter than 100ms"),
        (&["-o", "/tmp/r.json"], "writes no final document"),
    ];
    for (extra, expected) in cases {
        let mut args: Vec<&str> = base.to_vec();
        args.extend(extra);
        let t = Instant::now();
        let err = one_line_error(&args);
        assert!(err.contains(expected), "{extra:?}: {err}");
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "{extra:?} polled first"
        );
    }
    // The latency monitors take no --set.
    let err = one_line_error(&[
        "monitor",
        "--listen",
        &listen,
        "--set",
        "clocksync.chrony=off",
    ]);
    assert!(
        err.contains("--set names the references of --probe clocksync"),
        "{err}"
    );
    drop(dir);
}

/// The clocksync dashboard's queries (Grafana's variables given values) are valid PromQL for
/// promtool, and name only the clocksync monitor's families.
#[test]
fn the_clocksync_dashboard_queries_are_valid_promql_over_the_clocksync_families() {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../contrib/monitor/grafana-dashboard-clocksync.json");
    let dashboard: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let mut rules = String::from("groups:\n  - name: dashboard\n    rules:\n");
    let mut n = 0;
    for panel in dashboard["panels"].as_array().unwrap() {
        for target in panel["targets"].as_array().unwrap() {
            let expr = target["expr"]
                .as_str()
                .unwrap()
                .replace("$__rate_interval", "1m")
                .replace("$__range", "5m")
                .replace("$instance", ".*")
                .replace("$reference", ".*");
            for family in expr
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .filter(|w| w.starts_with("rtgauge_"))
            {
                assert!(
                    family.starts_with("rtgauge_clocksync_") || family == "rtgauge_info",
                    "{}: {family} is not a clocksync family",
                    panel["title"]
                );
            }
            rules += &format!("      - record: dashboard:query{n}\n        expr: '{expr}'\n");
            n += 1;
        }
    }
    assert!(n >= 10, "{n} queries");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("queries.yml");
    std::fs::write(&path, &rules).unwrap();
    let Ok(out) = std::process::Command::new("promtool")
        .args(["check", "rules"])
        .arg(&path)
        .output()
    else {
        assert!(
            std::env::var_os("RTGAUGE_LAB").is_none(),
            "promtool (Debian's prometheus) is missing"
        );
        eprintln!("skipped: promtool not installed (Debian's prometheus)");
        return;
    };
    assert!(
        out.status.success(),
        "{}{}\n{rules}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
