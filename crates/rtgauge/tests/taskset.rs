//! End-to-end tests of the taskset probe: a task set is checked before anything runs, its
//! tasks are predicted from the run's own overheads, run, and the verdict sets the exit
//! status. On this noisy machine the measured maxima are not compared with the predictions;
//! the verdicts, the misses and what is reported are.

mod common;
use common::*;

use serde_json::Value;
use std::path::{Path, PathBuf};

/// Writes `text` as a task-set file in `dir`.
fn task_file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// Whether the kernel throttles real-time tasks (kernel.sched_rt_runtime_us below its period).
fn rt_throttling_on() -> bool {
    let read = |f: &str| {
        std::fs::read_to_string(format!("/proc/sys/kernel/{f}"))
            .ok()
            .and_then(|t| t.trim().parse::<i64>().ok())
    };
    match (read("sched_rt_runtime_us"), read("sched_rt_period_us")) {
        (Some(r), Some(p)) => r >= 0 && r < p,
        _ => false,
    }
}

/// The last online CPU: the tasks are pinned there, away from CPU 0's housekeeping.
fn last_cpu() -> usize {
    *rtgauge_sysinfo::online_cpus().last().unwrap()
}

/// Three fixed-priority tasks on one CPU, utilisation 2/10 + 4/20 + `slow_work`/40.
fn three_tasks(cpu: usize, slow_work_ms: u64) -> String {
    format!(
        r#"
[[task]]
name = "fast"
period = "10ms"
work = "2ms"
priority = 80
cpu = {cpu}

[[task]]
name = "middle"
period = "20ms"
work = "4ms"
priority = 70
cpu = {cpu}

[[task]]
name = "slow"
period = "40ms"
work = "{slow_work_ms}ms"
priority = 60
cpu = {cpu}
"#
    )
}

/// Each refusal is one line naming the task and the field, and nothing is run: no result.
#[test]
fn bad_task_sets_are_refused_in_one_line_naming_the_task_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, String, &str); 7] = [
        (
            "unknown field",
            "[[task]]\nname = \"servo\"\nperiod = \"1ms\"\nwork = \"100us\"\npriority = 90\nprio = 3\n".into(),
            "task servo: prio: unknown field (did you mean `priority`?)",
        ),
        (
            "TOML syntax",
            "[[task]]\nname = \"servo\"\nperiod = 1ms\n".into(),
            "not a valid TOML task set: line 3: ",
        ),
        (
            "a suite file",
            "name = \"mine\"\ndescription = \"my suite\"\n\n[[probe]]\nname = \"cyclic\"\n".into(),
            "this is a suite file",
        ),
        (
            "period below the minimum",
            "[[task]]\nname = \"base\"\nperiod = \"2us\"\nwork = \"1us\"\npriority = 90\n".into(),
            "task base: period: 2us is below this machine's minimum period of 10us",
        ),
        (
            "utilisation above the CPU",
            three_tasks(last_cpu(), 28),
            "task slow: work: 28ms every 40ms brings CPU",
        ),
        (
            "cycle in after",
            "[[task]]\nname = \"a\"\nperiod = \"1ms\"\nwork = \"10us\"\npriority = 5\nafter = \"b\"\n[[task]]\nname = \"b\"\nperiod = \"1ms\"\nwork = \"10us\"\npriority = 5\nafter = \"a\"\n".into(),
            "task a: after: the chain a -> b -> a comes back to itself",
        ),
        (
            "missing resource",
            "[[task]]\nname = \"servo\"\nperiod = \"1ms\"\nwork = \"100us\"\npriority = 90\ncritical = { resource = \"bus\", length = \"10us\" }\n".into(),
            "task servo: critical.resource: no [[resource]] is named 'bus'",
        ),
    ];
    for (what, text, expected) in cases {
        let file = task_file(dir.path(), "set.toml", &text);
        let out = dir.path().join("result.json");
        let err = one_line_error(&[
            "run".as_ref(),
            "--tasks".as_ref(),
            file.as_os_str(),
            "-o".as_ref(),
            out.as_os_str(),
        ]);
        assert!(err.contains(expected), "{what}: {err}");
        assert!(!out.exists(), "{what}: a result was written");
    }
}

#[test]
fn taskset_without_a_task_set_says_how_to_give_one() {
    let err = one_line_error(&["run", "taskset"]);
    assert!(err.contains("--tasks FILE"), "{err}");
    let err = one_line_error(&["run", "cyclic", "--tasks", "x.toml"]);
    assert!(err.contains("add taskset to the probes"), "{err}");
}

/// Runs the task set at `file` for 3 s; returns the exit status, stdout and the result.
fn run_set(file: &Path, extra: &[&str]) -> (i32, String, Value) {
    let (_dir, out) = scratch_result();
    let output = rtgauge()
        .args(["run", "--tasks"])
        .arg(file)
        .args(["-d", "3s", "--warmup", "300ms", "--no-report", "-o"])
        .arg(&out)
        .args(extra)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    println!("{stdout}{}", String::from_utf8_lossy(&output.stderr));
    (output.status.code().unwrap(), stdout, read_json(&out))
}

/// The summary's line for task `name`, its wrapped continuation lines joined: the verdict of
/// one task as the run (and `show`, and the report) states it.
fn task_line(stdout: &str, name: &str) -> Option<String> {
    let mut lines = stdout.lines();
    let first = lines.find(|l| l.trim_start().starts_with(&format!("{name}:")))?;
    let indent = first.len() - first.trim_start().len();
    let mut text = first.trim().to_string();
    for more in
        lines.take_while(|l| l.len() - l.trim_start().len() > indent && !l.trim().is_empty())
    {
        text.push(' ');
        text.push_str(more.trim());
    }
    Some(text)
}

/// The `response` series of task `name`.
fn response<'a>(result: &'a Value, name: &str) -> &'a Value {
    result["runs"][0]["series"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "response" && s["labels"]["task"] == name)
        .unwrap_or_else(|| panic!("no response series of {name}"))
}

/// Acceptance: a set at utilisation 0.85 that response-time analysis schedules is declared
/// to fit, each task's measured maximum is reported beside its prediction, and the exit
/// status is 0 unless a deadline was missed (this VM stalls now and then: then 2, with the
/// misses counted). The verdict rests on the overheads measured in the run; this VM's
/// maximum wake-up latency includes vCPU stalls of several ms, which leave the slowest task
/// a margin near zero, so the verdict asserted is the one at the p99.9 figure (the maximum's
/// is recorded too), with up to three attempts, each printed.
#[test]
fn a_set_that_response_time_analysis_schedules_is_declared_to_fit() {
    let Some(_turn) = exclusive_as_root("SCHED_FIFO tasks") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = task_file(dir.path(), "fit.toml", &three_tasks(last_cpu(), 18));
    for attempt in 1..=3 {
        println!("attempt {attempt}");
        let (code, stdout, result) = run_set(&file, &["--set", "taskset.overhead=p99.9"]);
        let verdicts: Vec<f64> = ["fast", "middle", "slow"]
            .iter()
            .map(|t| {
                response(&result, t)["metrics"]["predicted_fits"]
                    .as_f64()
                    .unwrap()
            })
            .collect();
        if verdicts.iter().any(|&v| v != 1.0) && attempt < 3 {
            continue;
        }
        assert_eq!(verdicts, [1.0, 1.0, 1.0], "{stdout}");
        let misses: u64 = ["fast", "middle", "slow"]
            .iter()
            .map(|t| {
                response(&result, t)["counters"]["deadline_misses"]
                    .as_u64()
                    .unwrap()
            })
            .sum();
        assert_eq!(code, if misses == 0 { 0 } else { 2 }, "{stdout}");
        for task in ["fast", "middle", "slow"] {
            let s = response(&result, task);
            let line = task_line(&stdout, task)
                .unwrap_or_else(|| panic!("no summary line for {task}: {stdout}"));
            assert!(
                line.contains("predicted") && line.contains("measured"),
                "{line}"
            );
            // Prediction and measurement never contradict each other on one line: a task
            // that missed or ran longer than predicted says so first.
            let predicted = s["metrics"]["predicted_wcrt_ns"].as_f64().unwrap();
            let beyond = s["stats"]["max_ns"].as_f64().unwrap() > predicted
                || s["counters"]["deadline_misses"].as_u64().unwrap() > 0;
            if beyond {
                assert!(line.contains(": predicted to fit, but"), "{line}");
                assert!(!line.contains("fits, margin"), "{line}");
            } else {
                assert!(line.contains("fits, margin"), "{line}");
            }
            assert!(predicted <= s["metrics"]["deadline_ns"].as_f64().unwrap());
            assert!(s["stats"]["max_ns"].as_u64().unwrap() > 0);
            assert!(s["counters"]["jobs"].as_u64().unwrap() > 0);
        }
        // The prediction is no smaller than the work plus the work of one job of each task above.
        assert!(response(&result, "slow")["metrics"]["fits_max"].is_number());
        let slow = response(&result, "slow")["metrics"]["predicted_wcrt_ns"]
            .as_f64()
            .unwrap();
        assert!(slow >= 18e6 + 2e6 + 4e6, "{slow}");
        return;
    }
}

/// Acceptance: the same set with the lowest task's work raised past utilisation 1 (run with
/// allow-overload) is declared not to fit naming that task, misses deadlines, and exits 2.
/// The tasks above it still fit on paper: asserted at the p99.9 overheads, with up to three
/// attempts, each printed (as in the fitting set's test: this VM's maximum wake-up latency
/// holds vCPU stalls of several ms, which can take the fastest task's margin under load).
#[test]
fn an_overloaded_set_does_not_fit_misses_and_exits_2() {
    let Some(_turn) = exclusive_as_root("SCHED_FIFO tasks") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = task_file(dir.path(), "over.toml", &three_tasks(last_cpu(), 28));
    // Whether RT throttling is on decides what is asserted: nobody changes it meanwhile.
    let _lock = KernelSettingsLock::take();
    for attempt in 1..=3 {
        println!("attempt {attempt}");
        let (code, stdout, result) = run_set(
            &file,
            &[
                "--set",
                "taskset.allow-overload=yes",
                "--set",
                "taskset.overhead=p99.9",
            ],
        );
        assert_eq!(code, 2, "{stdout}");
        let slow = response(&result, "slow");
        assert_eq!(slow["metrics"]["fits"], 0.0);
        assert!(slow["counters"]["deadline_misses"].as_u64().unwrap() > 0);
        let line = task_line(&stdout, "slow").unwrap();
        assert!(line.contains("does not fit"), "{line}");
        let fast = response(&result, "fast");
        let fast_fits = fast["metrics"]["predicted_fits"] == 1.0;
        if rt_throttling_on() {
            // The set asks 1.1 s of every second: RT throttling stops every task of the CPU
            // for 50 ms each second, so even the fastest task does not fit, and its line
            // names the term.
            assert!(!fast_fits, "{stdout}");
            assert!(
                fast["metrics"]["term_ns:RT throttling"].as_f64().unwrap() > 0.0,
                "{stdout}"
            );
            let line = stdout
                .lines()
                .find(|l| l.trim_start().starts_with("fast:"))
                .unwrap();
            assert!(line.contains("+ RT throttling"), "{line}");
            // The warning names the budget and the fix.
            let warnings = result["warnings"].to_string();
            assert!(
                warnings.contains("RT throttling (kernel.sched_rt_runtime_us)")
                    && warnings.contains("sysctl kernel.sched_rt_runtime_us=-1"),
                "{warnings}"
            );
            return;
        }
        if !fast_fits && attempt < 3 {
            continue;
        }
        assert!(
            fast_fits,
            "the fastest task does not fit on paper: {stdout}"
        );
        return;
    }
}

/// Acceptance: a task set that missed reads the same wherever it is read. The overloaded set
/// misses every job of its lowest task; `show` (full tables and summary), the HTML report,
/// `show --format lava` (a failing case, exit 2), `check --spec` on `deadline_misses` and
/// `fits` (exit 2) and the SQUAD submission (spooled here: no server) all carry the miss.
#[test]
fn a_miss_reads_the_same_in_show_the_report_lava_check_and_squad() {
    let Some(_turn) = exclusive_as_root("SCHED_FIFO tasks") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = task_file(dir.path(), "over.toml", &three_tasks(last_cpu(), 28));
    let result = dir.path().join("r.json");
    let out = rtgauge()
        .args(["run", "--tasks"])
        .arg(&file)
        .args(["-d", "2s", "--warmup", "200ms", "--no-report", "--no-store"])
        .args(["--set", "taskset.allow-overload=yes", "-o"])
        .arg(&result)
        .output()
        .unwrap();
    let run_text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(2), "{run_text}");
    let slow = task_line(&run_text, "slow").expect(&run_text);
    assert!(slow.contains("does not fit"), "{slow}");
    let text = |args: &[&str]| {
        let out = rtgauge().args(args).output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let r = result.to_str().unwrap();
    for args in [vec!["show", r], vec!["show", r, "--table", "summary"]] {
        let (code, shown) = text(&args);
        assert_eq!(code, Some(0), "{shown}");
        let line = task_line(&shown, "slow").unwrap_or_else(|| panic!("{args:?}: {shown}"));
        assert_eq!(line, slow, "{args:?} says what the run said");
        // The verdict line says the run failed, as its exit status did.
        let words = shown.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            words.contains("FAILED: ") && words.contains("task slow does not fit"),
            "{args:?}: {shown}"
        );
    }
    let html = dir.path().join("r.html");
    let (code, _) = text(&["report", r, "-o", html.to_str().unwrap()]);
    assert_eq!(code, Some(0));
    let page = std::fs::read_to_string(&html).unwrap();
    // The task's line as the run printed it, its first words at least (the page escapes).
    let start: String = slow.chars().take(40).collect();
    let escaped = start
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    assert!(
        page.contains(&escaped) && page.contains("period 40ms"),
        "the report's summary holds the task block: no '{escaped}'"
    );
    let (code, lava) = text(&["show", r, "--format", "lava"]);
    assert_eq!(code, Some(2), "{lava}");
    let case = |suffix: &str| {
        lava.lines()
            .find(|l| l.contains("-slow-response-") && l.contains(suffix))
            .unwrap_or_else(|| panic!("no {suffix} case: {lava}"))
            .to_string()
    };
    assert!(case("-fits ").contains("--result fail"), "{lava}");
    assert!(
        case("-deadline_misses ").contains("--result fail --measurement"),
        "{lava}"
    );
    assert!(
        case("-fits ").contains("-slow-response-fits --result"),
        "{lava}"
    );
    for (bound, what) in [("deadline_misses = 0", "missed"), ("fits = true", "fit")] {
        let spec = dir.path().join("spec.toml");
        std::fs::write(&spec, format!("[[limit]]\nprobe = \"taskset\"\n{bound}\n")).unwrap();
        let (code, checked) = text(&["check", r, "--spec", spec.to_str().unwrap()]);
        assert_eq!(code, Some(2), "{bound}: {checked}");
        assert!(
            checked.contains("task=slow") && checked.contains(what),
            "{checked}"
        );
    }
    let store = dir.path().join("history.sqlite");
    let out = rtgauge_with_store(&store)
        .env_remove("SQUAD_TOKEN")
        .args(["submit", "squad", "http://127.0.0.1:9"])
        .args(["--group", "rt", "--project", "board", "--build", "b1"])
        .args(["--environment", "vm"])
        .arg(&result)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "no token: spooled");
    let spool = std::fs::read_dir(dir.path().join("squad-spool"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let entry = read_json(&spool);
    let failing: Vec<&String> = entry["tests"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(name, verdict)| name.contains("-slow-response-") && *verdict == "fail")
        .map(|(name, _)| name)
        .collect();
    assert_eq!(failing.len(), 2, "fits and deadline_misses fail: {entry}");
}

/// Without privileges the run cannot give the tasks their priorities: asked for rt
/// explicitly it fails in one line with the fix; left to its default it runs best effort and
/// says plainly that the verdicts do not describe the run.
#[test]
fn without_privileges_the_run_says_how_to_get_real_time() {
    let Some(dir) = nobody_workdir() else {
        return;
    };
    let _turn = exclusive();
    let file = task_file(dir.path(), "fit.toml", &three_tasks(last_cpu(), 18));
    let out = as_nobody()
        .current_dir(dir.path())
        .args(["run", "--tasks"])
        .arg(&file)
        .args(["-m", "rt", "-d", "1s", "--warmup", "100ms", "--no-report"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("fix: run as root"), "{err}");
    let out = as_nobody()
        .current_dir(dir.path())
        .args(["run", "--tasks"])
        .arg(&file)
        .args(["-d", "1s", "--warmup", "100ms", "--no-report"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("NOT REAL-TIME: the tasks ran as SCHED_OTHER"),
        "{stdout}"
    );
}

/// The preset suites' task sets are read and checked like any.
#[test]
fn preset_suites_are_valid() {
    let presets = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../presets");
    let mut checked = 0;
    for entry in std::fs::read_dir(&presets).unwrap() {
        let path = entry.unwrap().path();
        let out = rtgauge().arg("suites").arg(&path).output().unwrap();
        assert_success(&out);
        assert!(String::from_utf8_lossy(&out.stdout).contains("taskset"));
        checked += 1;
    }
    assert_eq!(checked, 4);
}

/// With `--trace`, a task's deadline misses are explained: each miss (release → completion)
/// is read from the kernel's trace, the threads carry their tasks' names, and the summary
/// says per task what ran besides the set's own tasks.
#[test]
fn traced_misses_are_read_per_task_and_named_by_task() {
    if let Some(why) = common::cannot_trace() {
        eprintln!("skipped: {why}");
        return;
    }
    let Some(_turn) = exclusive_as_root("SCHED_FIFO tasks") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = task_file(dir.path(), "over.toml", &three_tasks(last_cpu(), 28));
    let (code, stdout, result) = run_set(
        &file,
        &[
            "--set",
            "taskset.allow-overload=yes",
            "--trace",
            "--trace-max",
            "50",
        ],
    );
    assert_eq!(code, 2, "{stdout}");
    assert_eq!(result["tracing"]["active"], true, "{}", result["tracing"]);
    let deadline = response(&result, "slow")["metrics"]["deadline_ns"]
        .as_f64()
        .unwrap() as u64;
    // Misses of slow: windows longer than its deadline that slow's own thread closes.
    let spikes = result["runs"][0]["spikes"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let slow_misses: Vec<&Value> = spikes
        .iter()
        .filter(|s| s["latency_ns"].as_u64().unwrap() > deadline)
        .filter(|s| {
            let last = s["segments"].as_array().and_then(|seg| seg.last()).unwrap();
            let c = &s["contributors"][last["contributor"].as_u64().unwrap() as usize];
            c["cause"]["comm"] == "slow"
        })
        .collect();
    assert!(
        !slow_misses.is_empty(),
        "no miss of slow among {} spikes",
        spikes.len()
    );
    // The tasks above it ran in its windows, under their own names.
    assert!(
        slow_misses.iter().any(|s| s["contributors"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["cause"]["comm"] == "fast" || c["cause"]["comm"] == "middle")),
        "{slow_misses:?}"
    );
    let explained = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("slow:") && l.contains("read from the trace"))
        .unwrap_or_else(|| panic!("no explanation of slow's misses: {stdout}"));
    assert!(explained.contains("longer because of"), "{explained}");
}

/// A real-time thread of this test's own (not of the set), FIFO 95 on the tasks' CPU, running
/// 300 µs every 5 ms: the run lists it in that CPU's preemption map with its priority,
/// measures its demand (within 20 % of 300 µs per 5 ms), and the prediction of the task
/// below it includes it as a term, by name.
#[test]
fn a_platform_thread_above_the_tasks_is_mapped_measured_and_counted() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let Some(_turn) = exclusive_as_root("a SCHED_FIFO helper thread") else {
        return;
    };
    let cpu = last_cpu();
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let helper = {
        let stop = stop.clone();
        std::thread::Builder::new()
            .name("rtg-helper".into())
            .spawn(move || {
                rtgauge_os::sched::set_affinity(&[cpu]).unwrap();
                rtgauge_os::sched::set_fifo(95).unwrap();
                let mut next = rtgauge_os::clock::now_ns();
                while !stop.load(Ordering::Relaxed) {
                    let start = rtgauge_os::clock::thread_cpu_ns();
                    while rtgauge_os::clock::thread_cpu_ns() - start < 300_000 {
                        std::hint::spin_loop();
                    }
                    next += 5_000_000;
                    rtgauge_os::clock::sleep_until_once(next);
                }
            })
            .unwrap()
    };
    let dir = tempfile::tempdir().unwrap();
    let file = task_file(
        dir.path(),
        "below.toml",
        &format!(
            "[[task]]\nname = \"servo\"\nperiod = \"10ms\"\nwork = \"1ms\"\npriority = 90\ncpu = {cpu}\n"
        ),
    );
    let (_, stdout, result) = run_set(&file, &[]);
    stop.store(true, Ordering::Relaxed);
    helper.join().unwrap();
    let run = &result["runs"][0];
    let map = run["params"][format!("preemption-map-cpu{cpu}")]
        .as_str()
        .unwrap();
    let line = map
        .lines()
        .find(|l| l.contains("rtg-helper"))
        .unwrap_or_else(|| panic!("the helper is not in the map: {map}"));
    assert!(
        line.contains("FIFO 95") && line.contains("preempts every task"),
        "{line}"
    );
    let servo = response(&result, "servo");
    let m = &servo["metrics"];
    let switch = m["switch_used_ns"].as_f64().unwrap();
    let work = m["term_ns:rtg-helper"].as_f64().unwrap() - 2.0 * switch;
    let per = m["term_per_ns:rtg-helper"].as_f64().unwrap();
    println!("helper measured: {work} ns per {per} ns (switch {switch} ns)");
    assert!((240e3..=360e3).contains(&work), "{work} ns: {line}");
    assert!((4e6..=6e6).contains(&per), "{per} ns: {line}");
    assert!(
        m["predicted_wcrt_ns"].as_f64().unwrap() >= 1e6 + work,
        "{stdout}"
    );
    let servo_line = task_line(&stdout, "servo").expect(&stdout);
    assert!(servo_line.contains("+ rtg-helper"), "{servo_line}");
}

/// A planted overload the analysis cannot know of: a FIFO 95 thread of this test's own on the
/// tasks' CPU sleeps through the platform's measurement, then takes the CPU 30 ms of every
/// 100 ms. The task above the planner then misses: no line, no verdict and no `fits` metric
/// says it fits, its line says "predicted to fit, but …" first, and the verdict names it
/// first (before the planner, whose maximum is the largest of the run).
#[test]
fn a_task_that_missed_is_never_said_to_fit() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let Some(_turn) = exclusive_as_root("a SCHED_FIFO helper thread") else {
        return;
    };
    let cpu = last_cpu();
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let burst = {
        let stop = stop.clone();
        std::thread::Builder::new()
            .name("rtg-burst".into())
            .spawn(move || {
                rtgauge_os::sched::set_affinity(&[cpu]).unwrap();
                rtgauge_os::sched::set_fifo(95).unwrap();
                // Past the run's platform and overhead measurement (about 0.5 s).
                let mut next = rtgauge_os::clock::now_ns() + 1_500_000_000;
                rtgauge_os::clock::sleep_until_once(next);
                while !stop.load(Ordering::Relaxed) {
                    let start = rtgauge_os::clock::now_ns();
                    while rtgauge_os::clock::now_ns() - start < 30_000_000 {
                        std::hint::spin_loop();
                    }
                    next += 100_000_000;
                    rtgauge_os::clock::sleep_until_once(next);
                }
            })
            .unwrap()
    };
    let dir = tempfile::tempdir().unwrap();
    let file = task_file(
        dir.path(),
        "planted.toml",
        &format!(
            "[[task]]\nname = \"servo\"\nperiod = \"10ms\"\nwork = \"1ms\"\npriority = 90\ncpu = {cpu}\n\n\
             [[task]]\nname = \"planner\"\nperiod = \"200ms\"\nwork = \"20ms\"\npriority = 10\ncpu = {cpu}\n"
        ),
    );
    let (code, stdout, result) = run_set(&file, &[]);
    stop.store(true, Ordering::Relaxed);
    burst.join().unwrap();
    let servo = response(&result, "servo");
    assert_eq!(servo["metrics"]["predicted_fits"], 1.0, "{stdout}");
    assert!(
        servo["counters"]["deadline_misses"].as_u64().unwrap() > 0,
        "{stdout}"
    );
    assert_eq!(code, 2, "{stdout}");
    for task in ["servo", "planner"] {
        let s = response(&result, task);
        let missed = s["counters"]["deadline_misses"].as_u64().unwrap() > 0;
        let beyond = s["stats"]["max_ns"].as_f64().unwrap()
            > s["metrics"]["predicted_wcrt_ns"].as_f64().unwrap();
        if missed || beyond {
            assert_eq!(s["metrics"]["fits"], 0.0, "{task}: {stdout}");
            let line = stdout
                .lines()
                .find(|l| l.trim_start().starts_with(&format!("{task}:")))
                .unwrap();
            assert!(line.contains(": predicted to fit, but"), "{line}");
            assert!(!line.contains("fits"), "{line}");
        }
    }
    let verdict = task_line(&stdout, "verdict").unwrap();
    // The verdict leads with the failures and names each task once.
    assert!(
        verdict.starts_with("verdict: task set: ")
            && verdict.contains("FAILED: ")
            && verdict.contains("task servo was predicted to fit but missed")
            && verdict.matches("servo").count() == 1,
        "{verdict}"
    );
}
