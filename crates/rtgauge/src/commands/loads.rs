//! `rtgauge loads`: the background loads and what each stresses.

use anyhow::Result;

pub fn list(json: bool) -> Result<u8> {
    let loads = rtgauge_load::catalogue();
    if json {
        let entries: Vec<serde_json::Value> = loads
            .iter()
            .map(|l| {
                serde_json::json!({
                    "name": l.name,
                    "stresses": l.stresses,
                    "available": l.available.is_ok(),
                    "unavailable_because": l.available.as_ref().err(),
                    "note": l.note,
                })
            })
            .collect();
        let doc = serde_json::json!({"loads": entries, "forms": rtgauge_load::ACCEPTED_FORMS});
        println!("{}", serde_json::to_string_pretty(&doc)?);
        return Ok(crate::EXIT_OK);
    }
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
