//! `alloc`: allocation and free time as a function of size (Arm et al. 2016, figs. 3–5), for the C
//! library's malloc, a bounded-time TLSF allocator over a preallocated locked pool, and
//! anonymous mmap/munmap; plus a fragmenting scenario with random sizes and lifetimes.
//!
//! Sweep: for each allocator and size, one sample is
//! `t0 alloc t1 touch t2 free t3`, recorded as `alloc` = t1 − t0, `first_touch` = t2 − t1
//! (one byte written per page of the fresh block: the page faults an allocator defers) and
//! `free` = t3 − t2. First touch is kept out of `alloc` because mmap (and malloc above its
//! mmap threshold) returns untouched memory whose cost only shows on first use.
//!
//! Fragment: a working set of `fragment-slots` slots; each step picks a slot at random and
//! frees its block if it holds one, or allocates a random size (log-uniform between 16 B and
//! `fragment-max-size`) into it. Lifetimes are therefore random (geometric). The worst case is
//! the maximum of `fragment_alloc`/`fragment_free`; how much memory the live set really costs
//! is in the series' metrics.
//!
//! Each allocator runs its fragment scenario first, then the sweep in increasing sizes (the
//! sweep changes glibc's state: freeing a large mmapped block raises its mmap threshold).
//! Under `mlockall(MCL_FUTURE)` (mode `rt`) mmap faults every page in at once, so the cost
//! that `first_touch` shows in mode `normal` moves into `alloc` there.
//!
//! Budget: `loops` is the number of samples per cell (one size of one allocator, or one
//! allocator's fragment scenario); a duration is split evenly over the cells, and so is the
//! warm-up. Every cell runs at least one discarded warm-up iteration.

use rlsf::Tlsf;
use rtgauge_core::clock::now_ns;
use rtgauge_core::probe::{flag, size_list};
use rtgauge_core::probe::{
    About, ParamSpec, Params, ProbeConfig, ProbeContext, ProbeError, ProbeOutput, TypedProbe,
};
use rtgauge_core::sys::memory::{page_size, round_up, Region};
use rtgauge_core::threads::{describe_split, on_first_cpu, split, warm_up, Cell};
use rtgauge_core::units::{format_size, format_size_exact, format_size_list};
use rtgauge_result::Series;
use rtgauge_stats::{Recorder, DEFAULT_INTERVAL_NS};
use std::alloc::Layout;
use std::collections::BTreeMap;
use std::ptr::NonNull;

const PROBE: &str = crate::names::ALLOC;
pub const ALLOCATORS: [&str; 3] = ["malloc", "tlsf", "mmap"];
pub const SCENARIOS: [&str; 2] = ["sweep", "fragment"];
const DESCRIPTION: &str =
    "allocation, free and first-touch time vs size (malloc, TLSF pool, mmap), and a fragmenting scenario";
const ABOUT: About = About::new(PROBE, DESCRIPTION, &PARAMS);
const PARAMS: [ParamSpec; 10] = [
    ParamSpec::new(
        "sizes",
        "powers of two from min-size to max-size",
        "explicit allocation sizes, e.g. 16,4KiB,1MiB (instead of min-size/max-size)",
    ),
    ParamSpec::new("min-size", "16B", "smallest size of the power-of-two sweep"),
    ParamSpec::new(
        "max-size",
        "64MiB",
        "largest size of the power-of-two sweep",
    ),
    ParamSpec::new(
        "allocators",
        "all",
        "malloc (the C library), tlsf (TLSF over a locked pool), mmap; a list or all",
    ),
    ParamSpec::new(
        "scenarios",
        "all",
        "sweep (each size in turn) and fragment (random sizes and lifetimes); a list or all",
    ),
    ParamSpec::new(
        "touch",
        "yes",
        "write every page after allocating, timed apart as first_touch; yes or no",
    ),
    ParamSpec::new(
        "tlsf-pool",
        "sized from the largest size and the fragment working set",
        "size of the TLSF pool, allocated and locked before measuring",
    ),
    ParamSpec::new(
        "fragment-slots",
        "1024",
        "live allocations the fragmenting scenario keeps",
    ),
    ParamSpec::new(
        "fragment-max-size",
        "64KiB",
        "largest allocation of the fragmenting scenario (at least 16B)",
    ),
    ParamSpec::new(
        "seed",
        "1",
        "seed of the fragmenting scenario's random sizes and lifetimes, so runs repeat exactly",
    ),
];
pub const DEFAULT_MIN_SIZE: u64 = 16;
pub const DEFAULT_MAX_SIZE: u64 = 64 << 20;
const DEFAULT_SLOTS: u64 = 1024;
const DEFAULT_FRAGMENT_MAX: u64 = 64 << 10;
const FRAGMENT_MIN: u64 = 16;
/// Alignment asked of every allocator: what malloc guarantees on 64-bit Linux.
const ALIGN: usize = 16;

pub struct Alloc;

impl TypedProbe for Alloc {
    const ABOUT: About = ABOUT;
    type Config = Config;

    fn measure(&self, ctx: &ProbeContext, cfg: &mut Config) -> Result<ProbeOutput, ProbeError> {
        let (obtained, (series, warnings, measured_ns)) =
            on_first_cpu(PROBE, ctx, |_, _| measure(ctx, cfg))?;
        let cell = split(ctx, cfg.cells());
        let mut out = ProbeOutput::measured(obtained, series, warnings, measured_ns);
        let p = &mut out.params;
        p.insert("cells".into(), cfg.cells().to_string());
        p.insert("budget-per-cell".into(), describe_split(&cell));
        Ok(out)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Malloc,
    Tlsf,
    Mmap,
}

impl Kind {
    fn parse(s: &str) -> Kind {
        match s {
            "malloc" => Kind::Malloc,
            "tlsf" => Kind::Tlsf,
            _ => Kind::Mmap,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Malloc => "malloc",
            Kind::Tlsf => "tlsf",
            Kind::Mmap => "mmap",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Config {
    sizes: Vec<u64>,
    allocators: Vec<Kind>,
    sweep: bool,
    fragment: bool,
    touch: bool,
    tlsf_pool: Option<u64>,
    slots: u64,
    fragment_max: u64,
    seed: u64,
}

impl Config {
    fn cells(&self) -> usize {
        let per_allocator =
            if self.sweep { self.sizes.len() } else { 0 } + usize::from(self.fragment);
        per_allocator * self.allocators.len()
    }

    /// The TLSF pool: room for the largest size (TLSF rounds a request up to its size class,
    /// up to 1/16 more) and for a fragment working set whose every slot holds the largest
    /// fragment size, plus slack for headers.
    fn pool_bytes(&self) -> u64 {
        if let Some(p) = self.tlsf_pool {
            return p;
        }
        let largest = if self.sweep {
            self.sizes.iter().copied().max().unwrap_or(0)
        } else {
            0
        };
        let fragment = if self.fragment {
            self.slots * (self.fragment_max + 64)
        } else {
            0
        };
        round_up(largest + largest / 4, 4096).max(fragment) + (1 << 20)
    }
}

fn invalid(message: String) -> ProbeError {
    ProbeError::Invalid {
        probe: PROBE,
        message,
    }
}

fn config(params: &Params) -> Result<Config, ProbeError> {
    let sizes = size_list(PROBE, params, DEFAULT_MIN_SIZE, DEFAULT_MAX_SIZE)?;
    if sizes.is_empty() {
        return Err(invalid(
            "parameter sizes: no size given; e.g. sizes=16,4KiB,1MiB".into(),
        ));
    }
    if let Some(&s) = sizes.iter().find(|&&s| s > isize::MAX as u64 / 2) {
        return Err(invalid(format!(
            "parameter sizes: {} is larger than this machine can address; use at most a few GiB",
            format_size(s)
        )));
    }
    let allocators = params
        .choices("allocators", "all", &ALLOCATORS)?
        .iter()
        .map(|s| Kind::parse(s))
        .collect();
    let scenarios = params.choices("scenarios", "all", &SCENARIOS)?;
    let fragment_max = params.size("fragment-max-size", DEFAULT_FRAGMENT_MAX)?;
    if fragment_max < FRAGMENT_MIN {
        return Err(invalid(format!(
            "parameter fragment-max-size: {} is below the smallest fragment size 16B",
            format_size(fragment_max)
        )));
    }
    let tlsf_pool = params
        .raw()
        .contains_key("tlsf-pool")
        .then(|| params.size("tlsf-pool", 0))
        .transpose()?;
    Ok(Config {
        sizes,
        allocators,
        sweep: scenarios.iter().any(|s| s == "sweep"),
        fragment: scenarios.iter().any(|s| s == "fragment"),
        touch: flag(PROBE, params, "touch", true)?,
        tlsf_pool,
        slots: params.count("fragment-slots", DEFAULT_SLOTS)?,
        fragment_max,
        seed: params.count("seed", 1)?,
    })
}

impl ProbeConfig for Config {
    fn parse(params: &Params) -> Result<Config, ProbeError> {
        config(params)
    }

    fn resolved(&self) -> BTreeMap<String, String> {
        let mut p = BTreeMap::new();
        p.insert("sizes".into(), format_size_list(&self.sizes));
        p.insert(
            "allocators".into(),
            self.allocators
                .iter()
                .map(|k| k.name())
                .collect::<Vec<_>>()
                .join(","),
        );
        let scenarios: Vec<&str> = [(self.sweep, "sweep"), (self.fragment, "fragment")]
            .iter()
            .filter(|(on, _)| *on)
            .map(|(_, s)| *s)
            .collect();
        p.insert("scenarios".into(), scenarios.join(","));
        p.insert("touch".into(), if self.touch { "yes" } else { "no" }.into());
        if self.allocators.contains(&Kind::Tlsf) {
            p.insert("tlsf-pool".into(), format_size_exact(self.pool_bytes()));
        }
        if self.fragment {
            p.insert("fragment-slots".into(), self.slots.to_string());
            p.insert(
                "fragment-max-size".into(),
                format_size_exact(self.fragment_max),
            );
            p.insert("seed".into(), self.seed.to_string());
        }
        p
    }
}

/// A tiny xorshift64* generator: reproducible from its seed, no dependency, no allocation.
#[derive(Debug, Clone)]
pub(super) struct XorShift(u64);

impl XorShift {
    pub fn new(seed: u64) -> XorShift {
        // The state must never be 0; mix the seed so 1, 2, 3… give unrelated streams.
        XorShift((seed ^ 0x9E37_79B9_7F4A_7C15).max(1))
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A size spread evenly over the powers of two between `lo` and `hi` (log-uniform), so
    /// small and large blocks are both common, as in real programs.
    #[inline]
    pub fn size_between(&mut self, lo: u64, hi: u64) -> u64 {
        let (lo_log, hi_log) = (63 - lo.leading_zeros(), 63 - hi.leading_zeros());
        let e = lo_log + (self.next_u64() % u64::from(hi_log - lo_log + 1)) as u32;
        let base = 1u64 << e;
        (base + self.next_u64() % base).clamp(lo, hi)
    }
}

// ---------------------------------------------------------------------------------------------
// The allocators under test.

/// One allocator as the hot loops see it.
trait Allocator {
    /// A block of `size` bytes, or null when the allocator has none.
    fn alloc(&mut self, size: usize) -> *mut u8;
    /// # Safety
    /// `p` came from `alloc(size)` of this allocator and is not used afterwards.
    unsafe fn free(&mut self, p: *mut u8, size: usize);
}

struct Malloc;

impl Allocator for Malloc {
    #[inline(always)]
    fn alloc(&mut self, size: usize) -> *mut u8 {
        // SAFETY: malloc has no preconditions; black_box stops the compiler from eliding a
        // malloc/free pair whose memory is unused.
        std::hint::black_box(unsafe { libc::malloc(size) } as *mut u8)
    }

    #[inline(always)]
    unsafe fn free(&mut self, p: *mut u8, _size: usize) {
        libc::free(std::hint::black_box(p) as *mut _);
    }
}

struct Mmap;

impl Allocator for Mmap {
    #[inline(always)]
    fn alloc(&mut self, size: usize) -> *mut u8 {
        // SAFETY: anonymous private mapping; MAP_FAILED is turned into null.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                size,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            std::ptr::null_mut()
        } else {
            p as *mut u8
        }
    }

    #[inline(always)]
    unsafe fn free(&mut self, p: *mut u8, size: usize) {
        libc::munmap(p as *mut _, size);
    }
}

/// First-level classes: blocks up to 32 B << 28 = 8 GiB. Second level: 16 classes per power of
/// two, so a request is rounded up by at most 1/16.
type TlsfCore = Tlsf<'static, u32, u32, 28, 16>;
/// rlsf's per-block header (half its 32-byte granularity on 64-bit).
const TLSF_HEADER: u64 = rlsf::GRANULARITY as u64 / 2;

/// TLSF over a pool mapped, prefaulted and locked before any measurement.
struct TlsfPool {
    // Declared before `region` so the allocator (which points into it) is dropped first.
    tlsf: Box<TlsfCore>,
    region: Region,
    usable: usize,
}

impl TlsfPool {
    fn new(bytes: u64) -> Result<TlsfPool, ProbeError> {
        let region = Region::new(PROBE, bytes as usize, true)?;
        let mut tlsf: Box<TlsfCore> = Box::new(Tlsf::new());
        let block = NonNull::slice_from_raw_parts(
            NonNull::new(region.ptr)
                .ok_or_else(|| invalid("the TLSF pool mapping is null".into()))?,
            region.len,
        );
        // SAFETY: the region is owned by this struct and outlives `tlsf` (field order).
        let usable = unsafe { tlsf.insert_free_block_ptr(block) }
            .ok_or_else(|| {
                invalid(format!(
                    "tlsf-pool {} is too small to hold a block; use e.g. tlsf-pool=1MiB",
                    format_size(bytes)
                ))
            })?
            .get();
        Ok(TlsfPool {
            tlsf,
            region,
            usable,
        })
    }

    /// Whether a block of `size` bytes can be allocated now (allocated and freed at once).
    fn fits(&mut self, size: u64) -> bool {
        let p = self.alloc(size as usize);
        if p.is_null() {
            return false;
        }
        // SAFETY: p was just allocated with this size.
        unsafe { self.free(p, size as usize) };
        true
    }

    /// The largest block the pool can hand out now, by bisection (O(log n) allocations).
    fn largest_free_block(&mut self) -> u64 {
        let (mut lo, mut hi) = (0u64, self.usable as u64);
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if self.fits(mid) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        lo
    }
}

impl Allocator for TlsfPool {
    #[inline(always)]
    fn alloc(&mut self, size: usize) -> *mut u8 {
        // SAFETY: size > 0 is checked in config and ALIGN is a power of two.
        let layout = unsafe { Layout::from_size_align_unchecked(size.max(1), ALIGN) };
        match self.tlsf.allocate(layout) {
            Some(p) => p.as_ptr(),
            None => std::ptr::null_mut(),
        }
    }

    #[inline(always)]
    unsafe fn free(&mut self, p: *mut u8, _size: usize) {
        if let Some(p) = NonNull::new(p) {
            self.tlsf.deallocate(p, ALIGN);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Measurement.

/// Writes one byte in every page of a fresh block: what faults its pages in.
#[inline(always)]
fn touch_pages(p: *mut u8, size: usize, page: usize) {
    let mut off = 0;
    while off < size {
        // SAFETY: off < size, inside the block just allocated.
        unsafe { p.add(off).write_volatile(1) };
        off += page;
    }
}

struct SweepResult {
    alloc: Recorder,
    free: Recorder,
    first_touch: Option<Recorder>,
    failed: u64,
    measured_ns: u64,
}

/// One cell of the sweep: one allocator, one size. All recorders exist before the loop.
fn sweep_cell<A: Allocator>(
    ctx: &ProbeContext,
    a: &mut A,
    size: usize,
    touch: bool,
    cell: Cell,
    live: &rtgauge_core::live::LiveCell,
) -> SweepResult {
    let page = page_size();
    let mut alloc = Recorder::new(DEFAULT_INTERVAL_NS);
    let mut free = Recorder::new(DEFAULT_INTERVAL_NS);
    let mut first_touch = touch.then(|| Recorder::new(DEFAULT_INTERVAL_NS));
    warm_up(ctx, cell.warmup_ns, 1, || {
        let p = a.alloc(size);
        if !p.is_null() {
            if touch {
                touch_pages(p, size, page);
            }
            // SAFETY: p was allocated with this size just above.
            unsafe { a.free(p, size) };
        }
    });
    let (mut attempts, mut failed) = (0u64, 0u64);
    let start = now_ns();
    let mut now = start;
    while !ctx.stopped() && !cell.budget.done(start, now, attempts) {
        let t0 = now_ns();
        let p = a.alloc(size);
        let t1 = now_ns();
        attempts += 1;
        if p.is_null() {
            failed += 1;
            now = t1;
            continue;
        }
        let t2 = if let Some(ft) = first_touch.as_mut() {
            touch_pages(p, size, page);
            let t2 = now_ns();
            ft.record(t2 - t1, t0 - start);
            t2
        } else {
            t1
        };
        // SAFETY: p was allocated with this size in this iteration.
        unsafe { a.free(p, size) };
        let t3 = now_ns();
        alloc.record(t1 - t0, t0 - start);
        free.record(t3 - t2, t0 - start);
        live.publish(t1 - t0, failed);
        now = t3;
    }
    SweepResult {
        alloc,
        free,
        first_touch,
        failed,
        measured_ns: now - start,
    }
}

/// What the live set of the fragment scenario costs, measured after its loop.
trait Footprint: Allocator {
    /// Called before the scenario starts (e.g. to take a baseline).
    fn before_fragment(&mut self) {}
    /// Metrics describing the memory held for `live` (blocks still allocated).
    fn footprint(&mut self, live: &[(*mut u8, usize)], requested: u64) -> BTreeMap<String, f64>;
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// glibc's statistics, summed over all arenas.
#[derive(Debug, Clone, Copy, Default)]
struct MallocStats {
    /// Bytes held from the OS: arena heaps plus mmapped chunks.
    heap: u64,
    /// Bytes in allocated chunks (headers included), arenas plus mmapped chunks.
    in_use: u64,
    /// Free bytes kept inside the arenas: holes between live blocks, and what was not trimmed.
    free: u64,
}

fn malloc_stats() -> MallocStats {
    // SAFETY: mallinfo2 only reads allocator statistics.
    let m = unsafe { libc::mallinfo2() };
    MallocStats {
        heap: (m.arena + m.hblkhd) as u64,
        in_use: (m.uordblks + m.hblkhd) as u64,
        free: m.fordblks as u64,
    }
}

/// Malloc with its statistics from before the scenario.
struct MallocBaseline(MallocStats);

impl Allocator for (Malloc, MallocBaseline) {
    #[inline(always)]
    fn alloc(&mut self, size: usize) -> *mut u8 {
        self.0.alloc(size)
    }

    #[inline(always)]
    unsafe fn free(&mut self, p: *mut u8, size: usize) {
        self.0.free(p, size)
    }
}

impl Footprint for (Malloc, MallocBaseline) {
    fn before_fragment(&mut self) {
        // Return what earlier work left in the heaps, so the scenario starts from the floor.
        // SAFETY: malloc_trim has no preconditions.
        unsafe { libc::malloc_trim(0) };
        self.1 = MallocBaseline(malloc_stats());
    }

    fn footprint(&mut self, _live: &[(*mut u8, usize)], requested: u64) -> BTreeMap<String, f64> {
        let now = malloc_stats();
        let in_use = now.in_use.saturating_sub(self.1 .0.in_use);
        BTreeMap::from([
            ("in_use_bytes".into(), in_use as f64),
            ("footprint_ratio".into(), ratio(in_use, requested)),
            ("heap_bytes".into(), now.heap as f64),
            ("free_in_heap_bytes".into(), now.free as f64),
            ("external_fragmentation".into(), ratio(now.free, now.heap)),
        ])
    }
}

impl Footprint for TlsfPool {
    fn footprint(&mut self, live: &[(*mut u8, usize)], requested: u64) -> BTreeMap<String, f64> {
        // A TLSF block is the request plus a 16-byte header, rounded up to the 32-byte
        // granularity (rlsf's layout for alignments up to 16).
        let blocks: u64 = live
            .iter()
            .filter(|(p, _)| !p.is_null())
            .map(|&(_, s)| round_up(s as u64 + TLSF_HEADER, rlsf::GRANULARITY as u64))
            .sum();
        let free = (self.usable as u64).saturating_sub(blocks);
        let largest = self.largest_free_block();
        BTreeMap::from([
            ("pool_bytes".into(), self.usable as f64),
            ("pool_used_bytes".into(), blocks as f64),
            ("footprint_ratio".into(), ratio(blocks, requested)),
            ("largest_free_block_bytes".into(), largest as f64),
            (
                "external_fragmentation".into(),
                1.0 - ratio(largest.min(free), free),
            ),
            (
                "pool_locked".into(),
                if self.region.lock_error.is_none() {
                    1.0
                } else {
                    0.0
                },
            ),
        ])
    }
}

impl Footprint for Mmap {
    fn footprint(&mut self, live: &[(*mut u8, usize)], requested: u64) -> BTreeMap<String, f64> {
        let page = page_size() as u64;
        let mapped: u64 = live
            .iter()
            .filter(|(p, _)| !p.is_null())
            .map(|&(_, s)| round_up(s as u64, page))
            .sum();
        BTreeMap::from([
            ("mapped_bytes".into(), mapped as f64),
            ("footprint_ratio".into(), ratio(mapped, requested)),
        ])
    }
}

struct FragmentResult {
    alloc: Recorder,
    free: Recorder,
    failed: u64,
    metrics: BTreeMap<String, f64>,
    measured_ns: u64,
}

/// The fragmenting scenario for one allocator.
fn fragment_cell<A: Footprint>(
    ctx: &ProbeContext,
    a: &mut A,
    cfg: &Config,
    cell: Cell,
    live: &rtgauge_core::live::LiveCell,
) -> FragmentResult {
    let mut alloc = Recorder::new(DEFAULT_INTERVAL_NS);
    let mut free = Recorder::new(DEFAULT_INTERVAL_NS);
    let mut slots: Vec<(*mut u8, usize)> = vec![(std::ptr::null_mut(), 0); cfg.slots as usize];
    let mut rng = XorShift::new(cfg.seed);
    let (mut requested, mut peak, mut failed) = (0u64, 0u64, 0u64);
    a.before_fragment();

    // One step: free the chosen slot's block, or allocate into the empty slot. Returns
    // (duration, true for an allocation); None if the allocation failed.
    let mut step = |a: &mut A, requested: &mut u64| -> Option<(u64, bool)> {
        let r = rng.next_u64();
        let slot = &mut slots[(r % cfg.slots) as usize];
        if slot.0.is_null() {
            let size = rng.size_between(FRAGMENT_MIN, cfg.fragment_max) as usize;
            let t0 = now_ns();
            let p = a.alloc(size);
            let t1 = now_ns();
            if p.is_null() {
                return None;
            }
            *slot = (p, size);
            *requested += size as u64;
            Some((t1 - t0, true))
        } else {
            let (p, size) = *slot;
            let t0 = now_ns();
            // SAFETY: the slot holds a live block of this size from this allocator.
            unsafe { a.free(p, size) };
            let t1 = now_ns();
            *slot = (std::ptr::null_mut(), 0);
            *requested -= size as u64;
            Some((t1 - t0, false))
        }
    };

    // Warm-up fills the working set to its steady state (about half the slots live).
    warm_up(ctx, cell.warmup_ns, 2 * cfg.slots, || {
        step(a, &mut requested);
    });
    let start = now_ns();
    let mut now = start;
    let mut attempts = 0u64;
    while !ctx.stopped() && !cell.budget.done(start, now, attempts) {
        let at = now - start;
        attempts += 1;
        match step(a, &mut requested) {
            Some((d, true)) => {
                alloc.record(d, at);
                peak = peak.max(requested);
                live.publish(d, failed);
            }
            Some((d, false)) => free.record(d, at),
            None => failed += 1,
        }
        now = now_ns();
    }
    let live_blocks = slots.iter().filter(|(p, _)| !p.is_null()).count();
    let mut metrics = a.footprint(&slots, requested);
    metrics.insert("requested_bytes".into(), requested as f64);
    metrics.insert("requested_peak_bytes".into(), peak as f64);
    metrics.insert("live_blocks".into(), live_blocks as f64);
    for &(p, size) in slots.iter().filter(|(p, _)| !p.is_null()) {
        // SAFETY: every non-null slot holds a live block of its size.
        unsafe { a.free(p, size) };
    }
    FragmentResult {
        alloc,
        free,
        failed,
        metrics,
        measured_ns: now - start,
    }
}

/// Measures every cell on the calling (measuring) thread; returns (series, warnings, measured).
fn measure(
    ctx: &ProbeContext,
    cfg: &Config,
) -> Result<(Vec<Series>, Vec<String>, u64), ProbeError> {
    let cell = split(ctx, cfg.cells());
    let live = ctx.live.register("alloc".into());
    let mut series = Vec::new();
    let mut warnings = Vec::new();
    let mut measured = 0u64;

    for &kind in &cfg.allocators {
        if ctx.stopped() {
            break;
        }
        let name = kind.name();
        let mut pool = None;
        let mut unfit = Vec::new();
        if kind == Kind::Tlsf {
            let mut p = TlsfPool::new(cfg.pool_bytes())?;
            if let Some(e) = &p.region.lock_error {
                warnings.push(format!(
                    "tlsf: the {} pool is prefaulted but not locked (mlock: {e}); it may be paged out: run as root or raise RLIMIT_MEMLOCK",
                    format_size(p.region.len as u64),
                ));
            }
            if cfg.sweep {
                unfit = cfg.sizes.iter().copied().filter(|&s| !p.fits(s)).collect();
            }
            if !unfit.is_empty() {
                warnings.push(format!(
                    "tlsf: sizes {} do not fit the {} pool (largest block {}) and were not measured; raise tlsf-pool",
                    unfit.iter().map(|&s| format_size(s)).collect::<Vec<_>>().join(", "),
                    format_size(p.region.len as u64),
                    format_size(p.largest_free_block())
                ));
            }
            pool = Some(p);
        }
        // The fragment scenario runs first, on an allocator the sweep has not shaped yet
        // (the sweep raises glibc's mmap threshold and leaves free memory in the heap).
        if cfg.fragment && !ctx.stopped() {
            let r = match (kind, pool.as_mut()) {
                (Kind::Malloc, _) => fragment_cell(
                    ctx,
                    &mut (Malloc, MallocBaseline(MallocStats::default())),
                    cfg,
                    cell,
                    &live,
                ),
                (Kind::Mmap, _) => fragment_cell(ctx, &mut Mmap, cfg, cell, &live),
                (Kind::Tlsf, Some(p)) => fragment_cell(ctx, p, cfg, cell, &live),
                (Kind::Tlsf, None) => continue,
            };
            measured += r.measured_ns;
            if r.failed > 0 {
                warnings.push(format!(
                    "{name}: {} fragment-scenario allocations failed (pool exhausted); raise tlsf-pool or lower fragment-slots",
                    r.failed
                ));
            }
            let mut a = Series::new("fragment_alloc", r.alloc.summary())
                .label("allocator", name)
                .counter("failed", r.failed);
            a.metrics = r.metrics;
            series.push(a);
            series.push(Series::new("fragment_free", r.free.summary()).label("allocator", name));
        }
        if cfg.sweep {
            for &size in &cfg.sizes {
                if ctx.stopped() {
                    break;
                }
                if unfit.contains(&size) {
                    continue;
                }
                let s = size as usize;
                let r = match (kind, pool.as_mut()) {
                    (Kind::Malloc, _) => sweep_cell(ctx, &mut Malloc, s, cfg.touch, cell, &live),
                    (Kind::Mmap, _) => sweep_cell(ctx, &mut Mmap, s, cfg.touch, cell, &live),
                    (Kind::Tlsf, Some(p)) => sweep_cell(ctx, p, s, cfg.touch, cell, &live),
                    (Kind::Tlsf, None) => continue,
                };
                measured += r.measured_ns;
                if r.failed > 0 {
                    warnings.push(format!(
                        "{name}: {} of {} allocations of {} failed",
                        r.failed,
                        r.failed + r.alloc.count(),
                        format_size(size)
                    ));
                }
                let labelled = |s: Series| {
                    let mut s = s
                        .label("allocator", name)
                        .label("size", format_size_exact(size));
                    s.metrics.insert("size_bytes".into(), size as f64);
                    s
                };
                series.push(labelled(
                    Series::new("alloc", r.alloc.summary()).counter("failed", r.failed),
                ));
                series.push(labelled(Series::new("free", r.free.summary())));
                if let Some(ft) = r.first_touch {
                    series.push(labelled(Series::new("first_touch", ft.summary())));
                }
            }
        }
    }
    Ok((series, warnings, measured))
}

/// How this probe's runs read in the summary at the end of a run (and atop `show` and the
/// report): the renderer asks the probe, it knows no probe names.
mod summary_rows {
    use rtgauge_report::format::{per_op, TimeUnit};
    use rtgauge_report::summary::{bend_size, fmt, size_groups, size_of, Cells, SummaryRows};
    use rtgauge_result::units::format_size;
    use rtgauge_result::{ProbeRun, Series};

    impl SummaryRows for super::Alloc {
        fn probe(&self) -> &'static str {
            super::ABOUT.name
        }

        fn question(&self) -> &'static str {
            "allocation, worst case"
        }

        fn columns(&self, _runs: &[&ProbeRun]) -> Vec<String> {
            vec!["max".into(), "at size".into(), "bends at".into()]
        }

        fn rows(&self, run: &ProbeRun, _runs: &[&ProbeRun], unit: TimeUnit) -> Vec<Cells> {
            alloc_rows(run, unit)
        }
    }

    /// Per allocator: the worst allocation time, its size, and where the median cost bends.
    fn alloc_rows(run: &ProbeRun, unit: TimeUnit) -> Vec<Cells> {
        size_groups(run, "alloc", "allocator")
            .into_iter()
            .map(|(allocator, series)| {
                let worst = series
                    .iter()
                    .max_by(|a, b| {
                        let m = |s: &Series| per_op(s, s.stats.max_ns).unwrap_or(0.0);
                        m(a).total_cmp(&m(b))
                    })
                    .copied();
                let (max, at) = match worst {
                    Some(s) => (fmt(unit, s, s.stats.max_ns), format_size(size_of(s))),
                    None => ("–".into(), "–".into()),
                };
                (allocator, vec![max, at, bend_size(&series, false)])
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_sizes_are_powers_of_two_from_16b_to_64mib() {
        let cfg = config(&Params::of(PROBE, &[])).unwrap();
        assert_eq!(cfg.sizes.first(), Some(&16));
        assert_eq!(cfg.sizes.last(), Some(&(64 << 20)));
        assert_eq!(cfg.sizes.len(), 23);
        assert_eq!(cfg.allocators.len(), 3);
        assert_eq!(cfg.cells(), 3 * 23 + 3);
    }

    #[test]
    fn bad_parameters_name_what_is_wrong() {
        let e = config(&Params::of(PROBE, &[("sizes", "0")]))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("probe alloc: parameter sizes: '0' is not a positive size"),
            "{e}"
        );
        let e = config(&Params::of(PROBE, &[("allocators", "jemalloc")]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown allocators 'jemalloc'"), "{e}");
        let e = config(&Params::of(PROBE, &[("sizes", "16"), ("max-size", "1MiB")]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("not both"), "{e}");
        let e = config(&Params::of(
            PROBE,
            &[("min-size", "1MiB"), ("max-size", "4KiB")],
        ))
        .unwrap_err()
        .to_string();
        assert!(e.contains("smaller than min-size"), "{e}");
        assert!(config(&Params::of(PROBE, &[("touch", "maybe")])).is_err());
    }

    #[test]
    fn xorshift_is_reproducible_and_sizes_stay_in_range() {
        let (mut a, mut b) = (XorShift::new(7), XorShift::new(7));
        for _ in 0..10_000 {
            let s = a.size_between(16, 65536);
            assert_eq!(s, b.size_between(16, 65536));
            assert!((16..=65536).contains(&s));
        }
        assert_ne!(XorShift::new(1).next_u64(), XorShift::new(2).next_u64());
    }

    #[test]
    fn tlsf_pool_serves_sizes_in_constant_pool_and_reports_what_does_not_fit() {
        let mut pool = TlsfPool::new(4 << 20).unwrap();
        assert!(pool.fits(1 << 20));
        assert!(!pool.fits(8 << 20));
        let largest = pool.largest_free_block();
        assert!(largest > 3 << 20 && largest < 4 << 20, "{largest}");
        let p = pool.alloc(1000);
        assert!(!p.is_null());
        touch_pages(p, 1000, page_size());
        // SAFETY: allocated just above.
        unsafe { pool.free(p, 1000) };
        assert_eq!(pool.largest_free_block(), largest, "freeing coalesces back");
    }
}
