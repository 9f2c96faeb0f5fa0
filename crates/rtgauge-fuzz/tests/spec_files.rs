//! Spec files (`rtgauge check --spec`): whatever the file says, it is refused in one line
//! naming the file and line, or checks a real result without a panic.

use proptest::prelude::*;
use rtgauge_fuzz::*;
use rtgauge_report::Spec;
use std::path::Path;

fn parse(text: String) -> Result<(), TestCaseError> {
    let outcome = within("parsing a spec", move || {
        let spec = Spec::parse(&text, Path::new("limits.toml"))?;
        let result = rtgauge_result::read_result(&corpus_path("result", "idle.json"))
            .expect("corpus result");
        let _ = rtgauge_report::check_result(&result, &spec);
        Ok::<(), rtgauge_report::SpecError>(())
    })?;
    if let Err(e) = outcome {
        check_refusal(&e.to_string(), "limits.toml")?;
    }
    Ok(())
}

/// One `[[limit]]` with hostile keys and values.
fn hostile_spec() -> impl Strategy<Value = String> {
    let key = word_or(
        &[
            "max",
            "median",
            "p99",
            "p101",
            "p99.9999999",
            "p0",
            "overruns",
            "probe",
            "mode",
            "series",
        ],
        "[a-z0-9_.]{1,12}",
    );
    let value = prop_oneof![
        hostile_value_text().prop_map(|v| format!("{v:?}")),
        any::<i64>().prop_map(|n| n.to_string()),
        Just("1e400".to_string()),
        Just("{ cpu = 1 }".to_string()),
        Just("[]".to_string()),
    ];
    proptest::collection::vec(proptest::collection::vec((key, value), 0..6), 0..4).prop_map(
        |limits| {
            let mut text = String::new();
            for limit in limits {
                text += "[[limit]]\n";
                for (k, v) in limit {
                    text += &format!("{k:?} = {v}\n");
                }
            }
            text
        },
    )
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn damaged_spec_files_are_refused_in_one_line(bytes in damaged_corpus_file("spec")) {
        parse(String::from_utf8_lossy(&bytes).into_owned())?;
    }

    #[test]
    fn hostile_specs_are_refused_in_one_line(text in hostile_spec()) {
        parse(text)?;
    }
}

/// Found by the hostile-spec property test: a long value of the wrong type was echoed whole.
#[test]
fn a_long_value_of_the_wrong_type_is_not_echoed_whole() {
    let text = format!("[[limit]]\n\"overruns\" = \"{}\"\n", "7".repeat(2000));
    parse(text).unwrap();
}
