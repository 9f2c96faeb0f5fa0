//! System facts that decide whether a real-time measurement can be trusted.
//!
//! Two products come out of the same facts:
//! - the [`Fingerprint`], stored with every result so runs can be compared knowing what
//!   differed between their machines ([`collect`], [`collect_from`]);
//! - the doctor's [`Check`]s, verdicts with the reason and a concrete fix ([`doctor`]), plus
//!   renderers for the CLI ([`render_text`], [`render_fix_hints`], [`exit_code`],
//!   [`run_warnings`]).
//!
//! Everything here only reads /proc and /sys (never changes the system), and every read goes
//! through a [`SysRoot`] so that fixtures can stand in for the live machine. A fact that
//! cannot be read is reported as unknown with the reason, never silently defaulted to "ok".

pub mod checks;
pub mod cpu;
mod fingerprint;
pub mod hardware;
pub mod kernel;
pub mod platform;
pub mod procs;
mod render;
pub mod root;
mod timesync;

pub use checks::{doctor, doctor_with, Check, DoctorSettings, Status};
pub use fingerprint::{collect, collect_from, Fingerprint};
pub use render::{exit_code, render_fix_hints, render_text, run_warnings};
pub use root::{Fact, SysRoot, Unknown};

pub use rtgauge_os::cpus::{format_cpu_list, online_cpus, CPU_ID_LIMIT};

/// Parses a CPU list (`0-3,8,10-11`), or says in one line what is wrong with it, naming the
/// part: not a number, a range that runs backwards, a CPU number no machine has.
pub fn cpu_list(list: &str) -> Result<Vec<usize>, String> {
    rtgauge_os::cpus::cpu_list(list).map_err(|e| match e {
        rtgauge_os::cpus::CpuListError::NotANumber(part) => format!(
            "'{}' is not a CPU number",
            rtgauge_result::units::quote(&part)
        ),
        other => other.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_parse() {
        assert_eq!(cpu_list("0-3,8"), Ok(vec![0, 1, 2, 3, 8]));
        assert_eq!(cpu_list(""), Ok(vec![]));
        assert!(cpu_list("3-1").is_err());
        assert!(cpu_list("x").is_err());
    }

    #[test]
    fn huge_cpu_range_is_refused_without_allocating() {
        assert!(cpu_list("0-18446744073709551615").is_err());
        assert!(cpu_list("0-4000000000").is_err());
        assert!(cpu_list("99999999999999999999999").is_err());
        let repeated = vec!["0-65535"; 1000].join(",");
        assert!(cpu_list(&repeated).is_err());
        assert_eq!(cpu_list("0-8191").map(|c| c.len()), Ok(8192));
        assert_eq!(
            cpu_list("0-4000000000").unwrap_err(),
            "CPU 4000000000 does not exist (Linux numbers CPUs below 65536)"
        );
        assert!(cpu_list("0-99999999999999999999999")
            .unwrap_err()
            .starts_with("CPU 99999999999999999999999 does not exist"));
        assert_eq!(
            cpu_list("3-1").unwrap_err(),
            "the range 3-1 runs backwards (write 1-3)"
        );
        assert_eq!(
            cpu_list(&"x".repeat(1000)).unwrap_err(),
            format!("'{}…' is not a CPU number", "x".repeat(40))
        );
    }

    #[test]
    fn cpu_lists_format_round_trip() {
        assert_eq!(format_cpu_list(&[3, 0, 1, 2, 8, 10, 11]), "0-3,8,10-11");
        assert_eq!(format_cpu_list(&[]), "");
        assert_eq!(format_cpu_list(&[5]), "5");
        let l = [0, 2, 3, 4, 9];
        assert_eq!(cpu_list(&format_cpu_list(&l)), Ok(l.to_vec()));
    }
}
