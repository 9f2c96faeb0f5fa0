//! Fixtures shared by the snapshot tests: two hand-built, deterministic result documents.
//!
//! `idle.json` (A) and `loaded.json` (B) describe the same plan on two kernels: B's `rt`
//! latencies are shifted up and its `normal` latencies come from the same distribution as
//! A's (different samples). The files under tests/fixtures/ are written by
//! `cargo test -p rtgauge-report --test snapshots -- --ignored regenerate_fixtures`.

#![allow(dead_code)]

use rtgauge_result::{
    Calibration, Fingerprint, Obtained, ProbeRun, ProbeStatus, RunConfig, RunResult, RunStatus,
    Series, Tool, Warning, SCHEMA_VERSION,
};
use rtgauge_stats::Recorder;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The summary of `result` with the built-in probes' rows registered, as the program does at
/// start (each probe shapes its own rows).
pub fn summary_of(result: &RunResult) -> rtgauge_report::Summary {
    rtgauge_probes::register_built_in();
    rtgauge_report::Summary::of(result)
}

pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// A small deterministic generator (64-bit LCG, upper bits).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// `n` samples around `body_ns` with a heavy tail, quantised to 50 ns so the histogram stays
/// small in the fixture file.
fn samples(seed: u64, n: usize, body_ns: f64, spread: f64, tail_every: usize) -> Vec<u64> {
    let mut rng = Lcg(seed);
    (0..n)
        .map(|i| {
            // Sum of three uniforms: a bell-shaped body.
            let u = (rng.next() + rng.next() + rng.next()) / 3.0 - 0.5;
            let mut v = body_ns * (1.0 + spread * u * 2.0);
            if tail_every > 0 && i % tail_every == tail_every / 2 {
                v *= 3.0 + 10.0 * rng.next();
            }
            ((v / 50.0).round() * 50.0).max(50.0) as u64
        })
        .collect()
}

fn series(name: &str, values: &[u64], period_ns: u64) -> Series {
    let mut r = Recorder::default();
    for (i, &v) in values.iter().enumerate() {
        r.record(v, i as u64 * period_ns);
    }
    Series::new(name, r.summary())
}

fn run(probe: &str, mode: &str, series: Vec<Series>) -> ProbeRun {
    ProbeRun {
        probe: probe.into(),
        variant: None,
        mode: mode.into(),
        load: "none".into(),
        status: ProbeStatus::Ok,
        obtained: if mode == "rt" {
            Obtained {
                policy: "fifo".into(),
                priority: 95,
                memory_locked: true,
                cpu_dma_latency_held: true,
                pinned: true,
                timer_slack_ns: Some(0),
                shortfalls: Vec::new(),
            }
        } else {
            Obtained {
                policy: "other".into(),
                ..Obtained::default()
            }
        },
        params: BTreeMap::from([("period".to_string(), "1ms".to_string())]),
        warmup_ns: 1_000_000_000,
        measured_ns: 20_000_000_000,
        series,
        spikes: Vec::new(),
        spikes_unexplained: 0,
    }
}

/// The fixture result: `loaded` shifts the rt latencies up by 40 % (and its tail more).
pub fn build(loaded: bool) -> RunResult {
    let n = 20_000;
    let mut runs = Vec::new();
    for (m, mode) in ["normal", "rt"].iter().enumerate() {
        let mut list = Vec::new();
        for cpu in 0..2u64 {
            let seed = 1 + cpu * 10 + m as u64 * 100 + if loaded { 1000 } else { 0 };
            let (body, tail) = match (*mode, loaded) {
                ("rt", true) => (11_200.0, 200),
                ("rt", false) => (8_000.0, 2000),
                _ => (60_000.0, 500),
            };
            let values = samples(seed, n, body, 0.5, tail);
            let overruns = values.iter().filter(|&&v| v > 1_000_000).count() as u64;
            list.push(
                series("latency", &values, 1_000_000)
                    .label("cpu", cpu)
                    .counter("overruns", overruns)
                    .counter("cycles", n as u64),
            );
        }
        runs.push(run("cyclic", mode, list));
    }
    let mut alloc = Vec::new();
    for (i, size) in [64u64, 4096, 65_536].iter().enumerate() {
        for (j, name) in ["alloc", "free"].iter().enumerate() {
            let body = 80.0 + 40.0 * i as f64 + if *name == "alloc" { 30.0 } else { 0.0 };
            let values = samples(7 + i as u64 * 3 + j as u64, 5000, body, 0.4, 1000);
            alloc.push(
                series(name, &values, 20_000)
                    .label("size", size)
                    .label("allocator", "malloc"),
            );
        }
    }
    runs.push(run("alloc", "rt", alloc));
    runs.push(ProbeRun {
        status: ProbeStatus::Skipped {
            reason: "no I/O port access: needs x86 and CAP_SYS_RAWIO".into(),
        },
        series: Vec::new(),
        measured_ns: 0,
        ..run("ioport", "rt", Vec::new())
    });
    let check = |id: &str, title: &str, status: &str, found: &str, why: &str, fix: &str| serde_json::json!({"id": id, "title": title, "status": status, "found": found, "why": why, "fix": fix});
    // Assembled as JSON so that fields added to the document later (with defaults) do not
    // break this builder.
    let doc = serde_json::json!({
        "schema_version": SCHEMA_VERSION,
        "tool": Tool { name: "rtgauge".into(), version: "0.1.0".into() },
        "command_line": ["rtgauge", "run", "--suite", "fixture"],
        "started_unix_ns": if loaded { 1_795_100_000u64 } else { 1_795_000_000 } * 1_000_000_000,
        "finished_unix_ns": if loaded { 1_795_100_090u64 } else { 1_795_000_090 } * 1_000_000_000,
        "status": RunStatus::Complete,
        "fingerprint": Fingerprint {
            hostname: "board".into(),
            kernel_release: if loaded { "6.1.0-28-amd64" } else { "6.1.0-28-rt-amd64" }.into(),
            kernel_version: "#1 SMP".into(),
            preemption_model: if loaded { "dynamic" } else { "rt" }.into(),
            preempt_rt: !loaded,
            cmdline: "quiet isolcpus=1".into(),
            cpu_model: "Example CPU @ 2.0GHz".into(),
            cpus_online: vec![0, 1],
            clocksource: "tsc".into(),
            isolated_cpus: vec![1],
            rt_runtime_us: Some(-1),
            rt_period_us: Some(1_000_000),
            ..Fingerprint::default()
        },
        "checks": [
            check("rt_throttling", "RT throttling", "ok", "sched_rt_runtime_us = -1", "throttling stops RT tasks each period", ""),
            check("preempt_rt", "Preemption model", if loaded { "warn" } else { "ok" }, if loaded { "dynamic" } else { "rt" }, "non-RT kernels have long non-preemptible sections", "boot a PREEMPT_RT kernel (linux-image-rt-amd64)"),
            check("cstates", "Deep C-states", "fail", "C6 enabled on cpu 1", "waking from deep C-states takes up to 100 µs", "boot with intel_idle.max_cstate=1 or hold /dev/cpu_dma_latency"),
        ],
        "config": RunConfig {
            suite: Some("fixture".into()),
            probes: vec!["cyclic".into(), "alloc".into(), "ioport".into()],
            modes: vec!["normal".into(), "rt".into()],
            loads: vec!["none".into()],
            cpus: vec![0, 1],
            duration_ns: Some(20_000_000_000),
            loops: None,
            warmup_ns: 1_000_000_000,
            priority: 95,
            best_effort: false,
            params: BTreeMap::new(),
        },
        "calibration": Calibration {
            clock: "CLOCK_MONOTONIC".into(),
            clocksource: "tsc".into(),
            reads: 100_000,
            read_cost_min_ns: 18,
            read_cost_median_ns: 20,
            read_cost_max_ns: 900,
            resolution_ns: 1,
        },
        "runs": runs,
        "loads": [],
        "warnings": [Warning::new("short-run", "20000 samples per series support percentiles up to p99.99")],
    });
    serde_json::from_value(doc).expect("the fixture is a valid result document")
}

/// `n` samples around `body_ns` as a series (a heavy tail every 500th).
fn sv(name: &str, seed: u64, n: usize, body_ns: f64) -> Series {
    series(name, &samples(seed, n, body_ns, 0.4, 500), 10_000)
}

/// The idle fixture plus a run of every other probe the quick suite holds (memop, clock,
/// response, switch, primitive), shaped as those probes write them: for the summary.
pub fn every_probe() -> RunResult {
    let mut r = build(false);
    let rt = |probe: &str, series: Vec<Series>| run(probe, "rt", series);
    let mut memop = Vec::new();
    for (i, op) in ["memcpy", "memset"].iter().enumerate() {
        for (j, size) in [64u64, 4096, 262_144, 4_194_304].iter().enumerate() {
            // Per byte the cost falls, then doubles once the size leaves the cache.
            let per_byte = [0.5, 0.05, 0.06, 0.2][j];
            let mut s = sv(
                op,
                300 + (i * 10 + j) as u64,
                2000,
                200.0 + per_byte * *size as f64,
            )
            .label("size", rtgauge_result::units::format_size(*size));
            s.metrics.insert("size_bytes".into(), *size as f64);
            memop.push(s);
        }
    }
    let mut tsc = sv("read_cost", 401, 5000, 300.0).label("clock", "tsc");
    for (k, v) in [
        ("tsc_hz", 2.0e9),
        ("tsc_stability_ppb", 3.0),
        ("tsc_window_error_ppb", 200.0),
    ] {
        tsc.metrics.insert(k.into(), v);
    }
    let clock = vec![
        sv("read_cost", 400, 5000, 400.0)
            .label("clock", "monotonic")
            .counter("backward_steps", 0),
        tsc.counter("backward_steps", 0),
    ];
    let mut response = Vec::new();
    let mut switch = Vec::new();
    for (i, placement) in ["same-cpu", "cross-cpu"].iter().enumerate() {
        for (j, source) in ["signal", "pipe", "futex"].iter().enumerate() {
            let seed = 500 + (i * 10 + j) as u64;
            response.push(
                sv(
                    "response",
                    seed,
                    3000,
                    3000.0 + 4000.0 * i as f64 + 500.0 * j as f64,
                )
                .label("source", source)
                .label("placement", placement),
            );
            switch.push(
                sv(
                    "switch",
                    seed + 50,
                    3000,
                    1000.0 + 3000.0 * i as f64 + 200.0 * j as f64,
                )
                .label("via", source)
                .label("placement", placement),
            );
        }
    }
    switch.push(sv("pipe_round_trip", 590, 3000, 2500.0).label("placement", "same-cpu"));
    let mut primitive = Vec::new();
    for (j, call) in ["sem_post", "mutex_lock", "mq_send", "sched_setattr"]
        .iter()
        .enumerate()
    {
        for method in ["per-call", "batched"] {
            let mut s =
                sv(call, 600 + j as u64, 2000, 100.0 + 150.0 * j as f64).label("method", method);
            if method == "batched" {
                s.batch = 100;
            }
            primitive.push(s);
        }
    }
    r.runs.extend([
        rt("memop", memop),
        rt("clock", clock),
        rt("response", response),
        rt("switch", switch),
        rt("primitive", primitive),
    ]);
    r.config
        .probes
        .extend(["memop", "clock", "response", "switch", "primitive"].map(String::from));
    r
}

/// A pair for the baseline gate: one `cyclic rt` latency series per result, `seconds` long
/// at 1 ms, the candidate's samples (drawn anew) stretched by `stretch`. A share `loud` of the
/// 100-ms blocks is ten times slower: bursty runs vary a lot from block to block.
pub fn gate_pair(seconds: u64, stretch: f64, loud: f64) -> (RunResult, RunResult) {
    (
        gate_run(11, seconds, 1.0, loud),
        gate_run(12, seconds, stretch, loud),
    )
}

/// One run of [`gate_pair`]: samples drawn from `seed`, stretched by `factor`.
pub fn gate_run(seed: u64, seconds: u64, factor: f64, loud: f64) -> RunResult {
    let mut rng = Lcg(seed);
    let n = seconds as usize * 1000;
    let loud: Vec<bool> = (0..seconds * 10).map(|_| rng.next() < loud).collect();
    let values: Vec<u64> = (0..n)
        .map(|i| {
            let u = (rng.next() + rng.next() + rng.next()) / 3.0;
            let base = if loud[i / 100] { 200_000.0 } else { 20_000.0 };
            (base * (0.5 + u) * factor) as u64
        })
        .collect();
    let mut result = build(false);
    result.config.probes = vec!["cyclic".into()];
    result.runs = vec![run(
        "cyclic",
        "rt",
        vec![series("latency", &values, 1_000_000).label("cpu", 0)],
    )];
    result
}
