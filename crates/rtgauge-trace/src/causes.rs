//! Spikes grouped by their dominant cause: what the summary line, `compare` and `check` count.

use crate::attribute::{Attribution, Cause};
use crate::chrome::cause_name;

/// Spikes that share a dominant cause.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CauseGroup {
    /// `gap outside Linux`, `softirq NET_RX`, `kworker/0:1` (a task by name, not thread id,
    /// so the causes of two runs can be compared), `unexplained`.
    pub label: String,
    /// The short kind a check spec names: irq, vector, softirq, nmi, thread, threaded_irq,
    /// idle, gap, unknown.
    pub kind: &'static str,
    pub count: usize,
    /// Longest time the cause held the CPU in one of these spikes, ns.
    pub longest_ns: u64,
}

/// The short kind of a cause, as a check spec names it (`cause = "gap"`).
pub fn cause_kind(cause: &Cause) -> &'static str {
    match cause {
        Cause::Irq { .. } => "irq",
        Cause::Vector { .. } => "vector",
        Cause::Softirq { .. } => "softirq",
        Cause::Nmi { .. } => "nmi",
        Cause::Thread { .. } => "thread",
        Cause::ThreadedIrq { .. } => "threaded_irq",
        Cause::Idle => "idle",
        Cause::Gap { .. } => "gap",
        Cause::Unknown => "unknown",
    }
}

fn label(cause: &Cause) -> String {
    match cause {
        Cause::Thread { comm, .. } | Cause::ThreadedIrq { comm, .. } => comm.clone(),
        Cause::Gap { .. } => "gap outside Linux".to_string(),
        other => cause_name(other),
    }
}

/// `spikes` grouped by dominant cause, most frequent first (then longest).
pub fn dominant_causes(spikes: &[Attribution]) -> Vec<CauseGroup> {
    let mut groups: Vec<CauseGroup> = Vec::new();
    for spike in spikes {
        let (label, kind, held) = match spike.dominant_contributor() {
            Some(c) => (label(&c.cause), cause_kind(&c.cause), c.duration_ns),
            None => ("unexplained".to_string(), "unknown", 0),
        };
        match groups.iter_mut().find(|g| g.label == label) {
            Some(g) => {
                g.count += 1;
                g.longest_ns = g.longest_ns.max(held);
            }
            None => groups.push(CauseGroup {
                label,
                kind,
                count: 1,
                longest_ns: held,
            }),
        }
    }
    groups.sort_by(|a, b| {
        b.count
            .cmp(&a.count)
            .then(b.longest_ns.cmp(&a.longest_ns))
            .then(a.label.cmp(&b.label))
    });
    groups
}
