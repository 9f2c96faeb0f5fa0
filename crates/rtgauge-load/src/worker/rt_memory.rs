//! `rt-memory`: Arm et al.'s load, "a soft real-time thread of a period of 1 us which does a lot
//! of work in memory", scheduled SCHED_FIFO at a priority below the measuring threads. Here:
//! every 50 us, copy 64 KiB within a 4 MiB working set (larger than most L2 caches).

use super::{Ctx, Outcome};
use crate::error::MIB;
use crate::kinds::idx;
use crate::sys;

const PERIOD_NS: i64 = 50_000;
const CHUNK: usize = 64 * 1024;
const WORKING_SET: usize = 4 * MIB as usize;

pub(crate) fn run(ctx: &Ctx) -> Outcome {
    let priority = ctx.cfg.rt_priority;
    sys::set_fifo(priority).map_err(|e| {
        format!(
            "cannot switch to SCHED_FIFO {priority} ({e}); run as root, grant CAP_SYS_NICE or raise RLIMIT_RTPRIO"
        )
    })?;
    let mut src = vec![0x5au8; WORKING_SET];
    let mut dst = vec![0xa5u8; WORKING_SET];
    let mut offset = 0usize;
    let mut next = now();
    ctx.slot.set_running();
    loop {
        dst[offset..offset + CHUNK].copy_from_slice(&src[offset..offset + CHUNK]);
        offset += CHUNK;
        if offset == WORKING_SET {
            offset = 0;
            std::mem::swap(&mut src, &mut dst);
        }
        ctx.slot.add(idx::OPS, 1);
        ctx.slot.add(idx::RT_COPIED, CHUNK as u64);
        next = add_ns(next, PERIOD_NS);
        let current = now();
        if later(&current, &next) {
            // Behind schedule: count it and start again from now instead of bursting to
            // catch up, which would hold the CPU for longer than the load means to.
            ctx.slot.add(idx::RT_OVERRUNS, 1);
            next = current;
            continue;
        }
        // SAFETY: `next` is a valid timespec; the remaining-time pointer may be null with
        // TIMER_ABSTIME.
        unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &next,
                std::ptr::null_mut(),
            );
        }
    }
}

fn now() -> libc::timespec {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into ts.
    unsafe {
        libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts);
    }
    ts
}

fn add_ns(mut ts: libc::timespec, ns: i64) -> libc::timespec {
    ts.tv_nsec += ns as libc::c_long;
    while ts.tv_nsec >= 1_000_000_000 {
        ts.tv_nsec -= 1_000_000_000;
        ts.tv_sec += 1;
    }
    ts
}

fn later(a: &libc::timespec, b: &libc::timespec) -> bool {
    (a.tv_sec, a.tv_nsec) > (b.tv_sec, b.tv_nsec)
}
