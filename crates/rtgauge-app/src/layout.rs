//! The shared-memory layout, defined once for the application (producer) and the collector
//! (reader). Everything here is `#[repr(C)]` and versioned by [`LAYOUT_VERSION`]: a reader
//! refuses a file whose magic, version or sizes it does not know instead of misreading it.
//!
//! ```text
//! offset 0            Header (magic, version, sizes, pid, counters, point table)
//! rings_offset        ring 0: RingControl (head, tail, dropped, owner) + records
//! + ring_stride       ring 1 ...                       (max_rings rings)
//! ```

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// The first eight bytes of every file; written last by the creator, so a reader that sees
/// it sees a complete header.
pub const MAGIC: [u8; 8] = *b"RTGAPP\0\x01";
/// Bumped whenever the meaning of any byte changes.
pub const LAYOUT_VERSION: u32 = 2;
/// Points one process can register.
pub const MAX_POINTS: usize = 256;
/// Threads that can record at once (one ring each; a thread's ring is reused after it exits).
pub const MAX_RINGS: usize = 32;
/// Records per ring (a power of two): at 1 kHz and three records a cycle, over a second of
/// slack for a collector that drains every few milliseconds.
pub const RING_RECORDS: usize = 4096;
/// Longest point name, in bytes.
pub const NAME_MAX: usize = 63;
/// Values of an object snapshot.
pub const OBJECT_VALUES: usize = 4;
/// Where the files go unless `RTGAUGE_APP_DIR` says otherwise.
pub const DEFAULT_DIR: &str = "/dev/shm";
/// Environment variable: the directory of the shared-memory file.
pub const DIR_ENV: &str = "RTGAUGE_APP_DIR";
/// Environment variable: the globs of enabled points (`servo.*,-servo.debug`).
pub const POINTS_ENV: &str = "RTGAUGE_POINTS";

/// The file of process `pid` in `dir`.
pub fn file_name(pid: u32) -> String {
    format!("rtgauge-app-{pid}")
}

/// What a point measures; also the kind of each record.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A begin/end pair, recorded as one record at the end: begin time and duration.
    Interval = 1,
    /// A value at a time (u64).
    EventU64 = 2,
    /// A value at a time (f64, stored as its bits).
    EventF64 = 3,
    /// An increment of a counter.
    Counter = 4,
    /// A snapshot of up to [`OBJECT_VALUES`] application variables.
    Object = 5,
}

impl Kind {
    pub fn from_u32(v: u32) -> Option<Kind> {
        Some(match v {
            1 => Kind::Interval,
            2 => Kind::EventU64,
            3 => Kind::EventF64,
            4 => Kind::Counter,
            5 => Kind::Object,
            _ => return None,
        })
    }

    /// The kind as documents and messages name it.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Interval => "interval",
            Kind::EventU64 | Kind::EventF64 => "event",
            Kind::Counter => "counter",
            Kind::Object => "object",
        }
    }
}

/// One record: 48 bytes.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Record {
    /// The begin of an interval, the time of anything else: in the file, a stamp of the
    /// header's clock; as the reader hands it out, CLOCK_MONOTONIC in ns.
    pub ts_ns: u64,
    /// Index in the point table.
    pub point: u32,
    /// A [`Kind`] as u32.
    pub kind: u32,
    /// Interval: [duration (in the header's clock, ns once read), deadline ns
    /// (CLOCK_MONOTONIC) or 0, -, -]. Event: [value, ...]. Counter:
    /// [increment, ...]. Object: the snapshot.
    pub values: [u64; OBJECT_VALUES],
}

/// One entry of the point table.
#[repr(C)]
pub struct PointSlot {
    /// NUL-padded UTF-8 (validated at registration).
    pub name: [u8; NAME_MAX + 1],
    pub kind: u32,
    /// 1 when the point's globs enabled it.
    pub enabled: u32,
    /// Declared period (0: not periodic).
    pub period_ns: u64,
    /// 1 once the fields above are written (release), so a reader never sees half a name.
    pub ready: AtomicU32,
    _reserved: [u8; 44],
}

/// The fixed head of the file.
#[repr(C)]
pub struct Header {
    pub magic: [u8; 8],
    pub version: u32,
    pub header_bytes: u32,
    pub pid: u32,
    pub max_points: u32,
    pub max_rings: u32,
    pub ring_records: u32,
    pub record_bytes: u32,
    pub ring_control_bytes: u32,
    pub rings_offset: u64,
    pub ring_stride: u64,
    /// CLOCK_MONOTONIC when the file was created.
    pub created_ns: u64,
    /// The counter at the same time (equal to `created_ns` under [`crate::clock::MONOTONIC`]).
    pub created_counter: u64,
    /// What stamps the records: [`crate::clock::MONOTONIC`] or [`crate::clock::COUNTER`].
    pub clock: u32,
    _reserved: u32,
    /// Points registered (entries of `points` in use).
    pub points_registered: AtomicU32,
    /// Process id of the collector draining the rings (0: none): one collector at a time.
    pub collector_pid: AtomicU32,
    /// Records of threads that found no free ring (more than [`MAX_RINGS`] threads at once).
    pub dropped_without_ring: AtomicU64,
    pub points: [PointSlot; MAX_POINTS],
}

/// Ring states.
pub const RING_FREE: u32 = 0;
pub const RING_OWNED: u32 = 1;

/// The control block of one single-producer single-consumer ring. `head` is written by the
/// producer only and `tail` by the collector only, each on its own cache line.
#[repr(C, align(64))]
pub struct RingControl {
    /// Records ever written (release after the record's bytes).
    pub head: AtomicU64,
    _pad0: [u8; 56],
    /// Records ever consumed.
    pub tail: AtomicU64,
    _pad1: [u8; 56],
    /// Records not written because the ring was full.
    pub dropped: AtomicU64,
    /// Thread id of the producer (0 when free).
    pub owner_tid: AtomicU32,
    /// [`RING_FREE`] or [`RING_OWNED`].
    pub state: AtomicU32,
    _pad2: [u8; 48],
}

const fn round_up(v: usize, to: usize) -> usize {
    v.div_ceil(to) * to
}

/// Pages are at most this large on the machines rtgauge targets; rings start on such a
/// boundary so prefaulting one never touches another.
const ALIGN: usize = 4096;
pub const RINGS_OFFSET: usize = round_up(size_of::<Header>(), ALIGN);
pub const RING_STRIDE: usize = round_up(
    size_of::<RingControl>() + RING_RECORDS * size_of::<Record>(),
    ALIGN,
);
/// Size of the whole file.
pub const FILE_BYTES: usize = RINGS_OFFSET + MAX_RINGS * RING_STRIDE;

impl RingControl {
    /// The record slots following the control block.
    ///
    /// # Safety
    /// `self` must be a ring inside a mapping laid out as above.
    #[inline]
    pub unsafe fn slots(&self) -> *mut Record {
        (self as *const RingControl as *mut u8).add(size_of::<RingControl>()) as *mut Record
    }

    /// Producer side: writes one record or counts it as dropped. Never blocks, never
    /// allocates, no system call.
    ///
    /// # Safety
    /// Only the thread owning this ring may call it, on a ring of [`RING_RECORDS`] slots.
    #[inline]
    pub unsafe fn push(&self, record: &Record) {
        let head = self.head.load(Ordering::Relaxed);
        let tail = self.tail.load(Ordering::Acquire);
        if head.wrapping_sub(tail) >= RING_RECORDS as u64 {
            // Only this thread writes `dropped`: a load and a store, no locked instruction.
            let d = self.dropped.load(Ordering::Relaxed);
            self.dropped.store(d + 1, Ordering::Relaxed);
            return;
        }
        let slot = self.slots().add(head as usize & (RING_RECORDS - 1));
        std::ptr::write_volatile(slot, *record);
        self.head.store(head + 1, Ordering::Release);
    }
}

/// Layout facts a reader checks against a file's header.
pub fn header_matches(h: &Header) -> bool {
    h.version == LAYOUT_VERSION
        && h.header_bytes as usize == size_of::<Header>()
        && h.max_points as usize == MAX_POINTS
        && h.max_rings as usize == MAX_RINGS
        && h.ring_records as usize == RING_RECORDS
        && h.record_bytes as usize == size_of::<Record>()
        && h.ring_control_bytes as usize == size_of::<RingControl>()
        && h.rings_offset as usize == RINGS_OFFSET
        && h.ring_stride as usize == RING_STRIDE
        && matches!(h.clock, crate::clock::MONOTONIC | crate::clock::COUNTER)
}

/// Fills a zeroed header (the magic last, released).
///
/// # Safety
/// `h` points to a zeroed, writable header no one else uses yet.
pub unsafe fn init_header(h: *mut Header, pid: u32, clock: u32, created: crate::clock::Pair) {
    let h = &mut *h;
    h.version = LAYOUT_VERSION;
    h.header_bytes = size_of::<Header>() as u32;
    h.pid = pid;
    h.max_points = MAX_POINTS as u32;
    h.max_rings = MAX_RINGS as u32;
    h.ring_records = RING_RECORDS as u32;
    h.record_bytes = size_of::<Record>() as u32;
    h.ring_control_bytes = size_of::<RingControl>() as u32;
    h.rings_offset = RINGS_OFFSET as u64;
    h.ring_stride = RING_STRIDE as u64;
    h.created_ns = created.ns;
    h.created_counter = created.counter;
    h.clock = clock;
    std::sync::atomic::fence(Ordering::Release);
    std::ptr::write_volatile(&mut h.magic, MAGIC);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_fixed_by_the_layout() {
        assert_eq!(size_of::<Record>(), 48);
        assert_eq!(size_of::<PointSlot>(), 128);
        assert_eq!(size_of::<RingControl>(), 192);
        assert!(RING_RECORDS.is_power_of_two());
        assert_eq!(RINGS_OFFSET % ALIGN, 0);
        assert_eq!(RING_STRIDE % ALIGN, 0);
    }

    #[test]
    fn every_kind_survives_its_number() {
        for k in [
            Kind::Interval,
            Kind::EventU64,
            Kind::EventF64,
            Kind::Counter,
            Kind::Object,
        ] {
            assert_eq!(Kind::from_u32(k as u32), Some(k));
        }
        assert_eq!(Kind::from_u32(0), None);
        assert_eq!(Kind::from_u32(6), None);
    }
}
