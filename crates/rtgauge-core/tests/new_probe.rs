//! Adding a probe takes one file and one registration line: this file is such a probe
//! (`countdown`, which times a busy loop of N steps), registered with one line and run through
//! the normal path (plan → runner → result document), typed parameters and all. A built-in
//! probe is the same file in `crates/rtgauge-probes/src/` and its line in `BUILT_IN` there.

use rtgauge_core::clock::now_ns;
use rtgauge_core::live::LiveBoard;
use rtgauge_core::plan::{self, Plan};
use rtgauge_core::probe::{
    About, ParamSpec, Params, ProbeConfig, ProbeContext, ProbeError, ProbeOutput, TypedProbe,
};
use rtgauge_core::rt::Mode;
use rtgauge_core::runner::{self, RunInputs, RunObserver};
use rtgauge_core::threads::{on_first_cpu, warm_up};
use rtgauge_result::{ProbeStatus, Series};
use rtgauge_stats::{Recorder, DEFAULT_INTERVAL_NS};
use std::collections::BTreeMap;
use std::sync::Arc;

struct Countdown;

#[derive(Debug, Clone, PartialEq)]
struct Steps(u64);

impl ProbeConfig for Steps {
    fn parse(params: &Params) -> Result<Steps, ProbeError> {
        Ok(Steps(params.count("steps", 1000)?))
    }

    fn resolved(&self) -> BTreeMap<String, String> {
        BTreeMap::from([("steps".into(), self.0.to_string())])
    }
}

impl TypedProbe for Countdown {
    const ABOUT: About = About::new(
        "countdown",
        "time of a busy loop of N steps (a test fixture)",
        &[ParamSpec::new("steps", "1000", "steps per sample")],
    );
    type Config = Steps;

    fn measure(&self, ctx: &ProbeContext, cfg: &mut Steps) -> Result<ProbeOutput, ProbeError> {
        let steps = cfg.0;
        let count = || {
            for i in 0..steps {
                std::hint::black_box(i);
            }
        };
        let (obtained, recorder) = on_first_cpu(Self::ABOUT.name, ctx, |_, _| {
            warm_up(ctx, ctx.warmup_ns, 1, count);
            let mut recorder = Recorder::new(DEFAULT_INTERVAL_NS);
            let start = now_ns();
            while !ctx.budget.done(start, now_ns(), recorder.count()) && !ctx.stopped() {
                let t0 = now_ns();
                count();
                let t1 = now_ns();
                recorder.record(t1 - t0, t1 - start);
            }
            Ok(recorder)
        })?;
        Ok(ProbeOutput {
            series: vec![Series::new("countdown", recorder.summary())],
            obtained,
            ..ProbeOutput::default()
        })
    }
}

struct Quiet;
impl RunObserver for Quiet {}

#[test]
fn a_probe_in_one_file_registered_with_one_line_runs_through_the_runner() {
    rtgauge_core::registry::register(&Countdown);

    let budget = rtgauge_core::probe::Budget {
        duration_ns: None,
        loops: Some(50),
    };
    let params = BTreeMap::from([("steps".to_string(), "200".to_string())]);
    let request = plan::request("countdown", None, params, budget, 1_000_000).unwrap();
    let bad = plan::request(
        "countdown",
        None,
        BTreeMap::from([("step".to_string(), "1".to_string())]),
        budget,
        0,
    );
    assert!(bad
        .unwrap_err()
        .to_string()
        .contains("known parameters: steps"));
    let plan = Plan {
        suite: None,
        probes: vec![request],
        modes: vec![Mode::normal()],
        loads: vec![rtgauge_load::LoadSpec::none()],
        load_cpus: Vec::new(),
        load_disk_cap_bytes: 0,
        skip_failed_loads: false,
        cpus: vec![rtgauge_sysinfo::online_cpus()[0]],
        best_effort: true,
        priority: rtgauge_core::rt::DEFAULT_PRIORITY,
        record: Vec::new(),
        spikes: Default::default(),
    };
    let scratch = tempfile::tempdir().unwrap();
    let inputs = RunInputs {
        command_line: vec!["test".into()],
        live: Arc::new(LiveBoard::default()),
        scratch_dir: scratch.path().to_path_buf(),
        exe: std::env::current_exe().unwrap(),
        record_stem: None,
    };
    let result = runner::execute(&plan, &inputs, &mut Quiet).unwrap();
    let run = &result.runs[0];
    assert_eq!(run.probe, "countdown");
    assert_eq!(run.status, ProbeStatus::Ok);
    assert_eq!(run.params["steps"], "200");
    assert_eq!(run.series[0].stats.count, 50);
    assert!(rtgauge_core::registry::names().contains("countdown"));
}
