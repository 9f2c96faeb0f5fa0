//! A late wake-up explained from the kernel's rings: a SCHED_FIFO thread spins on the measured
//! CPU through several periods of a watched sleeper; the window the kernel sends must name the
//! spinner as the cause, through the same attribution tracefs windows go through. Root only;
//! skips (saying why) where the recorder cannot run. Bounded retries (this VM is noisy).

use rtgauge_bpf::{Error, Recorder};
use rtgauge_trace::testing::{now_ns, pin_fifo, set_thread_name, sleep_until, thread_id};
use rtgauge_trace::{attribute_trace, cause_name, AttributionConfig, Spike};

const MS: u64 = 1_000_000;

/// One attempt: returns the name of the dominant cause of each window the kernel sent.
fn attempt(recorder: &mut Recorder, cpu: u32) -> Vec<String> {
    let t0 = now_ns() + 20 * MS;
    let woke: Vec<(u64, u64)> = std::thread::scope(|scope| {
        scope.spawn(move || {
            pin_fifo(cpu as usize, 90).expect("SCHED_FIFO as root");
            set_thread_name("bpf-hog");
            sleep_until(t0 + MS);
            while now_ns() < t0 + 6 * MS {
                std::hint::spin_loop();
            }
        });
        let recorder = &*recorder;
        scope
            .spawn(move || {
                pin_fifo(cpu as usize, 80).expect("SCHED_FIFO as root");
                set_thread_name("bpf-sleeper");
                let watch = recorder.watch(cpu).expect("a slot for the CPU");
                watch.start(thread_id(), 500_000);
                let mut woke = Vec::new();
                for period in 2..=10 {
                    let programmed = t0 + period * MS;
                    watch.programmed(programmed);
                    sleep_until(programmed);
                    woke.push((programmed, now_ns()));
                }
                watch.stop();
                woke
            })
            .join()
            .unwrap()
    });
    let mut causes = Vec::new();
    while let Some(kernel) = recorder.next_spike() {
        let Some(&(programmed, woke_ns)) = woke.iter().find(|(p, _)| *p == kernel.programmed_ns)
        else {
            continue;
        };
        let spike = Spike {
            cpu,
            programmed_ns: programmed,
            woke_ns,
            thread_pid: kernel.tid,
        };
        let window = kernel.window(programmed - MS, woke_ns);
        let why = attribute_trace(&spike, &window, &AttributionConfig::default());
        causes.push(
            why.dominant_contributor()
                .map_or("none".to_owned(), |c| cause_name(&c.cause)),
        );
    }
    causes
}

#[test]
fn a_spinning_thread_is_named_from_the_kernels_window() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: loading BPF programs and SCHED_FIFO need root");
        return;
    }
    let cpu = (std::thread::available_parallelism().map_or(1, |n| n.get()) - 1) as u32;
    let mut recorder = match Recorder::start(&[cpu]) {
        Ok(r) => r,
        Err(e @ (Error::NotBuilt | Error::NoBtf | Error::NoBpf)) => {
            eprintln!("skipped: {e}");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    for round in 1..=3 {
        let causes = attempt(&mut recorder, cpu);
        eprintln!("attempt {round}: dominant causes of the windows sent: {causes:?}");
        if causes.iter().any(|c| c.contains("bpf-hog")) {
            return;
        }
    }
    panic!("no window named bpf-hog as the cause in 3 attempts");
}
