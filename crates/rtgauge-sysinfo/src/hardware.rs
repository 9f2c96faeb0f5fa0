//! What the machine is, as opposed to how its kernel is set up: architecture, board, firmware,
//! memory and microcode. Two boards running the same kernel differ here, and `compare` lists
//! these fields among the differences.

use crate::root::SysRoot;

/// Where ARM and other device-tree boards name themselves; the first readable one wins.
const DEVICE_TREE_MODEL: [&str; 2] = [
    "/proc/device-tree/model",
    "/sys/firmware/devicetree/base/model",
];

/// The machine architecture the kernel reports (`x86_64`, `aarch64`, `armv7l`, ...).
///
/// On the live system a kernel without /proc/sys/kernel/arch (older than 5.x) still gets an
/// answer: the architecture this binary was built for, which is the one it runs on. Where the
/// binary's architecture is another family than the kernel's (user-mode emulation such as
/// qemu-aarch64 on an x86_64 host), both are said: `aarch64 (on an x86_64 kernel)`, so a
/// result never passes an emulated run off as the host's.
pub fn architecture(root: &SysRoot) -> String {
    let kernel = root
        .read_trimmed("/proc/sys/kernel/arch")
        .unwrap_or_default();
    if !root.is_live() {
        return kernel;
    }
    let binary = std::env::consts::ARCH;
    match kernel.as_str() {
        "" => binary.to_string(),
        k if family(k) == family(binary) => kernel,
        k => format!("{binary} (on an {k} kernel)"),
    }
}

/// The architecture family of a kernel's or Rust's architecture name (`armv7l` and `arm`,
/// `i686` and `x86`, `arm64` and `aarch64` are each one family).
fn family(arch: &str) -> &str {
    match arch {
        "aarch64" | "arm64" | "aarch64_be" => "aarch64",
        a if a.starts_with("arm") => "arm",
        "i386" | "i486" | "i586" | "i686" | "x86" => "x86",
        a => a,
    }
}

/// The board or system model: the device-tree model on boards that have one (Raspberry Pi,
/// i.MX, Jetson, ...), else the DMI vendor and product name (PCs, servers, virtual machines).
pub fn board(root: &SysRoot) -> String {
    let device_tree = DEVICE_TREE_MODEL.iter().find_map(|path| {
        let bytes = root.read_bytes(path).ok()?;
        // Device-tree strings end in NUL.
        let model = String::from_utf8_lossy(&bytes)
            .trim_end_matches('\0')
            .trim()
            .to_string();
        (!model.is_empty()).then_some(model)
    });
    device_tree.unwrap_or_else(|| {
        dmi_joined(
            root,
            &[
                "sys_vendor",
                "product_name",
                "product_version",
                "board_name",
            ],
        )
    })
}

/// The firmware version: DMI BIOS vendor, version and release date; empty without DMI.
pub fn firmware(root: &SysRoot) -> String {
    dmi_joined(root, &["bios_vendor", "bios_version", "bios_date"])
}

/// Memory the kernel manages (MemTotal), in bytes.
pub fn memory_bytes(root: &SysRoot) -> Option<u64> {
    let meminfo = root.read("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// The distinct microcode revisions of the CPUs, comma-separated (x86 reports one per CPU in
/// /proc/cpuinfo; a mix means a partial update). Empty where the CPU does not report one.
pub fn microcode(root: &SysRoot, cpuinfo: &str) -> String {
    let mut revisions: Vec<&str> = cpuinfo
        .lines()
        .filter_map(|l| l.split_once(':'))
        .filter(|(key, _)| key.trim() == "microcode")
        .map(|(_, v)| v.trim())
        .collect();
    revisions.sort_unstable();
    revisions.dedup();
    if revisions.is_empty() {
        return root
            .read_trimmed("/sys/devices/system/cpu/cpu0/microcode/version")
            .unwrap_or_default();
    }
    revisions.join(",")
}

/// The readable, non-placeholder DMI fields among `names`, space-separated, repeats dropped
/// (many boards put the same text in product and board name).
fn dmi_joined(root: &SysRoot, names: &[&str]) -> String {
    let mut parts: Vec<String> = Vec::new();
    for name in names {
        let Ok(value) = root.read_trimmed(&format!("/sys/class/dmi/id/{name}")) else {
            continue;
        };
        if !is_placeholder(&value) && !parts.contains(&value) {
            parts.push(value);
        }
    }
    parts.join(" ")
}

/// Text firmware vendors leave in DMI fields they did not fill in.
fn is_placeholder(value: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    value.is_empty()
        || [
            "to be filled by o.e.m.",
            "default string",
            "system product name",
            "system manufacturer",
            "not applicable",
            "none",
        ]
        .contains(&lower.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root_with(files: &[(&str, &[u8])]) -> (tempfile::TempDir, SysRoot) {
        let dir = tempfile::tempdir().unwrap();
        for (path, content) in files {
            let p = dir.path().join(path.trim_start_matches('/'));
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, content).unwrap();
        }
        let root = SysRoot::at(dir.path());
        (dir, root)
    }

    #[test]
    fn device_tree_model_names_an_arm_board_without_its_trailing_nul() {
        let (_d, root) = root_with(&[(
            "/sys/firmware/devicetree/base/model",
            b"Raspberry Pi 4 Model B Rev 1.4\0",
        )]);
        assert_eq!(board(&root), "Raspberry Pi 4 Model B Rev 1.4");
        assert_eq!(firmware(&root), "");
    }

    #[test]
    fn dmi_fields_skip_placeholders_and_repeats() {
        let (_d, root) = root_with(&[
            ("/sys/class/dmi/id/sys_vendor", b"Supermicro\n"),
            ("/sys/class/dmi/id/product_name", b"X12SPi\n"),
            (
                "/sys/class/dmi/id/product_version",
                b"To be filled by O.E.M.\n",
            ),
            ("/sys/class/dmi/id/board_name", b"X12SPi\n"),
            ("/sys/class/dmi/id/bios_vendor", b"American Megatrends\n"),
            ("/sys/class/dmi/id/bios_version", b"1.4a\n"),
        ]);
        assert_eq!(board(&root), "Supermicro X12SPi");
        assert_eq!(firmware(&root), "American Megatrends 1.4a");
    }

    #[test]
    fn memory_and_microcode_from_proc() {
        let (_d, root) = root_with(&[(
            "/proc/meminfo",
            b"MemTotal:        8000 kB\nMemFree: 1 kB\n",
        )]);
        assert_eq!(memory_bytes(&root), Some(8000 * 1024));
        let cpuinfo = "processor\t: 0\nmicrocode\t: 0x2b\nprocessor\t: 1\nmicrocode\t: 0x2c\n";
        assert_eq!(microcode(&root, cpuinfo), "0x2b,0x2c");
        assert_eq!(microcode(&root, "processor : 0\n"), "");
    }

    #[test]
    fn architecture_families_match_across_kernel_and_rust_names() {
        assert_eq!(family("armv7l"), family("arm"));
        assert_eq!(family("arm64"), family("aarch64"));
        assert_eq!(family("i686"), family("x86"));
        assert_ne!(family("aarch64"), family("x86_64"));
    }

    #[test]
    fn a_fixture_without_arch_file_does_not_borrow_the_host_architecture() {
        let (_d, root) = root_with(&[("/proc/sys/kernel/arch", b"aarch64\n")]);
        assert_eq!(architecture(&root), "aarch64");
        let (_e, empty) = root_with(&[]);
        assert_eq!(architecture(&empty), "");
    }
}
