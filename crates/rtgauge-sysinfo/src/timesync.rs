//! The doctor's look at time synchronisation: which daemon keeps the clock (chronyd, ptp4l,
//! phc2sys, ntpd, systemd-timesyncd), and which PTP hardware clocks the machine has, each with
//! the network interface it belongs to (a NIC with a PHC timestamps in hardware). Informational:
//! no latency figure depends on it, but the clocksync probe needs a reference, and distributed
//! control needs clocks that agree.

use crate::procs;
use crate::root::SysRoot;
use rtgauge_result::{Check, Status};

const ID: &str = "time_sync";
const TITLE: &str = "Time synchronisation";
const WHY: &str = "Distributed control (EtherCAT distributed clocks, TSN, several computers \
    timestamping one process) needs clocks that agree: a synchronisation daemon, and for \
    sub-microsecond agreement a NIC with a PTP hardware clock (hardware timestamping). \
    `rtgauge run clocksync` measures how well they hold.";
/// Daemons that discipline the system clock or a PHC, as their process names read.
const DAEMONS: [&str; 6] = [
    "chronyd",
    "ptp4l",
    "phc2sys",
    "ntpd",
    "systemd-timesyn",
    "timemaster",
];

/// Each `/sys/class/ptp/ptpN` with its clock's name and, where it has one, its interface.
fn phcs(root: &SysRoot) -> Vec<String> {
    let Ok(devices) = root.list("/sys/class/ptp") else {
        return Vec::new();
    };
    devices
        .iter()
        .map(|d| {
            let name = root
                .read_trimmed(&format!("/sys/class/ptp/{d}/clock_name"))
                .unwrap_or_else(|_| "?".into());
            match root.list(&format!("/sys/class/ptp/{d}/device/net")) {
                Ok(nics) if !nics.is_empty() => format!("{d} ({name}, on {})", nics.join(", ")),
                _ => format!("{d} ({name}, no network interface)"),
            }
        })
        .collect()
}

pub(crate) fn check(root: &SysRoot) -> Check {
    let running: Vec<&str> = match procs::process_names(root) {
        Ok(names) => DAEMONS
            .iter()
            .copied()
            .filter(|d| names.contains(*d))
            .collect(),
        Err(u) => {
            let found = format!("unknown: {u}");
            return Check::new(ID, TITLE, Status::Unknown, found, WHY);
        }
    };
    let clocks = phcs(root);
    let daemons = match running.as_slice() {
        [] => "no synchronisation daemon runs".to_string(),
        list => format!("running: {}", list.join(", ")),
    };
    let hardware = match clocks.as_slice() {
        [] => "no PTP hardware clock (/dev/ptpN): no hardware timestamping".to_string(),
        list => format!("PTP hardware clocks: {}", list.join("; ")),
    };
    Check::new(ID, TITLE, Status::Ok, format!("{daemons}; {hardware}"), WHY)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(files: &[(&str, &str)]) -> (tempfile::TempDir, SysRoot) {
        let dir = tempfile::tempdir().unwrap();
        for (path, content) in files {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, content).unwrap();
        }
        let root = SysRoot::at(dir.path());
        (dir, root)
    }

    #[test]
    fn a_daemon_and_a_nic_with_a_phc_are_named() {
        let (_d, r) = root(&[
            ("proc/1/comm", "systemd\n"),
            ("proc/812/comm", "ptp4l\n"),
            ("proc/813/comm", "phc2sys\n"),
            ("sys/class/ptp/ptp0/clock_name", "igc\n"),
            ("sys/class/ptp/ptp0/device/net/enp3s0/ifindex", "2\n"),
        ]);
        let c = check(&r);
        assert_eq!(c.status, Status::Ok);
        assert_eq!(
            c.found,
            "running: ptp4l, phc2sys; PTP hardware clocks: ptp0 (igc, on enp3s0)"
        );
    }

    #[test]
    fn nothing_here_is_said_plainly() {
        let (_d, r) = root(&[("proc/1/comm", "init\n")]);
        let c = check(&r);
        assert_eq!(
            c.found,
            "no synchronisation daemon runs; no PTP hardware clock (/dev/ptpN): no hardware timestamping"
        );
    }
}
