//! A probe's parameters are parsed once, by the plan: the runner hands the probe the typed
//! configuration the plan made and parses nothing again.

use rtgauge_core::live::LiveBoard;
use rtgauge_core::plan::{self, Plan};
use rtgauge_core::probe::{
    About, Budget, ParamSpec, Params, ProbeConfig, ProbeContext, ProbeError, ProbeOutput,
    TypedProbe,
};
use rtgauge_core::rt::Mode;
use rtgauge_core::runner::{self, RunInputs, RunObserver};
use rtgauge_result::{ProbeStatus, Series};
use rtgauge_stats::{Recorder, DEFAULT_INTERVAL_NS};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

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

struct Quiet;
impl RunObserver for Quiet {}

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
    let plan = Plan {
        suite: None,
        probes: vec![request],
        modes: vec![Mode::normal()],
        loads: vec![rtgauge_load::LoadSpec::none()],
        load_cpus: Vec::new(),
        load_disk_cap_bytes: 0,
        skip_failed_loads: false,
        cpus: vec![rtgauge_os::cpus::online_cpus()[0]],
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
    assert_eq!(run.status, ProbeStatus::Ok);
    assert_eq!(run.series[0].stats.max_ns, Some(1234));
    assert_eq!(run.params["value"], "1234");
    assert_eq!(
        PARSES.load(Ordering::SeqCst),
        parsed_by_the_plan,
        "the runner parsed the parameters again"
    );
}
