//! Running a plan of one probe request through the runner, as `rtgauge run` does.

use rtgauge_core::live::LiveBoard;
use rtgauge_core::plan::{Plan, ProbeRequest};
use rtgauge_core::rt::Mode;
use rtgauge_core::runner::{self, RunInputs, RunObserver};
use rtgauge_result::RunResult;
use std::sync::Arc;

struct Quiet;
impl RunObserver for Quiet {}

/// A plan of `request` alone: normal mode, no load, the first online CPU, best effort.
pub fn one_probe_plan(request: ProbeRequest) -> Plan {
    Plan {
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
    }
}

/// Runs `plan` to its result document.
pub fn run(plan: &Plan) -> RunResult {
    let scratch = tempfile::tempdir().unwrap();
    let inputs = RunInputs {
        command_line: vec!["test".into()],
        live: Arc::new(LiveBoard::default()),
        scratch_dir: scratch.path().to_path_buf(),
        exe: std::env::current_exe().unwrap(),
        record_stem: None,
    };
    runner::execute(plan, &inputs, &mut Quiet).unwrap()
}
