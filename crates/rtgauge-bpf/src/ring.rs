//! The layout of the rings the BPF program writes (must match src/bpf/recorder.bpf.c).

/// Records kept per CPU; a power of two (the program masks the head with `RING_LEN - 1`).
pub const RING_LEN: usize = 512;

/// Set in [`RawRecord::kind`] above the kind when a switch preempted the previous task.
const FLAG_PREEMPTED: u32 = 0x100;

/// What a record describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Switch,
    Wakeup,
    IrqEntry,
    IrqExit,
    /// An x86 interrupt vector (`arg`: see [`vector_name`]).
    VectorEntry,
    VectorExit,
    /// A high-resolution timer's callback starts (see [`RawRecord::hrtimer`]). Its end is
    /// not recorded: the callback runs inside the timer interrupt's handler, whose exit is.
    HrtimerEntry,
    /// A softirq starts on this CPU (`arg`: its vector number, see [`softirq_name`]).
    SoftirqEntry,
    SoftirqExit,
    /// A kworker starts a work item (see [`RawRecord::function`]).
    WorkStart,
    WorkEnd,
    /// An NMI handler returned (see [`RawRecord::function`] and [`RawRecord::nmi_delta_ns`]).
    Nmi,
}

/// The vectors the program records, by their number in a vector record, as tracefs names them
/// (`irq_vectors:<name>_entry`).
pub const VECTOR_NAMES: [&str; 11] = [
    "local_timer",
    "reschedule",
    "call_function",
    "call_function_single",
    "irq_work",
    "x86_platform_ipi",
    "thermal_apic",
    "threshold_apic",
    "deferred_error_apic",
    "error_apic",
    "spurious_apic",
];

/// The name tracefs gives the vector numbered `arg` in a vector record ("vector" for a number
/// the program does not write: a damaged record).
pub fn vector_name(arg: u32) -> &'static str {
    VECTOR_NAMES.get(arg as usize).copied().unwrap_or("vector")
}

/// The softirq vectors' names as tracefs prints them (the kernel's `softirq_to_name`).
const SOFTIRQ_NAMES: [&str; 10] = [
    "HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU",
];

/// The name tracefs gives softirq vector `vec` (`[action=NET_RX]`); a number the kernel does
/// not name is given as the number.
pub fn softirq_name(vec: u32) -> std::borrow::Cow<'static, str> {
    match SOFTIRQ_NAMES.get(vec as usize) {
        Some(name) => (*name).into(),
        None => vec.to_string().into(),
    }
}

impl Kind {
    fn from_raw(raw: u32) -> Option<Kind> {
        match raw {
            1 => Some(Kind::Switch),
            2 => Some(Kind::Wakeup),
            3 => Some(Kind::IrqEntry),
            4 => Some(Kind::IrqExit),
            5 => Some(Kind::VectorEntry),
            6 => Some(Kind::VectorExit),
            7 => Some(Kind::HrtimerEntry),
            // 8 was the hrtimer callback's end: never reused, so an old record is no event.
            9 => Some(Kind::SoftirqEntry),
            10 => Some(Kind::SoftirqExit),
            11 => Some(Kind::WorkStart),
            12 => Some(Kind::WorkEnd),
            13 => Some(Kind::Nmi),
            _ => None,
        }
    }
}

/// One event as the BPF program wrote it (64 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct RawRecord {
    /// `bpf_ktime_get_ns`: CLOCK_MONOTONIC nanoseconds.
    pub ts: u64,
    /// The kind in the low byte (see [`RawRecord::kind`]), flags above.
    pub kind: u32,
    /// Switch: the previous task's state; wake-up: the target CPU; interrupt: its number;
    /// softirq: its vector number.
    pub arg: u32,
    /// Switch: the previous task; wake-up: the woken task; interrupt: the interrupted task.
    pub a_pid: u32,
    pub a_prio: i32,
    /// Switch: the next task; wake-up: the waker; interrupt exit: the handler's return value.
    pub b_pid: u32,
    pub b_prio: i32,
    /// Empty for the idle task (pid 0), whose name ("swapper/N") is the CPU's.
    pub a_comm: [u8; 16],
    /// Interrupt entry: the handler's name; hrtimer entry, work start, NMI: the function's
    /// address (and the NMI's duration); else, like `a_comm`, empty for the idle task.
    pub b_comm: [u8; 16],
}

impl RawRecord {
    /// The kind, or `None` for a slot never written.
    pub fn kind(&self) -> Option<Kind> {
        Kind::from_raw(self.kind & 0xff)
    }

    /// For an hrtimer entry: the callback's address (kept in `b_comm`).
    pub fn hrtimer_function(&self) -> u64 {
        self.function()
    }

    /// For an hrtimer entry, a work item's start or an NMI: the address of the callback, the
    /// work function or the handler (kept in `b_comm`).
    pub fn function(&self) -> u64 {
        u64::from_ne_bytes(self.b_comm[..8].try_into().unwrap())
    }

    /// For an NMI: how long its handler ran before the record, in ns (kept in `b_comm`
    /// after the handler; the kernel's signed value, 0 if negative).
    pub fn nmi_delta_ns(&self) -> u64 {
        let raw = i64::from_ne_bytes(self.b_comm[8..].try_into().unwrap());
        u64::try_from(raw).unwrap_or(0)
    }

    /// For a switch: the previous task was preempted (still runnable), not blocked.
    pub fn preempted(&self) -> bool {
        self.kind & FLAG_PREEMPTED != 0
    }
}

/// Turns a NUL-padded kernel name into a string.
pub fn comm(raw: &[u8; 16]) -> String {
    let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
    String::from_utf8_lossy(&raw[..end]).into_owned()
}

/// One CPU's ring as stored in the map.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct RawRing {
    /// Records written so far; the next goes to `recs[head % RING_LEN]`.
    pub head: u64,
    pub recs: [RawRecord; RING_LEN],
}

// SAFETY: plain integers and byte arrays, no padding (64-byte records after an 8-byte head),
// every bit pattern valid.
unsafe impl aya::Pod for RawRing {}

impl RawRing {
    /// The records in the order they were written, oldest first (at most `RING_LEN`).
    pub fn ordered(&self) -> Vec<RawRecord> {
        let written = self.head as usize;
        let n = written.min(RING_LEN);
        (written - n..written)
            .map(|i| self.recs[i % RING_LEN])
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_is_64_bytes() {
        assert_eq!(std::mem::size_of::<RawRecord>(), 64);
        assert_eq!(std::mem::size_of::<RawRing>(), 8 + 64 * RING_LEN);
    }

    fn ring_with(head: u64) -> RawRing {
        let blank = RawRecord {
            ts: 0,
            kind: 0,
            arg: 0,
            a_pid: 0,
            a_prio: 0,
            b_pid: 0,
            b_prio: 0,
            a_comm: [0; 16],
            b_comm: [0; 16],
        };
        let mut ring = RawRing {
            head,
            recs: [blank; RING_LEN],
        };
        for i in 0..head {
            ring.recs[i as usize % RING_LEN].ts = i;
        }
        ring
    }

    #[test]
    fn ordered_is_oldest_first_after_wrapping() {
        let ring = ring_with(3);
        assert_eq!(
            ring.ordered().iter().map(|r| r.ts).collect::<Vec<_>>(),
            vec![0, 1, 2]
        );
        let ring = ring_with(RING_LEN as u64 + 5);
        let ts: Vec<u64> = ring.ordered().iter().map(|r| r.ts).collect();
        assert_eq!(ts.len(), RING_LEN);
        assert_eq!(ts[0], 5);
        assert!(ts.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn kind_and_preemption_share_a_field() {
        let mut r = ring_with(1).recs[0];
        assert_eq!(r.kind(), None);
        r.kind = 1 | FLAG_PREEMPTED;
        assert_eq!(r.kind(), Some(Kind::Switch));
        assert!(r.preempted());
        r.kind = 2;
        assert_eq!(r.kind(), Some(Kind::Wakeup));
        assert!(!r.preempted());
    }

    #[test]
    fn softirqs_are_named_as_tracefs_names_them() {
        assert_eq!(softirq_name(0), "HI");
        assert_eq!(softirq_name(3), "NET_RX");
        assert_eq!(softirq_name(9), "RCU");
        // A vector a later kernel may add, or a garbled record: its number, no panic.
        assert_eq!(softirq_name(10), "10");
        assert_eq!(softirq_name(u32::MAX), "4294967295");
    }

    #[test]
    fn new_kinds_start_after_the_retired_hrtimer_exit() {
        let mut r = ring_with(1).recs[0];
        let kinds: Vec<Option<Kind>> = (7..=14)
            .map(|k| {
                r.kind = k;
                r.kind()
            })
            .collect();
        assert_eq!(
            kinds,
            [
                Some(Kind::HrtimerEntry),
                None,
                Some(Kind::SoftirqEntry),
                Some(Kind::SoftirqExit),
                Some(Kind::WorkStart),
                Some(Kind::WorkEnd),
                Some(Kind::Nmi),
                None
            ]
        );
    }

    #[test]
    fn an_nmi_keeps_its_handler_and_duration() {
        let mut r = ring_with(1).recs[0];
        r.b_comm[..8].copy_from_slice(&0xffff_ffff_8100_1234u64.to_ne_bytes());
        r.b_comm[8..].copy_from_slice(&2_500i64.to_ne_bytes());
        assert_eq!(
            (r.function(), r.nmi_delta_ns()),
            (0xffff_ffff_8100_1234, 2_500)
        );
        r.b_comm[8..].copy_from_slice(&(-1i64).to_ne_bytes());
        assert_eq!(r.nmi_delta_ns(), 0);
    }

    #[test]
    fn comm_stops_at_nul() {
        let mut raw = [0u8; 16];
        raw[..4].copy_from_slice(b"sshd");
        assert_eq!(comm(&raw), "sshd");
        assert_eq!(comm(&[b'x'; 16]), "x".repeat(16));
    }
}
