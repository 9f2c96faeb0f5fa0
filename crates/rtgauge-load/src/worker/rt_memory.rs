//! `rt-memory`: Arm et al.'s load, "a soft real-time thread of a period of 1 us which does a lot
//! of work in memory", scheduled SCHED_FIFO at a priority below the measuring threads. Here:
//! every 50 us, copy 64 KiB within a 4 MiB working set (larger than most L2 caches).

use super::{Ctx, Outcome};
use crate::error::MIB;
use crate::kinds::idx;
use crate::sys;
use rtgauge_os::clock::{now_ns, sleep_until_once};

const PERIOD_NS: u64 = 50_000;
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
    let mut next = now_ns();
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
        next += PERIOD_NS;
        let current = now_ns();
        if current > next {
            // Behind schedule: count it and start again from now instead of bursting to
            // catch up, which would hold the CPU for longer than the load means to.
            ctx.slot.add(idx::RT_OVERRUNS, 1);
            next = current;
            continue;
        }
        // A signal ending the sleep early only shortens one period.
        sleep_until_once(next);
    }
}
