//! The user's load text: accepted forms, one-line errors, the catalogue.

use rtgauge_load::{catalogue, expand, parse_list, LoadSpec};

#[test]
fn bad_specs_give_one_short_line_pointing_at_the_load_list() {
    for text in ["bogus", "cpu:0", "exec:"] {
        let err = text.parse::<LoadSpec>().unwrap_err().to_string();
        assert!(!err.contains('\n'), "{err}");
        assert!(err.contains(&format!("`{text}`")), "{err}");
        assert!(err.contains("`rtgauge loads`") && err.len() < 160, "{err}");
        println!("{err}");
    }
}

#[test]
fn the_catalogue_lists_every_load_and_they_parse() {
    let loads = catalogue();
    let names: Vec<&str> = loads.iter().map(|l| l.name).collect();
    for name in [
        "none",
        "cpu",
        "syscall",
        "memory",
        "rt-memory",
        "messaging",
        "io",
        "net",
        "compile",
        "exec:CMD",
        "all",
    ] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    for load in &loads {
        assert!(!load.stresses.is_empty());
        if let Err(reason) = &load.available {
            assert!(!reason.contains('\n'), "{reason}");
        }
        if load.name != "exec:CMD" {
            load.name.parse::<LoadSpec>().unwrap();
        }
    }
}

#[test]
fn all_expands_to_every_builtin_load() {
    let specs = expand(&parse_list("none,all,exec:true").unwrap());
    let names: Vec<String> = specs.iter().map(LoadSpec::name).collect();
    assert_eq!(names.first().map(String::as_str), Some("none"));
    assert_eq!(names.last().map(String::as_str), Some("exec:true"));
    assert_eq!(names.len(), 10, "{names:?}");
}
