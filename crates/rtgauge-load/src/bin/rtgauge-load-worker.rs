//! A stand-in for the rtgauge binary, for this crate's tests and for trying loads by hand.
//!
//! - `rtgauge-load-worker __load-worker ...`: a load worker, as `rtgauge __load-worker ...`.
//! - `rtgauge-load-worker run SECONDS SPEC [SCRATCH_ROOT]`: runs one load for SECONDS and prints
//!   its report as JSON.
//! - `rtgauge-load-worker harness SCRATCH_ROOT SPEC...`: starts the loads, prints
//!   `ready PID...` and waits to be killed (the hygiene tests SIGKILL it).
//! - `rtgauge-load-worker harness-thread SCRATCH_ROOT SPEC...`: the same, but the loads are
//!   started by a thread that exits at once, as a measuring program's worker thread might.

use std::io::Write;
use std::time::Duration;

use rtgauge_load::{worker_main, LoadOptions, LoadSpec, RunningLoad, WORKER_ARG};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let code = match args.get(1).map(String::as_str) {
        Some(WORKER_ARG) => worker_main(&args[2..]),
        Some("run") => run(&args[2..]),
        Some("harness") => harness(&args[2..], false),
        Some("harness-thread") => harness(&args[2..], true),
        _ => {
            eprintln!("usage: rtgauge-load-worker run SECONDS SPEC [SCRATCH_ROOT] | harness SCRATCH_ROOT SPEC...");
            2
        }
    };
    std::process::exit(code);
}

fn options(scratch: Option<&String>) -> Result<LoadOptions, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this binary: {e}"))?;
    let mut opts = LoadOptions::new(exe);
    if let Some(dir) = scratch {
        opts.scratch_dir = dir.into();
    }
    Ok(opts)
}

fn run(args: &[String]) -> i32 {
    let (Some(secs), Some(spec)) = (args.first(), args.get(1)) else {
        eprintln!("usage: rtgauge-load-worker run SECONDS SPEC [SCRATCH_ROOT]");
        return 2;
    };
    let result = (|| -> Result<String, String> {
        let secs: f64 = secs.parse().map_err(|_| format!("bad SECONDS `{secs}`"))?;
        let spec: LoadSpec = spec.parse().map_err(|e| format!("{e}"))?;
        let opts = options(args.get(2))?;
        let t0 = std::time::Instant::now();
        let load = RunningLoad::start(&spec, &opts).map_err(|e| e.to_string())?;
        let t1 = std::time::Instant::now();
        std::thread::sleep(Duration::from_secs_f64(secs));
        let t2 = std::time::Instant::now();
        let report = load.stop();
        eprintln!("started in {:?}, stopped in {:?}", t1 - t0, t2.elapsed());
        serde_json::to_string_pretty(&report).map_err(|e| e.to_string())
    })();
    match result {
        Ok(json) => {
            println!("{json}");
            0
        }
        Err(e) => {
            eprintln!("error: {e}");
            1
        }
    }
}

fn harness(args: &[String], from_thread: bool) -> i32 {
    let Some(root) = args.first() else {
        eprintln!("usage: rtgauge-load-worker harness SCRATCH_ROOT SPEC...");
        return 2;
    };
    let opts = match options(Some(root)) {
        Ok(opts) => opts,
        Err(e) => {
            eprintln!("error: {e}");
            return 1;
        }
    };
    let specs = args[1..].to_vec();
    let start_all = move || -> Result<Vec<RunningLoad>, String> {
        let mut loads = Vec::new();
        for text in &specs {
            let spec = text.parse::<LoadSpec>().map_err(|e| e.to_string())?;
            loads.push(RunningLoad::start(&spec, &opts).map_err(|e| e.to_string())?);
        }
        Ok(loads)
    };
    let started = if from_thread {
        std::thread::spawn(start_all)
            .join()
            .unwrap_or_else(|_| Err("the starting thread panicked".to_string()))
    } else {
        start_all()
    };
    let loads = match started {
        Ok(loads) => loads,
        Err(e) => {
            println!("error {e}");
            return 1;
        }
    };
    let pids: Vec<String> = loads
        .iter()
        .flat_map(|l| l.pids())
        .map(|p| p.to_string())
        .collect();
    println!("ready {}", pids.join(" "));
    let _ = std::io::stdout().flush();
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}
