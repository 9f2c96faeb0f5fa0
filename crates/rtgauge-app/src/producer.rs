//! The application's side: registration (once, may allocate and call the kernel) and
//! recording (the hot path: no system call, lock, allocation or wait).

use crate::clock;
use crate::layout::{self, Header, Kind, Record, RingControl, OBJECT_VALUES};
use crate::names::{validate_name, Selection};
use crate::AppError;
use std::cell::Cell;
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};
use std::sync::{Mutex, OnceLock};

/// This process's shared memory, created at the first registration.
struct Shared {
    header: *mut Header,
    path: PathBuf,
    selection: Selection,
    /// [`clock::MONOTONIC`] or [`clock::COUNTER`]: the `enabled` value of enabled points.
    clock: u32,
}

// SAFETY: the mapping lives as long as the process; shared fields are atomics or written
// under REGISTRATION before being published with a release store.
unsafe impl Send for Shared {}
unsafe impl Sync for Shared {}

static SHARED: OnceLock<Result<Shared, AppError>> = OnceLock::new();
/// The header once mapped, for the thread that claims its first ring.
static HEADER: AtomicPtr<Header> = AtomicPtr::new(ptr::null_mut());
/// Registration writes the point table under this; recording never takes it.
static REGISTRATION: Mutex<()> = Mutex::new(());
/// Set in a child forked by this process: the file and its rings are the parent's, so the
/// child records nothing into them and registers nothing.
static FORKED: AtomicBool = AtomicBool::new(false);

/// Runs in the child after fork(2), on its only thread (async-signal-safe: stores only).
extern "C" fn after_fork_in_child() {
    FORKED.store(true, Ordering::Relaxed);
    HEADER.store(ptr::null_mut(), Ordering::Relaxed);
    // The forking thread's ring is its parent's: forget it (a record then finds no ring and,
    // without a header, is not counted either).
    let _ = THREAD_RING.try_with(|r| r.0.set(ptr::null()));
}

fn shared() -> Result<&'static Shared, AppError> {
    SHARED.get_or_init(create).as_ref().map_err(Clone::clone)
}

fn create() -> Result<Shared, AppError> {
    let selection = Selection::from_env()?;
    let clock = clock::choose()?;
    let dir = std::env::var_os(layout::DIR_ENV).unwrap_or_else(|| layout::DEFAULT_DIR.into());
    let pid = std::process::id();
    let path = Path::new(&dir).join(layout::file_name(pid));
    let fail = |what: &'static str| AppError::SharedMemory {
        what,
        path: path.display().to_string(),
        message: std::io::Error::last_os_error().to_string(),
    };
    let c_path =
        CString::new(path.as_os_str().as_encoded_bytes()).map_err(|_| AppError::SharedMemory {
            what: "create",
            path: path.display().to_string(),
            message: "the path holds a NUL byte".into(),
        })?;
    // SAFETY: plain system calls on a valid C string; the mapping is checked before use.
    unsafe {
        // A file of an earlier process with this pid is stale: this process is the pid now.
        libc::unlink(c_path.as_ptr());
        let fd = libc::open(
            c_path.as_ptr(),
            libc::O_CREAT | libc::O_EXCL | libc::O_RDWR | libc::O_CLOEXEC,
            0o600,
        );
        if fd < 0 {
            return Err(fail("create"));
        }
        if libc::ftruncate(fd, layout::FILE_BYTES as libc::off_t) != 0 {
            let e = fail("size");
            libc::close(fd);
            libc::unlink(c_path.as_ptr());
            return Err(e);
        }
        let base = libc::mmap(
            ptr::null_mut(),
            layout::FILE_BYTES,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd,
            0,
        );
        libc::close(fd);
        if base == libc::MAP_FAILED {
            let e = fail("map");
            libc::unlink(c_path.as_ptr());
            return Err(e);
        }
        populate(base as *mut u8, layout::RINGS_OFFSET);
        // Once per process (this runs once): a forked child must not write into these rings.
        libc::pthread_atfork(None, None, Some(after_fork_in_child));
        let header = base as *mut Header;
        let created = if clock == clock::COUNTER {
            clock::pair()
        } else {
            let ns = clock::now_ns();
            clock::Pair { counter: ns, ns }
        };
        layout::init_header(header, pid, clock, created);
        HEADER.store(header, Ordering::Release);
        Ok(Shared {
            header,
            path,
            selection,
            clock,
        })
    }
}

/// Faults pages in now so the first records do not (best effort: older kernels lack it).
fn populate(start: *mut u8, len: usize) {
    const MADV_POPULATE_WRITE: libc::c_int = 23;
    // SAFETY: a range of our own mapping; madvise does not change its contents.
    unsafe { libc::madvise(start as *mut libc::c_void, len, MADV_POPULATE_WRITE) };
}

/// The shared-memory file of this process, once a point is registered.
pub fn file_path() -> Option<&'static Path> {
    SHARED.get()?.as_ref().ok().map(|s| s.path.as_path())
}

/// Removes this process's file (call at exit): a collector that has it open keeps reading.
pub fn shutdown() {
    if FORKED.load(Ordering::Relaxed) {
        return; // the file is the parent's
    }
    if let Some(path) = file_path() {
        let _ = std::fs::remove_file(path);
    }
}

/// Claims the calling thread's ring now (and faults its pages in), so its first record costs
/// no more than the others. Recording claims it anyway when this is not called.
pub fn thread_init() -> Result<(), AppError> {
    shared()?;
    THREAD_RING.with(|r| r.get());
    Ok(())
}

/// A registered point: copy it freely between threads; recording through it is wait-free.
/// Same layout as the C `rtg_point`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Point {
    id: u32,
    /// 0 when disabled, else the process's clock ([`clock::MONOTONIC`] or
    /// [`clock::COUNTER`]): one load tells both.
    enabled: u32,
}

impl Point {
    /// A point timing begin/end intervals.
    pub fn interval(name: &str) -> Result<Point, AppError> {
        register(name, Kind::Interval, 0)
    }

    /// An interval point that starts every `period_ns`: the collector adds its period and
    /// jitter, and its start latency when [`Point::begin_at`] gives the intended start.
    pub fn periodic(name: &str, period_ns: u64) -> Result<Point, AppError> {
        register(name, Kind::Interval, period_ns)
    }

    /// A point recording values (u64 or f64) at times.
    pub fn event(name: &str) -> Result<Point, AppError> {
        register(name, Kind::EventU64, 0)
    }

    /// A counter; the collector reports its rate.
    pub fn counter(name: &str) -> Result<Point, AppError> {
        register(name, Kind::Counter, 0)
    }

    /// A snapshot of up to four application variables.
    pub fn object(name: &str) -> Result<Point, AppError> {
        register(name, Kind::Object, 0)
    }

    pub fn is_enabled(&self) -> bool {
        self.enabled != 0
    }

    pub fn id(&self) -> u32 {
        self.id
    }

    /// Starts an interval that is recorded when the guard is dropped.
    #[inline]
    pub fn begin(&self) -> Interval {
        self.begin_at(0)
    }

    /// Starts an interval meant to start at `deadline_ns` (CLOCK_MONOTONIC): the collector
    /// reports how late it started.
    #[inline]
    pub fn begin_at(&self, deadline_ns: u64) -> Interval {
        Interval {
            point: *self,
            begin: self.start(),
            deadline_ns,
        }
    }

    /// The begin of an interval without a guard (0 when disabled), a stamp of the process's
    /// record clock (not necessarily ns): pass it to [`Point::end`].
    #[inline]
    pub fn start(&self) -> u64 {
        if self.enabled == 0 {
            return 0;
        }
        clock::stamp(self.enabled)
    }

    /// Ends an interval begun with [`Point::start`].
    #[inline]
    pub fn end(&self, begin: u64) {
        self.end_with_deadline(begin, 0)
    }

    #[inline]
    pub fn end_with_deadline(&self, begin: u64, deadline_ns: u64) {
        if self.enabled == 0 || begin == 0 {
            return;
        }
        let end = clock::stamp(self.enabled);
        emit(
            self.id,
            Kind::Interval,
            begin,
            [end.saturating_sub(begin), deadline_ns, 0, 0],
        );
    }

    #[inline]
    pub fn event_u64(&self, value: u64) {
        if self.enabled != 0 {
            emit(
                self.id,
                Kind::EventU64,
                clock::stamp(self.enabled),
                [value, 0, 0, 0],
            );
        }
    }

    #[inline]
    pub fn event_f64(&self, value: f64) {
        if self.enabled != 0 {
            let bits = value.to_bits();
            emit(
                self.id,
                Kind::EventF64,
                clock::stamp(self.enabled),
                [bits, 0, 0, 0],
            );
        }
    }

    #[inline]
    pub fn count(&self, increment: u64) {
        if self.enabled != 0 {
            emit(
                self.id,
                Kind::Counter,
                clock::stamp(self.enabled),
                [increment, 0, 0, 0],
            );
        }
    }

    /// Records up to four values (more are ignored, fewer are zero-filled).
    #[inline]
    pub fn snapshot(&self, values: &[u64]) {
        if self.enabled != 0 {
            let mut snapshot = [0u64; OBJECT_VALUES];
            let n = values.len().min(OBJECT_VALUES);
            snapshot[..n].copy_from_slice(&values[..n]);
            emit(self.id, Kind::Object, clock::stamp(self.enabled), snapshot);
        }
    }
}

/// An interval in progress; recorded when dropped.
#[must_use = "the interval is recorded when this guard is dropped"]
pub struct Interval {
    point: Point,
    begin: u64,
    deadline_ns: u64,
}

impl Drop for Interval {
    #[inline]
    fn drop(&mut self) {
        self.point.end_with_deadline(self.begin, self.deadline_ns);
    }
}

/// Registers `name` (or returns the point already registered under it).
pub(crate) fn register(name: &str, kind: Kind, period_ns: u64) -> Result<Point, AppError> {
    validate_name(name)?;
    if FORKED.load(Ordering::Relaxed) {
        return Err(AppError::ForkedChild { name: name.into() });
    }
    let shared = shared()?;
    let _guard = REGISTRATION.lock().unwrap_or_else(|e| e.into_inner());
    // SAFETY: the header is mapped for the life of the process; the table is only written
    // under REGISTRATION, and each entry is published by its `ready` flag.
    let header = unsafe { &mut *shared.header };
    let used = header.points_registered.load(Ordering::Relaxed) as usize;
    for (id, slot) in header.points[..used].iter().enumerate() {
        if slot_name(&slot.name) == name {
            if slot.kind != kind as u32 {
                return Err(AppError::KindMismatch {
                    name: name.into(),
                    registered: Kind::from_u32(slot.kind).map_or("?", Kind::name),
                    asked: kind.name(),
                });
            }
            return Ok(Point {
                id: id as u32,
                enabled: slot.enabled * shared.clock,
            });
        }
    }
    if used >= layout::MAX_POINTS {
        return Err(AppError::TableFull {
            name: name.into(),
            max: layout::MAX_POINTS,
        });
    }
    let enabled = shared.selection.enabled(name) as u32;
    let slot = &mut header.points[used];
    slot.name = [0; layout::NAME_MAX + 1];
    slot.name[..name.len()].copy_from_slice(name.as_bytes());
    slot.kind = kind as u32;
    slot.enabled = enabled;
    slot.period_ns = period_ns;
    slot.ready.store(1, Ordering::Release);
    header
        .points_registered
        .store(used as u32 + 1, Ordering::Release);
    Ok(Point {
        id: used as u32,
        enabled: enabled * shared.clock,
    })
}

/// The name in a NUL-padded table entry.
pub(crate) fn slot_name(bytes: &[u8]) -> &str {
    let len = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    std::str::from_utf8(&bytes[..len]).unwrap_or("")
}

/// The calling thread's ring, released for another thread when this one exits.
struct ThreadRing(Cell<*const RingControl>);

impl ThreadRing {
    #[inline]
    fn get(&self) -> *const RingControl {
        let ring = self.0.get();
        if !ring.is_null() {
            return ring;
        }
        let ring = claim_ring();
        self.0.set(ring);
        ring
    }
}

impl Drop for ThreadRing {
    fn drop(&mut self) {
        let ring = self.0.get();
        if !ring.is_null() {
            // SAFETY: rings live as long as the mapping, i.e. the process.
            let ring = unsafe { &*ring };
            ring.owner_tid.store(0, Ordering::Relaxed);
            ring.state.store(layout::RING_FREE, Ordering::Release);
        }
    }
}

thread_local! {
    static THREAD_RING: ThreadRing = const { ThreadRing(Cell::new(ptr::null())) };
}

/// Takes a free ring for this thread (null when none is free or nothing is mapped). Runs once
/// per thread: it may call the kernel (thread id, prefault).
#[cold]
fn claim_ring() -> *const RingControl {
    let header = HEADER.load(Ordering::Acquire);
    if header.is_null() {
        return ptr::null();
    }
    for i in 0..layout::MAX_RINGS {
        // SAFETY: ring i lies within the mapping (FILE_BYTES covers MAX_RINGS strides).
        let ring = unsafe { ring_at(header as *const u8, i) };
        let ring_ref = unsafe { &*ring };
        if ring_ref
            .state
            .compare_exchange(
                layout::RING_FREE,
                layout::RING_OWNED,
                Ordering::AcqRel,
                Ordering::Relaxed,
            )
            .is_ok()
        {
            // SAFETY: gettid has no preconditions.
            let tid = unsafe { libc::gettid() } as u32;
            ring_ref.owner_tid.store(tid, Ordering::Relaxed);
            populate(ring as *mut u8, layout::RING_STRIDE);
            return ring;
        }
    }
    ptr::null()
}

/// Ring `i` of the mapping at `base`.
///
/// # Safety
/// `base` is a mapping of [`layout::FILE_BYTES`] and `i < MAX_RINGS`.
pub(crate) unsafe fn ring_at(base: *const u8, i: usize) -> *const RingControl {
    base.add(layout::RINGS_OFFSET + i * layout::RING_STRIDE) as *const RingControl
}

/// Writes one record into the calling thread's ring, or counts it as dropped.
#[inline]
fn emit(point: u32, kind: Kind, ts_ns: u64, values: [u64; OBJECT_VALUES]) {
    let record = Record {
        ts_ns,
        point,
        kind: kind as u32,
        values,
    };
    // try_with: a record made while the thread is being torn down is dropped, not a panic.
    let _ = THREAD_RING.try_with(|r| {
        let ring = r.get();
        if ring.is_null() {
            count_without_ring();
        } else {
            // SAFETY: this thread owns the ring.
            unsafe { (*ring).push(&record) };
        }
    });
}

#[cold]
fn count_without_ring() {
    let header = HEADER.load(Ordering::Acquire);
    if !header.is_null() {
        // SAFETY: the header is mapped for the life of the process.
        unsafe { &*header }
            .dropped_without_ring
            .fetch_add(1, Ordering::Relaxed);
    }
}
