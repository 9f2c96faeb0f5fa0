//! Adding a probe takes one file and one registration line: this file is such a probe
//! (`countdown`, which times a busy loop of N steps), registered with one line and run through
//! the normal path (plan → runner → result document), typed parameters and all. A built-in
//! probe is the same file in `crates/rtgauge-probes/src/` and its line in `BUILT_IN` there.

mod common;

use rtgauge_core::clock::now_ns;
use rtgauge_core::plan;
use rtgauge_core::probe::{
    About, ParamSpec, Params, ProbeConfig, ProbeContext, ProbeError, ProbeOutput, TypedProbe,
};
use rtgauge_core::threads::{on_first_cpu, warm_up};
use rtgauge_result::{ProbeStatus, Series};
use rtgauge_stats::{Recorder, DEFAULT_INTERVAL_NS};
use std::collections::BTreeMap;

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
    let result = common::run(&common::one_probe_plan(request));
    let run = &result.runs[0];
    assert_eq!(run.probe, "countdown");
    assert_eq!(run.status, ProbeStatus::Ok);
    assert_eq!(run.params["steps"], "200");
    assert_eq!(run.series[0].stats.count, 50);
    assert!(rtgauge_core::registry::names().contains("countdown"));
}
