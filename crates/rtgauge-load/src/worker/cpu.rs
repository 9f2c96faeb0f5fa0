//! `cpu`: user-mode spin (Raj et al.'s "infinite for loop"), one per worker.

use super::{Ctx, Outcome};
use crate::kinds::idx;

/// Iterations between counter updates: a few tens of microseconds, so the shared cache line
/// is touched rarely while the count at stop is still exact to within one batch.
const BATCH: u64 = 1 << 16;

pub(crate) fn run(ctx: &Ctx) -> Outcome {
    ctx.slot.set_running();
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15 ^ ctx.cfg.slot as u64;
    loop {
        for _ in 0..BATCH {
            // xorshift*: a dependent chain of integer ALU work that cannot be folded away.
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            x = x.wrapping_mul(0x2545_F491_4F6C_DD1D);
        }
        std::hint::black_box(x);
        ctx.slot.add(idx::OPS, BATCH);
    }
}
