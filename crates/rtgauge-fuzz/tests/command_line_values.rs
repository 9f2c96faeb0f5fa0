//! Values typed on the command line (durations, sizes, CPU lists, `--set`): refused in one
//! line, never a panic, an abort or a huge allocation.

use proptest::prelude::*;
use rtgauge_fuzz::*;

/// A refused value is one line and not echoed whole; the command line adds the flag's name
/// (`--cpus: …`), and the message names the part that is wrong (`CPU 9 is not online`).
fn check(outcome: Result<impl Sized, String>, _input: &str) -> Result<(), TestCaseError> {
    if let Err(message) = outcome {
        check_refusal(&message, "")?;
    }
    Ok(())
}

#[test]
fn the_corpus_values_are_read_or_refused() {
    for (name, bytes) in corpus("values") {
        for line in String::from_utf8(bytes).unwrap().lines() {
            let outcome = match name.as_str() {
                "durations.txt" => rtgauge_result::units::parse_duration_ns(line)
                    .map(|_| ())
                    .map_err(|e| e.to_string()),
                "sizes.txt" => rtgauge_result::units::parse_size(line)
                    .map(|_| ())
                    .map_err(|e| e.to_string()),
                _ => rtgauge_core::cpus::parse_cpus(line, &[0, 1]).map(|_| ()),
            };
            check(outcome, line).unwrap_or_else(|e| panic!("{name}: {line:?}: {e}"));
        }
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn durations_and_sizes_are_read_or_refused_in_one_line(text in hostile_value_text()) {
        for (what, parse) in [
            ("parse_duration_ns", rtgauge_result::units::parse_duration_ns as fn(&str) -> _),
            ("parse_size", rtgauge_result::units::parse_size),
        ] {
            let input = text.clone();
            let outcome = within(what, move || parse(&input).map_err(|e| e.to_string()))?;
            check(outcome, &text)?;
        }
    }

    #[test]
    fn cpu_lists_are_read_or_refused_without_allocating(text in hostile_cpu_list()) {
        let input = text.clone();
        let outcome = within("parse_cpus", move || {
            rtgauge_core::cpus::parse_cpus(&input, &[0, 1, 2, 3])
        })?;
        if let Ok(cpus) = &outcome {
            prop_assert!(cpus.iter().all(|c| *c < 4), "{cpus:?}");
        }
        check(outcome, &text)?;
    }

    #[test]
    fn settings_are_read_or_refused_in_one_line(text in "\\PC{0,40}") {
        let input = text.clone();
        let outcome = within("parse_setting", move || rtgauge_core::plan::parse_setting(&input))?;
        check(outcome, &text)?;
    }
}

/// The core's command-line parsers (CPU list, `--set`, mode) quote a long bad value briefly
/// instead of echoing all of it back.
#[test]
fn long_cpu_lists_settings_and_modes_are_not_echoed_whole() {
    let long = "x".repeat(100_000);
    check(rtgauge_core::cpus::parse_cpus(&long, &[0]), &long).unwrap();
    check(rtgauge_core::plan::parse_setting(&long), &long).unwrap();
    check(
        long.parse::<rtgauge_core::plan::ModeName>()
            .map_err(|e| e.to_string()),
        &long,
    )
    .unwrap();
}
