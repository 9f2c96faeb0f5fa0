//! chronyd, asked through its own client: `chronyc -c -n -m tracking sources` (CSV, numeric),
//! bounded by the probe's timeout.
//!
//! Why the client and not the command socket's binary protocol: chronyc's CSV output is meant
//! for scripts, while the packets are chrony's internal protocol, versioned with chrony;
//! chronyc also finds the daemon the way its users do
//! (the UNIX socket for root, UDP 127.0.0.1:323 otherwise, where read-only reports are
//! allowed to any user).
//!
//! Sign conventions: `offset` is the local clock minus the reference (chronyc's "System time",
//! the offset chrony is still correcting, negated: chrony says "slow" for a positive value);
//! `frequency_ppb` is how fast the local oscillator runs against the reference without
//! correction (chrony's "Frequency", positive "fast"). The error bound is chrony's documented
//! one: |system time| + root dispersion + root delay / 2.

use super::Reading;
use std::path::Path;

/// The client's arguments: CSV, numeric, two reports in one call; a socket path when given.
pub fn args(socket: Option<&Path>) -> Vec<String> {
    let mut a: Vec<String> = ["-c", "-n", "-m"].map(String::from).to_vec();
    if let Some(path) = socket {
        a.push("-h".into());
        a.push(path.display().to_string());
    }
    a.extend(["tracking", "sources"].map(String::from));
    a
}

/// A failure of chronyc with what to do about it: a command socket that is not there (no
/// chronyd serves it); one that is, refused to a user (chronyd's command socket is root's and
/// chrony's group's, while its read-only reports are open to everyone over UDP 127.0.0.1:323).
pub fn explain(error: String, socket: Option<&Path>, root: bool) -> String {
    let Some(path) = socket else {
        return error;
    };
    if !error.contains("Could not open connection") {
        return error;
    }
    if !path.exists() {
        return format!(
            "{error} ({} does not exist: is chronyd running, with bindcmdaddress {0}?)",
            path.display()
        );
    }
    if !root {
        return format!(
            "{error} (the command socket is root's: run as root, or leave chrony=auto to ask chronyd over UDP 127.0.0.1:323)"
        );
    }
    error
}

fn number(field: &str, what: &str) -> Result<f64, String> {
    field
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| format!("chronyc's {what} is not a number: '{}'", field.trim()))
}

fn ns(seconds: f64) -> i64 {
    (seconds * 1e9).round() as i64
}

/// A `tracking` line and the `sources` lines of `chronyc -c`, as one reading.
pub fn parse(text: &str) -> Result<Reading, String> {
    let lines: Vec<Vec<&str>> = text.lines().map(|l| l.split(',').collect()).collect();
    let tracking = lines
        .iter()
        .find(|f| f.len() == 14 && f[0].len() == 8 && u32::from_str_radix(f[0], 16).is_ok())
        .ok_or_else(|| {
            let first = text.lines().next().unwrap_or("nothing").trim();
            format!("chronyc gave no tracking report (it printed: {first})")
        })?;
    let system_time = number(tracking[4], "system time")?;
    let last_offset = number(tracking[5], "last offset")?;
    let rms_offset = number(tracking[6], "RMS offset")?;
    let freq_ppm = number(tracking[7], "frequency")?;
    let skew_ppm = number(tracking[9], "skew")?;
    let root_delay = number(tracking[10], "root delay")?;
    let root_dispersion = number(tracking[11], "root dispersion")?;
    let stratum = number(tracking[2], "stratum")?;
    let leap = tracking[13].trim();
    let mut sources = Vec::new();
    let mut selected = None;
    for f in lines
        .iter()
        .filter(|f| f.len() == 10 && ["^", "=", "#"].contains(&f[0]))
    {
        let reach = u32::from_str_radix(f[5].trim(), 8).unwrap_or(0);
        let state = f[1].trim();
        sources.push((f[2].trim().to_string(), reach != 0 && state != "?"));
        if state == "*" {
            selected = Some(f[2].trim().to_string());
        }
    }
    let synchronised = leap != "Not synchronised" && tracking[0] != "00000000";
    let state = match &selected {
        Some(name) => format!("{leap}, selected {name}"),
        None if sources.is_empty() => format!("{leap}, no source configured"),
        None => format!("{leap}, no source selected"),
    };
    Ok(Reading {
        offset_ns: Some(-ns(system_time)),
        path_delay_ns: Some(ns(root_delay / 2.0)),
        frequency_ppb: Some(freq_ppm * 1e3),
        width_ns: None,
        locked: synchronised && selected.is_some(),
        state,
        port_state: None,
        sources,
        figures: vec![
            ("last_offset_ns", last_offset * 1e9),
            ("rms_offset_ns", rms_offset * 1e9),
            ("skew_ppb", skew_ppm * 1e3),
            ("root_delay_ns", root_delay * 1e9),
            ("root_dispersion_ns", root_dispersion * 1e9),
            (
                "error_bound_ns",
                (system_time.abs() + root_dispersion + root_delay / 2.0) * 1e9,
            ),
            ("stratum", stratum),
        ],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Recorded from chronyd 4.3 with `-x`, its server 127.0.0.1 configured `offset 0.005`.
    const LOCKED: &str = "7F000001,127.0.0.1,2,1795854927.997751162,0.004998628,-0.000000026,0.000000144,0.064,-0.002,0.138,0.000005672,0.000000912,0.3,Normal\n^,*,127.0.0.1,1,-2,377,0,0.000000100,0.000000074,0.000003092\n";
    /// The same chronyd three seconds after its server stopped.
    const LOST: &str = "7F000001,127.0.0.1,2,1795854939.162966098,0.004998645,0.000000002,0.000000021,0.008,0.000,0.016,0.000005722,0.000003590,0.3,Normal\n^,?,127.0.0.1,1,0,0,3,0.000000160,0.000000162,0.000003021\n";

    #[test]
    fn a_locked_client_reads_as_its_offset_delay_frequency_and_bound() {
        let r = parse(LOCKED).unwrap();
        assert_eq!(r.offset_ns, Some(-4_998_628));
        assert_eq!(r.path_delay_ns, Some(2_836));
        assert!((r.frequency_ppb.unwrap() - 64.0).abs() < 1e-9);
        assert!(r.locked);
        assert_eq!(r.state, "Normal, selected 127.0.0.1");
        assert_eq!(r.sources, [("127.0.0.1".to_string(), true)]);
        let bound = r
            .figures
            .iter()
            .find(|f| f.0 == "error_bound_ns")
            .unwrap()
            .1;
        assert!(
            (bound - (4_998_628.0 + 912.0 + 2_836.0)).abs() < 1.0,
            "{bound}"
        );
    }

    #[test]
    fn a_source_that_stopped_answering_is_no_lock() {
        let r = parse(LOST).unwrap();
        assert!(!r.locked);
        assert_eq!(r.state, "Normal, no source selected");
        assert_eq!(r.sources, [("127.0.0.1".to_string(), false)]);
    }

    #[test]
    fn an_unsynchronised_daemon_is_no_lock() {
        let text = "00000000,,0,0.000000000,0.000000000,0.000000000,0.000000000,0.000,0.000,0.000,1.000000000,1.000000000,0.0,Not synchronised\n";
        let r = parse(text).unwrap();
        assert!(!r.locked);
        assert_eq!(r.state, "Not synchronised, no source configured");
    }

    #[test]
    fn garbage_is_refused_with_what_was_printed() {
        let e = parse("506 Cannot talk to daemon\n").unwrap_err();
        assert!(e.contains("no tracking report") && e.contains("506"), "{e}");
        let bad = LOCKED.replace("0.004998628", "fast");
        let e = parse(&bad).unwrap_err();
        assert!(e.contains("system time is not a number: 'fast'"), "{e}");
        assert!(parse("").is_err());
    }

    #[test]
    fn a_socket_refused_to_a_user_says_what_to_do() {
        let e = "chronyc failed (exit status: 1): Could not open connection to daemon".to_string();
        let here = std::env::temp_dir();
        let there = Some(here.as_path());
        assert!(explain(e.clone(), there, false).contains("run as root, or leave chrony=auto"));
        assert_eq!(explain(e.clone(), there, true), e);
        assert_eq!(explain(e.clone(), None, false), e);
        let missing = Path::new("/nonexistent/chronyd.sock");
        let said = explain(e.clone(), Some(missing), false);
        assert!(
            said.ends_with("(/nonexistent/chronyd.sock does not exist: is chronyd running, with bindcmdaddress /nonexistent/chronyd.sock?)"),
            "{said}"
        );
        assert!(!said.contains("root"), "{said}");
    }

    #[test]
    fn a_socket_is_passed_as_the_host() {
        let a = args(Some(Path::new("/tmp/x/chronyd.sock")));
        assert_eq!(
            a,
            [
                "-c",
                "-n",
                "-m",
                "-h",
                "/tmp/x/chronyd.sock",
                "tracking",
                "sources"
            ]
        );
        assert!(!args(None).contains(&"-h".to_string()));
    }

    use proptest::prelude::*;

    proptest! {
        /// Whatever a daemon (or something else on its socket) answers, reading it returns a
        /// reading or a reason, never panics: any text, and the recorded answer cut or with a
        /// field replaced.
        #[test]
        fn any_answer_is_read_or_refused_never_a_panic(
            text in "(?s).{0,400}",
            cut in 0usize..2000,
            field in 0usize..64,
            junk in "[^\n]{0,12}",
        ) {
            let _ = parse(&text);
            let recorded: &str = LOCKED;
            let _ = parse(&recorded[..recorded.floor_char_boundary(cut.min(recorded.len()))]);
            let mut words: Vec<String> = recorded.split([',', ' ']).map(String::from).collect();
            let i = field % words.len();
            words[i] = junk;
            let _ = parse(&words.join(","));
        }
    }
}
