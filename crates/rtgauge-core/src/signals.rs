//! SIGINT and SIGTERM stop a run cleanly: probes see the flag, finish, and the result of what
//! was measured is still written.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);
/// The signal that asked to stop (0: none), so the process can exit with the conventional
/// status 128 + signal after saving what it measured.
static SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    // Only atomic stores: async-signal-safe.
    SIGNAL.store(sig, Ordering::Relaxed);
    STOP.store(true, Ordering::Relaxed);
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
