//! rt-app task descriptions run by the taskset probe: real files from the rt-app project and
//! from other projects, read as rt-app reads them. The files are kept beside the clone in
//! `../shared/real-clients/rt-app/` (origins in `../shared/real-clients/SOURCES.md`), never
//! copied into the repository.

mod common;
use common::*;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A file of `../shared/real-clients/rt-app/` (relative to the repository root).
fn real_file(name: &str) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/real-clients/rt-app")
        .join(name);
    assert!(
        path.exists(),
        "{} is missing: these tests read real third-party files from ../shared/real-clients beside the clone",
        path.display()
    );
    path
}

/// A broken file (a key without a value in rt-app's own video-short.json; a missing comma
/// in a file posted to LKML) is refused in one line naming the line and column, and nothing
/// runs: no result is written.
#[test]
fn broken_rt_app_files_are_refused_naming_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "rt-app_video-short.json",
            "not valid rt-app JSON: line 6, column 13: expected `:`",
        ),
        (
            "rt-app_lkml-2020-eggemann-dl-capacity-v3_deadline-2x4inst_missing-comma_wrapped.json",
            "not valid rt-app JSON: line 19, column 3: expected `,` or `}`",
        ),
    ];
    for (name, expected) in cases {
        let out = dir.path().join("result.json");
        let file = real_file(name);
        let err = one_line_error(&[
            "run".as_ref(),
            "taskset".as_ref(),
            "--tasks".as_ref(),
            file.as_os_str(),
            "-o".as_ref(),
            out.as_os_str(),
        ]);
        assert!(err.contains(expected), "{name}: {err}");
        assert!(!out.exists(), "{name}: a result was written");
    }
}

/// The rt-app project's own documentation examples (`doc/examples`).
const EXAMPLES: [&str; 15] = [
    "template",
    "tutorial-example1",
    "tutorial-example2",
    "tutorial-example3",
    "tutorial-example4",
    "tutorial-example5",
    "tutorial-example7",
    "tutorial-example9",
    "custom-slice",
    "cpufreq_governor_efficiency-dvfs",
    "mp3-short",
    "browser-short",
    "video-short",
    "spreading-tasks",
    "merge-thread0",
];

/// Runs `rtgauge run taskset --tasks FILE` for `duration`; returns the exit status, what
/// it printed and the result (Null when none was written).
fn run_file(file: &Path, duration: &str) -> (i32, String, Value) {
    let (_dir, out) = scratch_result();
    let output = rtgauge()
        .args(["run", "taskset", "--tasks"])
        .arg(file)
        .args(["-d", duration, "--warmup", "100ms", "--no-report", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let result = if out.exists() {
        read_json(&out)
    } else {
        Value::Null
    };
    (output.status.code().unwrap(), printed, result)
}

/// The series `name` of task `task`.
fn series<'a>(result: &'a Value, name: &str, task: &str) -> Option<&'a Value> {
    result["runs"][0]["series"]
        .as_array()?
        .iter()
        .find(|s| s["name"] == name && s["labels"]["task"] == task)
}

fn passes(result: &Value, task: &str) -> u64 {
    series(result, "period", task)
        .and_then(|s| s["counters"]["passes"].as_u64())
        .unwrap_or_else(|| panic!("no period series of {task}"))
}

/// Acceptance: of the rt-app project's 15 documentation examples, 13 run and 2 are refused
/// by name (rt-app's own video-short.json, which json-c cannot parse either, and a fragment
/// in rt-app's 2014 grammar). What each example's events do is checked where it is plain:
/// barriers keep two tasks in step, a suspend/resume chain driven by a shared 6-ms timer
/// wakes its tasks every fifth tick.
#[test]
fn the_rt_app_projects_examples_run_but_two() {
    let _turn = exclusive();
    let mut refused = Vec::new();
    for name in EXAMPLES {
        let file = real_file(&format!("rt-app_{name}.json"));
        // The dvfs example's cycle is a 1.2-s timer then 900 ms of work at SCHED_FIFO: 4 s
        // hold a whole one with room for other real-time work on its CPU.
        let duration = if name.ends_with("dvfs") { "4s" } else { "2s" };
        let (code, printed, result) = run_file(&file, duration);
        println!("{name}: exit {code}\n{printed}");
        // custom-slice asks SCHED_DEADLINE for all of a CPU (runtime = period): the kernel
        // admits it only while RT throttling leaves it the bandwidth (a test elsewhere may
        // have lowered kernel.sched_rt_runtime_us); then the run says so.
        if name == "custom-slice" && code == 1 {
            assert!(
                printed.contains("the kernel refused the reservation"),
                "{printed}"
            );
            println!("custom-slice: not admitted by the kernel now (RT bandwidth)");
            continue;
        }
        // tutorial-example4's two threads each resume the other, then suspend themselves. A
        // resume sent before the other's suspend is lost, in rt-app as here (a condition
        // variable), so when both finish their 10 ms at once, both wait for good and no pass
        // ends: the run then measured nothing, and says why. Seen once in many runs on this
        // 2-CPU VM.
        if name == "tutorial-example4"
            && code == 1
            && printed.contains("all 2 threads were waiting for one another")
        {
            println!(
                "tutorial-example4: both threads suspended for good this time (as rt-app's can)"
            );
            continue;
        }
        if code == 1 {
            assert_eq!(printed.trim_end().lines().count(), 1, "{printed}");
            refused.push(name);
            continue;
        }
        assert!(code == 0 || code == 2, "{name}: {printed}");
        assert!(result["runs"][0]["series"].as_array().is_some(), "{name}");
        match name {
            "tutorial-example7" => {
                // Three barriers a pass: neither task gets more than a pass ahead.
                let (a, b) = (passes(&result, "task0"), passes(&result, "task1"));
                assert!(a > 0 && a.abs_diff(b) <= 1, "{a} and {b} passes");
            }
            "mp3-short" => {
                for task in [
                    "AudioTick",
                    "AudioOut",
                    "AudioTrack",
                    "mp3_decoder",
                    "OMXCall",
                ] {
                    assert!(passes(&result, task) > 0, "{task}: {printed}");
                }
                assert!(series(&result, "timer_wakeup", "AudioTick").is_some());
                // AudioOut is resumed once every 5 ticks of 6 ms.
                let median = series(&result, "period", "AudioOut").unwrap()["stats"]["median_ns"]
                    .as_f64()
                    .unwrap();
                assert!((24e6..36e6).contains(&median), "{median}");
            }
            _ => {}
        }
    }
    assert_eq!(refused, ["video-short", "merge-thread0"]);
}

/// A set that blocks for good (a suspend nobody resumes) still ends when the run does, and
/// says that no pass completed.
#[test]
fn a_task_blocked_for_good_ends_with_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("stuck.json");
    std::fs::write(
        &file,
        r#"{ "tasks": { "stuck": { "run": 100, "suspend": "never-resumed" },
                        "free": { "run": 100, "sleep": 1000 } } }"#,
    )
    .unwrap();
    let began = Instant::now();
    let (code, printed, result) = run_file(&file, "1s");
    let took = began.elapsed();
    assert_eq!(code, 0, "{printed}");
    assert!(took < Duration::from_secs(15), "{took:?}");
    assert_eq!(passes(&result, "stuck"), 0);
    assert!(passes(&result, "free") > 100, "{printed}");
    assert!(
        printed.contains("stuck: rt-app events: no pass through a phase completed"),
        "{printed}"
    );
}

/// One task's medians: period, run and wake-up latency, in µs.
#[derive(Debug, Clone, Copy)]
struct Figures {
    period: f64,
    run: f64,
    wakeup: f64,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// rt-app's own log of one thread (`#idx perf run period start end rel_st slack c_duration
/// c_period wu_lat`, µs): the medians of its rows.
fn rt_app_log(path: &Path) -> Figures {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let rows: Vec<Vec<f64>> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.split_whitespace().map(|x| x.parse().unwrap()).collect())
        .collect();
    assert!(rows.len() > 50, "{}: {} rows", path.display(), rows.len());
    let col = |k: usize| median(rows.iter().map(|r| r[k]).collect());
    Figures {
        period: col(3),
        run: col(2),
        wakeup: col(10),
    }
}

/// rtgauge's series of the same task, in µs.
fn rtgauge_figures(result: &Value, task: &str) -> Figures {
    let med = |name: &str| {
        series(result, name, task).unwrap_or_else(|| panic!("no {name} series of {task}"))["stats"]
            ["median_ns"]
            .as_f64()
            .unwrap()
            / 1e3
    };
    Figures {
        period: med("period"),
        run: med("run"),
        wakeup: med("timer_wakeup"),
    }
}

/// The comparison's file: two periodic SCHED_FIFO tasks, each on a CPU of its own (rt-app
/// starts its threads a little apart, rtgauge from one first release, so on one CPU their
/// jobs would collide differently), rt-app's logs written in `dir`. `runtime` is busy for a
/// wall time in both tools; rt-app's `run` is instead a loop count from its start-up
/// calibration, whose error on a VM shows in its run figure (docs/taskset.md).
fn comparison_file(dir: &Path, cpu: usize, other: usize) -> PathBuf {
    let file = dir.join("periodic.json");
    std::fs::write(
        &file,
        format!(
            r#"{{
  "tasks": {{
    "servo": {{ "loop": 300, "policy": "SCHED_FIFO", "priority": 50, "cpus": [{cpu}],
               "runtime": 2000, "timer": {{ "ref": "unique", "period": 10000 }} }},
    "logger": {{ "loop": 150, "policy": "SCHED_FIFO", "priority": 40, "cpus": [{other}],
                "runtime": 3000, "timer": {{ "ref": "unique", "period": 20000 }} }}
  }},
  "global": {{ "duration": 4, "logdir": "{}", "log_basename": "cmp",
               "default_policy": "SCHED_OTHER", "calibration": "CPU{cpu}" }}
}}"#,
            dir.display()
        ),
    )
    .unwrap();
    file
}

/// rt-app's log of `task` in `dir` (rt-app names them BASENAME-THREAD-INDEX.log).
fn rt_app_figures(dir: &Path, task: &str) -> Figures {
    let log = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(&format!("cmp-{task}-")))
        })
        .unwrap_or_else(|| panic!("rt-app wrote no log of {task}"));
    rt_app_log(&log)
}

const COMPARED: [&str; 2] = ["servo", "logger"];

/// Acceptance: one periodic rt-app file run by rt-app itself and by rtgauge, on the same
/// CPUs in the same policy and priority, three rounds interleaved (rt-app, rtgauge, …), each
/// printed. Per task and round the period and run medians agree within 5 %. The wake-up
/// latency median of rtgauge's rounds is not above rt-app's by more than 25 % or 15 µs: on
/// this VM they are some 15–50 µs and one run's moves by 10–20 µs from the next in either tool
/// as the host's load moves, and rt-app's has been far above rtgauge's under a busy host
/// (docs/taskset.md has the rounds): up to 3 attempts of 3 rounds, each printed.
#[test]
fn rt_app_and_rtgauge_agree_on_a_periodic_file() {
    if std::process::Command::new("rt-app")
        .arg("--help")
        .output()
        .is_err()
    {
        eprintln!("skipped: rt-app is not installed (Debian: apt-get install rt-app)");
        return;
    }
    let Some(_turn) = exclusive_as_root("SCHED_FIFO tasks under rt-app and rtgauge") else {
        return;
    };
    let cpus = rtgauge_sysinfo::online_cpus();
    let (cpu, other) = (*cpus.last().unwrap(), cpus[0]);
    // The wake-up medians move with the host's load: up to 3 attempts of 3 rounds, each printed.
    let mut failures = Vec::new();
    for attempt in 1..=3 {
        match side_by_side_attempt(cpu, other) {
            None => return,
            Some(Ok(())) => return,
            Some(Err(why)) => {
                eprintln!("attempt {attempt}: {why}");
                failures.push(why);
            }
        }
    }
    panic!("rtgauge's wake-up medians were above rt-app's in 3 attempts: {failures:#?}");
}

/// Three interleaved rounds of rt-app and rtgauge on `periodic.json`; the period and run
/// agree in every round (asserted), the wake-up medians of the rounds within the allowance
/// (the error says by how much they did not). None when rt-app itself failed (skipped).
fn side_by_side_attempt(cpu: usize, other: usize) -> Option<Result<(), String>> {
    // Per task: each round's rt-app and rtgauge wake-up medians.
    let mut wakeups: Vec<(Vec<f64>, Vec<f64>)> = vec![(Vec::new(), Vec::new()); COMPARED.len()];
    for round in 1..=3 {
        let dir = tempfile::tempdir().unwrap();
        let file = comparison_file(dir.path(), cpu, other);
        let rt_app = std::process::Command::new("rt-app")
            .arg(&file)
            .current_dir(dir.path())
            .output()
            .unwrap();
        if !rt_app.status.success() {
            // rt-app's own failure (e.g. refused its policy) is not rtgauge's to answer for.
            eprintln!(
                "skipped: rt-app itself failed: {}",
                String::from_utf8_lossy(&rt_app.stderr)
                    .lines()
                    .last()
                    .unwrap_or("")
            );
            return None;
        }
        let (code, printed, result) = run_file(&file, "4s");
        assert_eq!(code, 0, "{printed}");
        for (k, task) in COMPARED.iter().enumerate() {
            let theirs = rt_app_figures(dir.path(), task);
            let ours = rtgauge_figures(&result, task);
            println!("round {round}: {task}: rt-app {theirs:?}, rtgauge {ours:?}");
            let near = |a: f64, b: f64| (a - b).abs() <= 0.05 * a.max(b);
            assert!(near(theirs.period, ours.period), "{task}: period");
            assert!(near(theirs.run, ours.run), "{task}: run");
            wakeups[k].0.push(theirs.wakeup);
            wakeups[k].1.push(ours.wakeup);
        }
    }
    let mut disagree = Vec::new();
    for (task, (theirs, ours)) in COMPARED.iter().zip(wakeups) {
        let (a, b) = (median(theirs.clone()), median(ours.clone()));
        // One-sided: rtgauge's engine adds no wake-up latency beyond rt-app's own. rt-app's
        // median has been 4–5 times rtgauge's under a busy CI host (about 95 against 20 µs)
        // while the two agreed here (docs/taskset.md): a gap on rt-app's side, not asserted.
        let allowed = (0.25 * a.max(b)).max(15.0);
        let line = format!(
            "{task}: wake-up median of the rounds: rt-app {a} µs {theirs:?}, rtgauge {b:.1} µs {ours:?}; rtgauge allowed up to {:.1} µs",
            a + allowed
        );
        println!("{line}");
        if b > a + allowed {
            disagree.push(line);
        }
    }
    Some(match disagree.is_empty() {
        true => Ok(()),
        false => Err(disagree.join("; ")),
    })
}

/// Every rt-app event runs: a timer shared by two tasks, locks, condition variables (wait,
/// signal, broad, sync), a barrier, suspend and resume, yield, mem, iorun and fork, in one
/// set of SCHED_OTHER tasks; each task completes passes and the fork is counted. (A
/// signal or resume sent before its wait is lost, as in rt-app: each waiting task here is
/// woken again every pass of the task that wakes it.)
#[test]
fn every_rt_app_event_runs() {
    let _turn = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("all.json");
    std::fs::write(
        &file,
        r#"{
  // Every event rtgauge runs, numbered keys and repeats included.
  "global": { "pi_enabled": true, "mem_buffer_size": 65536, "io_device": "/dev/null" },
  "tasks": {
    "ticker": { "run": 100, "timer": { "ref": "shared", "period": 5000 },
                "resume": "sleeper", "broad": "news", "yield": "" },
    "second": { "runtime": 100, "timer": { "ref": "shared", "period": 5000 },
                "mem": 32768, "iorun": 4096 },
    "sleeper": { "suspend": "sleeper", "run": 50, "lock": "m", "signal": "q", "unlock": "m" },
    "waiter": { "lock": "m", "wait": { "ref": "q", "mutex": "m" }, "unlock": "m",
                "sleep1": 100, "sleep2": 100 },
    "fast": { "barrier": "meet", "sleep": 1000 },
    "slow": { "barrier": "meet", "sleep": 3000 },
    "listener": { "lock": "n", "wait": { "ref": "news", "mutex": "n" }, "unlock": "n",
                  "lock": "s", "sync": { "ref": "pair", "mutex": "s" }, "unlock": "s" },
    "partner": { "lock": "s", "sync": { "ref": "pair", "mutex": "s" }, "unlock": "s",
                 "sleep": 1000 },
    "spawner": { "loop": 1, "fork": "child", "run": 10 },
    "child": { "instance": 0, "loop": 3, "run": 10, "sleep": 100 }
  }
}"#,
    )
    .unwrap();
    let (code, printed, result) = run_file(&file, "1s");
    assert_eq!(code, 0, "{printed}");
    for task in [
        "ticker", "second", "sleeper", "waiter", "listener", "partner",
    ] {
        assert!(passes(&result, task) > 0, "{task}: {printed}");
    }
    // The barrier holds the fast task to the slow one's pace.
    let (fast, slow) = (passes(&result, "fast"), passes(&result, "slow"));
    assert!(slow > 0 && fast.abs_diff(slow) <= 1, "{fast} and {slow}");
    // Two tasks on one shared 5-ms timer: each use moves it on, so each wakes every 10 ms.
    let median = series(&result, "period", "ticker").unwrap()["stats"]["median_ns"]
        .as_f64()
        .unwrap();
    assert!((8e6..12e6).contains(&median), "{median}");
    let spawner = series(&result, "period", "spawner").unwrap();
    assert_eq!(spawner["counters"]["forks"], 1, "{printed}");
    assert!(
        series(&result, "period", "child").is_none(),
        "a forked task has no series"
    );
}

/// A SCHED_DEADLINE reservation the kernel cannot admit (three tasks each asking for a whole
/// CPU) is refused in the file's own terms, naming the task and its dl- settings.
#[test]
fn a_deadline_reservation_the_kernel_refuses_is_named() {
    let Some(_turn) = exclusive_as_root("SCHED_DEADLINE") else {
        return;
    };
    // With RT throttling off (-1) the kernel admits any deadline bandwidth.
    let runtime =
        std::fs::read_to_string("/proc/sys/kernel/sched_rt_runtime_us").unwrap_or_default();
    if runtime.trim() == "-1" {
        eprintln!(
            "skipped: kernel.sched_rt_runtime_us is -1, so the kernel admits any reservation"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("greedy.json");
    std::fs::write(
        &file,
        r#"{ "tasks": { "greedy": { "instance": 3, "policy": "SCHED_DEADLINE",
            "dl-runtime": 100000, "dl-period": 100000, "run": 1000, "sleep": 1000 } } }"#,
    )
    .unwrap();
    let (code, printed, _) = run_file(&file, "1s");
    assert_eq!(code, 1, "{printed}");
    assert!(
        printed.contains("the kernel refused its SCHED_DEADLINE reservation (dl-runtime 100ms, dl-deadline 100ms, dl-period 100ms)"),
        "{printed}"
    );
    assert!(printed.contains("task greedy-"), "{printed}");
}
