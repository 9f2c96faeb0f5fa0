//! The catalogue of probes.

pub mod alloc;
pub mod clocks;
pub mod cyclic;
pub mod ioport;
pub mod memop;
pub mod primitive;
pub mod response;
pub mod switch;

use crate::probe::Probe;

/// Every probe, in the order suites and listings show them.
pub fn all() -> Vec<&'static dyn Probe> {
    vec![
        &cyclic::Cyclic,
        &response::Response,
        &switch::Switch,
        &primitive::Primitive,
        &alloc::Alloc,
        &memop::Memop,
        &clocks::ClockProbe,
        &ioport::IoPort,
    ]
}

/// Looks a probe up by name.
pub fn find(name: &str) -> Option<&'static dyn Probe> {
    all().into_iter().find(|p| p.name() == name)
}

/// Names of all probes, for error messages.
pub fn names() -> String {
    all()
        .iter()
        .map(|p| p.name())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn help(probe: &str, key: &str) -> &'static str {
        find(probe)
            .unwrap()
            .parameters()
            .iter()
            .find(|p| p.name == key)
            .unwrap_or_else(|| panic!("{probe} has no parameter {key}"))
            .help
    }

    /// The parameter help lists accepted values by hand; this keeps it in step with the
    /// lists the probes really accept.
    #[test]
    fn parameter_help_names_every_accepted_value() {
        let lists: [(&str, &str, &[&str]); 8] = [
            ("cyclic", "timer", &cyclic::TIMERS),
            ("response", "sources", &response::SOURCES),
            ("response", "placement", &response::PLACEMENTS),
            ("switch", "via", &switch::MECHANISMS),
            ("switch", "placement", &switch::PLACEMENTS),
            ("primitive", "ops", &primitive::OPERATIONS),
            ("alloc", "allocators", &alloc::ALLOCATORS),
            ("clock", "clocks", &clocks::CLOCKS),
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
