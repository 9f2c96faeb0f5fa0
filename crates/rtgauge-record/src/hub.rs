//! The writing side: a hub per probe run, one sample sink (ring producer) per measuring
//! thread, and one writer thread that drains the rings into the file.
//!
//! The hot loop calls [`SampleSink::push`]: one wait-free ring push (a bounded write of one
//! fixed-size record and one atomic index store). A full ring never blocks the loop: the sample
//! is counted as dropped, and the count reaches the file's trailer and the result document.

use crate::error::RecordError;
use crate::format::{self, Header, Sample, SeriesCount, SeriesDef, Trailer, RECORD_SIZE};
use rtrb::{Consumer, Producer, RingBuffer};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

/// Slots per measuring thread by default: 131072 × 24 bytes = 3 MiB, which holds 13 s of
/// samples at a 100 µs period and 3.3 s at 25 µs, far longer than any writer stall seen on a
/// healthy disk.
pub const DEFAULT_RING_CAPACITY: usize = 1 << 17;
/// Environment variable that sets the ring slots per measuring thread (raise it when a
/// recording reports dropped samples).
pub const RING_ENV: &str = "RTGAUGE_RECORD_RING";
/// Test-only: milliseconds the writer thread sleeps before it first drains the rings (or until
/// the recording is finished, if sooner), so tests can fill a ring and check that the dropped
/// count is exact however slowly the run goes.
pub const STALL_ENV: &str = "RTGAUGE_TEST_RECORD_STALL_MS";
/// How long the writer sleeps when the rings are nearly empty. 10 ms keeps it to ~100 wake-ups
/// a second (it may share a CPU with a measuring thread) while a default ring covers seconds.
pub const DEFAULT_POLL: Duration = Duration::from_millis(10);
const WRITE_BUFFER: usize = 1 << 20;

/// How a recording is written.
#[derive(Debug, Clone)]
pub struct RecordOptions {
    /// Ring slots per measuring thread.
    pub ring_capacity: usize,
    /// CPUs the writer thread may run on (the housekeeping CPUs: online minus measured).
    /// Empty means no CPU is free of measuring threads; the writer then runs unpinned.
    pub writer_cpus: Vec<usize>,
    /// Pins the calling thread to a CPU set; passed in so this crate stays below the one that
    /// owns the real-time context.
    pub pin_writer: Option<fn(&[usize]) -> bool>,
    pub poll_interval: Duration,
    /// Test hook: the writer sleeps this long (or until the recording is finished) before its
    /// first drain.
    pub writer_stall: Duration,
}

impl Default for RecordOptions {
    fn default() -> Self {
        RecordOptions {
            ring_capacity: DEFAULT_RING_CAPACITY,
            writer_cpus: Vec::new(),
            pin_writer: None,
            poll_interval: DEFAULT_POLL,
            writer_stall: Duration::ZERO,
        }
    }
}

impl RecordOptions {
    /// Defaults with [`RING_ENV`] and [`STALL_ENV`] applied.
    pub fn from_env() -> Result<RecordOptions, RecordError> {
        let mut o = RecordOptions::default();
        if let Ok(v) = std::env::var(RING_ENV) {
            o.ring_capacity = v
                .trim()
                .parse::<usize>()
                .ok()
                .filter(|&n| (1..=1 << 28).contains(&n))
                .ok_or(RecordError::Env {
                    name: RING_ENV,
                    value: v,
                    expected: "ring slots per measuring thread: a whole number from 1 to 268435456",
                })?;
        }
        if let Ok(v) = std::env::var(STALL_ENV) {
            let ms = v.trim().parse::<u64>().map_err(|_| RecordError::Env {
                name: STALL_ENV,
                value: v.clone(),
                expected: "milliseconds, a whole number (test hook)",
            })?;
            o.writer_stall = Duration::from_millis(ms);
        }
        Ok(o)
    }
}

/// Who wrote the recording and what was measured; the hub adds the series table.
#[derive(Debug, Clone, Default)]
pub struct RecordingMeta {
    /// `rtgauge <version>`.
    pub tool: String,
    pub probe: String,
    pub mode: String,
    pub load: String,
    pub params: BTreeMap<String, String>,
}

/// What a finished recording holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordingSummary {
    pub path: PathBuf,
    pub format_version: u32,
    pub samples_written: u64,
    pub samples_dropped: u64,
    pub series: Vec<SeriesCount>,
    pub bytes: u64,
    pub writer_pinned: bool,
}

/// One measuring thread's end of its ring. Owned by that thread; `push` is all the hot loop
/// does with it.
pub struct SampleSink {
    producer: Producer<Sample>,
    dropped: Arc<[AtomicU64]>,
}

impl SampleSink {
    /// Hands one sample to the writer. Wait-free and allocation-free: if the ring is full the
    /// sample is counted as dropped for its series and the call returns at once.
    #[inline]
    pub fn push(&mut self, series: u16, at_ns: u64, value_ns: u64) {
        let sample = Sample {
            series,
            at_ns,
            value_ns,
        };
        if self.producer.push(sample).is_err() {
            // Only on the rare full-ring path: an uncontended relaxed add. Out-of-range ids
            // are caught by the writer, which counts them in the total.
            if let Some(d) = self.dropped.get(usize::from(series)) {
                d.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// The sinks of one recording, one slot per measuring thread. Each thread takes its own
/// before its hot loop (the lock is never touched while measuring).
pub struct SinkSlots(Vec<Mutex<Option<SampleSink>>>);

impl SinkSlots {
    /// No recording: every `take` returns `None`.
    pub fn none() -> SinkSlots {
        SinkSlots(Vec::new())
    }

    /// The sink of thread `index`, once.
    pub fn take(&self, index: usize) -> Option<SampleSink> {
        self.0
            .get(index)?
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }
}

enum State {
    Ready,
    Open(Writer),
    Closed,
}

struct Writer {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<Result<RecordingSummary, RecordError>>,
}

impl Writer {
    fn close(self) -> Result<RecordingSummary, RecordError> {
        // Release: every push made before the producers were dropped (their threads were
        // joined before this store) is visible to the writer's final drain.
        self.stop.store(true, Ordering::Release);
        match self.handle.join() {
            Ok(r) => r,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
}

/// A recording for one probe run. Created by the runner; the probe opens it once with its
/// series table and gets one sink per measuring thread; the runner finishes it after the
/// probe returned (all sinks dropped).
pub struct RecordingHub {
    path: PathBuf,
    meta: RecordingMeta,
    options: RecordOptions,
    state: Mutex<State>,
}

impl RecordingHub {
    /// Nothing is created until a probe opens the recording.
    pub fn new(path: PathBuf, meta: RecordingMeta, options: RecordOptions) -> RecordingHub {
        RecordingHub {
            path,
            meta,
            options,
            state: Mutex::new(State::Ready),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Creates the file with its header and series table, starts the writer thread and
    /// returns `sinks` sinks. Call it from the coordinating thread, before the measuring
    /// threads start. `time_origin` says in words what `at_ns` counts from.
    pub fn open(
        &self,
        mut series: Vec<SeriesDef>,
        sinks: usize,
        time_origin: &str,
    ) -> Result<SinkSlots, RecordError> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if !matches!(*state, State::Ready) {
            return Err(RecordError::AlreadyOpen {
                path: self.path.clone(),
            });
        }
        if series.is_empty() || series.len() > usize::from(u16::MAX) + 1 {
            return Err(RecordError::SeriesCount {
                path: self.path.clone(),
                count: series.len(),
            });
        }
        for (i, s) in series.iter_mut().enumerate() {
            s.id = i as u16;
        }
        let header = Header {
            tool: self.meta.tool.clone(),
            probe: self.meta.probe.clone(),
            mode: self.meta.mode.clone(),
            load: self.meta.load.clone(),
            params: self.meta.params.clone(),
            started_unix_ns: unix_ns(),
            time_origin: time_origin.to_string(),
            record: "series u16 LE, at_ns u64 LE, value_ns u64 LE (18 bytes, packed)".into(),
            series,
        };
        let out = self.create_file(&header)?;

        let n_series = header.series.len();
        let dropped: Arc<[AtomicU64]> = (0..n_series).map(|_| AtomicU64::new(0)).collect();
        let mut producers = Vec::with_capacity(sinks);
        let mut consumers = Vec::with_capacity(sinks);
        for _ in 0..sinks {
            let (mut p, mut c) = RingBuffer::new(self.options.ring_capacity);
            prefault(&mut p, &mut c);
            producers.push(p);
            consumers.push(c);
        }
        let stop = Arc::new(AtomicBool::new(false));
        let job = WriterJob {
            path: self.path.clone(),
            out,
            consumers,
            dropped: dropped.clone(),
            stop: stop.clone(),
            options: self.options.clone(),
            n_series,
        };
        let handle = std::thread::Builder::new()
            .name("rtgauge-record".into())
            .spawn(move || job.run())
            .map_err(RecordError::Spawn)?;
        *state = State::Open(Writer { stop, handle });
        Ok(SinkSlots(
            producers
                .into_iter()
                .map(|producer| {
                    Mutex::new(Some(SampleSink {
                        producer,
                        dropped: dropped.clone(),
                    }))
                })
                .collect(),
        ))
    }

    fn create_file(&self, header: &Header) -> Result<BufWriter<File>, RecordError> {
        let write_err = |source| RecordError::Write {
            path: self.path.clone(),
            source,
        };
        let json = serde_json::to_vec(header).expect("a header always serialises");
        // Written in place (a killed run leaves a salvageable prefix), so created exclusively:
        // it never replaces a file nor follows a symlink planted at its name.
        let file =
            rtgauge_result::output::create_new(&self.path).map_err(|e| RecordError::Create {
                path: self.path.clone(),
                detail: e.to_string(),
            })?;
        let mut out = BufWriter::with_capacity(WRITE_BUFFER, file);
        out.write_all(&format::encode_preamble(json.len() as u64))
            .and_then(|_| out.write_all(&json))
            .map_err(write_err)?;
        Ok(out)
    }

    /// Stops the writer after it drained every ring, writes the trailer and syncs the file.
    /// `None` when the probe never opened the recording (it does not record raw samples).
    /// Call it after the probe returned: samples pushed later are lost.
    pub fn finish(mut self) -> Result<Option<RecordingSummary>, RecordError> {
        let state = self.state.get_mut().unwrap_or_else(PoisonError::into_inner);
        match std::mem::replace(state, State::Closed) {
            State::Open(w) => w.close().map(Some),
            State::Ready | State::Closed => Ok(None),
        }
    }
}

impl Drop for RecordingHub {
    fn drop(&mut self) {
        // A hub dropped without finish (an error path) still stops its writer thread and
        // leaves a complete file.
        let state = self.state.get_mut().unwrap_or_else(PoisonError::into_inner);
        if let State::Open(w) = std::mem::replace(state, State::Closed) {
            let _ = w.close();
        }
    }
}

/// Writes every slot once so the first lap of the hot loop takes no page faults on the ring
/// (in rt mode the pages are also locked by mlockall).
fn prefault(p: &mut Producer<Sample>, c: &mut Consumer<Sample>) {
    while p.push(Sample::default()).is_ok() {}
    if let Ok(chunk) = c.read_chunk(c.slots()) {
        chunk.commit_all();
    }
}

fn unix_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

/// Everything the writer thread owns.
struct WriterJob {
    path: PathBuf,
    out: BufWriter<File>,
    consumers: Vec<Consumer<Sample>>,
    dropped: Arc<[AtomicU64]>,
    stop: Arc<AtomicBool>,
    options: RecordOptions,
    n_series: usize,
}

impl WriterJob {
    fn run(mut self) -> Result<RecordingSummary, RecordError> {
        let writer_pinned = enter_writer_thread(&self.options);
        let stall_end = std::time::Instant::now() + self.options.writer_stall;
        while !self.stop.load(Ordering::Acquire) {
            let left = stall_end.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                break;
            }
            std::thread::sleep(left.min(Duration::from_millis(1)));
        }
        let mut written = vec![0u64; self.n_series];
        let mut invalid = 0u64;
        // A write error does not stop the draining: the measuring threads keep their rings
        // empty (so the failure is not disguised as dropped samples) and the error is
        // reported when the recording is finished.
        let mut failure: Option<std::io::Error> = None;
        let half = self.options.ring_capacity.div_ceil(2);
        loop {
            // Read before the pass: once it is seen, every sample ever pushed is in the rings,
            // so this last pass drains everything.
            let stopping = self.stop.load(Ordering::Acquire);
            let mut fullest = 0;
            for c in &mut self.consumers {
                let n = c.slots();
                fullest = fullest.max(n);
                let Ok(chunk) = c.read_chunk(n) else { continue };
                let (a, b) = chunk.as_slices();
                for s in a.iter().chain(b) {
                    match written.get_mut(usize::from(s.series)) {
                        Some(count) if failure.is_none() => match self.out.write_all(&s.encode()) {
                            Ok(()) => *count += 1,
                            Err(e) => failure = Some(e),
                        },
                        Some(_) => {}
                        None => invalid += 1,
                    }
                }
                chunk.commit_all();
            }
            if stopping {
                break;
            }
            if fullest < half {
                std::thread::sleep(self.options.poll_interval);
            }
        }
        if let Some(source) = failure {
            return Err(RecordError::Write {
                path: self.path,
                source,
            });
        }
        let series: Vec<SeriesCount> = written
            .iter()
            .zip(self.dropped.iter())
            .enumerate()
            .map(|(id, (&w, d))| SeriesCount {
                id: id as u16,
                written: w,
                dropped: d.load(Ordering::Relaxed),
            })
            .collect();
        let samples_written: u64 = written.iter().sum();
        let samples_dropped = series.iter().map(|s| s.dropped).sum::<u64>() + invalid;
        let trailer = Trailer {
            finished_unix_ns: unix_ns(),
            samples_written,
            samples_dropped,
            series: series.clone(),
            ring_capacity: self.options.ring_capacity as u64,
            writer_pinned,
        };
        let json = serde_json::to_vec(&trailer).expect("a trailer always serialises");
        let path = self.path;
        let write_err = |source| RecordError::Write {
            path: path.clone(),
            source,
        };
        self.out.write_all(&json).map_err(write_err)?;
        self.out
            .write_all(&format::encode_tail(
                json.len() as u64,
                samples_written,
                samples_dropped,
            ))
            .map_err(write_err)?;
        let file = self
            .out
            .into_inner()
            .map_err(|e| write_err(e.into_error()))?;
        file.sync_all().map_err(write_err)?;
        let bytes = file.metadata().map_err(write_err)?.len();
        debug_assert!(bytes >= samples_written * RECORD_SIZE as u64);
        Ok(RecordingSummary {
            path,
            format_version: format::FORMAT_VERSION,
            samples_written,
            samples_dropped,
            series,
            bytes,
            writer_pinned,
        })
    }
}

/// The writer must never compete with measuring threads: SCHED_OTHER whatever the opening
/// thread ran at, and pinned to the housekeeping CPUs when there are any.
fn enter_writer_thread(options: &RecordOptions) -> bool {
    // A failure leaves the inherited policy, which is SCHED_OTHER for the runner's thread anyway.
    rtgauge_os::sched::set_other();
    match options.pin_writer {
        Some(pin) if !options.writer_cpus.is_empty() => pin(&options.writer_cpus),
        _ => false,
    }
}
