//! SIGINT and SIGTERM stop a run cleanly: probes see the flag, finish, and the result of what
//! was measured is still written. A second one exits at once.

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);
/// The signal that asked to stop (0: none), so the process can exit with the conventional
/// status 128 + signal after saving what it measured.
static SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    // Only atomic stores: async-signal-safe.
    if SIGNAL.swap(sig, Ordering::Relaxed) != 0 {
        force_exit(sig);
    }
    STOP.store(true, Ordering::Relaxed);
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
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: the handler only stores to an atomic; sigaction is given a zeroed, valid struct.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as *const () as usize;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(sig, &action, std::ptr::null_mut());
        }
    }
}

/// The flag every hot loop polls.
pub fn stop_flag() -> &'static AtomicBool {
    &STOP
}

pub fn stop_requested() -> bool {
    STOP.load(Ordering::Relaxed)
}

/// Asks every probe to stop, as a signal would.
pub fn request_stop() {
    STOP.store(true, Ordering::Relaxed);
}
