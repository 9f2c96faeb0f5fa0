//! The collector's side: maps an application's file, reads its point table, drains its rings,
//! counts what was lost and notices when the application is gone.

use crate::clock::{self, Calibration};
use crate::layout::{self, Header, Kind, Record, RingControl, MAX_POINTS, MAX_RINGS};
use crate::producer::{ring_at, slot_name};
use crate::AppError;
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::ptr;
use std::sync::atomic::Ordering;

/// A registered point as the collector sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PointInfo {
    pub id: u32,
    pub name: String,
    pub kind: Kind,
    pub enabled: bool,
    /// Declared period (0: not periodic).
    pub period_ns: u64,
}

/// What one drain found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Drained {
    pub records: u64,
    /// Records that named no registered point or kind (a damaged file): skipped.
    pub malformed: u64,
}

/// An application's shared memory, opened by its one collector.
pub struct Reader {
    base: *mut u8,
    len: usize,
    path: PathBuf,
    pid: u32,
    /// Whether this reader made its process the collector (and so gives the place up).
    claimed: bool,
    /// The conversion of counter stamps (None: the records carry CLOCK_MONOTONIC).
    calibration: Option<Calibration>,
}

// SAFETY: the mapping is owned by the reader; all shared fields are read through atomics or
// volatile reads.
unsafe impl Send for Reader {}

impl Reader {
    /// Where process `pid` keeps its file (`RTGAUGE_APP_DIR`, else /dev/shm).
    pub fn path_of(pid: u32) -> PathBuf {
        let dir = std::env::var_os(layout::DIR_ENV).unwrap_or_else(|| layout::DEFAULT_DIR.into());
        Path::new(&dir).join(layout::file_name(pid))
    }

    /// Opens the file of process `pid`.
    pub fn attach(pid: u32) -> Result<Reader, AppError> {
        Reader::open(&Reader::path_of(pid))
    }

    /// Maps `path` and becomes its collector. A file whose creator has not finished writing
    /// the header yet is `NotFound` too: retry.
    pub fn open(path: &Path) -> Result<Reader, AppError> {
        let display = path.display().to_string();
        let not_found = || AppError::NotFound {
            path: display.clone(),
        };
        let incompatible = |reason: &str| AppError::Incompatible {
            path: display.clone(),
            reason: reason.into(),
        };
        let c_path = CString::new(path.as_os_str().as_encoded_bytes()).map_err(|_| not_found())?;
        // SAFETY: system calls on a valid C string and our own descriptor; the mapping's size
        // is checked against the file's before anything in it is read.
        let (base, len) = unsafe {
            let fd = libc::open(
                c_path.as_ptr(),
                libc::O_RDWR | libc::O_CLOEXEC | libc::O_NOFOLLOW,
            );
            if fd < 0 {
                return Err(not_found());
            }
            let mut st: libc::stat = std::mem::zeroed();
            if libc::fstat(fd, &mut st) != 0 || st.st_mode & libc::S_IFMT != libc::S_IFREG {
                libc::close(fd);
                return Err(incompatible("not a regular file"));
            }
            let len = st.st_size as usize;
            if len < layout::FILE_BYTES {
                libc::close(fd);
                return Err(if len == 0 {
                    not_found()
                } else {
                    incompatible("too short")
                });
            }
            let base = libc::mmap(
                ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            );
            libc::close(fd);
            if base == libc::MAP_FAILED {
                return Err(incompatible("cannot be mapped"));
            }
            (base as *mut u8, len)
        };
        let mut reader = Reader {
            base,
            len,
            path: path.to_path_buf(),
            pid: 0,
            claimed: false,
            calibration: None,
        };
        // SAFETY: the mapping holds at least a header.
        let magic = unsafe { ptr::read_volatile(&reader.header().magic) };
        std::sync::atomic::fence(Ordering::Acquire);
        if magic != layout::MAGIC {
            return Err(if magic == [0; 8] {
                not_found()
            } else {
                incompatible("unknown magic")
            });
        }
        let header = reader.header();
        if !layout::header_matches(header) {
            return Err(incompatible(&format!(
                "layout version {}, this rtgauge reads {}",
                header.version,
                layout::LAYOUT_VERSION
            )));
        }
        let (pid, clock, created) = (
            header.pid,
            header.clock,
            clock::Pair {
                counter: header.created_counter,
                ns: header.created_ns,
            },
        );
        reader.pid = pid;
        if clock == clock::COUNTER {
            let now = clock::pair_after(created.ns + clock::FIRST_RATE_SPAN_NS);
            reader.calibration = Some(Calibration::new(created, now));
        }
        reader.claimed = reader.become_collector()?;
        Ok(reader)
    }

    fn header(&self) -> &Header {
        // SAFETY: the mapping is at least FILE_BYTES long and outlives `self`.
        unsafe { &*(self.base as *const Header) }
    }

    fn ring(&self, i: usize) -> &RingControl {
        // SAFETY: the size was checked at open; i < MAX_RINGS.
        unsafe { &*ring_at(self.base, i) }
    }

    /// One collector at a time; the place of one that died (SIGKILL) is taken over. True when
    /// this call took the place (false: this process held it already).
    fn become_collector(&self) -> Result<bool, AppError> {
        let me = std::process::id();
        let slot = &self.header().collector_pid;
        loop {
            let current = slot.load(Ordering::Acquire);
            if current == me {
                return Ok(false);
            }
            if current != 0 && process_alive(current) {
                return Err(AppError::Busy {
                    pid: self.pid,
                    collector: current,
                });
            }
            if slot
                .compare_exchange(current, me, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                return Ok(true);
            }
        }
    }

    /// The application's process id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What the application stamps its records with, as a result names it.
    pub fn clock_name(&self) -> &'static str {
        match (&self.calibration, cfg!(target_arch = "aarch64")) {
            (None, _) => "CLOCK_MONOTONIC",
            (Some(_), false) => "TSC, converted to CLOCK_MONOTONIC",
            (Some(_), true) => "virtual counter, converted to CLOCK_MONOTONIC",
        }
    }

    /// CLOCK_MONOTONIC when the application created the file.
    pub fn created_ns(&self) -> u64 {
        self.header().created_ns
    }

    /// The points registered so far, in id order.
    pub fn points(&self) -> Vec<PointInfo> {
        let header = self.header();
        let used = (header.points_registered.load(Ordering::Acquire) as usize).min(MAX_POINTS);
        header.points[..used]
            .iter()
            .enumerate()
            .filter(|(_, slot)| slot.ready.load(Ordering::Acquire) == 1)
            .filter_map(|(id, slot)| {
                Some(PointInfo {
                    id: id as u32,
                    name: slot_name(&slot.name).to_string(),
                    kind: Kind::from_u32(slot.kind)?,
                    enabled: slot.enabled != 0,
                    period_ns: slot.period_ns,
                })
            })
            .collect()
    }

    /// Hands every record written since the last drain to `each`, ring by ring (each ring in
    /// the order its thread wrote it), and frees their slots.
    pub fn drain(&mut self, mut each: impl FnMut(&Record)) -> Drained {
        self.drain_by_thread(|_, record| each(record))
    }

    /// [`Reader::drain`], with the thread id of the producer of each record (what a kernel
    /// trace knows the thread by). Stamps are handed out as CLOCK_MONOTONIC ns.
    pub fn drain_by_thread(&mut self, mut each: impl FnMut(u32, &Record)) -> Drained {
        let mut drained = Drained::default();
        if let Some(calibration) = &mut self.calibration {
            calibration.update(clock::pair());
        }
        let calibration = self.calibration.as_ref();
        let registered = self.header().points_registered.load(Ordering::Acquire);
        for i in 0..MAX_RINGS {
            let ring = self.ring(i);
            let tail = ring.tail.load(Ordering::Relaxed);
            let head = ring.head.load(Ordering::Acquire);
            // A producer never gets more than a ring ahead; a file claiming so is damaged.
            let from = tail.max(head.saturating_sub(layout::RING_RECORDS as u64));
            // Read after head: the thread that wrote these records owned the ring at least
            // until it published them (a ring changes owner only after its thread exits).
            let tid = ring.owner_tid.load(Ordering::Relaxed);
            drained.malformed += from - tail;
            for n in from..head {
                // SAFETY: slot n is within the ring and was released by the producer's head.
                let mut record = unsafe {
                    ptr::read_volatile(ring.slots().add(n as usize & (layout::RING_RECORDS - 1)))
                };
                if record.point >= registered || Kind::from_u32(record.kind).is_none() {
                    drained.malformed += 1;
                    continue;
                }
                drained.records += 1;
                if let Some(calibration) = calibration {
                    record.ts_ns = calibration.ns(record.ts_ns);
                    if record.kind == Kind::Interval as u32 {
                        record.values[0] = calibration.duration_ns(record.values[0]);
                    }
                }
                each(tid, &record);
            }
            ring.tail.store(head.max(tail), Ordering::Release);
        }
        drained
    }

    /// Records the application could not write (full rings, more threads than rings) since
    /// it started: the loss is counted even while no collector runs.
    pub fn lost(&self) -> u64 {
        let rings: u64 = (0..MAX_RINGS)
            .map(|i| self.ring(i).dropped.load(Ordering::Relaxed))
            .sum();
        rings + self.header().dropped_without_ring.load(Ordering::Relaxed)
    }

    /// Whether the application's process still exists.
    pub fn producer_alive(&self) -> bool {
        process_alive(self.pid)
    }

    /// Removes the file (when the application is gone: it cannot remove it after a SIGKILL).
    pub fn remove_file(&self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        let me = std::process::id();
        if self.claimed {
            let _ = self.header().collector_pid.compare_exchange(
                me,
                0,
                Ordering::AcqRel,
                Ordering::Relaxed,
            );
        }
        // SAFETY: our own mapping, unmapped once.
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.len) };
    }
}

/// Whether a process exists (a zombie counts as gone: it records nothing more).
fn process_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}
