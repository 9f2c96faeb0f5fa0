//! SIGINT and SIGTERM stop a run cleanly: probes see the flag, finish, and the result of what
//! was measured is still written. A second one exits at once.
//!
//! A flag alone is not enough when a measuring thread is asleep in the kernel (a long period,
//! a blocking read): it would see the flag only when its sleep ends. So every measuring thread
//! registers itself ([`wake_on_stop`]), and a stop request sends each registered thread
//! [`wake_signal`], whose handler does nothing and is installed without `SA_RESTART`: the
//! thread's `clock_nanosleep`, `read` or futex wait returns `EINTR`, and its loop sees the flag.
//! The hot loop pays nothing for this; only the `EINTR` path looks at the flag.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};
use std::sync::Once;

static STOP: AtomicBool = AtomicBool::new(false);
/// The signal that asked to stop (0: none), so the process can exit with the conventional
/// status 128 + signal after saving what it measured.
static SIGNAL: AtomicI32 = AtomicI32::new(0);

/// Thread ids of the measuring threads to wake on a stop request; 0 is a free slot. Fixed
/// size, so the signal handler can walk it without allocating or locking.
const SLOTS: usize = 1024;
static THREADS: [AtomicI32; SLOTS] = [const { AtomicI32::new(0) }; SLOTS];

/// The signal that interrupts a registered thread's blocking call (its handler does nothing).
pub fn wake_signal() -> libc::c_int {
    libc::SIGRTMIN() + 6
}

extern "C" fn on_signal(sig: libc::c_int) {
    // Atomic stores and tgkill: all async-signal-safe.
    if SIGNAL.swap(sig, Ordering::Relaxed) != 0 {
        force_exit(sig);
    }
    STOP.store(true, Ordering::Relaxed);
    wake_registered_threads();
}

extern "C" fn on_wake(_: libc::c_int) {}

fn wake_registered_threads() {
    // SAFETY: getpid and tgkill are plain syscalls, async-signal-safe.
    let pid = unsafe { libc::getpid() };
    for slot in &THREADS {
        let tid = slot.load(Ordering::Acquire);
        if tid != 0 {
            unsafe { libc::syscall(libc::SYS_tgkill, pid, tid, wake_signal()) };
        }
    }
}

fn set_handler(sig: libc::c_int, handler: extern "C" fn(libc::c_int)) {
    // SAFETY: the handlers only touch atomics and make syscalls; sigaction is given a zeroed,
    // valid struct. No SA_RESTART: an interrupted blocking call must return EINTR.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = handler as *const () as usize;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(sig, &action, std::ptr::null_mut());
    }
}

fn install_wake_handler() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| set_handler(wake_signal(), on_wake));
}

/// What must be undone before a forced exit (see [`on_forced_exit`]); 0: nothing.
static FORCED_EXIT_HOOK: AtomicUsize = AtomicUsize::new(0);

/// Registers what a second SIGINT/SIGTERM runs before the process exits at once. The hook
/// runs inside the signal handler: it may only make async-signal-safe calls (unlink, write).
pub fn on_forced_exit(hook: extern "C" fn()) {
    FORCED_EXIT_HOOK.store(hook as usize, Ordering::Relaxed);
}

/// A second request to stop: the user will not wait for the probe to finish. Loads end with
/// their parent (PR_SET_PDEATHSIG), the kernel releases memory locks and the PM QoS request,
/// and the last checkpoint of the result stays as it was written.
fn force_exit(sig: libc::c_int) -> ! {
    let hook = FORCED_EXIT_HOOK.load(Ordering::Relaxed);
    if hook != 0 {
        // SAFETY: only `on_forced_exit` stores here, and it stores an `extern "C" fn()`.
        let hook: extern "C" fn() = unsafe { std::mem::transmute::<usize, extern "C" fn()>(hook) };
        hook();
    }
    // SAFETY: _exit is async-signal-safe and never returns.
    unsafe { libc::_exit(128 + sig) }
}

/// The signal (SIGINT, SIGTERM) that stopped the run, if one did.
pub fn stop_signal() -> Option<i32> {
    match SIGNAL.load(Ordering::Relaxed) {
        0 => None,
        sig => Some(sig),
    }
}

/// Installs the handlers (idempotent).
pub fn install() {
    install_wake_handler();
    for sig in [libc::SIGINT, libc::SIGTERM] {
        set_handler(sig, on_signal);
    }
}

/// The flag every hot loop polls.
pub fn stop_flag() -> &'static AtomicBool {
    &STOP
}

pub fn stop_requested() -> bool {
    STOP.load(Ordering::Relaxed)
}

/// Asks every probe to stop, as a signal would, and interrupts their blocking calls.
pub fn request_stop() {
    STOP.store(true, Ordering::Relaxed);
    wake_registered_threads();
}

/// Registers the calling thread to be interrupted by a stop request, until it exits.
/// Idempotent per thread. A thread that finds no free slot is simply not interrupted: it
/// stops at its next wake-up, as before.
pub fn wake_on_stop() {
    thread_local! {
        static REGISTERED: Registration = const { Registration(Cell::new(None)) };
    }
    install_wake_handler();
    REGISTERED.with(|r| {
        if r.0.get().is_some() {
            return;
        }
        // SAFETY: gettid has no preconditions.
        let tid = unsafe { libc::gettid() };
        if let Some(i) = THREADS.iter().position(|s| {
            s.compare_exchange(0, tid, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        }) {
            r.0.set(Some(i));
        }
    });
}

/// Frees the thread's slot when the thread ends, so a later thread reusing its id is not
/// signalled by mistake.
struct Registration(Cell<Option<usize>>);

impl Drop for Registration {
    fn drop(&mut self) {
        if let Some(i) = self.0.get() {
            THREADS[i].store(0, Ordering::Release);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_registered_thread_is_interrupted_in_a_long_sleep() {
        let (tx, rx) = std::sync::mpsc::channel();
        let sleeper = std::thread::spawn(move || {
            wake_on_stop();
            tx.send(()).unwrap();
            let ts = crate::clock::to_timespec(60_000_000_000);
            // SAFETY: a valid timespec and a null remainder.
            unsafe { libc::clock_nanosleep(libc::CLOCK_MONOTONIC, 0, &ts, std::ptr::null_mut()) }
        });
        rx.recv().unwrap();
        let started = std::time::Instant::now();
        // Repeat until it lands: the thread may not have entered the sleep yet.
        while !sleeper.is_finished() {
            wake_registered_threads();
            std::thread::sleep(std::time::Duration::from_millis(5));
            assert!(
                started.elapsed().as_secs() < 10,
                "the sleep was not interrupted"
            );
        }
        assert_eq!(sleeper.join().unwrap(), libc::EINTR);
        // Its slot was freed when it ended.
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}
