//! ptp4l, asked through its UNIX management socket by linuxptp's own management client:
//! `pmc -u -b 0 -s SOCKET -i CLIENT 'GET TIME_STATUS_NP' 'GET PORT_DATA_SET'
//! 'GET CURRENT_DATA_SET' 'GET PARENT_DATA_SET'`, bounded by the probe's timeout.
//!
//! Why pmc and not the management TLVs written here: pmc is installed with every ptp4l and
//! built with it, so it speaks exactly that ptp4l's management messages (linuxptp's own `_NP`
//! ones included), and prints one `name value` line per field; its client socket (`-i`) is a file of ours in
//! the temporary directory, so no root is needed for `/var/run`.
//!
//! `offset` is TIME_STATUS_NP's master_offset: this clock minus the master, as ptp4l's servo
//! sees it (its "master offset" log lines); `path_delay` is CURRENT_DATA_SET's meanPathDelay.
//! ptp4l has no management message for its servo's state: its port going from UNCALIBRATED to
//! SLAVE *is* the servo locking (ptp4l's port state machine), so a port in SLAVE is "locked".

use super::Reading;
use std::collections::BTreeMap;
use std::path::Path;

/// One management answer: its TLV and `field value` pairs.
type Answer = (String, BTreeMap<String, String>);

pub const REQUESTS: [&str; 4] = [
    "GET TIME_STATUS_NP",
    "GET PORT_DATA_SET",
    "GET CURRENT_DATA_SET",
    "GET PARENT_DATA_SET",
];

pub fn args(socket: &Path, client: &Path, domain: u8) -> Vec<String> {
    let mut a: Vec<String> = ["-u", "-b", "0", "-d"].map(String::from).to_vec();
    a.push(domain.to_string());
    a.extend(["-s".to_string(), socket.display().to_string()]);
    a.extend(["-i".to_string(), client.display().to_string()]);
    a.extend(REQUESTS.map(String::from));
    a
}

/// pmc's answers: a `… RESPONSE MANAGEMENT TLV` line, then its indented fields.
fn answers(text: &str) -> Vec<Answer> {
    let mut out: Vec<Answer> = Vec::new();
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        if let Some(i) = words.iter().position(|w| *w == "MANAGEMENT") {
            if words.contains(&"RESPONSE") {
                let tlv = words.get(i + 1).copied().unwrap_or("").to_string();
                out.push((tlv, BTreeMap::new()));
            }
            continue;
        }
        if let (Some((_, fields)), [key, value, ..]) = (out.last_mut(), words.as_slice()) {
            if line.starts_with('\t') || line.starts_with(' ') {
                fields.insert(key.to_string(), value.to_string());
            }
        }
    }
    out
}

fn field<'a>(all: &'a [Answer], tlv: &str, key: &str) -> Option<&'a str> {
    all.iter()
        .filter(|(t, _)| t == tlv)
        .find_map(|(_, f)| f.get(key).map(String::as_str))
}

fn integer(value: &str, what: &str) -> Result<i64, String> {
    value
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .map(|v| v.round() as i64)
        .ok_or_else(|| format!("ptp4l's {what} is not a number: '{value}'"))
}

/// The port that follows a master (SLAVE, UNCALIBRATED), else the first port answered.
fn port_state(all: &[Answer]) -> Option<&str> {
    let states: Vec<&str> = all
        .iter()
        .filter(|(t, _)| t == "PORT_DATA_SET")
        .filter_map(|(_, f)| f.get("portState").map(String::as_str))
        .collect();
    states
        .iter()
        .find(|s| matches!(**s, "SLAVE" | "UNCALIBRATED"))
        .or(states.first())
        .copied()
}

pub fn parse(text: &str) -> Result<Reading, String> {
    let all = answers(text);
    let offset = field(&all, "TIME_STATUS_NP", "master_offset").ok_or_else(|| {
        let said = text
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with("sending:"))
            .unwrap_or("nothing but its requests");
        format!("ptp4l did not answer TIME_STATUS_NP (pmc printed: {said})")
    })?;
    let offset_ns = integer(offset, "master_offset")?;
    let path_delay_ns = field(&all, "CURRENT_DATA_SET", "meanPathDelay")
        .map(|v| integer(v, "meanPathDelay"))
        .transpose()?;
    let port = port_state(&all).unwrap_or("unknown");
    let gm_present = field(&all, "TIME_STATUS_NP", "gmPresent") == Some("true");
    let gm = field(&all, "PARENT_DATA_SET", "grandmasterIdentity").unwrap_or("unknown");
    let class = field(&all, "PARENT_DATA_SET", "gm.ClockClass").and_then(|c| c.parse::<f64>().ok());
    let servo = match port {
        "SLAVE" => "servo locked",
        "UNCALIBRATED" => "servo not locked",
        _ => "no servo running",
    };
    let mut state = format!("port {port}, {servo}, grandmaster {gm}");
    if let Some(c) = class {
        state.push_str(&format!(" class {c}"));
    }
    if !gm_present {
        state.push_str(", no grandmaster present");
    }
    let mut figures = Vec::new();
    if let Some(c) = class {
        figures.push(("clock_class", c));
    }
    if let Some(s) = field(&all, "CURRENT_DATA_SET", "stepsRemoved").and_then(|s| s.parse().ok()) {
        figures.push(("steps_removed", s));
    }
    Ok(Reading {
        offset_ns: Some(offset_ns),
        path_delay_ns,
        frequency_ppb: None,
        width_ns: None,
        locked: port == "SLAVE" && gm_present,
        state,
        port_state: Some(port.to_string()),
        sources: Vec::new(),
        figures,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Recorded from ptp4l 3.1.1 (`-S`, slaveOnly, free_running) over a veth pair.
    const SLAVE: &str = "sending: GET TIME_STATUS_NP
sending: GET PORT_DATA_SET
sending: GET CURRENT_DATA_SET
sending: GET PARENT_DATA_SET
\t1aaf5d.fffe.66743b-0 seq 0 RESPONSE MANAGEMENT TIME_STATUS_NP 
\t\tmaster_offset              244
\t\tingress_time               1795854974962054603
\t\tcumulativeScaledRateOffset +0.000000000
\t\tgmPresent                  true
\t\tgmIdentity                 629c20.fffe.f860e0
\t1aaf5d.fffe.66743b-1 seq 1 RESPONSE MANAGEMENT PORT_DATA_SET 
\t\tportIdentity            1aaf5d.fffe.66743b-1
\t\tportState               UNCALIBRATED
\t\tpeerMeanPathDelay       0
\t1aaf5d.fffe.66743b-0 seq 2 RESPONSE MANAGEMENT CURRENT_DATA_SET 
\t\tstepsRemoved     1
\t\toffsetFromMaster 244.0
\t\tmeanPathDelay    2290.0
\t1aaf5d.fffe.66743b-0 seq 3 RESPONSE MANAGEMENT PARENT_DATA_SET 
\t\tparentPortIdentity                    629c20.fffe.f860e0-1
\t\tgrandmasterPriority1                  1
\t\tgm.ClockClass                         248
\t\tgrandmasterIdentity                   629c20.fffe.f860e0
";

    #[test]
    fn a_slave_port_reads_as_offset_delay_and_states() {
        let r = parse(SLAVE).unwrap();
        assert_eq!(r.offset_ns, Some(244));
        assert_eq!(r.path_delay_ns, Some(2_290));
        assert!(!r.locked);
        assert_eq!(
            r.state,
            "port UNCALIBRATED, servo not locked, grandmaster 629c20.fffe.f860e0 class 248"
        );
        assert!(r.figures.contains(&("clock_class", 248.0)));
        let locked = SLAVE.replace("UNCALIBRATED", "SLAVE");
        assert!(parse(&locked).unwrap().locked);
    }

    #[test]
    fn no_answer_or_garbage_is_refused_in_one_line() {
        let e = parse("sending: GET TIME_STATUS_NP\n").unwrap_err();
        assert!(e.contains("nothing but its requests"), "{e}");
        let bad = SLAVE.replace("master_offset              244", "master_offset   lots");
        let e = parse(&bad).unwrap_err();
        assert!(e.contains("master_offset is not a number: 'lots'"), "{e}");
    }

    #[test]
    fn the_client_socket_and_domain_are_passed() {
        let a = args(Path::new("/run/ptp4l"), Path::new("/tmp/c"), 24);
        assert_eq!(
            &a[..8],
            ["-u", "-b", "0", "-d", "24", "-s", "/run/ptp4l", "-i"]
        );
        assert_eq!(a.len(), 9 + REQUESTS.len());
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
            let recorded: &str = SLAVE;
            let _ = parse(&recorded[..recorded.floor_char_boundary(cut.min(recorded.len()))]);
            let mut words: Vec<String> = recorded.split([',', ' ']).map(String::from).collect();
            let i = field % words.len();
            words[i] = junk;
            let _ = parse(&words.join(","));
        }
    }
}
