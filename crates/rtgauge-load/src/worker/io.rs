//! `io`: file-system and disk load in the worker's size-capped scratch directory, in rounds:
//! create a small tree of files (written and fsynced), copy each file (Moryc copied files
//! in a loop), walk the tree and a slice of /usr with a stat of every entry (Zhang et al. ran
//! `ls -lR /`), then delete the round.

use std::fs::{self, File, ReadDir};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use super::{fill_pattern, Ctx, Outcome};
use crate::kinds::idx;
use crate::running::{IO_FILES, IO_MAX_FILE};

const SUBDIRS: u64 = 4;
const MIN_FILE: u64 = 4096;
const CHUNK: usize = 64 * 1024;
/// Entries of the system tree visited per round: enough to keep the dentry and inode caches
/// busy, few enough that a round stays short.
const SYSTEM_WALK: usize = 512;
const SYSTEM_ROOT: &str = "/usr";

pub(crate) fn run(ctx: &Ctx) -> Outcome {
    let root = ctx
        .cfg
        .scratch
        .clone()
        .ok_or("the io load has no scratch directory")?;
    // Each round holds every file twice (original and copy) within the worker's disk budget.
    let file_size =
        (ctx.cfg.disk_budget / (2 * IO_FILES)).clamp(MIN_FILE, IO_MAX_FILE) / MIN_FILE * MIN_FILE;
    let mut data = vec![0u8; file_size as usize];
    fill_pattern(&mut data, 7 + ctx.cfg.slot as u64);
    let mut walker = TreeWalker::new(PathBuf::from(SYSTEM_ROOT));
    let mut buf = vec![0u8; CHUNK];
    let mut round = 0u64;
    loop {
        let dir = root.join(format!("round-{round}"));
        one_round(ctx, &dir, &data, &mut buf, &mut walker)
            .map_err(|e| format!("io round in {}: {e}", dir.display()))?;
        if round == 0 {
            ctx.slot.set_running();
        }
        round += 1;
    }
}

fn one_round(
    ctx: &Ctx,
    dir: &Path,
    data: &[u8],
    buf: &mut [u8],
    walker: &mut TreeWalker,
) -> std::io::Result<()> {
    let slot = ctx.slot;
    for s in 0..SUBDIRS {
        fs::create_dir_all(dir.join(format!("d{s}")))?;
    }
    let files: Vec<PathBuf> = (0..IO_FILES)
        .map(|f| {
            dir.join(format!("d{}", f % SUBDIRS))
                .join(format!("file-{f}"))
        })
        .collect();
    for path in &files {
        let mut file = File::create(path)?;
        for chunk in data.chunks(CHUNK) {
            file.write_all(chunk)?;
        }
        file.sync_all()?;
        slot.add(idx::OPS, 1);
        slot.add(idx::IO_WRITTEN, data.len() as u64);
        slot.add(idx::IO_FSYNCS, 1);
    }
    for path in &files {
        // Read and write by hand: fs::copy may use copy_file_range or reflinks, which move
        // no data on some file systems.
        let mut from = File::open(path)?;
        let mut to = File::create(path.with_extension("copy"))?;
        loop {
            let n = from.read(buf)?;
            if n == 0 {
                break;
            }
            to.write_all(&buf[..n])?;
            slot.add(idx::IO_WRITTEN, n as u64);
        }
        slot.add(idx::OPS, 1);
    }
    let mut entries = 0u64;
    walk(dir, &mut entries)?;
    entries += walker.visit(SYSTEM_WALK) as u64;
    slot.add(idx::IO_ENTRIES, entries);
    fs::remove_dir_all(dir)?;
    slot.add(idx::OPS, 2 * IO_FILES);
    Ok(())
}

/// `ls -lR`: every entry read and stat'ed.
fn walk(dir: &Path, entries: &mut u64) -> std::io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let meta = fs::symlink_metadata(entry.path())?;
        *entries += 1;
        if meta.is_dir() {
            walk(&entry.path(), entries)?;
        }
    }
    Ok(())
}

/// A depth-first walk of a read-only system tree that resumes where it stopped, so that
/// successive rounds cover it instead of re-reading its first entries; errors (permissions,
/// files vanishing) are skipped, as `ls -lR /` would.
struct TreeWalker {
    root: PathBuf,
    stack: Vec<ReadDir>,
}

impl TreeWalker {
    fn new(root: PathBuf) -> TreeWalker {
        TreeWalker {
            root,
            stack: Vec::new(),
        }
    }

    fn visit(&mut self, budget: usize) -> usize {
        let mut visited = 0;
        let mut restarts = 0;
        while visited < budget {
            let Some(top) = self.stack.last_mut() else {
                // Start (again) from the root; give up for this round if it cannot be read.
                restarts += 1;
                match fs::read_dir(&self.root) {
                    Ok(rd) if restarts <= 2 => self.stack.push(rd),
                    _ => break,
                }
                continue;
            };
            match top.next() {
                None => {
                    self.stack.pop();
                }
                Some(Err(_)) => {}
                Some(Ok(entry)) => {
                    visited += 1;
                    if let Ok(meta) = fs::symlink_metadata(entry.path()) {
                        // Bound the depth and the open directories.
                        if meta.is_dir() && self.stack.len() < 16 {
                            if let Ok(rd) = fs::read_dir(entry.path()) {
                                self.stack.push(rd);
                            }
                        }
                    }
                }
            }
        }
        visited
    }
}
