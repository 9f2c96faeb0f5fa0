//! The plan built from suites, flags and `--set`, with the built-in probes registered.

use rtgauge_core::plan::*;
use rtgauge_core::probe::Budget;
use rtgauge_core::rt::Mode;
use std::collections::BTreeMap;

#[test]
fn builtin_suites_parse_and_validate() {
    rtgauge_probes::register_built_in();
    for (name, _) in BUILTIN_SUITES {
        let suite = load_suite(name).unwrap();
        let reqs = suite_requests(
            &suite,
            Budget {
                duration_ns: Some(1),
                loops: None,
            },
            0,
        )
        .unwrap();
        assert!(!reqs.is_empty(), "{name}");
    }
}

#[test]
fn suite_parameters_reach_the_probe() {
    rtgauge_probes::register_built_in();
    let suite: SuiteFile = toml::from_str(
        "name = \"t\"\nduration = \"2s\"\n[[probe]]\nname = \"cyclic\"\nperiod = \"250us\"\ntimer = \"timerfd\"\n",
    )
    .unwrap();
    let reqs = suite_requests(
        &suite,
        Budget {
            duration_ns: None,
            loops: None,
        },
        0,
    )
    .unwrap();
    assert_eq!(reqs[0].params["period"], "250us");
    assert_eq!(reqs[0].budget.duration_ns, Some(2_000_000_000));
}

#[test]
fn bad_suites_say_what_is_wrong() {
    rtgauge_probes::register_built_in();
    assert!(matches!(
        load_suite("nope"),
        Err(PlanError::UnknownSuite(_))
    ));
    let suite: SuiteFile =
        toml::from_str("name = \"t\"\n[[probe]]\nname = \"cyclic\"\nperiod = \"0\"\n").unwrap();
    let e = suite_requests(
        &suite,
        Budget {
            duration_ns: Some(1),
            loops: None,
        },
        0,
    )
    .unwrap_err();
    assert!(e.to_string().contains("period"), "{e}");
}

fn requests_of(text: &str) -> Result<Vec<ProbeRequest>, PlanError> {
    let suite: SuiteFile = toml::from_str(text).unwrap();
    suite_requests(
        &suite,
        Budget {
            duration_ns: Some(1),
            loops: None,
        },
        0,
    )
}

#[test]
fn one_probe_twice_in_a_suite_needs_variants() {
    rtgauge_probes::register_built_in();
    let reqs = requests_of(
        "name = \"t\"\n[[probe]]\nname = \"cyclic\"\nvariant = \"1ms\"\n[[probe]]\nname = \"cyclic\"\nvariant = \"100us\"\nperiod = \"100us\"\n",
    )
    .unwrap();
    let titles: Vec<String> = reqs.iter().map(ProbeRequest::title).collect();
    assert_eq!(titles, ["cyclic@1ms", "cyclic@100us"]);
    assert!(reqs[1].is_selected_by("cyclic") && reqs[1].is_selected_by("cyclic@100us"));
    assert!(!reqs[1].is_selected_by("cyclic@1ms"));

    let e = requests_of(
        "name = \"t\"\n[[probe]]\nname = \"cyclic\"\n[[probe]]\nname = \"cyclic\"\nperiod = \"100us\"\n",
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("'cyclic' is planned twice") && e.contains("variant"),
        "{e}"
    );

    let e = requests_of("name = \"t\"\n[[probe]]\nname = \"cyclic\"\nvariant = \"a.b\"\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("cyclic@a.b") && e.contains("letters, digits"),
        "{e}"
    );
}

/// Every check a suite gets, in the order `build` applies them.
fn suite_problem(text: &str) -> String {
    let mut suite: SuiteFile = toml::from_str(text).unwrap();
    suite.origin = "my.toml".into();
    suite_problem_of(&suite)
}

fn suite_problem_of(suite: &SuiteFile) -> String {
    let fallback = Budget {
        duration_ns: Some(1),
        loops: None,
    };
    suite_requests(suite, fallback, 0)
        .and_then(|_| suite_modes(suite))
        .and_then(|_| suite_loads(suite))
        .map(|_| String::new())
        .unwrap_or_else(|e| e.to_string())
}

const CYCLIC: &str = "[[probe]]\nname = \"cyclic\"\n";

/// Each problem a suite can have, with the start of its message (file, then key).
#[test]
fn suite_problems_are_refused_naming_the_file_and_key() {
    rtgauge_probes::register_built_in();
    let cases = [
        (
            "modes = [\"bogus\"]\n{CYCLIC}",
            "suite my.toml: modes: 'bogus' is not a mode; use normal, rt or deadline",
        ),
        (
            "loads = [\"bogus\"]\n{CYCLIC}",
            "suite my.toml: loads: invalid load `bogus`",
        ),
        (
            "{CYCLIC}[mixes]\noffice = [\"cpu\", \"bogus\"]\n",
            "suite my.toml: mixes.office: invalid load `bogus`",
        ),
        (
            "loads = [\"office\"]\n{CYCLIC}[mixes]\noffice = [\"office\"]\n",
            "suite my.toml: mixes.office: a mix cannot contain itself",
        ),
        ("", "suite my.toml: no [[probe]] entry"),
        (
            "loops = 0\n{CYCLIC}",
            "suite my.toml: loops: 0 samples measures nothing",
        ),
        (
            "{CYCLIC}loops = 0\n",
            "suite my.toml: probe cyclic: loops: 0 samples",
        ),
    ];
    for (body, expected) in cases {
        let text = format!("name = \"t\"\n{}", body.replace("{CYCLIC}", CYCLIC));
        let e = suite_problem(&text);
        assert!(e.starts_with(expected), "{text}\n→ {e}");
    }
}

#[test]
fn suite_with_mixes_modes_and_loads_is_accepted() {
    rtgauge_probes::register_built_in();
    let e = suite_problem(&format!("name = \"t\"\nmodes = [\"normal\", \"rt\"]\nloads = [\"none\", \"office\"]\n{CYCLIC}[mixes]\noffice = [\"cpu\", \"io+net\"]\n"));
    assert_eq!(e, "");
}

use proptest::strategy::Strategy as _;

proptest::proptest! {
    /// Hostile suite files (any mix of known and unknown keys and values, broken TOML) are
    /// refused in one line, never with a panic.
    #[test]
    fn any_suite_text_is_accepted_or_refused_in_one_line(
        lines in proptest::sample::subsequence(
            vec![
                "[[probe]]", "name = \"cyclic\"", "name = \"bogus\"",
                "loops = 0", "loops = 18446744073709551615", "loops = -1", "duration = \"0s\"",
                "duration = \"1e400s\"", "warmup = \"\"", "modes = [\"rt\", \"fast\"]",
                "modes = []", "loads = [\"cpu\", \"office\"]", "loads = [\"\"]",
                "[mixes]", "office = [\"office\"]", "office = [\"io+net\", \"exec:\"]",
                "variant = \"a.b\"", "variant = \"x\"", "period = \"5us\"",
                "period = \"18446744073709551615s\"", "sizes = [1, \"4KiB\"]", "=", "[",
                "\u{0}", "name = 1",
            ],
            0..12,
        ).prop_shuffle()
    ) {
        rtgauge_probes::register_built_in();
        let text = format!("name = \"t\"\n{}", lines.join("\n"));
        let Ok(mut suite) = toml::from_str::<SuiteFile>(&text) else {
            return Ok(());
        };
        suite.origin = "fuzz.toml".into();
        let e = suite_problem_of(&suite);
        proptest::prop_assert!(!e.contains('\n'), "{}", e);
    }
}

#[test]
fn mode_names_round_trip() {
    rtgauge_probes::register_built_in();
    for m in ModeName::ALL {
        assert_eq!(m.name().parse::<ModeName>(), Ok(m));
    }
    assert!("fast".parse::<ModeName>().is_err());
}

#[test]
fn a_mode_independent_probe_runs_in_the_first_mode_only() {
    rtgauge_probes::register_built_in();
    let options = PlanOptions {
        probes: vec!["cyclic".into(), "timerlat".into()],
        modes: vec![ModeName::Normal, ModeName::Rt],
        ..PlanOptions::default()
    };
    let plan = build(&options, &[0]).unwrap();
    let names = |mode: &Mode| plan.probes_in(mode).map(|r| r.name).collect::<Vec<_>>();
    assert_eq!(names(&plan.modes[0]), ["cyclic", "timerlat"]);
    assert_eq!(names(&plan.modes[1]), ["cyclic"]);
}

#[test]
fn built_plan_applies_flags_over_the_suite() {
    rtgauge_probes::register_built_in();
    let options = PlanOptions {
        probes: vec!["cyclic".into()],
        loops: Some(5),
        modes: vec![ModeName::Normal],
        settings: vec!["cyclic.period=250us".into()],
        ..PlanOptions::default()
    };
    let plan = build(&options, &[0, 1]).unwrap();
    assert_eq!(plan.probes.len(), 1);
    assert_eq!(plan.probes[0].params["period"], "250us");
    assert_eq!(plan.probes[0].budget.loops, Some(5));
    assert_eq!(plan.modes, vec![Mode::normal()]);
    assert_eq!(plan.cpus, vec![0, 1]);

    let cyclic_with = |settings: &str, record: &str| {
        let options = PlanOptions {
            probes: vec!["cyclic".into()],
            settings: vec![settings.into()],
            record: vec![record.into()],
            ..PlanOptions::default()
        };
        build(&options, &[0]).unwrap_err().to_string()
    };
    let e = cyclic_with("nokey=1", "cyclic");
    assert!(
        e.starts_with("--set nokey=1: no selected probe takes parameter 'nokey'"),
        "{e}"
    );
    let e = cyclic_with("period=1ms", "switch");
    assert!(e.contains("not part of this run"), "{e}");
}

#[test]
fn the_period_flag_reaches_every_periodic_probe_and_the_deadline_mode() {
    rtgauge_probes::register_built_in();
    let options = PlanOptions {
        probes: vec!["cyclic".into(), "response".into()],
        period_ns: Some(1_234_567),
        modes: vec![ModeName::Deadline],
        ..PlanOptions::default()
    };
    let plan = build(&options, &[0]).unwrap();
    for r in &plan.probes {
        assert_eq!(r.params.duration_ns("period", 0).unwrap(), 1_234_567);
        assert_eq!(r.params["period"], "1234567ns", "{}", r.name);
    }
    let rtgauge_core::rt::Policy::Deadline { period_ns, .. } = plan.modes[0].policy else {
        panic!("{:?}", plan.modes[0]);
    };
    assert_eq!(period_ns, 1_234_567);
    // --set comes after --period and wins for the probe it names.
    let options = PlanOptions {
        settings: vec!["cyclic.period=250us".into()],
        ..options
    };
    let plan = build(&options, &[0]).unwrap();
    assert_eq!(plan.probes[0].params["period"], "250us");
    assert_eq!(plan.probes[1].params["period"], "1234567ns");
    // Out of a probe's range, the flag is refused before anything runs.
    let options = PlanOptions {
        probes: vec!["cyclic".into()],
        period_ns: Some(20_000_000_000),
        ..PlanOptions::default()
    };
    let e = build(&options, &[0]).unwrap_err().to_string();
    assert!(e.contains("outside 10us..10s"), "{e}");
}

#[test]
fn selectors_split_at_the_variant() {
    rtgauge_probes::register_built_in();
    assert_eq!(split_selector("cyclic"), ("cyclic", None));
    assert_eq!(split_selector("cyclic@100us"), ("cyclic", Some("100us")));
}

#[test]
fn suite_mixes_expand_in_place() {
    rtgauge_probes::register_built_in();
    let mixes = BTreeMap::from([("office".to_string(), vec!["cpu".into(), "io+net".into()])]);
    assert_eq!(expand_mixes("none,office", &mixes), "none,cpu,io+net");
    assert_eq!(expand_mixes("none", &mixes), "none");
}

#[test]
fn settings_split() {
    rtgauge_probes::register_built_in();
    assert_eq!(
        parse_setting("cyclic.period=25us"),
        Ok((Some("cyclic".into()), "period".into(), "25us".into()))
    );
    assert!(parse_setting("period").is_err());
}
