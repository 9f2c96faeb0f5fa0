//! Which probe run, and which series of it: the one key every table, chart, comparison, check
//! and exported file names a measurement by.
//!
//! A run is identified by its probe (and variant), mode and load; a series within it by its
//! name and labels. The key has two forms: the text people read (`cyclic@1ms rt cpu`, via
//! `Display`) and one file-name-safe form ([`RunKey::file_stem`]) for recordings, images and
//! HTML anchors, so the same run never gets two different names.

use crate::{ProbeRun, RecordingInfo, Series};
use std::collections::BTreeMap;
use std::fmt;

/// One probe run: probe (and variant), mode and load.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RunKey {
    pub probe: String,
    /// Tells apart two entries of one probe in a suite (`cyclic@1ms`, `cyclic@100us`).
    pub variant: Option<String>,
    pub mode: String,
    pub load: String,
}

impl RunKey {
    pub fn new(
        probe: impl Into<String>,
        variant: Option<&str>,
        mode: impl Into<String>,
        load: impl Into<String>,
    ) -> Self {
        RunKey {
            probe: probe.into(),
            variant: variant.map(str::to_string),
            mode: mode.into(),
            load: load.into(),
        }
    }

    /// The key of a run named by its title (`cyclic@1ms`), as recordings and check specs
    /// name it.
    pub fn from_title(title: &str, mode: impl Into<String>, load: impl Into<String>) -> Self {
        let (probe, variant) = match title.split_once('@') {
            Some((p, v)) => (p, Some(v)),
            None => (title, None),
        };
        RunKey::new(probe, variant, mode, load)
    }

    /// `probe` or `probe@variant`: what tables, comparisons and check specs call the probe.
    pub fn title(&self) -> String {
        crate::probe_title(&self.probe, self.variant.as_deref())
    }

    /// The key as part of a file name or an HTML anchor: `cyclic_1ms-rt-exec_make_j`.
    pub fn file_stem(&self) -> String {
        file_safe(&[&self.title(), &self.mode, &self.load])
    }
}

/// `cyclic@1ms rt none`.
impl fmt::Display for RunKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} {}", self.title(), self.mode, self.load)
    }
}

/// One series of one probe run: the run's key, the series name and its labels.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SeriesKey {
    pub run: RunKey,
    pub name: String,
    pub labels: BTreeMap<String, String>,
}

impl SeriesKey {
    pub fn new(run: RunKey, series: &Series) -> Self {
        SeriesKey {
            run,
            name: series.name.clone(),
            labels: series.labels.clone(),
        }
    }

    /// `latency cpu=1`: the series within its run.
    pub fn series_name(&self) -> String {
        labelled_name(&self.name, &self.labels)
    }

    /// The key as part of a file name or an HTML anchor: `cyclic-rt-none-latency-cpu_1`.
    pub fn file_stem(&self) -> String {
        let labels: Vec<String> = self
            .labels
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let mut parts = vec![self.run.file_stem(), file_safe(&[&self.name])];
        parts.extend(labels.iter().map(|l| file_safe(&[l])));
        parts.join("-")
    }
}

/// `cyclic rt none latency cpu=1`.
impl fmt::Display for SeriesKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.run, self.series_name())
    }
}

impl ProbeRun {
    /// This run's key.
    pub fn key(&self) -> RunKey {
        RunKey::new(&self.probe, self.variant.as_deref(), &self.mode, &self.load)
    }

    /// The key of one of this run's series.
    pub fn series_key(&self, series: &Series) -> SeriesKey {
        SeriesKey::new(self.key(), series)
    }
}

impl RecordingInfo {
    /// The key of the probe run this recording belongs to (`probe` holds the run's title).
    pub fn key(&self) -> RunKey {
        RunKey::from_title(&self.probe, &self.mode, &self.load)
    }
}

/// `latency cpu=1`: a series name followed by its labels.
pub(crate) fn labelled_name(name: &str, labels: &BTreeMap<String, String>) -> String {
    let mut out = name.to_string();
    for (k, v) in labels {
        out.push_str(&format!(" {k}={v}"));
    }
    out
}

/// The one file-name-safe form of names rtgauge puts in paths and anchors: ASCII letters and
/// digits are kept, every run of anything else (`@`, `:`, spaces, `/`, `-`) becomes one `_`,
/// and the parts are joined with `-`. Load names can be arbitrary commands, so nothing else
/// may reach a file name.
pub fn file_safe(parts: &[&str]) -> String {
    let mut out = String::new();
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            out.push('-');
        }
        let mut cleaned = String::new();
        for c in part.chars() {
            if c.is_ascii_alphanumeric() {
                cleaned.push(c);
            } else if !cleaned.ends_with('_') {
                cleaned.push('_');
            }
        }
        let cleaned = cleaned.trim_matches('_');
        out.push_str(if cleaned.is_empty() { "_" } else { cleaned });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_run_key_reads_and_files_the_same_run() {
        let key = RunKey::new("cyclic", Some("1ms"), "rt", "exec:make -j4");
        assert_eq!(key.to_string(), "cyclic@1ms rt exec:make -j4");
        assert_eq!(key.file_stem(), "cyclic_1ms-rt-exec_make_j4");
        assert_eq!(
            RunKey::new("alloc", None, "normal", "none").file_stem(),
            "alloc-normal-none"
        );
    }

    #[test]
    fn a_series_key_names_its_labels() {
        let run = RunKey::new("cyclic", None, "rt", "cpu");
        let series = Series::new("latency", Default::default()).label("cpu", 3);
        let key = SeriesKey::new(run, &series);
        assert_eq!(key.to_string(), "cyclic rt cpu latency cpu=3");
        assert_eq!(key.file_stem(), "cyclic-rt-cpu-latency-cpu_3");
    }

    #[test]
    fn a_recording_knows_its_run() {
        let rec = RecordingInfo {
            path: "r.rtgr".into(),
            probe: "cyclic@fast".into(),
            mode: "rt".into(),
            load: "none".into(),
            format_version: 1,
            samples_written: 0,
            samples_dropped: 0,
            bytes: 0,
        };
        assert_eq!(rec.key(), RunKey::new("cyclic", Some("fast"), "rt", "none"));
    }

    proptest! {
        /// Whatever a load or variant is called, its file form is a plain file name.
        #[test]
        fn file_stems_are_plain_file_names(parts in proptest::collection::vec(".*", 1..5)) {
            let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
            let stem = file_safe(&refs);
            prop_assert!(!stem.is_empty());
            prop_assert!(stem.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'));
            prop_assert_eq!(stem.split('-').count(), parts.len());
        }
    }
}
