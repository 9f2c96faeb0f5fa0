//! Choosing the CPUs to measure on.

/// Formats CPUs as a kernel-style list: `0-3,8` (sysinfo's, which the doctor prints too).
pub use rtgauge_sysinfo::format_cpu_list;

/// Parses `--cpus` (`all`, `0`, `0-3,6`) and checks every CPU is online.
pub fn parse_cpus(spec: &str, online: &[usize]) -> Result<Vec<usize>, String> {
    if spec.trim() == "all" {
        return Ok(online.to_vec());
    }
    let cpus = rtgauge_sysinfo::parse_cpu_list(spec)
        .filter(|c| !c.is_empty())
        .ok_or_else(|| format!("'{spec}' is not a CPU list; use `all` or a list like 0-3,6"))?;
    if let Some(bad) = cpus.iter().find(|c| !online.contains(c)) {
        return Err(format!(
            "CPU {bad} is not online; online CPUs are {}",
            format_cpu_list(online)
        ));
    }
    let mut cpus = cpus;
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// Online CPUs not in `measured`: where rtgauge's own helper threads should run.
pub fn housekeeping_cpus(measured: &[usize]) -> Vec<usize> {
    rtgauge_sysinfo::online_cpus()
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
        assert_eq!(parse_cpus("all", &[0, 1]), Ok(vec![0, 1]));
    }

    #[test]
    fn offline_cpus_are_refused_with_the_online_list() {
        let e = parse_cpus("5", &[0, 1]).unwrap_err();
        assert_eq!(e, "CPU 5 is not online; online CPUs are 0-1");
        assert!(parse_cpus("x", &[0]).is_err());
    }
}
