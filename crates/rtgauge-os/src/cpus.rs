//! Kernel CPU lists (`0-3,8,10-11`, the form of boot parameters, sysfs and `--cpus`) and the
//! online CPUs.

/// CPU numbers at or above this cannot exist: Linux supports at most 8192 CPUs (NR_CPUS with
/// MAXSMP), and this leaves room for growth. Checking before expanding a range keeps
/// `0-18446744073709551615` from allocating (or overflowing) anything.
pub const CPU_ID_LIMIT: usize = 1 << 16;

/// Where the kernel lists its online CPUs.
pub const ONLINE_PATH: &str = "/sys/devices/system/cpu/online";

/// What is wrong with a CPU list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CpuListError {
    /// A part that is not a number (the part as written).
    NotANumber(String),
    /// A number at or above [`CPU_ID_LIMIT`] (as written).
    NoSuchCpu(String),
    /// `first-last` with last below first.
    Backwards(usize, usize),
    /// More than [`CPU_ID_LIMIT`] CPUs in all (repeated ranges).
    TooMany,
}

impl std::fmt::Display for CpuListError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CpuListError::NotANumber(part) => {
                write!(f, "'{}' is not a CPU number", part.escape_debug())
            }
            CpuListError::NoSuchCpu(part) => write!(
                f,
                "CPU {part} does not exist (Linux numbers CPUs below {CPU_ID_LIMIT})"
            ),
            CpuListError::Backwards(a, b) => {
                write!(f, "the range {a}-{b} runs backwards (write {b}-{a})")
            }
            CpuListError::TooMany => write!(f, "more than {CPU_ID_LIMIT} CPUs listed"),
        }
    }
}

impl std::error::Error for CpuListError {}

/// Parses a CPU list (`0-3,8,10-11`; empty parts are skipped), refusing CPU numbers no
/// machine has before any range is expanded.
pub fn cpu_list(list: &str) -> Result<Vec<usize>, CpuListError> {
    let cpu = |text: &str| -> Result<usize, CpuListError> {
        let text = text.trim();
        match text.parse::<usize>() {
            Ok(c) if c < CPU_ID_LIMIT => Ok(c),
            Ok(_) => Err(CpuListError::NoSuchCpu(text.to_string())),
            Err(_) if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) => {
                Err(CpuListError::NoSuchCpu(text.to_string()))
            }
            Err(_) => Err(CpuListError::NotANumber(text.to_string())),
        }
    };
    let mut cpus = Vec::new();
    for part in list.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (cpu(a)?, cpu(b)?);
                if a > b {
                    return Err(CpuListError::Backwards(a, b));
                }
                cpus.extend(a..=b);
            }
            None => cpus.push(cpu(part)?),
        }
        if cpus.len() > CPU_ID_LIMIT {
            // Repeated ranges could still add up; no real list is this long.
            return Err(CpuListError::TooMany);
        }
    }
    Ok(cpus)
}

/// Formats CPUs as a kernel CPU list (`0-3,8`), sorted, each CPU once.
pub fn format_cpu_list(cpus: &[usize]) -> String {
    let mut sorted = cpus.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
            i += 1;
            end = sorted[i];
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    parts.join(",")
}

/// Online CPUs of this machine, from sysfs; CPU 0 alone when the list cannot be read, so
/// callers always have a CPU to run on.
pub fn online_cpus() -> Vec<usize> {
    std::fs::read_to_string(ONLINE_PATH)
        .ok()
        .and_then(|text| cpu_list(&text).ok())
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| vec![0])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_parse_format_and_refuse_impossible_cpus() {
        assert_eq!(cpu_list("0-3,6,8-9\n"), Ok(vec![0, 1, 2, 3, 6, 8, 9]));
        assert_eq!(cpu_list(""), Ok(vec![]));
        assert_eq!(format_cpu_list(&[8, 0, 1, 2, 3, 3]), "0-3,8");
        assert_eq!(cpu_list("3-1"), Err(CpuListError::Backwards(3, 1)));
        assert!(matches!(
            cpu_list("0-18446744073709551615"),
            Err(CpuListError::NoSuchCpu(_))
        ));
        assert!(matches!(
            cpu_list("0-99999999999999999999999"),
            Err(CpuListError::NoSuchCpu(_))
        ));
        assert_eq!(cpu_list(&"0-65535,".repeat(2)), Err(CpuListError::TooMany));
        assert!(matches!(cpu_list("x"), Err(CpuListError::NotANumber(_))));
        assert!(!online_cpus().is_empty());
    }
}
