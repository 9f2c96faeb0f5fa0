//! `rtgauge monitor` end to end, with Debian's real Prometheus scraping it: what PromQL computes
//! from the exposition agrees with monitor's own final result document, the all-time interval
//! maximum survives a restart, the shipped alert rules load and every query of the shipped
//! dashboard is valid against that server. Properties only, never absolute latencies.

mod common;
use common::prometheus::*;

use serde_json::Value;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Upper bounds (s) of the exported buckets, as rtgauge_core::live::EXPORT_BOUNDS_NS.
fn bucket_bounds(metrics: &str) -> Vec<f64> {
    let mut bounds: Vec<f64> = metrics
        .lines()
        .filter(|l| l.starts_with("rtgauge_latency_seconds_bucket{cpu=\"1\""))
        .filter_map(|l| l.split("le=\"").nth(1)?.split('"').next()?.parse().ok())
        .filter(|b: &f64| b.is_finite())
        .collect();
    bounds.sort_by(f64::total_cmp);
    bounds
}

fn start_monitor(port: u16, store: &Path, output: &Path, textfile: Option<&Path>) -> Killed {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("rtgauge"));
    cmd.args(["monitor", "--listen", &format!("127.0.0.1:{port}")])
        .args(["--interval", "2s", "--period", "1ms", "--cpus", "1"])
        .args(["--warmup", "200ms", "--force", "--store"])
        .arg(store)
        .arg("-o")
        .arg(output)
        .stdout(Stdio::null());
    if let Some(dir) = textfile {
        cmd.arg("--textfile").arg(dir);
    }
    let child = Killed(cmd.spawn().unwrap());
    wait_until("monitor serves /metrics", Duration::from_secs(20), || {
        get(port, "/metrics", "*/*")
            .is_some_and(|(_, b)| b.contains("rtgauge_latency_seconds_count{cpu=\"1\"}"))
    });
    child
}

/// The gauge `name{cpu="1"}` from an exposition, in seconds.
fn gauge(metrics: &str, name: &str) -> Option<f64> {
    let prefix = format!("{name}{{cpu=\"1\"}} ");
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .map(|v| v.parse().unwrap())
}

fn latency_series(result: &Value) -> &Value {
    result["runs"][0]["series"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "latency" && s["labels"]["cpu"] == "1")
        .expect("the final document has cpu 1's latency")
}

#[test]
fn prometheus_agrees_with_the_final_document_and_the_maximum_survives_restarts() {
    if Command::new("prometheus")
        .arg("--version")
        .output()
        .is_err()
    {
        panic!("Debian's prometheus is needed (apt-get install prometheus; .ci/run installs it)");
    }
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("history.sqlite");
    let output = dir.path().join("final.json");
    let textfile = dir.path().join("textfile");
    std::fs::create_dir(&textfile).unwrap();
    let port = free_port();
    let mut monitor = start_monitor(port, &store, &output, Some(&textfile));
    // A noise monitor beside it (another CPU, its own history), for the noise dashboard.
    let noise_port = free_port();
    let _noise = Killed(
        Command::new(assert_cmd::cargo::cargo_bin("rtgauge"))
            .args(["monitor", "--probe", "noise", "--listen"])
            .arg(format!("127.0.0.1:{noise_port}"))
            .args([
                "--interval",
                "2s",
                "--cpus",
                "0",
                "--warmup",
                "200ms",
                "--store",
            ])
            .arg(dir.path().join("noise.sqlite"))
            .stdout(Stdio::null())
            .spawn()
            .unwrap(),
    );

    let (prometheus, prom_port) = start_prometheus(dir.path(), &[port, noise_port], &[]);
    // Several 2-s intervals, scraped every second.
    wait_until(
        "prometheus holds finished intervals",
        Duration::from_secs(40),
        || {
            let a = query(
                prom_port,
                // One series per cause label: summed.
                "sum(count_over_time(rtgauge_interval_max_seconds{cpu=\"1\"}[5m]))",
            );
            a["data"]["result"][0]["value"][1]
                .as_str()
                .and_then(|v| v.parse::<f64>().ok())
                .is_some_and(|n| n >= 6.0)
        },
    );

    // Both formats parse: promtool lints the text format, Prometheus scraped OpenMetrics.
    let (head, text) = get(port, "/metrics", "text/plain").unwrap();
    assert!(head.contains("text/plain; version=0.0.4"), "{head}");
    let mut promtool = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    promtool
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let lint = promtool.wait_with_output().unwrap();
    assert!(
        lint.status.success(),
        "promtool check metrics: {}{}",
        String::from_utf8_lossy(&lint.stdout),
        String::from_utf8_lossy(&lint.stderr)
    );
    let (head, om) = get(
        port,
        "/metrics",
        "application/openmetrics-text;version=1.0.0",
    )
    .unwrap();
    assert!(head.contains("application/openmetrics-text"), "{head}");
    assert!(om.ends_with("# EOF\n"));
    let scraped = query(prom_port, "up{job=\"rtgauge\"}");
    assert_eq!(scraped["data"]["result"][0]["value"][1], "1", "{scraped}");
    let textfile_text = std::fs::read_to_string(textfile.join("rtgauge.prom")).unwrap();
    assert!(textfile_text.contains("rtgauge_samples_total{cpu=\"1\"}"));

    // The shipped rules load and every dashboard query is valid PromQL on this server.
    let rules = Command::new("promtool")
        .args(["check", "rules"])
        .arg(contrib().join("alerts.yml"))
        .output()
        .unwrap();
    assert!(
        rules.status.success(),
        "{}",
        String::from_utf8_lossy(&rules.stdout)
    );
    // The cyclic and noise dashboards find data; the noise monitor has had its intervals too.
    wait_until(
        "the noise monitor's intervals",
        Duration::from_secs(20),
        || {
            !query(prom_port, "rtgauge_noise_interval_max_seconds")["data"]["result"]
                .as_array()
                .unwrap()
                .is_empty()
        },
    );
    for file in ["grafana-dashboard.json", "grafana-dashboard-noise.json"] {
        let exprs = dashboard_queries(file);
        assert!(exprs.len() >= 8, "{file}");
        for (title, concrete) in exprs {
            let answer = query(prom_port, &concrete);
            assert_eq!(answer["status"], "success", "{file}: {concrete}: {answer}");
            assert!(
                !answer["data"]["result"].as_array().unwrap().is_empty(),
                "{file}: {title} finds nothing: {concrete}"
            );
        }
    }

    render_dashboards(prom_port);

    // What Prometheus computed, as of its last scrape; then the monitor stops.
    let p99 = scalar(
        prom_port,
        "histogram_quantile(0.99, rtgauge_latency_seconds_bucket{cpu=\"1\"})",
    );
    let max_over_time = scalar(
        prom_port,
        "max(max_over_time(rtgauge_interval_max_seconds{cpu=\"1\"}[10m]))",
    );
    let alltime = scalar(prom_port, "rtgauge_interval_max_alltime_seconds{cpu=\"1\"}");
    let counted = scalar(prom_port, "rtgauge_latency_seconds_count{cpu=\"1\"}");
    let samples_total = scalar(prom_port, "rtgauge_samples_total{cpu=\"1\"}");
    let status = sigterm(&mut monitor);
    assert!(status.success(), "SIGTERM: {status:?}");
    drop(prometheus);
    let result: Value = serde_json::from_str(&std::fs::read_to_string(&output).unwrap()).unwrap();
    let latency = latency_series(&result);
    let stats = &latency["stats"];
    let doc_count = stats["count"].as_f64().unwrap();
    let doc_max = stats["max_ns"].as_f64().unwrap() / 1e9;
    let doc_p99 = stats["percentiles"]["p99_ns"].as_f64().unwrap() / 1e9;
    println!("promql p99 {p99} s, document p99 {doc_p99} s; interval max over time {max_over_time} s, all-time {alltime} s, document max {doc_max} s; samples {counted} / {samples_total} scraped, {doc_count} in the document");

    // Counts: the last scrape saw a part of what the document holds.
    assert_eq!(counted, samples_total, "a first run: no earlier samples");
    assert!(
        counted <= doc_count && counted >= doc_count * 0.5,
        "{counted} vs {doc_count}"
    );
    // The p99 from the buckets lies in the document's p99 bucket or a neighbour (samples
    // after the last scrape can move it across one bound).
    let bounds = bucket_bounds(&text);
    let index = bounds.partition_point(|&b| b < doc_p99);
    let low = if index >= 2 { bounds[index - 2] } else { 0.0 };
    let high = bounds[(index + 1).min(bounds.len() - 1)];
    assert!(
        p99 > low && p99 <= high,
        "PromQL p99 {p99} outside ({low}, {high}] around the document's {doc_p99}"
    );
    // Maxima: every interval maximum Prometheus saw is one the all-time gauge covers, and
    // none exceeds the document's exact maximum.
    assert!(
        max_over_time <= alltime + 1e-12,
        "{max_over_time} > {alltime}"
    );
    assert!(alltime <= doc_max + 1e-12, "{alltime} > {doc_max}");

    // The history holds every sample of the run in its intervals, and their highest maximum
    // is the document's exact one.
    let db = rusqlite::Connection::open(&store).unwrap();
    let (stored_samples, stored_max): (i64, i64) = db
        .query_row(
            "SELECT SUM(samples), MAX(max_ns) FROM monitor_intervals WHERE cpu = 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    drop(db);
    assert_eq!(
        stored_samples as f64, doc_count,
        "samples kept in the history's intervals"
    );
    assert_eq!(
        stored_max as f64 / 1e9,
        doc_max,
        "the history's highest interval maximum"
    );

    // Restart: the all-time maximum comes back from the store. SIGTERM kept the unfinished
    // interval too, so it is exactly the document's maximum (every sample of the run fell in
    // one of the intervals).
    let mut second = start_monitor(port, &store, &output, None);
    let (_, after) = get(port, "/metrics", "*/*").unwrap();
    let restored =
        gauge(&after, "rtgauge_interval_max_alltime_seconds").expect("all-time max after restart");
    assert_eq!(restored, doc_max, "all-time maximum after the restart");
    // Killed without warning (SIGKILL): what was kept survives, the interval being filled
    // included (it was written at the last scrape), and the counter goes on from at least
    // the last value exported.
    std::thread::sleep(Duration::from_millis(4500));
    let (_, last) = get(port, "/metrics", "*/*").unwrap();
    let kept = gauge(&last, "rtgauge_interval_max_alltime_seconds").unwrap();
    let exported = gauge(&last, "rtgauge_samples_total").unwrap();
    second.0.kill().unwrap();
    second.0.wait().unwrap();
    let mut third = start_monitor(port, &store, &output, None);
    let (_, again) = get(port, "/metrics", "*/*").unwrap();
    let alltime_again = gauge(&again, "rtgauge_interval_max_alltime_seconds").unwrap();
    assert!(alltime_again >= kept, "{alltime_again} < {kept}");
    let samples_again = gauge(&again, "rtgauge_samples_total").unwrap();
    assert!(
        samples_again >= exported,
        "samples_total went back: {samples_again} < {exported}"
    );
    assert!(sigterm(&mut third).success());
}

/// The raw values of `series` Prometheus holds over the last `window`, oldest first.
fn raw_values(prom_port: u16, series: &str, window: &str) -> Vec<f64> {
    let answer = query(prom_port, &format!("{series}[{window}]"));
    assert_eq!(answer["status"], "success", "{answer}");
    answer["data"]["result"][0]["values"]
        .as_array()
        .unwrap_or_else(|| panic!("no values of {series}: {answer}"))
        .iter()
        .map(|v| v[1].as_str().unwrap().parse().unwrap())
        .collect()
}

/// A monitor killed without warning (SIGKILL) and started again on the same history, scraped
/// by a real Prometheus throughout: the counters never go back, so Prometheus sees no reset,
/// and its `increase()` over the restart is the number of samples the two processes measured
/// (as their own histograms, which do start again from zero, counted them at each scrape).
#[test]
fn after_a_sigkill_and_a_restart_prometheus_counts_the_samples_measured_and_no_reset() {
    let _turn = common::exclusive();
    let dir = tempfile::tempdir().unwrap();
    let (store, output) = (dir.path().join("h.sqlite"), dir.path().join("final.json"));
    let port = free_port();
    let mut first = start_monitor(port, &store, &output, None);
    let (_prometheus, prom_port) = start_prometheus(dir.path(), &[port], &[]);
    let scrapes = |q: &str| {
        let a = query(prom_port, &format!("count_over_time({q}[10m])"));
        a["data"]["result"][0]["value"][1]
            .as_str()
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    let counter = "rtgauge_samples_total{cpu=\"1\"}";
    let own = "rtgauge_latency_seconds_count{cpu=\"1\"}";
    wait_until(
        "8 scrapes of the first monitor",
        Duration::from_secs(40),
        || scrapes(counter) >= 8.0,
    );
    first.0.kill().unwrap();
    first.0.wait().unwrap();
    let before_restart = scrapes(counter);
    let mut second = start_monitor(port, &store, &output, None);
    wait_until(
        "8 scrapes of the second monitor",
        Duration::from_secs(40),
        || scrapes(counter) >= before_restart + 8.0,
    );
    let window = "10m";
    let resets = scalar(prom_port, &format!("resets({counter}[{window}])"));
    let overrun_resets = scalar(
        prom_port,
        &format!("resets(rtgauge_overruns_total{{cpu=\"1\"}}[{window}])"),
    );
    let increase = scalar(prom_port, &format!("increase({counter}[{window}])"));
    let own_increase = scalar(prom_port, &format!("increase({own}[{window}])"));
    let restarts = scalar(
        prom_port,
        &format!("changes(process_start_time_seconds[{window}])"),
    );
    // What the processes measured, from the raw scrapes: each one's own histogram count
    // from its first scrape (the first process) or from zero (the second) to its last.
    let own_raw = raw_values(prom_port, own, window);
    let total_raw = raw_values(prom_port, counter, window);
    let restart_at = own_raw
        .windows(2)
        .position(|w| w[1] < w[0])
        .expect("the histogram count started again at the restart");
    let measured = (own_raw[restart_at] - own_raw[0]) + own_raw[own_raw.len() - 1];
    let counted = total_raw[total_raw.len() - 1] - total_raw[0];
    assert!(sigterm(&mut second).success());
    println!(
        "increase(samples_total) {increase:.0}, increase(histogram count) {own_increase:.0}; raw: {counted} counted, {measured} measured; resets {resets}, restarts {restarts}"
    );
    assert_eq!(
        restarts, 1.0,
        "process_start_time_seconds marks the restart"
    );
    assert_eq!(resets, 0.0, "the samples counter went back");
    assert_eq!(overrun_resets, 0.0, "the overruns counter went back");
    let within = |a: f64, b: f64| (a - b).abs() <= 0.05 * b;
    assert!(
        within(increase, own_increase),
        "increase() {increase} vs the samples measured {own_increase}"
    );
    assert!(
        within(counted, measured),
        "{counted} counted vs {measured} measured"
    );
}

/// SIGTERM, the documented stop: a line at start and at stop, the textfile removed, a
/// complete final document that `check --spec` passes, and the monitor and its intervals in
/// `rtgauge history`.
#[test]
fn sigterm_leaves_a_complete_document_no_textfile_and_the_intervals_in_the_history() {
    let dir = tempfile::tempdir().unwrap();
    let (store, output) = (dir.path().join("h.sqlite"), dir.path().join("final.json"));
    let textfile = dir.path().join("textfile");
    std::fs::create_dir(&textfile).unwrap();
    let mut child = Killed(
        Command::new(assert_cmd::cargo::cargo_bin("rtgauge"))
            .args(["monitor", "--textfile"])
            .arg(&textfile)
            .args(["--interval", "1s", "--period", "1ms", "--cpus", "1"])
            .args(["--warmup", "200ms", "--store"])
            .arg(&store)
            .arg("-o")
            .arg(&output)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let prom = textfile.join("rtgauge.prom");
    wait_until("the textfile", Duration::from_secs(20), || prom.exists());
    std::thread::sleep(Duration::from_secs(3));
    assert!(sigterm(&mut child).success());
    let mut printed = String::new();
    child
        .0
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut printed)
        .unwrap();
    println!("{printed}");
    let lines: Vec<&str> = printed.lines().collect();
    assert_eq!(lines.len(), 3, "{printed}");
    assert!(
        lines[0].contains("measuring wake-up latency")
            && lines[0].contains("on CPU 1")
            && lines[0].contains("rtgauge.prom"),
        "{printed}"
    );
    // Whether the interval maxima get their causes, or why not.
    assert!(
        lines[1].contains("each interval's maximum gets its cause from")
            || lines[1].contains("measuring without causes: "),
        "{printed}"
    );
    assert!(
        lines[2].contains("stopped after")
            && lines[2].contains("(SIGTERM)")
            && lines[2].contains("final document")
            && lines[2].contains("(complete)")
            && lines[2].contains("rtgauge.prom removed"),
        "{printed}"
    );
    assert!(!prom.exists(), "the textfile outlived the monitor");
    let result: Value = common::read_json(&output);
    assert_eq!(result["status"], "complete");
    let spec = dir.path().join("spec.toml");
    std::fs::write(&spec, "[[limit]]\nprobe = \"cyclic\"\nmax = \"1h\"\n").unwrap();
    let check = common::rtgauge()
        .arg("check")
        .arg(&output)
        .arg("--spec")
        .arg(&spec)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&check.stdout);
    assert_eq!(check.status.code(), Some(0), "{said}");
    assert!(!said.contains("incomplete"), "{said}");
    // The history lists the monitor, and its intervals add up to the document's samples.
    let history = common::rtgauge()
        .args(["history", "--store"])
        .arg(&store)
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&history.stdout);
    assert!(listed.contains("monitor cyclic on"), "{listed}");
    let intervals = common::rtgauge()
        .args(["history", "--monitor", "--store"])
        .arg(&store)
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&intervals.stdout);
    println!("{table}");
    let samples: u64 = table
        .lines()
        .filter(|l| l.contains("| cyclic |"))
        .map(|l| l.split('|').nth(7).unwrap().trim().parse::<u64>().unwrap())
        .sum();
    assert_eq!(
        samples as f64,
        latency_series(&result)["stats"]["count"].as_f64().unwrap(),
        "{table}"
    );
}

#[test]
fn a_wrong_address_directory_or_duty_fails_at_once_in_one_line_naming_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("h.sqlite");
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let not_a_dir = dir.path().join("file");
    std::fs::write(&not_a_dir, "x").unwrap();
    let textfile = dir.path().to_str().unwrap();
    let cases: [(&[&str], &[&str]); 8] = [
        (&["--listen", &addr], &["--listen", "stop what holds it"]),
        (
            &["--listen", "127.0.0.1:99999"],
            &["port 99999 is out of range", "--listen 127.0.0.1:9808"],
        ),
        (
            &["--listen", "localhost"],
            &["no port", "--listen localhost:9808"],
        ),
        (
            &["--textfile", not_a_dir.to_str().unwrap()],
            &["--textfile", "not a directory"],
        ),
        // Not writable even for root.
        (&["--textfile", "/proc/sys"], &["--textfile", "/proc/sys"]),
        // A noise setting given to the cyclic monitor.
        (
            &["--runtime", "10%", "--textfile", textfile],
            &["--runtime is for --probe noise"],
        ),
        (
            &[
                "--probe",
                "noise",
                "--runtime",
                "150%",
                "--textfile",
                textfile,
            ],
            &["--runtime 150%", "--runtime 90%"],
        ),
        // Nothing would read what it measures.
        (&[], &["--listen ADDR", "--textfile DIR"]),
    ];
    for (given, said) in cases {
        let start = Instant::now();
        let out = common::rtgauge()
            .args(["monitor", "--cpus", "1", "--store"])
            .arg(&store)
            .args(given)
            .timeout(Duration::from_secs(20))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        println!("{given:?}: {stderr}");
        assert_eq!(out.status.code(), Some(1), "{given:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
        for words in said {
            assert!(
                stderr.contains(words),
                "{given:?}: no '{words}' in {stderr}"
            );
        }
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "it measured first"
        );
    }
}

#[test]
fn a_timerlat_monitor_without_the_tracer_is_refused_before_measuring_in_one_line() {
    let tracers =
        std::fs::read_to_string("/sys/kernel/tracing/available_tracers").unwrap_or_default();
    if tracers.split_whitespace().any(|t| t == "timerlat") {
        eprintln!("skipped: this kernel has the timerlat tracer (the PREEMPT_RT guest test monitors with it)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let start = Instant::now();
    let out = common::rtgauge()
        .args(["monitor", "--probe", "timerlat", "--cpus", "1", "--store"])
        .arg(dir.path().join("h.sqlite"))
        .arg("--textfile")
        .arg(dir.path())
        .timeout(Duration::from_secs(20))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stderr}");
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("timerlat") && stderr.contains("--probe cyclic"),
        "{stderr}"
    );
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "it measured first"
    );
}

/// A Prometheus that reads native histograms asks for the protobuf exposition and gets the
/// latency histogram in exponential buckets: its count is the samples counter of the same
/// scrape, and its p99 lies within three of its buckets (9 % each) of the final document's.
#[test]
fn a_prometheus_reading_native_histograms_gets_the_samples_in_exponential_buckets() {
    let dir = tempfile::tempdir().unwrap();
    let (store, output) = (dir.path().join("h.sqlite"), dir.path().join("final.json"));
    let port = free_port();
    let mut monitor = start_monitor(port, &store, &output, None);
    let (prometheus, prom_port) =
        start_prometheus(dir.path(), &[port], &["--enable-feature=native-histograms"]);
    let native = "rtgauge_latency_seconds{cpu=\"1\"}";
    wait_until(
        "prometheus holds a native histogram of 2,000 samples",
        Duration::from_secs(40),
        || {
            let a = query(prom_port, &format!("histogram_count({native})"));
            a["data"]["result"][0]["value"][1]
                .as_str()
                .and_then(|v| v.parse::<f64>().ok())
                .is_some_and(|n| n >= 2_000.0)
        },
    );
    let count = scalar(prom_port, &format!("histogram_count({native})"));
    let samples_total = scalar(prom_port, "rtgauge_samples_total{cpu=\"1\"}");
    let p99 = scalar(prom_port, &format!("histogram_quantile(0.99, {native})"));
    let status = sigterm(&mut monitor);
    assert!(status.success(), "SIGTERM: {status:?}");
    drop(prometheus);
    let result: Value = serde_json::from_str(&std::fs::read_to_string(&output).unwrap()).unwrap();
    let doc_p99 = latency_series(&result)["stats"]["percentiles"]["p99_ns"]
        .as_f64()
        .unwrap()
        / 1e9;
    println!("native histogram: {count} samples ({samples_total} counted), p99 {p99} s; the document's p99 {doc_p99} s");
    assert_eq!(count, samples_total, "one scrape, one count");
    let three_buckets = 2f64.powf(3.0 / 8.0);
    assert!(
        p99 > doc_p99 / three_buckets && p99 < doc_p99 * three_buckets,
        "native p99 {p99} vs the document's {doc_p99}"
    );
}

/// The cyclic and noise dashboards' panels drawn from this Prometheus's answers in headless
/// chromium (tests/browser/render-dashboard.js: Grafana is not packaged here), every panel
/// with data; the screenshots stay in the test's temporary directory. With RTGAUGE_BROWSER=1
/// (CI sets it).
fn render_dashboards(prom_port: u16) {
    if std::env::var("RTGAUGE_BROWSER").as_deref() != Ok("1") {
        println!("dashboards not drawn: set RTGAUGE_BROWSER=1 to draw them in headless chromium (CI does)");
        return;
    }
    let browser = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/browser");
    assert!(
        browser.join("node_modules/playwright-core").exists(),
        "run `npm ci --prefix tests/browser` first (installs playwright-core; the browser is Debian's chromium)"
    );
    let out_dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("monitor-dashboards");
    let out = Command::new("node")
        .arg(browser.join("render-dashboard.js"))
        .arg(&out_dir)
        .arg(format!("http://127.0.0.1:{prom_port}"))
        .arg("30")
        .arg(contrib().join("grafana-dashboard.json"))
        .arg(contrib().join("grafana-dashboard-noise.json"))
        .output()
        .expect("node (Debian's nodejs)");
    let printed = String::from_utf8_lossy(&out.stdout);
    println!("{printed}{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        out.status.success(),
        "a dashboard panel was not drawn:\n{printed}"
    );
    assert_eq!(printed.matches("drawn ").count(), 16, "{printed}");
}

/// Each query of a shipped dashboard, with Grafana's variables given values: (panel title,
/// query).
fn dashboard_queries(file: &str) -> Vec<(String, String)> {
    let dashboard: Value =
        serde_json::from_str(&std::fs::read_to_string(contrib().join(file)).unwrap()).unwrap();
    let mut queries = Vec::new();
    for panel in dashboard["panels"].as_array().unwrap() {
        for target in panel["targets"].as_array().unwrap() {
            let concrete = target["expr"]
                .as_str()
                .unwrap()
                .replace("$__rate_interval", "1m")
                .replace("$__interval", "15s")
                .replace("$__range", "5m")
                .replace("$instance", ".*")
                .replace("$cpu", ".*");
            queries.push((panel["title"].to_string(), concrete));
        }
    }
    queries
}

/// The timerlat dashboard cannot find data here (no tracer; the PREEMPT_RT guest test checks
/// the monitor's exposition): its queries are checked as PromQL by promtool, and name only
/// families the timerlat monitor exports.
#[test]
fn the_timerlat_dashboard_queries_are_valid_promql_over_the_timerlat_families() {
    let mut rules = String::from("groups:\n  - name: dashboard\n    rules:\n");
    for (i, (title, expr)) in dashboard_queries("grafana-dashboard-timerlat.json")
        .iter()
        .enumerate()
    {
        let families: Vec<&str> = expr
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| w.starts_with("rtgauge_"))
            .collect();
        assert!(!families.is_empty(), "{title}: {expr}");
        for family in families {
            assert!(
                family.starts_with("rtgauge_timerlat_") || family == "rtgauge_info",
                "{title}: {family} is not a timerlat family"
            );
        }
        rules += &format!("      - record: dashboard:query{i}\n        expr: '{expr}'\n");
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("queries.yml");
    std::fs::write(&file, &rules).unwrap();
    let out = Command::new("promtool")
        .args(["check", "rules"])
        .arg(&file)
        .output()
        .expect("promtool (Debian's prometheus; .ci/run installs it)");
    assert!(
        out.status.success(),
        "{}{}\n{rules}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The shipped alerts on made-up series (contrib/monitor/alerts.test.yml, `promtool test
/// rules`): a killed textfile monitor (its file frozen) and a stopped one (its file removed)
/// each alert for their own instance only, as does a --listen monitor that stops answering;
/// the overruns alert stays quiet across a restart that keeps the counter.
#[test]
fn the_alert_rules_fire_per_instance_for_a_dead_or_stopped_monitor() {
    let out = Command::new("promtool")
        .args(["test", "rules", "alerts.test.yml"])
        .current_dir(contrib())
        .output()
        .expect("promtool (Debian's prometheus; .ci/run installs it)");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{said}");
    assert!(out.status.success() && said.contains("SUCCESS"), "{said}");
    // Never fleet-wide: an absent() alert names no machine.
    let rules = std::fs::read_to_string(contrib().join("alerts.yml")).unwrap();
    assert!(!rules.contains("absent("), "{rules}");
}

#[test]
fn shipped_manifests_and_dashboard_parse() {
    let yaml = [
        "alerts.yml",
        "prometheus-scrape.yml",
        "kubernetes/daemonset.yaml",
        "kubernetes/job.yaml",
    ];
    for file in yaml {
        let path = contrib().join(file);
        let out = Command::new("python3")
            .args(["-c", "import sys, yaml; docs = list(yaml.safe_load_all(open(sys.argv[1]))); assert docs and all(docs), 'empty'"])
            .arg(&path)
            .output()
            .expect("python3 with python3-yaml (.ci/run installs it)");
        assert!(
            out.status.success(),
            "{file}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    for file in ["kubernetes/daemonset.yaml", "kubernetes/job.yaml"] {
        let text = std::fs::read_to_string(contrib().join(file)).unwrap();
        for needed in [
            "cpu-load-balancing.crio.io: \"disable\"",
            "cpu-quota.crio.io: \"disable\"",
            "irq-load-balancing.crio.io: \"disable\"",
            "/dev/cpu_dma_latency",
            "Cpus_allowed_list",
        ] {
            assert!(text.contains(needed), "{file} lacks {needed}");
        }
    }
    let dashboard: Value = serde_json::from_str(
        &std::fs::read_to_string(contrib().join("grafana-dashboard.json")).unwrap(),
    )
    .unwrap();
    let kinds: Vec<&str> = dashboard["panels"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["type"].as_str())
        .collect();
    assert!(kinds.contains(&"heatmap"), "{kinds:?}");
    let unit = std::fs::read_to_string(contrib().join("rtgauge-monitor.service")).unwrap();
    // systemd's own check of the unit (the binary path replaced by one that exists here).
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("rtgauge-monitor.service");
    std::fs::write(&copy, unit.replace("/usr/local/bin/rtgauge", "/bin/true")).unwrap();
    match Command::new("systemd-analyze")
        .arg("verify")
        .arg(&copy)
        .output()
    {
        Ok(out) => assert!(
            out.status.success() && out.stderr.is_empty(),
            "systemd-analyze verify: {}",
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => {
            println!("systemd-analyze not run ({e}): the unit is checked for its settings only")
        }
    }
    for needed in [
        "CAP_SYS_NICE",
        "CAP_IPC_LOCK",
        "Restart=on-failure",
        "CPUAffinity=",
    ] {
        assert!(unit.contains(needed), "unit lacks {needed}");
    }
}

/// `monitor --probe noise`: the longest stall of each polling window, exported under names of
/// its own; the windows counted, the histogram and the interval maxima agree with the final
/// document's gap series (its stalls, its longest one).
#[test]
fn a_noise_monitor_exports_its_windows_and_stalls_consistently_with_its_final_document() {
    let _turn = common::exclusive();
    let dir = tempfile::tempdir().unwrap();
    let (store, output) = (dir.path().join("h.sqlite"), dir.path().join("final.json"));
    let port = free_port();
    let mut child = Killed(
        Command::new(assert_cmd::cargo::cargo_bin("rtgauge"))
            .args([
                "monitor",
                "--probe",
                "noise",
                "--listen",
                &format!("127.0.0.1:{port}"),
            ])
            .args([
                "--interval",
                "1s",
                "--cpus",
                "1",
                "--warmup",
                "200ms",
                "--store",
            ])
            .arg(&store)
            .arg("-o")
            .arg(&output)
            .stdout(Stdio::null())
            .spawn()
            .unwrap(),
    );
    // An interval finished (its maximum is exported) and 20 windows were counted.
    let mut metrics = String::new();
    wait_until("two noise intervals", Duration::from_secs(30), || {
        metrics = get(port, "/metrics", "*/*")
            .map(|(_, b)| b)
            .unwrap_or_default();
        gauge(&metrics, "rtgauge_noise_interval_max_seconds").is_some()
            && gauge(&metrics, "rtgauge_noise_windows_total").is_some_and(|w| w >= 20.0)
    });
    assert!(metrics.contains("probe=\"noise\""), "{metrics}");
    assert!(!metrics.contains("rtgauge_latency_seconds"), "{metrics}");
    // One histogram sample per window.
    let count = gauge(&metrics, "rtgauge_noise_window_max_seconds_count").unwrap();
    assert_eq!(Some(count), gauge(&metrics, "rtgauge_noise_windows_total"));
    let alltime = gauge(&metrics, "rtgauge_noise_interval_max_alltime_seconds").unwrap();
    assert!(sigterm(&mut child).success());
    let result: Value = common::read_json(&output);
    let gap = result["runs"][0]["series"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "gap")
        .expect("the final document has the noise probe's gap series");
    assert_eq!(
        result["runs"][0]["params"]["runtime"], "10%",
        "the stated duty"
    );
    // The exported maxima are stalls the document holds: never above its longest.
    let longest = gap["stats"]["max_ns"].as_u64().unwrap_or(0) as f64 / 1e9;
    assert!(alltime <= longest + 1e-9, "{alltime} > {longest}");
    // Every stall the windows exported is one the document counted.
    let stalls = gauge(&metrics, "rtgauge_noise_stalls_total").unwrap();
    assert!(
        stalls <= gap["stats"]["count"].as_f64().unwrap(),
        "{stalls}"
    );
}
