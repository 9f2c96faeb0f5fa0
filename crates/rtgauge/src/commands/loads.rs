//! `rtgauge loads`: the background loads and what each stresses.

use anyhow::Result;

pub fn list() -> Result<u8> {
    let loads = rtgauge_load::catalogue();
    let width = loads.iter().map(|l| l.name.len()).max().unwrap_or(0);
    for l in loads {
        let here = match &l.available {
            Ok(()) => "available".to_string(),
            Err(why) => format!("unavailable: {why}"),
        };
        println!("{:width$}  {}  [{here}]", l.name, l.stresses);
        if let Some(note) = &l.note {
            println!("{:width$}  note: {note}", "");
        }
    }
    println!("\nForms: {}", rtgauge_load::ACCEPTED_FORMS);
    Ok(crate::EXIT_OK)
}
