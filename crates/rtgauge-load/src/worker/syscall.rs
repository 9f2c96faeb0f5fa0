//! `syscall`: CPU time spent in kernel mode, from a tight system-call loop (Raj et al.'s loop
//! "with an additional system call to get the process ID"), plus reads of /dev/zero so that
//! the kernel does some work besides entry and exit.

use std::os::fd::AsRawFd;

use super::{Ctx, Outcome};
use crate::kinds::idx;

const ROUNDS: u64 = 64;
/// System calls per round: 7 getppid + 1 read.
const CALLS_PER_ROUND: u64 = 8;

pub(crate) fn run(ctx: &Ctx) -> Outcome {
    let zero =
        std::fs::File::open("/dev/zero").map_err(|e| format!("cannot open /dev/zero: {e}"))?;
    let fd = zero.as_raw_fd();
    let mut buf = [0u8; 4096];
    ctx.slot.set_running();
    loop {
        for _ in 0..ROUNDS {
            for _ in 0..CALLS_PER_ROUND - 1 {
                // SAFETY: getppid takes no arguments. Called through syscall() so that no
                // library caching can turn it into a user-mode function call.
                unsafe {
                    libc::syscall(libc::SYS_getppid);
                }
            }
            // SAFETY: buf is a live, writable buffer of the length given.
            unsafe {
                libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
            }
        }
        ctx.slot.add(idx::OPS, ROUNDS * CALLS_PER_ROUND);
    }
}
