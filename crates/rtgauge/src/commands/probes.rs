//! `rtgauge probes`: the catalogue and what can run here.

use anyhow::Result;

pub fn list() -> Result<u8> {
    let probes = rtgauge_core::probes::all();
    let width = probes.iter().map(|p| p.name().len()).max().unwrap_or(0);
    for p in probes {
        let here = match p.availability() {
            Ok(()) => "available".to_string(),
            Err(why) => format!("unavailable: {why}"),
        };
        println!("{:width$}  {}  [{here}]", p.name(), p.describe());
        println!(
            "{:width$}  parameters (--set {}.KEY=VALUE): {}",
            "",
            p.name(),
            p.parameters().join(", ")
        );
    }
    Ok(crate::EXIT_OK)
}
