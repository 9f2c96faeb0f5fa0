//! `messaging`: one hackbench group per worker (hackbench's defaults: 20 sender and 20 receiver
//! processes, 100-byte messages, every sender writing to every receiver), half of the
//! receivers fed over pipes, half over UNIX stream sockets (hackbench uses one or the other).
//! Senders block when a receiver lags, so the load is mostly wake-ups and context switches.

use std::os::fd::RawFd;

use super::{die_with_parent, own_pid, Ctx, Outcome};
use crate::kinds::idx;
use crate::shared::Slot;

const PAIRS: usize = 20;
const MESSAGE: usize = 100;
/// Messages between counter updates.
const BATCH: u64 = 32;

pub(crate) fn run(ctx: &Ctx) -> Outcome {
    let mut channels = Vec::with_capacity(PAIRS);
    for r in 0..PAIRS {
        channels.push(channel(r % 2 == 1).map_err(|e| format!("cannot create a channel: {e}"))?);
    }
    let worker = own_pid();
    // The worker has no threads, so forking is safe; children only run the loops below.
    for (read_fd, _) in &channels {
        spawn(worker, || receive(*read_fd, ctx.slot))?;
    }
    let writers: Vec<RawFd> = channels.iter().map(|(_, w)| *w).collect();
    for s in 0..PAIRS {
        let writers = writers.clone();
        spawn(worker, move || send(&writers, s))?;
    }
    ctx.slot.set_running();
    // Children only exit when something broke: then the load is no longer what it claims.
    let mut status = 0;
    // SAFETY: waits for any child of this process; status is a valid out-pointer.
    let pid = unsafe { libc::waitpid(-1, &mut status, 0) };
    Err(format!(
        "a messaging process (pid {pid}) ended unexpectedly (wait status {status})"
    ))
}

/// A pipe, or a UNIX stream socket pair: (read end, write end).
fn channel(socket: bool) -> std::io::Result<(RawFd, RawFd)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: fds is a valid array of two descriptors for the kernel to fill.
    let ret = unsafe {
        if socket {
            libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM, 0, fds.as_mut_ptr())
        } else {
            libc::pipe(fds.as_mut_ptr())
        }
    };
    crate::sys::check(ret)?;
    Ok((fds[0], fds[1]))
}

fn spawn(worker: libc::pid_t, body: impl FnOnce()) -> Result<(), String> {
    // SAFETY: the worker is single-threaded here, so the child may run ordinary code.
    match unsafe { libc::fork() } {
        -1 => Err(format!(
            "cannot fork a messaging process: {}",
            std::io::Error::last_os_error()
        )),
        0 => {
            if die_with_parent(worker).is_ok() {
                body();
            }
            // SAFETY: leave without running the parent's destructors or atexit handlers.
            unsafe { libc::_exit(1) }
        }
        _ => Ok(()),
    }
}

/// Reads whole messages forever; returns when the channel breaks.
fn receive(fd: RawFd, slot: &Slot) {
    let mut buf = [0u8; MESSAGE];
    let mut pending = 0u64;
    loop {
        let mut got = 0;
        while got < MESSAGE {
            // SAFETY: reads into the unfilled tail of buf.
            let n = unsafe { libc::read(fd, buf[got..].as_mut_ptr().cast(), MESSAGE - got) };
            if n <= 0 {
                if n < 0
                    && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
                {
                    continue;
                }
                return;
            }
            got += n as usize;
        }
        pending += 1;
        if pending == BATCH {
            slot.add(idx::OPS, BATCH);
            slot.add(idx::MSG_BYTES, BATCH * MESSAGE as u64);
            pending = 0;
        }
    }
}

/// Writes one message to every receiver in turn, forever; returns when a channel breaks.
fn send(writers: &[RawFd], seed: usize) {
    let buf = [seed as u8; MESSAGE];
    loop {
        for &fd in writers {
            let mut sent = 0;
            while sent < MESSAGE {
                // SAFETY: writes from the unsent tail of buf.
                let n = unsafe { libc::write(fd, buf[sent..].as_ptr().cast(), MESSAGE - sent) };
                if n <= 0 {
                    if n < 0
                        && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
                    {
                        continue;
                    }
                    return;
                }
                sent += n as usize;
            }
        }
    }
}
