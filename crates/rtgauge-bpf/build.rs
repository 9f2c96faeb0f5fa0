//! Compiles the flight recorder's BPF program (src/bpf/recorder.bpf.c) with clang into
//! OUT_DIR/recorder.bpf.o, which the library embeds. The object is little-endian BPF with BTF
//! (CO-RE), the same for every little-endian target (x86-64, aarch64), so cross builds use the
//! host's clang. Without clang the crate still builds: the recorder then reports that it was
//! built without BPF and attribution falls back to tracefs. RTGAUGE_BPF_CLANG names another
//! compiler; RTGAUGE_BPF_REQUIRE=1 makes a missing clang an error (release builds, CI).

use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    let src = "src/bpf/recorder.bpf.c";
    println!("cargo:rerun-if-changed={src}");
    println!("cargo:rerun-if-env-changed=RTGAUGE_BPF_CLANG");
    println!("cargo:rerun-if-env-changed=RTGAUGE_BPF_REQUIRE");
    println!("cargo:rustc-check-cfg=cfg(rtgauge_bpf_object)");
    let out =
        PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("recorder.bpf.o");
    let clang = env::var("RTGAUGE_BPF_CLANG").unwrap_or_else(|_| "clang".to_owned());
    let status = Command::new(&clang)
        .args([
            "-target", "bpfel", "-g", "-O2", "-Wall", "-Werror", "-c", src, "-o",
        ])
        .arg(&out)
        .status();
    match status {
        Ok(s) if s.success() => println!("cargo:rustc-cfg=rtgauge_bpf_object"),
        Ok(s) => panic!("{clang} failed to compile {src} ({s})"),
        Err(e) => {
            if env::var("RTGAUGE_BPF_REQUIRE").is_ok_and(|v| v == "1") {
                panic!("{clang} not found ({e}): install clang (Debian: apt-get install clang)");
            }
            println!(
                "cargo:warning=rtgauge-bpf: {clang} not found ({e}); building without the BPF \
                 flight recorder (install clang to include it)"
            );
        }
    }
}
