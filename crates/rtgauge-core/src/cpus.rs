//! Choosing the CPUs to measure on.

/// Formats CPUs as a kernel-style list: `0-3,8` (the system layer's, which the doctor prints
/// too).
pub use rtgauge_os::cpus::format_cpu_list;

/// Parses `--cpus`, `--load-cpus` and `doctor --cpus` (`all`, `0`, `0-3,6`) and checks every
/// CPU is online.
///
/// Each range is checked against the online CPUs *before* it is expanded, so a range such as
/// `0-18446744073709551615` is refused in one line instead of allocating a list of its size.
pub fn parse_cpus(spec: &str, online: &[usize]) -> Result<Vec<usize>, String> {
    if spec.trim() == "all" {
        return Ok(online.to_vec());
    }
    let shown = crate::units::quote(spec);
    let not_a_list = || format!("'{shown}' is not a CPU list; use `all` or a list like 0-3,6");
    let mut cpus = Vec::new();
    for part in spec.trim().split(',').filter(|p| !p.trim().is_empty()) {
        let (first, last) = match part.split_once('-') {
            Some((a, b)) => (a.trim().parse::<usize>(), b.trim().parse::<usize>()),
            None => (part.trim().parse::<usize>(), part.trim().parse::<usize>()),
        };
        let (first, last) = match (first, last) {
            (Ok(a), Ok(b)) if a <= b => (a, b),
            _ => return Err(not_a_list()),
        };
        // The range is within the online CPUs iff every CPU in it is online; counting the
        // online CPUs inside it avoids expanding a range the user may have made huge.
        let inside = online.iter().filter(|&&c| c >= first && c <= last).count();
        if (inside as u128) < (last - first) as u128 + 1 {
            let bad = (first..=last)
                .find(|c| !online.contains(c))
                .expect("a range with fewer online CPUs than members has an offline one");
            return Err(format!(
                "CPU {bad} is not online; online CPUs are {}",
                format_cpu_list(online)
            ));
        }
        cpus.extend(first..=last);
    }
    if cpus.is_empty() {
        return Err(not_a_list());
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// Online CPUs not in `measured`: where rtgauge's own helper threads should run.
pub fn housekeeping_cpus(measured: &[usize]) -> Vec<usize> {
    rtgauge_os::cpus::online_cpus()
        .into_iter()
        .filter(|c| !measured.contains(c))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_round_trip() {
        assert_eq!(format_cpu_list(&[0, 1, 2, 3, 8, 10, 11]), "0-3,8,10-11");
        assert_eq!(parse_cpus("0-1", &[0, 1]), Ok(vec![0, 1]));
        assert_eq!(parse_cpus("1,0-1", &[0, 1]), Ok(vec![0, 1]));
        assert_eq!(parse_cpus("all", &[0, 1]), Ok(vec![0, 1]));
    }

    #[test]
    fn offline_cpus_are_refused_with_the_online_list() {
        let e = parse_cpus("5", &[0, 1]).unwrap_err();
        assert_eq!(e, "CPU 5 is not online; online CPUs are 0-1");
        assert_eq!(
            parse_cpus("0-3", &[0, 1, 3]).unwrap_err(),
            "CPU 2 is not online; online CPUs are 0-1,3"
        );
        for bad in ["x", "", ",", "3-1", "-1", "0-", "1-2-3"] {
            assert!(parse_cpus(bad, &[0, 1, 2, 3]).is_err(), "{bad}");
        }
    }

    #[test]
    fn huge_cpu_range_is_refused_without_allocating() {
        for spec in ["0-18446744073709551615", "0-4000000000", "4000000000"] {
            let e = parse_cpus(spec, &[0, 1]).unwrap_err();
            assert_eq!(
                e,
                "CPU 2 is not online; online CPUs are 0-1".replace(
                    "CPU 2",
                    if spec.starts_with('0') {
                        "CPU 2"
                    } else {
                        "CPU 4000000000"
                    },
                )
            );
        }
    }
}
