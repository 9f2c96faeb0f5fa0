//! `memory`: cache- and bandwidth-thrashing copies over two buffers larger than the last-level
//! cache, interleaved with a dd-like sequential write of 1 MiB blocks to a capped scratch file
//! (Raj et al. used `dd` of a 500 MB file of zeros).

use std::fs::File;
use std::io::{Seek, SeekFrom, Write};

use super::{fill_pattern, Ctx, Outcome};
use crate::error::MIB;
use crate::kinds::idx;
use crate::sys;

/// Smallest buffer, for machines whose cache size sysfs does not tell.
const MIN_BUFFER: u64 = 8 * MIB;
const MAX_BUFFER: u64 = 256 * MIB;
/// One dd block written every this many 1 MiB copies: copying dominates, the write keeps the
/// page cache, writeback and the disk busy.
const COPIES_PER_WRITE: u64 = 4;

pub(crate) fn run(ctx: &Ctx) -> Outcome {
    let size = buffer_size(ctx.cfg.workers as u64) as usize;
    let block = MIB as usize;
    // Non-zero fills touch every page now (vec![0; n] would map the zero page lazily), so
    // that the measured interval copies instead of faulting.
    let mut a = vec![0x5au8; size];
    let mut b = vec![0xa5u8; size];

    let mut dd = match (&ctx.cfg.scratch, ctx.cfg.disk_budget >= MIB) {
        (Some(dir), true) => {
            let path = dir.join("dd.bin");
            let file = File::create(&path)
                .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
            Some(file)
        }
        _ => {
            ctx.slot.set_message(
                "dd-like write skipped: the disk cap leaves less than 1 MiB per worker",
            );
            None
        }
    };
    let mut out_block = vec![0u8; block];
    fill_pattern(&mut out_block, 3);
    let blocks = size / block;
    let mut dd_offset = 0u64;
    let mut copies = 0u64;
    let mut i = 0usize;
    ctx.slot.set_running();
    loop {
        let range = i * block..(i + 1) * block;
        b[range.clone()].copy_from_slice(&a[range]);
        ctx.slot.add(idx::OPS, 1);
        ctx.slot.add(idx::MEM_COPIED, MIB);
        i += 1;
        if i == blocks {
            // Copy back the other way on the next pass, so both buffers stream through.
            i = 0;
            std::mem::swap(&mut a, &mut b);
        }
        copies += 1;
        if !copies.is_multiple_of(COPIES_PER_WRITE) {
            continue;
        }
        if let Some(file) = dd.as_mut() {
            if let Err(e) = dd_step(file, &out_block, &mut dd_offset, ctx) {
                // The copies go on: one broken disk must not leave the machine unloaded.
                ctx.slot.set_message(&format!(
                    "dd-like write stopped: {e}; memory copies went on"
                ));
                dd = None;
            }
        }
    }
}

fn dd_step(file: &mut File, block: &[u8], offset: &mut u64, ctx: &Ctx) -> std::io::Result<()> {
    file.write_all(block)?;
    ctx.slot.add(idx::MEM_WRITTEN, block.len() as u64);
    *offset += block.len() as u64;
    if *offset + block.len() as u64 > ctx.cfg.disk_budget {
        // Like `dd conv=fdatasync`, then over again from the start of the file: the disk
        // cap holds and the data really goes to the device.
        file.sync_data()?;
        ctx.slot.add(idx::MEM_SYNCS, 1);
        file.seek(SeekFrom::Start(0))?;
        *offset = 0;
    }
    Ok(())
}

/// Twice the last-level cache per buffer, within bounds, and shrunk so that all workers' two
/// buffers take at most a quarter of the available memory.
fn buffer_size(workers: u64) -> u64 {
    let llc = sys::last_level_cache_bytes();
    let mut size = (2 * llc).clamp(MIN_BUFFER, MAX_BUFFER);
    if let Some(avail) = mem_available() {
        let per_worker = avail / 4 / (2 * workers.max(1));
        size = size.min(per_worker.max(MIB));
    }
    (size / MIB).max(1) * MIB
}

fn mem_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
