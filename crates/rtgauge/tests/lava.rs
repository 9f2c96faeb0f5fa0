//! rtgauge in a LAVA lab: `show --format lava` printed outside LAVA and run through
//! `lava-test-case` inside it, and the test definition contrib/lava/rtgauge.yaml: checked
//! with LAVA's own schema (Debian's lava-common) and its run steps executed by a real shell,
//! as LAVA's test shell runs them, against the freshly built binary, with stand-ins for
//! `lava-test-case` and `lava-test-set` that record their arguments.
//!
//! The schema tests need Debian's lava-common (`/usr/bin/python3` with `lava_common`); they
//! skip with the reason unless RTGAUGE_LAB=1, which CI sets (.ci/run installs it).

mod common;

use common::{assert_success, rtgauge};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../rtgauge-report/tests/fixtures")
        .join(name)
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A directory of stand-ins for LAVA's `lava-test-case` and `lava-test-set`: each appends its
/// name and arguments, one line per call, to `record`.
fn stand_ins(dir: &Path, record: &Path) -> PathBuf {
    let bin = dir.join("lava-bin");
    std::fs::create_dir_all(&bin).unwrap();
    for name in ["lava-test-case", "lava-test-set"] {
        let script = format!("#!/bin/sh\necho \"{name} $*\" >> '{}'\n", record.display());
        let path = bin.join(name);
        std::fs::write(&path, script).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    bin
}

/// A PATH without any `lava-test-case` (only the system's directories).
const PLAIN_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

#[test]
fn outside_lava_the_test_cases_are_printed() {
    let out = rtgauge()
        .env("PATH", PLAIN_PATH)
        .args(["show", "--format", "lava"])
        .arg(fixture("idle.json"))
        .output()
        .unwrap();
    assert_success(&out);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("lava-test-set start cyclic-normal\n"),
        "{text}"
    );
    assert!(
        text.contains("lava-test-case cyclic-rt-cpu0-latency-max --result pass --measurement 110.300 --units us\n"),
        "{text}"
    );
    assert!(
        text.contains("lava-test-case ioport-rt --result skip\n"),
        "{text}"
    );
    let starts = text.matches("lava-test-set start").count();
    assert_eq!(starts, text.matches("lava-test-set stop").count());
    assert_eq!(starts, 4, "one test set per probe run");
}

#[test]
fn a_spec_fails_its_cases_and_the_exit_status() {
    let out = rtgauge()
        .env("PATH", PLAIN_PATH)
        .args(["show", "--format", "lava", "--spec"])
        .arg(fixture("spec.toml"))
        .arg(fixture("loaded.json"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "a limit failed: exit 2 as check"
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("lava-test-case cyclic-rt-cpu0-latency-max --result fail --measurement 175.950 --units us"),
        "{text}"
    );
    assert!(
        text.contains("lava-test-case limit4-ioport --result fail"),
        "{text}"
    );
    // The spec is the only judge: what it does not bound passes.
    assert!(text.contains("cyclic-rt-cpu0-latency-median --result pass"));
}

#[test]
fn a_baseline_judges_as_check_does() {
    let out = rtgauge()
        .env("PATH", PLAIN_PATH)
        .args(["show", "--format", "lava", "--baseline"])
        .arg(fixture("idle.json"))
        .arg(fixture("loaded.json"))
        .output()
        .unwrap();
    let check = rtgauge()
        .args(["check", "--baseline"])
        .arg(fixture("idle.json"))
        .arg(fixture("loaded.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), check.status.code());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("cyclic-rt-cpu0-latency-max --result fail"),
        "{text}"
    );
}

#[test]
fn judging_without_lava_format_is_refused_with_the_fix() {
    let out = rtgauge()
        .args(["show", "--spec"])
        .arg(fixture("spec.toml"))
        .arg(fixture("loaded.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("rtgauge check"), "{err}");
}

#[test]
fn inside_lava_every_line_goes_through_lava_test_case() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("calls");
    let bin = stand_ins(dir.path(), &record);
    let printed = rtgauge()
        .env("PATH", PLAIN_PATH)
        .args(["show", "--format", "lava"])
        .arg(fixture("loaded.json"))
        .output()
        .unwrap();
    let out = rtgauge()
        .env("PATH", format!("{}:{PLAIN_PATH}", bin.display()))
        .args(["show", "--format", "lava"])
        .arg(fixture("loaded.json"))
        .output()
        .unwrap();
    assert_success(&out);
    assert!(
        out.stdout.is_empty(),
        "inside LAVA nothing is printed twice"
    );
    let calls = std::fs::read_to_string(&record).unwrap();
    assert_eq!(calls, String::from_utf8(printed.stdout).unwrap());
}

fn lab_tests_enabled(what: &str) -> bool {
    if std::env::var("RTGAUGE_LAB").as_deref() == Ok("1") {
        return true;
    }
    let ready = std::process::Command::new("/usr/bin/python3")
        .args(["-c", "import lava_common.schemas, yaml"])
        .status()
        .is_ok_and(|s| s.success());
    if !ready {
        eprintln!(
            "skipped: {what} needs Debian's lava-common (apt-get install lava-common); set RTGAUGE_LAB=1 to require it (CI does)"
        );
    }
    ready
}

fn python(script: &str, args: &[&Path]) -> std::process::Output {
    std::process::Command::new("/usr/bin/python3")
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn the_test_definition_passes_lavas_schema() {
    if !lab_tests_enabled("the test definition's schema check") {
        return;
    }
    let definition = repo().join("contrib/lava/rtgauge.yaml");
    let out = python(
        "import sys, yaml\n\
         from lava_common.schemas.test import testdef\n\
         data = yaml.safe_load(open(sys.argv[1]))\n\
         testdef.validate(data)\n\
         assert data['metadata']['format'] == 'Lava-Test Test Definition 1.0'\n\
         assert set(data['metadata']['scope']) >= {'performance', 'preempt-rt'}\n\
         for p in ['PROBES', 'SUITE', 'DURATION', 'MODE', 'LOAD', 'CPUS', 'SPEC', 'BASELINE', 'ARTIFACTS']:\n\
         \x20   assert p in data['params'], p\n\
         print('valid')",
        &[&definition],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A definition LAVA would refuse is caught: the check is not one that cannot fail.
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("broken.yaml");
    let text = std::fs::read_to_string(&definition).unwrap();
    std::fs::write(
        &broken,
        text.replace(
            "Lava-Test Test Definition 1.0",
            "Lava-Test Test Definition 2",
        ),
    )
    .unwrap();
    let out = python(
        "import sys, yaml\nfrom lava_common.schemas.test import testdef\ntestdef.validate(yaml.safe_load(open(sys.argv[1])))",
        &[&broken],
    );
    assert!(!out.status.success());
}

#[test]
fn the_job_in_the_guide_passes_lavas_job_schema() {
    if !lab_tests_enabled("the guide's LAVA job check") {
        return;
    }
    let guide = std::fs::read_to_string(repo().join("docs/labs.md")).unwrap();
    let start = guide
        .find("```yaml\njob_name:")
        .expect("docs/labs.md holds a LAVA job (```yaml starting with job_name:)");
    let job = &guide[start + "```yaml\n".len()..];
    let job = &job[..job.find("```").unwrap()];
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("job.yaml");
    std::fs::write(&path, job).unwrap();
    let out = python(
        "import sys, yaml\n\
         from lava_common.schemas import validate\n\
         data = yaml.safe_load(open(sys.argv[1]))\n\
         validate(data, strict=True)\n\
         tests = [a['test'] for a in data['actions'] if 'test' in a]\n\
         assert any(d['path'] == 'contrib/lava/rtgauge.yaml' for t in tests for d in t['definitions'])",
        &[&path],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_definitions_steps_measure_and_report_through_lava_test_case() {
    if !lab_tests_enabled("running the test definition's steps") {
        return;
    }
    // The definition's directory as LAVA checks it out, with the binary shipped beside it.
    let dir = tempfile::tempdir().unwrap();
    let checkout = dir.path().join("checkout");
    let lava = checkout.join("contrib/lava");
    std::fs::create_dir_all(lava.join("bin")).unwrap();
    for f in ["rtgauge.yaml", "rtgauge-lava.sh"] {
        std::fs::copy(repo().join("contrib/lava").join(f), lava.join(f)).unwrap();
    }
    let arch = std::env::consts::ARCH;
    std::os::unix::fs::symlink(
        assert_cmd::cargo::cargo_bin("rtgauge"),
        lava.join(format!("bin/rtgauge-{arch}")),
    )
    .unwrap();
    // The run script as LAVA's test shell writes it: the parameters' defaults as shell
    // variables (the job's values override them), then the steps, from the checkout.
    let script = dir.path().join("run.sh");
    let out = python(
        "import sys, yaml, shlex\n\
         d = yaml.safe_load(open(sys.argv[1]))\n\
         params = dict(d['params'])\n\
         params.update(PROBES='cyclic', DURATION='1s', MODE='normal', CPUS='0')\n\
         lines = ['###default parameters from test definition###']\n\
         lines += ['%s=%s' % (k, shlex.quote(str(v))) for k, v in params.items()]\n\
         lines += d['run']['steps']\n\
         open(sys.argv[2], 'w').write('\\n'.join(lines) + '\\n')",
        &[&lava.join("rtgauge.yaml"), &script],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let record = dir.path().join("calls");
    let bin = stand_ins(dir.path(), &record);
    let out = std::process::Command::new("/bin/sh")
        .arg(&script)
        .current_dir(&checkout)
        .env("PATH", format!("{}:{PLAIN_PATH}", bin.display()))
        .env("RTGAUGE_NO_STORE", "1")
        .env("OUTPUT", dir.path().join("output"))
        .output()
        .unwrap();
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{log}");
    let calls = std::fs::read_to_string(&record).unwrap_or_default();
    assert!(
        calls.contains("lava-test-case rtgauge-binary --result pass\n"),
        "{calls}\n{log}"
    );
    assert!(
        calls.contains("lava-test-case rtgauge-run --result pass\n"),
        "{calls}\n{log}"
    );
    assert!(
        calls.contains("lava-test-set start cyclic-normal\n"),
        "{calls}"
    );
    assert!(
        calls.contains("lava-test-set stop cyclic-normal\n"),
        "{calls}"
    );
    // The measurement LAVA receives is the result document's, to the nanosecond.
    let result: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("output/result.json")).unwrap())
            .unwrap();
    let latency = result["runs"][0]["series"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "latency" && s["labels"]["cpu"] == "0")
        .expect("latency on CPU 0");
    let max_ns = latency["stats"]["max_ns"].as_u64().unwrap();
    let line = format!(
        "lava-test-case cyclic-normal-cpu0-latency-max --result pass --measurement {:.3} --units us\n",
        max_ns as f64 / 1000.0
    );
    assert!(calls.contains(&line), "{line} not in\n{calls}");
    let overruns = latency["counters"]["overruns"].as_u64().unwrap();
    assert!(calls.contains(&format!(
        "lava-test-case cyclic-normal-cpu0-latency-overruns --result pass --measurement {overruns} --units count\n"
    )));
}

#[test]
fn run_lava_reports_the_fresh_result() {
    let dir = tempfile::tempdir().unwrap();
    let result = dir.path().join("r.json");
    let out = rtgauge()
        .env("PATH", PLAIN_PATH)
        .args(["run", "cyclic", "-m", "normal", "-c", "0", "-d", "300ms"])
        .args(["--warmup", "100ms", "-q", "--no-report", "--lava", "-o"])
        .arg(&result)
        .output()
        .unwrap();
    assert_success(&out);
    let text = String::from_utf8(out.stdout).unwrap();
    let shown = rtgauge()
        .env("PATH", PLAIN_PATH)
        .args(["show", "--format", "lava"])
        .arg(&result)
        .output()
        .unwrap();
    // The same cases as `show --format lava` of the written result.
    assert!(
        text.contains(&String::from_utf8(shown.stdout).unwrap()),
        "{text}"
    );
    assert!(
        text.contains("lava-test-case cyclic-normal-cpu0-latency-max --result pass --measurement ")
    );
}
