//! POSIX message queues (and the unique names of the kernel objects rtgauge creates).

use std::ffi::{CStr, CString};
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};

/// A name no other object of this process (or another rtgauge) uses: `/rtgauge-KIND-PID-N`.
pub fn unique_name(kind: &str) -> CString {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let name = format!(
        "/rtgauge-{kind}-{}-{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    );
    CString::new(name).expect("generated names contain no NUL")
}

/// Creates the queue `name` (it must not exist), open for reading and writing with
/// `extra_flags` (e.g. `O_NONBLOCK`), holding `capacity` messages of `size` bytes.
pub fn create(
    name: &CStr,
    capacity: usize,
    size: usize,
    extra_flags: libc::c_int,
) -> io::Result<libc::mqd_t> {
    // SAFETY: mq_attr is plain data; name is NUL-terminated; the variadic arguments are the
    // mode and attribute pointer mq_open expects with O_CREAT.
    let mq = unsafe {
        let mut attr: libc::mq_attr = std::mem::zeroed();
        attr.mq_maxmsg = capacity as libc::c_long;
        attr.mq_msgsize = size as libc::c_long;
        libc::mq_open(
            name.as_ptr(),
            libc::O_CREAT | libc::O_EXCL | libc::O_RDWR | libc::O_CLOEXEC | extra_flags,
            0o600 as libc::mode_t,
            &mut attr as *mut libc::mq_attr,
        )
    };
    if mq < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(mq)
}

/// Opens the existing queue `name` again with `flags` (a second descriptor on it).
pub fn open(name: &CStr, flags: libc::c_int) -> io::Result<libc::mqd_t> {
    // SAFETY: a NUL-terminated name; no O_CREAT, so no further arguments.
    let mq = unsafe { libc::mq_open(name.as_ptr(), flags | libc::O_CLOEXEC) };
    if mq < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(mq)
}

/// Removes the name; the queue lives on through its open descriptors.
pub fn unlink(name: &CStr) {
    // SAFETY: a NUL-terminated name.
    unsafe { libc::mq_unlink(name.as_ptr()) };
}

/// Closes a descriptor from [`create`] or [`open`].
pub fn close(mq: libc::mqd_t) {
    // SAFETY: the caller owns the descriptor and does not use it again.
    unsafe { libc::mq_close(mq) };
}
