//! A probe's parameters are parsed once, by the plan: the runner hands the probe the typed
//! configuration the plan made and parses nothing again.

mod common;

use rtgauge_core::plan;
use rtgauge_core::probe::{
    About, Budget, ParamSpec, Params, ProbeConfig, ProbeContext, ProbeError, ProbeOutput,
    TypedProbe,
};
use rtgauge_result::{ProbeStatus, Series};
use rtgauge_stats::{Recorder, DEFAULT_INTERVAL_NS};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};

static PARSES: AtomicUsize = AtomicUsize::new(0);

#[derive(Debug, Clone)]
struct Value(u64);

impl ProbeConfig for Value {
    fn parse(params: &Params) -> Result<Value, ProbeError> {
        PARSES.fetch_add(1, Ordering::SeqCst);
        Ok(Value(params.count("value", 7)?))
    }

    fn resolved(&self) -> BTreeMap<String, String> {
        BTreeMap::from([("value".into(), self.0.to_string())])
    }
}

/// Records its configured value once: what reaches `measure` is what the plan parsed.
struct Echo;

impl TypedProbe for Echo {
    const ABOUT: About = About::new(
        "echo-config",
        "records its configured value (a test fixture)",
        &[ParamSpec::new("value", "7", "the value recorded")],
    );
    type Config = Value;

    fn measure(&self, _: &ProbeContext, cfg: &mut Value) -> Result<ProbeOutput, ProbeError> {
        let mut recorder = Recorder::new(DEFAULT_INTERVAL_NS);
        recorder.record(cfg.0, 0);
        Ok(ProbeOutput {
            series: vec![Series::new("value", recorder.summary())],
            ..ProbeOutput::default()
        })
    }
}

#[test]
fn the_runner_measures_with_the_configuration_the_plan_parsed() {
    rtgauge_core::registry::register(&Echo);
    let budget = Budget {
        duration_ns: None,
        loops: Some(1),
    };
    let params = BTreeMap::from([("value".to_string(), "1234".to_string())]);
    let request = plan::request("echo-config", None, params, budget, 0).unwrap();
    let parsed_by_the_plan = PARSES.load(Ordering::SeqCst);
    assert!(parsed_by_the_plan >= 1);
    let result = common::run(&common::one_probe_plan(request));
    let run = &result.runs[0];
    assert_eq!(run.status, ProbeStatus::Ok);
    assert_eq!(run.series[0].stats.max_ns, Some(1234));
    assert_eq!(run.params["value"], "1234");
    assert_eq!(
        PARSES.load(Ordering::SeqCst),
        parsed_by_the_plan,
        "the runner parsed the parameters again"
    );
}
