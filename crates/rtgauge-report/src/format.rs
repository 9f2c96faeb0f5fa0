//! Number formatting shared by every renderer. Values stay integer nanoseconds until here.

/// The unit a table shows its times in, chosen from the largest value it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeUnit {
    Ns,
    Us,
    Ms,
}

impl TimeUnit {
    /// ns when everything is below 10 µs (call-level probes), ms above 100 ms, µs otherwise.
    pub fn for_max(max_ns: u64) -> TimeUnit {
        if max_ns < 10_000 {
            TimeUnit::Ns
        } else if max_ns >= 100_000_000 {
            TimeUnit::Ms
        } else {
            TimeUnit::Us
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            TimeUnit::Ns => "ns",
            TimeUnit::Us => "µs",
            TimeUnit::Ms => "ms",
        }
    }

    /// Formats with precision that suits the magnitude: three significant figures at least.
    pub fn format(self, ns: f64) -> String {
        let v = match self {
            TimeUnit::Ns => ns,
            TimeUnit::Us => ns / 1e3,
            TimeUnit::Ms => ns / 1e6,
        };
        let decimals = if v.abs() >= 100.0 || self == TimeUnit::Ns {
            0
        } else if v.abs() >= 10.0 {
            1
        } else if v.abs() >= 1.0 {
            2
        } else {
            3
        };
        format!("{v:.decimals$}")
    }

    pub fn format_opt(self, ns: Option<u64>) -> String {
        ns.map(|v| self.format(v as f64))
            .unwrap_or_else(|| "–".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_and_precision() {
        assert_eq!(TimeUnit::for_max(9_999), TimeUnit::Ns);
        assert_eq!(TimeUnit::for_max(50_000), TimeUnit::Us);
        assert_eq!(TimeUnit::Us.format(1_234.0), "1.23");
        assert_eq!(TimeUnit::Us.format(56_789.0), "56.8");
        assert_eq!(TimeUnit::Us.format(456_789.0), "457");
        assert_eq!(TimeUnit::Ns.format(42.4), "42");
        assert_eq!(TimeUnit::Us.format_opt(None), "–");
    }
}
