//! What a second Ctrl-C undoes before the process exits at once: the first asks the run to
//! stop and save; the second does not wait for the probe. Everything here runs inside the
//! signal handler, so it only makes async-signal-safe calls.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::OnceLock;

/// The result path, claimed (created empty) before the first sample.
static RESULT_PATH: OnceLock<CString> = OnceLock::new();

/// Arms the forced exit for a run writing its result at `result`.
pub fn arm(result: &Path) {
    if let Ok(path) = CString::new(result.as_os_str().as_bytes()) {
        let _ = RESULT_PATH.set(path);
    }
    rtgauge_core::signals::on_forced_exit(on_forced_exit);
}

extern "C" fn on_forced_exit() {
    const MESSAGE: &[u8] =
        b"\nrtgauge: second interrupt: exiting now, without waiting for the probe; \
the result keeps the probes finished before the first\n";
    // SAFETY: write, stat and unlink are async-signal-safe; the buffers outlive the calls.
    unsafe {
        libc::write(2, MESSAGE.as_ptr().cast(), MESSAGE.len());
        if let Some(path) = RESULT_PATH.get() {
            // Still the empty file claimed at the start (no probe finished): give the name
            // back rather than leave a file no reader accepts.
            let mut st: libc::stat = std::mem::zeroed();
            if libc::stat(path.as_ptr(), &mut st) == 0 && st.st_size == 0 {
                libc::unlink(path.as_ptr());
            }
        }
    }
}
