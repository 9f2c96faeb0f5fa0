use super::discover::discover;
use super::*;

fn parse(pairs: &[(&str, &str)]) -> Result<Config, ProbeError> {
    Config::parse(&Params::of(PROBE, pairs))
}

#[test]
fn profiles_and_limits_are_read_and_recorded_as_given() {
    let c = parse(&[("profile", "telecom")]).unwrap();
    assert_eq!(
        c.limit,
        Some(Limit {
            ns: 30,
            profile: Some("telecom")
        })
    );
    assert_eq!(recorded_limit(&c.resolved()), c.limit);
    let c = parse(&[("limit", "1500ns")]).unwrap();
    assert_eq!(
        c.limit,
        Some(Limit {
            ns: 1_500,
            profile: None
        })
    );
    assert_eq!(c.resolved()["limit"], "1500ns");
    assert_eq!(recorded_limit(&c.resolved()), c.limit);
    assert_eq!(parse(&[]).unwrap().limit, None);
    let names: Vec<&str> = PROFILES.iter().map(|p| p.0).collect();
    assert_eq!(names, PROFILE_NAMES);
}

#[test]
fn bad_input_is_refused_in_one_line() {
    let cases: [(&[(&str, &str)], &str); 8] = [
        (
            &[("profile", "space")],
            "unknown profile 'space'; accepted: telecom (30ns)",
        ),
        (&[("limit", "fast")], "limit"),
        (
            &[("limit", "0")],
            "parameter limit: '0' is not a positive duration",
        ),
        (&[("limit", "1us"), ("profile", "telecom")], "not both"),
        (&[("interval", "10ms")], "shorter than 100ms"),
        (&[("timeout", "1ms")], "shorter than 10ms"),
        (&[("chrony", "chronyd.sock")], "not an absolute path"),
        (&[("ptp-domain", "300")], "0 to 255"),
    ];
    for (pairs, expected) in cases {
        let e = parse(pairs).unwrap_err().to_string();
        assert!(e.contains(expected), "{pairs:?}: {e}");
        assert!(!e.contains('\n'), "{e}");
    }
}

fn reading(offset: i64, locked: bool, state: &str) -> Reading {
    Reading {
        offset_ns: Some(offset),
        locked,
        state: state.into(),
        sources: vec![("s".into(), locked)],
        ..Reading::default()
    }
}

#[test]
fn a_track_counts_lock_losses_state_changes_and_polls_over_the_limit() {
    let limit = Some(Limit {
        ns: 1_000,
        profile: None,
    });
    let mut t = Track::new(DEFAULT_INTERVAL_NS);
    t.add(Ok(reading(-500, true, "a")), 0, limit);
    t.add(Ok(reading(-1_500, true, "a")), 1, limit);
    t.add(Ok(reading(2_000, false, "b")), 2, limit);
    t.add(Err("hung".into()), 3, limit);
    t.add(Ok(reading(10, true, "a")), 4, limit);
    assert_eq!((t.polls, t.failed, t.over_limit), (5, 1, 2));
    assert_eq!(t.lock_losses, 1);
    assert_eq!(t.state_changes, 3);
    assert_eq!(t.source_losses, 1);
    assert_eq!(t.first_failure.as_deref(), Some("hung"));
    let series = t.series("chrony", "default");
    let o = &series[0];
    assert_eq!(o.stats.count, 4);
    assert_eq!(o.metrics["offset_min_ns"], -1_500.0);
    assert_eq!(o.metrics["offset_max_ns"], 2_000.0);
    assert_eq!(o.counters["lock_losses"], 1);
}

#[test]
fn without_a_reference_the_probe_is_skipped_saying_what_it_looked_for() {
    let cfg = parse(&[("chrony", "off"), ("ptp4l", "off"), ("phc", "off")]).unwrap();
    match discover(&cfg) {
        Err(ProbeError::Unavailable(reason)) => {
            assert!(reason.contains("no synchronisation reference"), "{reason}")
        }
        other => panic!("{:?}", other.map(|r| r.0.len())),
    }
}

#[test]
fn a_device_that_cannot_be_opened_fails_its_polls_with_the_reason() {
    let cfg = parse(&[
        ("chrony", "off"),
        ("ptp4l", "off"),
        ("phc", "/dev/ptp-none"),
    ])
    .unwrap();
    let (mut refs, left_out) = discover(&cfg).unwrap();
    assert!(left_out.is_empty());
    let e = refs[0].poll(&cfg, Path::new("/tmp/unused")).unwrap_err();
    assert!(e.contains("/dev/ptp-none cannot be opened"), "{e}");
}
