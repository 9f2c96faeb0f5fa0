//! Records of an application's points, turned into the series of the result.
//!
//! Each point gives a series named after it (`servo.compute`), labelled with its kind:
//! - interval: durations; periodic ones (declared period) also `NAME:period` (begin to begin),
//!   `NAME:jitter` (|period − declared|, missed periods counted as `overruns`) and, when the
//!   application gives each cycle's intended start, `NAME:latency` (begin − intended start);
//! - event: the values (f64 rounded, negatives as 0);
//! - counter: the rate per second over 100 ms windows, with the `total` as a counter;
//! - object: one series per snapshot value, labelled `value=0..3`.
//!
//! Names with `:` cannot clash with points: a point name never holds one.
//!
//! With `--trace` (or `--break`), a cycle of a periodic point that begins later than its
//! intended start is offered to the run's spike tap like a late wake-up of cyclic, for the
//! first thread that records such cycles (its CPU is the first measured one, where the
//! application was started).

use super::record::Recording;
use rtgauge_app::{Kind, PointInfo, Reader, Record};
use rtgauge_core::spikes::{SpikeProducer, SpikeTap};
use rtgauge_result::Series;
use rtgauge_stats::{Recorder, DEFAULT_INTERVAL_NS};

/// Width of the windows a counter's rate is measured over.
const RATE_WINDOW_NS: u64 = 100_000_000;

/// What one point has gathered so far.
#[derive(Default)]
struct PointSeries {
    /// Durations (interval) or values (event): the point's own series.
    values: Option<Recorder>,
    period: Option<Recorder>,
    jitter: Option<Recorder>,
    latency: Option<Recorder>,
    last_begin_ns: Option<u64>,
    overruns: u64,
    /// Counter increments per rate window, by window index.
    windows: Vec<u64>,
    total: u64,
    object: Vec<Recorder>,
}

fn recorder(slot: &mut Option<Recorder>) -> &mut Recorder {
    slot.get_or_insert_with(|| Recorder::new(DEFAULT_INTERVAL_NS))
}

/// The one number a record contributes to its point's distribution: an interval's duration,
/// an event's value (f64 rounded, negatives and non-numbers as 0), a counter's increment, an
/// object's first value.
pub fn sample_value(r: &Record) -> u64 {
    if r.kind == Kind::EventF64 as u32 {
        let v = f64::from_bits(r.values[0]);
        return if v.is_finite() {
            v.max(0.0).round() as u64
        } else {
            0
        };
    }
    r.values[0]
}

/// Where the traced thread runs.
pub enum TraceCpu {
    /// An application rtgauge started on this CPU.
    Known(usize),
    /// An attached application: the first thread with cycles that have an intended start and
    /// is pinned to exactly one of these CPUs (the trace session's) is traced.
    PinnedWithin(Vec<usize>),
}

/// Late cycles handed to the kernel's trace (`--trace`, `--break`).
struct Spikes<'a> {
    tap: &'a SpikeTap<'a>,
    cpu: TraceCpu,
    /// The thread traced: the first one with a cycle that has an intended start (0: none yet).
    owner: u32,
    producer: Option<SpikeProducer<'a>>,
    /// Threads with such cycles found not pinned to one traced CPU (attach).
    unpinned: Vec<u32>,
    broken: bool,
}

impl Spikes<'_> {
    /// A cycle of thread `tid` meant to begin at `deadline_ns` began at `begin_ns`.
    fn cycle(&mut self, tid: u32, deadline_ns: u64, begin_ns: u64, warm_up: bool) {
        if tid == 0 {
            return;
        }
        if self.owner == 0 {
            let Some(cpu) = self.cpu_of(tid) else {
                return;
            };
            self.owner = tid;
            self.producer = self.tap.producer_for(0, cpu, tid);
        }
        let owner = self.owner;
        let Some(producer) = self.producer.as_mut().filter(|_| owner == tid) else {
            return;
        };
        let latency = begin_ns.saturating_sub(deadline_ns);
        if warm_up {
            producer.warm_up(latency);
        } else if latency > producer.floor() && producer.offer(deadline_ns, begin_ns) {
            self.broken = true;
        }
    }

    /// The CPU thread `tid` runs on, if it can be traced there (once per thread).
    fn cpu_of(&mut self, tid: u32) -> Option<usize> {
        match &self.cpu {
            TraceCpu::Known(cpu) => Some(*cpu),
            TraceCpu::PinnedWithin(traced) => {
                if self.unpinned.contains(&tid) {
                    return None;
                }
                match rtgauge_os::sched::affinity_of(tid).as_deref() {
                    Ok(&[cpu]) if traced.contains(&cpu) => Some(cpu),
                    _ => {
                        self.unpinned.push(tid);
                        None
                    }
                }
            }
        }
    }
}

impl Live<'_> {
    /// Interval records before a point without an intended start is shown instead.
    const PATIENCE: u32 = 1000;

    fn interval(&mut self, r: &Record, names: &[String]) {
        let deadline = r.values[1];
        if self.shown.is_none() {
            // Prefer a cycle's start latency, the figure cyclic shows.
            self.waited += 1;
            if deadline == 0 && self.waited < Self::PATIENCE {
                return;
            }
            let name = names.get(r.point as usize).map_or("?", String::as_str);
            let figure = if deadline != 0 { "latency" } else { "duration" };
            let cell = self.board.register(format!("app {name} {figure}"));
            self.shown = Some((r.point, cell));
        }
        if let Some((point, cell)) = &self.shown {
            if *point == r.point {
                let value = if deadline != 0 {
                    r.ts_ns.saturating_sub(deadline)
                } else {
                    r.values[0]
                };
                cell.publish(value, 0);
            }
        }
    }
}

/// The series of every point of one application.
pub struct Accumulator<'a> {
    start_ns: u64,
    points: Vec<PointSeries>,
    /// Declared periods and names by point id, learnt from the point table as ids appear.
    periods: Vec<u64>,
    names: Vec<String>,
    malformed: u64,
    spikes: Option<Spikes<'a>>,
    recording: Option<Recording>,
    live: Option<Live<'a>>,
    /// The application's loop thread: the first to record a cycle with an intended start,
    /// else the first to record anything.
    loop_thread: Option<(u32, bool)>,
}

/// The live view's figure: the first interval point measured, its start latency when it
/// gives an intended start, else its duration.
struct Live<'a> {
    board: &'a rtgauge_core::live::LiveBoard,
    shown: Option<(u32, std::sync::Arc<rtgauge_core::live::LiveCell>)>,
    /// Interval records seen before one was shown.
    waited: u32,
}

impl<'a> Accumulator<'a> {
    /// Records before `start_ns` (the warm-up) are drained and discarded.
    pub fn new(start_ns: u64) -> Accumulator<'a> {
        Accumulator {
            start_ns,
            points: Vec::new(),
            periods: Vec::new(),
            names: Vec::new(),
            malformed: 0,
            spikes: None,
            recording: None,
            live: None,
            loop_thread: None,
        }
    }

    /// See [`Accumulator::loop_thread`].
    pub fn loop_thread(&self) -> Option<u32> {
        self.loop_thread.map(|(tid, _)| tid)
    }

    /// Shows the first interval point measured on `board` while the run goes on.
    pub fn show_on(&mut self, board: &'a rtgauge_core::live::LiveBoard) {
        self.live = Some(Live {
            board,
            shown: None,
            waited: 0,
        });
    }

    /// Offers late cycles of periodic points to `tap`, from a thread on `cpu`.
    pub fn trace_into(&mut self, tap: &'a SpikeTap, cpu: TraceCpu) {
        self.spikes = Some(Spikes {
            tap,
            cpu,
            owner: 0,
            producer: None,
            unpinned: Vec::new(),
            broken: false,
        });
    }

    /// Threads with cycles to explain that could not be traced, when none could (attach):
    /// their ids.
    pub fn untraced_threads(&self) -> &[u32] {
        match &self.spikes {
            Some(s) if s.owner == 0 => &s.unpinned,
            _ => &[],
        }
    }

    /// Hands every record of the measurement to `recording` from now on.
    pub fn record_into(&mut self, recording: Recording) {
        self.recording = Some(recording);
    }

    /// Records the recording left out (of points registered after it opened).
    pub fn unrecorded(&self) -> u64 {
        self.recording.as_ref().map_or(0, Recording::unrecorded)
    }

    /// A late cycle crossed `--break`: the run is being stopped.
    pub fn broken(&self) -> bool {
        self.spikes.as_ref().is_some_and(|s| s.broken)
    }

    /// Takes every record the application wrote since the last drain.
    pub fn drain(&mut self, reader: &mut Reader) {
        let mut records = Vec::new();
        let drained = reader.drain_by_thread(|tid, r| records.push((tid, *r)));
        self.malformed += drained.malformed;
        if records
            .iter()
            .any(|(_, r)| r.point as usize >= self.periods.len())
        {
            let points = reader.points();
            self.periods = points.iter().map(|p| p.period_ns).collect();
            self.names = points.into_iter().map(|p| p.name).collect();
        }
        for (tid, record) in &records {
            let cycle = record.kind == Kind::Interval as u32 && record.values[1] != 0;
            // A thread with cycles replaces one without; the first with cycles stays.
            let found_cycles = matches!(self.loop_thread, Some((_, true)));
            if *tid != 0 && !found_cycles && (cycle || self.loop_thread.is_none()) {
                self.loop_thread = Some((*tid, cycle));
            }
            self.add(record);
            if let Some(recording) = self.recording.as_mut() {
                recording.push(record);
            }
            self.offer_if_late(*tid, record);
        }
    }

    /// Offers a cycle of a periodic point that gives its intended start to the trace.
    fn offer_if_late(&mut self, tid: u32, r: &Record) {
        let periodic = self.periods.get(r.point as usize).is_some_and(|&p| p > 0);
        let deadline = r.values[1];
        let warm_up = r.ts_ns < self.start_ns;
        match self.spikes.as_mut() {
            Some(spikes) if periodic && deadline != 0 && r.kind == Kind::Interval as u32 => {
                spikes.cycle(tid, deadline, r.ts_ns, warm_up)
            }
            _ => {}
        }
    }

    pub fn malformed(&self) -> u64 {
        self.malformed
    }

    /// The most samples any point has: what `--loops` counts.
    pub fn most_samples(&self) -> u64 {
        self.points
            .iter()
            .map(|p| p.values.as_ref().map_or(p.total, Recorder::count))
            .max()
            .unwrap_or(0)
    }

    fn add(&mut self, r: &Record) {
        let Some(kind) = Kind::from_u32(r.kind) else {
            self.malformed += 1;
            return;
        };
        if r.ts_ns < self.start_ns {
            return;
        }
        let id = r.point as usize;
        if self.points.len() <= id {
            self.points.resize_with(id + 1, PointSeries::default);
        }
        let at = r.ts_ns - self.start_ns;
        let period_ns = self.periods.get(id).copied().unwrap_or(0);
        let p = &mut self.points[id];
        match kind {
            Kind::Interval => {
                if let Some(live) = self.live.as_mut() {
                    live.interval(r, &self.names);
                }
                recorder(&mut p.values).record(r.values[0], at);
                if r.values[1] != 0 {
                    recorder(&mut p.latency).record(r.ts_ns.saturating_sub(r.values[1]), at);
                }
                if period_ns > 0 {
                    if let Some(last) = p.last_begin_ns.filter(|&l| l <= r.ts_ns) {
                        let period = r.ts_ns - last;
                        recorder(&mut p.period).record(period, at);
                        recorder(&mut p.jitter).record(period.abs_diff(period_ns), at);
                        // A begin more than half a period late for the next one missed it.
                        p.overruns += ((period + period_ns / 2) / period_ns).saturating_sub(1);
                    }
                    p.last_begin_ns = Some(r.ts_ns);
                }
            }
            Kind::EventU64 | Kind::EventF64 => recorder(&mut p.values).record(sample_value(r), at),
            Kind::Counter => {
                let window = (at / RATE_WINDOW_NS) as usize;
                if p.windows.len() <= window {
                    p.windows.resize(window + 1, 0);
                }
                p.windows[window] += r.values[0];
                p.total += r.values[0];
            }
            Kind::Object => {
                if p.object.is_empty() {
                    p.object = (0..r.values.len())
                        .map(|_| Recorder::new(DEFAULT_INTERVAL_NS))
                        .collect();
                }
                for (rec, &v) in p.object.iter_mut().zip(&r.values) {
                    rec.record(v, at);
                }
            }
        }
    }

    /// The series of every enabled point, in registration order; records after `end_ns` (the
    /// application's last moments while it was being stopped) are not in them.
    pub fn finish(mut self, points: &[PointInfo], end_ns: u64) -> Vec<Series> {
        let complete_windows = (end_ns.saturating_sub(self.start_ns) / RATE_WINDOW_NS) as usize;
        let mut out = Vec::new();
        for info in points.iter().filter(|p| p.enabled) {
            let p = match self.points.get_mut(info.id as usize) {
                Some(p) => std::mem::take(p),
                None => PointSeries::default(),
            };
            let name = info.name.as_str();
            let kind = info.kind.name();
            let summary = |r: Option<Recorder>| r.unwrap_or_default().summary();
            match info.kind {
                Kind::Interval => {
                    let periodic = info.period_ns > 0;
                    let mut main = Series::new(name, summary(p.values)).label("kind", kind);
                    if periodic {
                        main = main.counter("overruns", p.overruns);
                    }
                    out.push(main);
                    if p.latency.is_some() {
                        out.push(
                            Series::new(format!("{name}:latency"), summary(p.latency))
                                .label("kind", kind)
                                .counter("overruns", p.overruns),
                        );
                    }
                    if periodic {
                        out.push(
                            Series::new(format!("{name}:period"), summary(p.period))
                                .label("kind", kind),
                        );
                        out.push(
                            Series::new(format!("{name}:jitter"), summary(p.jitter))
                                .label("kind", kind),
                        );
                    }
                }
                Kind::EventU64 | Kind::EventF64 => {
                    out.push(Series::new(name, summary(p.values)).label("kind", kind));
                }
                Kind::Counter => {
                    let mut rate = Recorder::new(DEFAULT_INTERVAL_NS);
                    let per_second = 1_000_000_000 / RATE_WINDOW_NS;
                    for (i, &n) in p.windows.iter().enumerate().take(complete_windows) {
                        rate.record(n * per_second, i as u64 * RATE_WINDOW_NS);
                    }
                    // Windows without any increment are zero, not missing.
                    for i in p.windows.len()..complete_windows {
                        rate.record(0, i as u64 * RATE_WINDOW_NS);
                    }
                    out.push(
                        Series::new(name, rate.summary())
                            .label("kind", kind)
                            .counter("total", p.total),
                    );
                }
                Kind::Object => {
                    for (i, rec) in p.object.into_iter().enumerate() {
                        out.push(
                            Series::new(name, rec.summary())
                                .label("kind", kind)
                                .label("value", i),
                        );
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MS: u64 = 1_000_000;

    fn interval(point: u32, begin: u64, duration: u64, deadline: u64) -> Record {
        Record {
            ts_ns: begin,
            point,
            kind: Kind::Interval as u32,
            values: [duration, deadline, 0, 0],
        }
    }

    fn info(id: u32, name: &str, kind: Kind, period_ns: u64) -> PointInfo {
        PointInfo {
            id,
            name: name.into(),
            kind,
            enabled: true,
            period_ns,
        }
    }

    fn named<'a>(series: &'a [Series], name: &str) -> &'a Series {
        series.iter().find(|s| s.name == name).unwrap()
    }

    #[test]
    fn the_live_view_shows_a_cycles_start_latency_rather_than_a_duration() {
        let board = rtgauge_core::live::LiveBoard::default();
        let mut acc = Accumulator::new(10 * MS);
        acc.show_on(&board);
        acc.periods = vec![0, MS];
        acc.names = vec!["servo.compute".into(), "servo.cycle".into()];
        // The compute section ends first in every cycle; the cycle gives its intended start.
        for begin in [10, 11] {
            acc.add(&interval(0, begin * MS + 30_000, 100_000, 0));
            acc.add(&interval(1, begin * MS + 20_000, 200_000, begin * MS));
        }
        let (_, cells) = board.snapshot();
        assert_eq!(cells.len(), 1, "{cells:?}");
        assert_eq!(cells[0].0, "app servo.cycle latency");
        assert_eq!((cells[0].1.count, cells[0].1.last), (2, 20_000));

        // Without any intended start, the first interval's duration, after a while.
        let board = rtgauge_core::live::LiveBoard::default();
        let mut acc = Accumulator::new(0);
        acc.show_on(&board);
        acc.names = vec!["servo.compute".into()];
        for i in 0..Live::PATIENCE as u64 + 1 {
            acc.add(&interval(0, i * MS, 100_000, 0));
        }
        let (_, cells) = board.snapshot();
        assert_eq!(cells[0].0, "app servo.compute duration");
        assert_eq!(cells[0].1.last, 100_000);
    }

    #[test]
    fn a_periodic_point_gives_period_jitter_latency_and_missed_periods() {
        let mut acc = Accumulator::new(10 * MS);
        acc.periods = vec![MS];
        // Before the start (warm-up): discarded.
        acc.add(&interval(0, 9 * MS, 5, 9 * MS));
        // Cycles at 10, 11, 12 ms, then 15 ms (two periods missed), each begun 20 us late.
        for begin in [10, 11, 12, 15] {
            acc.add(&interval(0, begin * MS + 20_000, 100_000, begin * MS));
        }
        let series = acc.finish(&[info(0, "servo.cycle", Kind::Interval, MS)], 20 * MS);
        let main = named(&series, "servo.cycle");
        assert_eq!(main.stats.count, 4);
        assert_eq!(main.stats.min_ns, Some(100_000));
        assert_eq!(main.counters["overruns"], 2);
        let latency = named(&series, "servo.cycle:latency");
        assert_eq!(
            (latency.stats.min_ns, latency.stats.max_ns),
            (Some(20_000), Some(20_000))
        );
        let period = named(&series, "servo.cycle:period");
        assert_eq!(period.stats.count, 3);
        assert_eq!(period.stats.max_ns, Some(3 * MS));
        assert_eq!(
            named(&series, "servo.cycle:jitter").stats.max_ns,
            Some(2 * MS)
        );
    }

    #[test]
    fn counters_become_rates_and_events_their_values() {
        let mut acc = Accumulator::new(0);
        let record = |point, kind: Kind, ts, value| Record {
            ts_ns: ts,
            point,
            kind: kind as u32,
            values: [value, 0, 0, 0],
        };
        // 5 increments in the first 100 ms window, none in the second, 1 in the third.
        for ts in [1, 2, 3, 4, 5] {
            acc.add(&record(0, Kind::Counter, ts * MS, 1));
        }
        acc.add(&record(0, Kind::Counter, 250 * MS, 1));
        acc.add(&record(1, Kind::EventF64, MS, (-2.5f64).to_bits()));
        acc.add(&record(1, Kind::EventF64, MS, 2.6f64.to_bits()));
        let points = [
            info(0, "servo.cycles", Kind::Counter, 0),
            info(1, "servo.error", Kind::EventF64, 0),
        ];
        let series = acc.finish(&points, 300 * MS);
        let rate = named(&series, "servo.cycles");
        assert_eq!(rate.counters["total"], 6);
        assert_eq!(rate.stats.count, 3, "three complete windows");
        assert_eq!((rate.stats.min_ns, rate.stats.max_ns), (Some(0), Some(50)));
        let error = named(&series, "servo.error");
        assert_eq!((error.stats.min_ns, error.stats.max_ns), (Some(0), Some(3)));
    }

    proptest! {
        /// Whatever the gaps between begins, the missed periods are the periods each gap
        /// spans beyond one (rounded to the nearest period), and every gap is a period sample.
        #[test]
        fn missed_periods_are_counted_from_the_gaps(gaps in prop::collection::vec(1u64..5_000_000, 1..50)) {
            let mut acc = Accumulator::new(0);
            acc.periods = vec![MS];
            let mut begin = 0;
            acc.add(&interval(0, begin, 1, 0));
            for gap in &gaps {
                begin += gap;
                acc.add(&interval(0, begin, 1, 0));
            }
            let expected: u64 = gaps.iter().map(|g| ((g + MS / 2) / MS).saturating_sub(1)).sum();
            let series = acc.finish(&[info(0, "p", Kind::Interval, MS)], begin + 1);
            prop_assert_eq!(named(&series, "p").counters["overruns"], expected);
            prop_assert_eq!(named(&series, "p:period").stats.count, gaps.len() as u64);
        }
    }
}
