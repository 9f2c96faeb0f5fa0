//! SIGINT and SIGTERM stop a run cleanly: probes see the flag, finish, and the result of what
//! was measured is still written.

use std::sync::atomic::{AtomicBool, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    STOP.store(true, Ordering::Relaxed);
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
