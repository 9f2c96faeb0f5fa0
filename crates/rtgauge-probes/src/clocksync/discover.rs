//! Which references this machine has: the ones named, or those `auto` finds (chronyd's
//! socket or process, ptp4l's socket, every PTP hardware clock that can be opened).

use super::{phc, Choice, Config, Kind, Reference, PROBE};
use rtgauge_core::probe::ProbeError;
use std::path::PathBuf;

/// Where distributions put chrony's command socket.
const CHRONY_SOCKETS: [&str; 2] = ["/run/chrony/chronyd.sock", "/var/run/chrony/chronyd.sock"];
/// ptp4l's default management socket (uds_address).
const PTP4L_SOCKETS: [&str; 2] = ["/var/run/ptp4l", "/run/ptp4l"];

/// Whether a process of this name runs (its `comm`).
fn process_runs(name: &str) -> bool {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return false;
    };
    dir.flatten()
        .any(|e| std::fs::read_to_string(e.path().join("comm")).is_ok_and(|c| c.trim() == name))
}

fn existing(paths: &[&str]) -> Option<PathBuf> {
    paths.iter().map(PathBuf::from).find(|p| p.exists())
}

fn ptp_devices() -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/dev")
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                        n.strip_prefix("ptp")
                            .is_some_and(|i| i.parse::<u32>().is_ok())
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

/// The references to poll and the devices `auto` found but left out (why), or why there is
/// no reference here.
pub fn discover(cfg: &Config) -> Result<(Vec<Reference>, Vec<String>), ProbeError> {
    let iv = cfg.series_interval_ns;
    let mut refs = Vec::new();
    match &cfg.chrony {
        Choice::Off => {}
        Choice::Auto => {
            if existing(&CHRONY_SOCKETS).is_some() || process_runs("chronyd") {
                refs.push(Reference::new(
                    Kind::Chrony(None),
                    "chrony",
                    "default".into(),
                    iv,
                ));
            }
        }
        Choice::Paths(paths) => refs.extend(paths.iter().map(|p| {
            Reference::new(
                Kind::Chrony(Some(p.clone())),
                "chrony",
                p.display().to_string(),
                iv,
            )
        })),
    }
    let ptp_sockets = match &cfg.ptp4l {
        Choice::Off => Vec::new(),
        Choice::Auto => existing(&PTP4L_SOCKETS).into_iter().collect(),
        Choice::Paths(paths) => paths.clone(),
    };
    refs.extend(ptp_sockets.into_iter().map(|p| {
        let source = p.display().to_string();
        Reference::new(Kind::Ptp4l(p), "ptp4l", source, iv)
    }));
    // A device named by the user that cannot be opened fails its polls (the verdict says
    // so); one found by `auto` is left out with the reason (e.g. /dev/ptp0 is root's).
    let mut left_out = Vec::new();
    let devices = match &cfg.phc {
        Choice::Off => Vec::new(),
        Choice::Auto => ptp_devices()
            .into_iter()
            .filter_map(|d| match phc::PhcReference::open(&d) {
                Ok(device) => Some((d, Ok(device))),
                Err(reason) => {
                    left_out.push(format!("phc {}: left out: {reason}", d.display()));
                    None
                }
            })
            .collect(),
        Choice::Paths(paths) => paths
            .iter()
            .map(|d| (d.clone(), phc::PhcReference::open(d)))
            .collect::<Vec<_>>(),
    };
    refs.extend(devices.into_iter().map(|(d, device)| {
        let source = d.display().to_string();
        Reference::new(Kind::Phc(device), "phc", source, iv)
    }));
    if refs.is_empty() {
        let found = match left_out.as_slice() {
            [] => "no PTP hardware clock (/dev/ptpN)".to_string(),
            reasons => reasons.join("; "),
        };
        return Err(ProbeError::Unavailable(format!(
            "{PROBE}: no synchronisation reference here: no chronyd ({} absent, none running), no ptp4l ({} absent), {found}; name one with --set {PROBE}.chrony=PATH or {PROBE}.ptp4l=PATH",
            CHRONY_SOCKETS[0], PTP4L_SOCKETS[0]
        )));
    }
    Ok((refs, left_out))
}
