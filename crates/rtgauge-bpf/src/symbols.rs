//! The kernel's function names, from /proc/kallsyms, for the callbacks, work functions and NMI
//! handlers the programs record by address: tracefs prints them by name (`%ps`), and
//! attribution's causes should read the same on both paths.
//!
//! Read once per process, when the first recorder starts. Only root sees the addresses
//! (kptr_restrict shows everyone else zeros): then the table is empty and the addresses stay
//! in hex.

use std::io::BufRead;
use std::sync::OnceLock;

/// Text symbols sorted by address: each one's address and where its name starts in `names`.
#[derive(Debug, Default)]
pub struct Symbols {
    /// (address, offset of the name in `names`), sorted by address; of symbols at the same
    /// address, the first listed comes first (the one the kernel prints).
    starts: Vec<(u64, u32)>,
    /// The names, each ended by '\n': "name", or "name [module]" as `%ps` prints a module's.
    names: String,
}

/// Text (code) symbols: local, global and weak functions.
fn is_text(kind: &str) -> bool {
    matches!(kind, "t" | "T" | "W")
}

/// Labels before a function's first byte (its padding and its CFI hash), never a pointer's
/// target: left out, they are half of the table.
fn is_prefix(name: &str) -> bool {
    name.starts_with("__pfx_") || name.starts_with("__cfi_")
}

impl Symbols {
    /// The table of a /proc/kallsyms text ("address type name[\t[module]]" per line). Lines
    /// that are not text symbols, and addresses hidden as zeros, are left out.
    pub fn parse(text: &str) -> Symbols {
        Symbols::read(text.as_bytes())
    }

    /// [`Symbols::parse`] line by line, so the whole file (5 MB here) is never in memory.
    fn read(mut input: impl BufRead) -> Symbols {
        let mut starts = Vec::new();
        let mut names = String::new();
        let mut line = String::new();
        loop {
            line.clear();
            match input.read_line(&mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let mut fields = line.split_whitespace();
            let (Some(address), Some(kind), Some(name)) =
                (fields.next(), fields.next(), fields.next())
            else {
                continue;
            };
            if !is_text(kind) || is_prefix(name) {
                continue;
            }
            // Zero: hidden (kptr_restrict).
            let Ok(address @ 1..) = u64::from_str_radix(address, 16) else {
                continue;
            };
            let Ok(offset) = u32::try_from(names.len()) else {
                break;
            };
            starts.push((address, offset));
            names.push_str(name);
            if let Some(module) = fields.next() {
                names.push(' ');
                names.push_str(module);
            }
            names.push('\n');
        }
        // Stable: aliases keep the order they were listed in.
        starts.sort_by_key(|&(address, _)| address);
        starts.shrink_to_fit();
        names.shrink_to_fit();
        Symbols { starts, names }
    }

    /// The running kernel's table, read from /proc/kallsyms on first use; empty when it
    /// cannot be read or its addresses are hidden.
    pub fn kernel() -> &'static Symbols {
        static KERNEL: OnceLock<Symbols> = OnceLock::new();
        KERNEL.get_or_init(|| {
            std::fs::File::open("/proc/kallsyms")
                .map(|file| Symbols::read(std::io::BufReader::with_capacity(64 * 1024, file)))
                .unwrap_or_default()
        })
    }

    /// The number of symbols kept.
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    /// No symbols: /proc/kallsyms hidden or unreadable.
    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// The bytes the table holds (its two allocations).
    pub fn heap_bytes(&self) -> usize {
        self.starts.capacity() * std::mem::size_of::<(u64, u32)>() + self.names.capacity()
    }

    /// The function starting exactly at `address` as `%ps` prints it ("name", or
    /// "name [module]"); `None` inside a function or outside every one.
    pub fn printed(&self, address: u64) -> Option<&str> {
        // The greatest start ≤ address, then the first of the symbols there.
        let after = self.starts.partition_point(|&(a, _)| a <= address);
        let last = after.checked_sub(1)?;
        if self.starts[last].0 != address {
            return None;
        }
        let first = self.starts[..last].partition_point(|&(a, _)| a < address);
        let rest = &self.names[self.starts[first].1 as usize..];
        rest.split('\n').next()
    }

    /// The function starting exactly at `address`, without its module.
    pub fn function(&self, address: u64) -> Option<&str> {
        self.printed(address)?.split(' ').next()
    }
}

/// `address` by name when a function starts there, else in hex ("0xffffffff81234567").
pub fn name_or_hex(name: Option<&str>, address: u64) -> String {
    name.map_or_else(|| format!("{address:#x}"), str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    const KALLSYMS: &str = "\
ffffffff81000000 T _stext
ffffffff81000000 T _text
ffffffff81001000 D some_data
ffffffff814204a0 t __pfx_hrtimer_wakeup
ffffffff814204b0 t hrtimer_wakeup
ffffffff815be070 t vmstat_update
ffffffff815be050 t refresh_vm_stats
ffffffff8124e120 t perf_event_nmi_handler
ffffffff81207610 W abort
ffffffffc0a01000 t e1000_watchdog\t[e1000e]
ffffffffc0a02000 T ext4_end_io_rsv_work\t[ext4]
not a line
";

    #[test]
    fn parses_text_symbols_sorted_by_address() {
        let s = Symbols::parse(KALLSYMS);
        // _stext, _text, hrtimer_wakeup, vmstat_update, refresh_vm_stats,
        // perf_event_nmi_handler, abort and the two module functions.
        assert_eq!(s.len(), 9);
        assert!(s.starts.windows(2).all(|w| w[0].0 <= w[1].0));
        assert_eq!(s.function(0xffff_ffff_815b_e050), Some("refresh_vm_stats"));
        assert_eq!(s.function(0xffff_ffff_815b_e070), Some("vmstat_update"));
        assert_eq!(
            s.function(0xffff_ffff_8124_e120),
            Some("perf_event_nmi_handler")
        );
        assert_eq!(s.function(0xffff_ffff_8120_7610), Some("abort"));
        // Of aliases, the first listed, as the kernel prints it.
        assert_eq!(s.function(0xffff_ffff_8100_0000), Some("_stext"));
    }

    #[test]
    fn only_a_functions_first_byte_has_its_name() {
        let s = Symbols::parse(KALLSYMS);
        assert_eq!(s.function(0xffff_ffff_8142_04b0), Some("hrtimer_wakeup"));
        // Inside it, before it (its padding label is left out), before every symbol, after
        // the last, at a data symbol: no name.
        for address in [
            0xffff_ffff_8142_04b1,
            0xffff_ffff_8142_04a0,
            0xffff_ffff_8100_1000,
            0x1000,
            u64::MAX,
            0,
        ] {
            assert_eq!(s.function(address), None, "{address:#x}");
        }
        assert_eq!(
            name_or_hex(s.function(0xffff_ffff_8142_04b1), 0xffff_ffff_8142_04b1),
            "0xffffffff814204b1"
        );
        assert_eq!(
            name_or_hex(s.function(0xffff_ffff_8142_04b0), 0xffff_ffff_8142_04b0),
            "hrtimer_wakeup"
        );
    }

    #[test]
    fn a_modules_function_is_named_bare_and_printed_with_its_module() {
        let s = Symbols::parse(KALLSYMS);
        assert_eq!(s.function(0xffff_ffff_c0a0_1000), Some("e1000_watchdog"));
        assert_eq!(
            s.printed(0xffff_ffff_c0a0_1000),
            Some("e1000_watchdog [e1000e]")
        );
        assert_eq!(
            s.printed(0xffff_ffff_c0a0_2000),
            Some("ext4_end_io_rsv_work [ext4]")
        );
        assert_eq!(s.printed(0xffff_ffff_8142_04b0), Some("hrtimer_wakeup"));
    }

    #[test]
    fn hidden_addresses_give_an_empty_table() {
        // What a user without root reads (kptr_restrict).
        let hidden = "\
0000000000000000 T _stext
0000000000000000 t hrtimer_wakeup
0000000000000000 t e1000_watchdog\t[e1000e]
";
        let s = Symbols::parse(hidden);
        assert!(s.is_empty());
        assert_eq!(s.function(0), None);
        assert_eq!(name_or_hex(s.function(0x1234), 0x1234), "0x1234");
        assert!(Symbols::parse("").is_empty());
    }
}
