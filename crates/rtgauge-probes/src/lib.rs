//! rtgauge's built-in probes, one file (or folder) each, written against the probe interface
//! of `rtgauge-core` (`TypedProbe`). The core knows none of them: the binary calls
//! [`register_built_in`] at start, and plans, the runner and listings find them by name.

pub mod alloc;
pub mod app;
pub mod clocks;
pub mod clocksync;
pub mod cyclic;
pub mod ioport;
pub mod memop;
pub mod names;
pub mod noise;
pub mod primitive;
pub mod response;
pub mod switch;
pub mod taskset;
pub mod taskset_rows;
pub mod timerlat;

use rtgauge_core::probe::Probe;
use rtgauge_report::summary::SummaryRows;

/// A built-in probe and how its runs read in the summary at the end of a run (and atop `show`
/// and the report): its [`SummaryRows`], beside its measuring; without them, its series with
/// the highest maxima.
#[derive(Clone, Copy)]
pub struct BuiltIn {
    pub probe: &'static dyn Probe,
    pub summary: Option<&'static dyn SummaryRows>,
}

impl BuiltIn {
    /// A probe that says itself how its runs read in the summary.
    const fn summarised<P: Probe + SummaryRows>(probe: &'static P) -> BuiltIn {
        BuiltIn {
            probe,
            summary: Some(probe),
        }
    }

    /// A probe whose runs read in the summary by `rows`.
    const fn with_rows(probe: &'static dyn Probe, rows: &'static dyn SummaryRows) -> BuiltIn {
        BuiltIn {
            probe,
            summary: Some(rows),
        }
    }

    /// A probe shown in the summary by its series with the highest maxima.
    const fn plain(probe: &'static dyn Probe) -> BuiltIn {
        BuiltIn {
            probe,
            summary: None,
        }
    }
}

/// The built-in probes, in the order suites and listings show them. A new probe is one file
/// in this crate (implementing [`rtgauge_core::probe::TypedProbe`]) and one line here.
pub const BUILT_IN: [BuiltIn; 13] = [
    BuiltIn::summarised(&cyclic::Cyclic),
    BuiltIn::with_rows(&response::Response, &response::SUMMARY_ROWS),
    BuiltIn::with_rows(&switch::Switch, &switch::SUMMARY_ROWS),
    BuiltIn::summarised(&primitive::Primitive),
    BuiltIn::summarised(&alloc::Alloc),
    BuiltIn::summarised(&memop::Memop),
    BuiltIn::summarised(&clocks::ClockProbe),
    BuiltIn::summarised(&clocksync::ClockSync),
    BuiltIn::plain(&ioport::IoPort),
    BuiltIn::summarised(&noise::Noise),
    BuiltIn::plain(&timerlat::Timerlat),
    BuiltIn::plain(&app::App),
    BuiltIn::with_rows(&taskset::TaskSetProbe, &taskset_rows::SUMMARY_ROWS),
];

/// Why a run failed the limits its probes were given (a task set's missed deadlines, a clock
/// beyond its offset limit), one line each: the program prints them and exits 2.
pub fn threshold_failures(run: &rtgauge_result::ProbeRun) -> Vec<String> {
    let mut out = taskset::failures(run);
    out.extend(clocksync::failures(run));
    out
}

/// Whether the limits probes were given held, one phrase per probe run that had one
/// (`clocksync limit 1µs: held`), for the verdict line.
pub fn limit_outcomes(result: &rtgauge_result::RunResult) -> Vec<String> {
    result
        .runs
        .iter()
        .filter_map(clocksync::limit_outcome)
        .collect()
}

/// Registers every built-in probe with the core's registry, in [`BUILT_IN`]'s order, and
/// their summary rows with the renderer. Call it before building a plan or rendering a
/// summary; calling it again changes nothing.
pub fn register_built_in() {
    for built_in in BUILT_IN {
        rtgauge_core::registry::register(built_in.probe);
    }
    for rows in BUILT_IN.iter().filter_map(|b| b.summary) {
        rtgauge_report::summary::register(rows);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all() -> Vec<&'static dyn Probe> {
        BUILT_IN.iter().map(|b| b.probe).collect()
    }

    /// Every constant of [`names`] is the name of a built-in probe, in `BUILT_IN`'s order
    /// (today every built-in probe has one; a new probe needs one only when code outside
    /// this crate must name it).
    #[test]
    fn every_name_in_names_is_a_built_in_probe() {
        let listed = [
            names::CYCLIC,
            names::RESPONSE,
            names::SWITCH,
            names::PRIMITIVE,
            names::ALLOC,
            names::MEMOP,
            names::CLOCK,
            names::IOPORT,
            names::NOISE,
            names::TIMERLAT,
            names::APP,
            names::TASKSET,
        ];
        let built_in: Vec<&str> = BUILT_IN.iter().map(|b| b.probe.name()).collect();
        let in_order: Vec<&str> = built_in
            .iter()
            .copied()
            .filter(|n| listed.contains(n))
            .collect();
        assert_eq!(in_order, listed);
    }

    fn find(name: &str) -> Option<&'static dyn Probe> {
        all().into_iter().find(|p| p.name() == name)
    }

    fn help(probe: &str, key: &str) -> &'static str {
        find(probe)
            .unwrap()
            .parameters()
            .iter()
            .find(|p| p.name == key)
            .unwrap_or_else(|| panic!("{probe} has no parameter {key}"))
            .help
    }

    /// A probe's summary rows are found by its name: rows under another name would leave the
    /// probe shown by its highest maxima.
    #[test]
    fn summary_rows_are_registered_under_their_probes_name() {
        let summarised: Vec<(&str, &str)> = BUILT_IN
            .iter()
            .filter_map(|b| Some((b.probe.name(), b.summary?.probe())))
            .collect();
        assert_eq!(summarised.len(), 10, "{summarised:?}");
        for (probe, rows) in summarised {
            assert_eq!(probe, rows);
        }
    }

    /// The parameter help lists accepted values by hand; this keeps it in step with the
    /// lists the probes really accept.
    #[test]
    fn parameter_help_names_every_accepted_value() {
        let lists: [(&str, &str, &[&str]); 11] = [
            ("cyclic", "timer", &cyclic::TIMERS),
            ("response", "sources", &response::SOURCES),
            ("response", "placement", &response::PLACEMENTS),
            ("switch", "via", &switch::MECHANISMS),
            ("switch", "placement", &switch::PLACEMENTS),
            ("primitive", "ops", &primitive::OPERATIONS),
            ("alloc", "allocators", &alloc::ALLOCATORS),
            ("clock", "clocks", &clocks::CLOCKS),
            ("clocksync", "profile", &clocksync::PROFILE_NAMES),
            ("noise", "clock", &noise::CLOCKS),
            ("taskset", "overhead", &taskset::FIGURES),
        ];
        for (probe, key, accepted) in lists {
            let text = help(probe, key);
            for value in accepted {
                assert!(
                    text.contains(value),
                    "{probe}.{key} help lacks {value}: {text}"
                );
            }
        }
        for value in alloc::SCENARIOS {
            assert!(help("alloc", "scenarios").contains(value));
        }
        for value in memop::OPS {
            assert!(help("memop", "ops").contains(value));
        }
    }

    use proptest::prelude::*;
    use proptest::strategy::ValueTree;
    use rtgauge_core::probe::Params;
    use std::collections::BTreeMap;

    /// Every list of names some parameter accepts, so generated values can pick from them.
    fn accepted_names() -> Vec<&'static str> {
        [
            &cyclic::TIMERS[..],
            &response::SOURCES,
            &response::PLACEMENTS,
            &switch::MECHANISMS,
            &primitive::OPERATIONS,
            &alloc::ALLOCATORS,
            &alloc::SCENARIOS,
            &memop::OPS,
            &clocks::CLOCKS,
            &clocksync::PROFILE_NAMES,
            &taskset::FIGURES,
        ]
        .concat()
    }

    /// Values of every form a parameter takes: durations and sizes in every unit (exact and
    /// not), whole numbers, yes/no, GPIO lines, and lists of accepted names.
    fn any_value() -> impl Strategy<Value = String> {
        let names = accepted_names();
        prop_oneof![
            (1u64..20_000_000_000).prop_map(|n| format!("{n}ns")),
            (1u64..20_000_000).prop_map(|n| format!("{n}us")),
            (1u64..20_000).prop_map(|n| format!("{n}ms")),
            (1u64..30).prop_map(|n| format!("{n}s")),
            (1u64..1 << 26).prop_map(|n| format!("{n}B")),
            (1u64..1 << 26).prop_map(|n| n.to_string()),
            (1u64..20_000).prop_map(|n| n.to_string()),
            (1u64..4096).prop_map(|n| format!("{n}KiB")),
            (1u64..64).prop_map(|n| format!("{n}MiB")),
            Just("0".to_string()),
            // A task set given inline, as a suite gives it.
            Just(
                "[[task]]\nname = \"t\"\nperiod = \"1ms\"\nwork = \"100us\"\npriority = 10\n"
                    .to_string()
            ),
            prop::sample::select(vec!["yes", "no", "on", "off", "all"]).prop_map(String::from),
            (0u32..64).prop_map(|n| format!("/dev/gpiochip0:{n}")),
            prop::sample::subsequence(names.clone(), 1..4).prop_map(|v| v.join(",")),
            prop::collection::vec((1u64..1 << 20).prop_map(|n| format!("{n}B")), 1..4)
                .prop_map(|v| v.join(",")),
        ]
    }

    fn resolve(
        probe: &dyn Probe,
        values: BTreeMap<String, String>,
    ) -> Option<BTreeMap<String, String>> {
        probe.resolve(&Params::new(probe.name(), values)).ok()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// The resolved parameters a result records re-parse to themselves: what was
        /// measured is what the result says, and a run can be repeated from it exactly.
        #[test]
        fn every_accepted_parameter_value_survives_resolve_and_reparse(
            probe_index in 0usize..16,
            key_index in 0usize..16,
            value in any_value(),
            with_gpio_pair in any::<bool>(),
        ) {
            let probe = all()[probe_index % all().len()];
            let specs = probe.parameters();
            prop_assume!(!specs.is_empty());
            let key = specs[key_index % specs.len()].name;
            let mut given = BTreeMap::from([(key.to_string(), value.clone())]);
            if with_gpio_pair && key.starts_with("gpio-") {
                given.insert("gpio-out".into(), value.clone());
                given.insert("gpio-in".into(), value);
            }
            if let Some(resolved) = resolve(probe, given) {
                prop_assert_eq!(resolve(probe, resolved.clone()), Some(resolved));
            }
        }
    }

    #[test]
    fn exact_values_are_recorded_as_given() {
        let one = |probe: &str, key: &str, value: &str| {
            let probe = find(probe).unwrap();
            resolve(
                probe,
                BTreeMap::from([(key.to_string(), value.to_string())]),
            )
            .unwrap()[key]
                .clone()
        };
        assert_eq!(one("cyclic", "period", "1234567ns"), "1234567ns");
        assert_eq!(one("response", "period", "1234567ns"), "1234567ns");
        assert_eq!(one("memop", "sizes", "3000B,3001B"), "3000B,3001B");
        assert_eq!(one("alloc", "sizes", "3001B,4KiB"), "3001B,4KiB");
        assert_eq!(one("primitive", "shm-size", "3001"), "3001B");
        assert_eq!(one("clock", "window", "1500us"), "1500us");
        assert_eq!(one("cyclic", "stagger", "0"), "0");
    }

    /// The property above is only as good as its values: each parameter must accept some.
    #[test]
    fn every_parameter_accepts_some_generated_value() {
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let values: Vec<String> = (0..4000)
            .map(|_| any_value().new_tree(&mut runner).unwrap().current())
            .collect();
        for probe in all() {
            for spec in probe.parameters() {
                let accepted = values.iter().any(|v| {
                    let mut given = BTreeMap::from([(spec.name.to_string(), v.clone())]);
                    if spec.name.starts_with("gpio-") {
                        given.insert("gpio-out".into(), v.clone());
                        given.insert("gpio-in".into(), v.clone());
                    }
                    resolve(probe, given).is_some()
                });
                assert!(
                    accepted,
                    "{}.{} accepts none of the generated values",
                    probe.name(),
                    spec.name
                );
            }
        }
    }

    /// What probes share lives in rtgauge-core's `probe`, `threads` and `sys`, so that each probe is one
    /// file (or folder) that can be read, changed or removed alone.
    #[test]
    fn no_probe_imports_another_probe() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let modules = [
            "alloc",
            "clocks",
            "clocksync",
            "cyclic",
            "ioport",
            "memop",
            "noise",
            "primitive",
            "response",
            "switch",
            "taskset",
        ];
        let mut files = vec![
            dir.join("primitive/mod.rs"),
            dir.join("primitive/ops.rs"),
            dir.join("taskset/mod.rs"),
            dir.join("taskset/analysis.rs"),
            dir.join("taskset/spec.rs"),
            dir.join("taskset/rtapp.rs"),
            dir.join("clocksync/mod.rs"),
            dir.join("clocksync/summary.rs"),
        ];
        files.extend(modules.iter().map(|m| dir.join(format!("{m}.rs"))));
        for file in files.iter().filter(|f| f.exists()) {
            let text = std::fs::read_to_string(file).unwrap();
            for other in modules {
                for path in [format!("super::{other}"), format!("probes::{other}")] {
                    assert!(!text.contains(&path), "{} uses {path}", file.display());
                }
            }
        }
        assert!(files.iter().filter(|f| f.exists()).count() >= 9);
    }

    #[test]
    fn parameter_names_are_unique_per_probe() {
        for p in all() {
            let mut names: Vec<_> = p.parameters().iter().map(|s| s.name).collect();
            names.sort_unstable();
            names.dedup();
            assert_eq!(names.len(), p.parameters().len(), "{}", p.name());
        }
    }
}
