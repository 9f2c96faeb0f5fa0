//! File descriptors, pipes, futex words and interrupted system calls.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicU32, Ordering};

/// Retries a system call interrupted by a signal (SIGINT/SIGTERM handlers are installed
/// without SA_RESTART so that sleeps end promptly; the stop flag is checked by the loops).
#[inline]
pub fn retry<T>(mut f: impl FnMut() -> io::Result<T>) -> io::Result<T> {
    loop {
        match f() {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

/// A libc return value: negative means errno.
#[inline]
pub fn cvt(rc: isize) -> io::Result<isize> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

/// A close-on-exec pipe: (read end, write end).
pub fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0i32; 2];
    // SAFETY: fds is a valid array of two ints.
    cvt(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } as isize)?;
    // SAFETY: pipe2 just returned these two descriptors, owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

#[inline]
pub fn write_byte(fd: &OwnedFd) -> io::Result<()> {
    let b = 1u8;
    // SAFETY: writes one byte from a valid buffer.
    retry(|| cvt(unsafe { libc::write(fd.as_raw_fd(), (&b as *const u8).cast(), 1) })).map(drop)
}

#[inline]
pub fn read_byte(fd: &OwnedFd) -> io::Result<()> {
    let mut b = 0u8;
    // SAFETY: reads at most one byte into a valid buffer.
    match retry(|| cvt(unsafe { libc::read(fd.as_raw_fd(), (&mut b as *mut u8).cast(), 1) }))? {
        1 => Ok(()),
        _ => Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the other end of the pipe was closed",
        )),
    }
}

/// Wakes one waiter of a process-private futex word.
#[inline]
pub fn futex_wake(word: &AtomicU32) -> io::Result<()> {
    // SAFETY: the word is a live, aligned u32 for the duration of the call.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            1,
        )
    };
    cvt(rc as isize).map(drop)
}

/// Blocks while the word holds `value`.
#[inline]
pub fn futex_wait_while(word: &AtomicU32, value: u32) -> io::Result<()> {
    while word.load(Ordering::Acquire) == value {
        // SAFETY: as in futex_wake; a null timeout waits without limit.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_futex,
                word.as_ptr(),
                libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
                value,
                std::ptr::null::<libc::timespec>(),
            )
        };
        if rc < 0 {
            let e = io::Error::last_os_error();
            // EAGAIN: the word changed before we slept; EINTR: a signal. Both re-check.
            if !matches!(e.raw_os_error(), Some(libc::EAGAIN) | Some(libc::EINTR)) {
                return Err(e);
            }
        }
    }
    Ok(())
}

/// The number of columns of the terminal on standard output; None when it is not a terminal
/// (piped, redirected) or the size is unknown.
pub fn terminal_columns() -> Option<usize> {
    let mut size = libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCGWINSZ writes one winsize into the struct passed by pointer.
    let rc = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut size) };
    (rc == 0 && size.ws_col > 0).then_some(usize::from(size.ws_col))
}
