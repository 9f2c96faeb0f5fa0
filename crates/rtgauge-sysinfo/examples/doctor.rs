//! Prints the doctor report and fingerprint for a root directory (default `/`), e.g. to see
//! what a fixture yields: `cargo run -p rtgauge-sysinfo --example doctor -- tests/fixtures/bad 1`.

use rtgauge_sysinfo::{collect_from, cpu_list, doctor, render_fix_hints, render_text, SysRoot};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let root = SysRoot::at(args.get(1).map_or("/", String::as_str));
    let cpus = args
        .get(2)
        .and_then(|s| cpu_list(s).ok())
        .unwrap_or_default();
    let checks = doctor(&root, &cpus);
    if std::env::var_os("FIX_HINT").is_some() {
        print!("{}", render_fix_hints(&checks));
        return;
    }
    print!("{}", render_text(&checks, false));
    println!("\n{:#?}", collect_from(&root));
}
