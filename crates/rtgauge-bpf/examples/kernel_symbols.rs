//! How long reading the kernel's function names takes and what they hold in memory:
//! `kernel_symbols [ADDRESS...]` prints the table's size, its load time and the process's RSS
//! before and after, then the name of each hex ADDRESS given.

use rtgauge_bpf::Symbols;
use std::time::Instant;

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("VmRSS:"))?;
            line.split_whitespace().nth(1)?.parse().ok()
        })
        .unwrap_or(0)
}

fn main() {
    let before = rss_kib();
    let start = Instant::now();
    let symbols = Symbols::kernel();
    let took = start.elapsed();
    println!(
        "{} functions, {} KiB, read in {:.1} ms; RSS {} KiB before, {} KiB after",
        symbols.len(),
        symbols.heap_bytes() / 1024,
        took.as_secs_f64() * 1e3,
        before,
        rss_kib()
    );
    for arg in std::env::args().skip(1) {
        let Ok(address) = u64::from_str_radix(arg.trim_start_matches("0x"), 16) else {
            eprintln!("{arg}: not a hex address");
            std::process::exit(1);
        };
        println!("{address:#x} {}", symbols.printed(address).unwrap_or("-"));
    }
}
