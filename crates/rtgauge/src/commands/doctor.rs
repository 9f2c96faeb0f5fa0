//! `rtgauge doctor`: the real-time readiness audit. It only reads (fixes are printed, never
//! run), except that it removes trace sessions left by rtgauge runs killed with SIGKILL.

use crate::cli::DoctorArgs;
use anyhow::Result;

pub fn doctor(args: DoctorArgs) -> Result<u8> {
    let online = rtgauge_sysinfo::online_cpus();
    let cpus = rtgauge_core::cpus::parse_cpus(&args.cpus, &online)
        .map_err(|e| anyhow::anyhow!("--cpus: {e}"))?;
    let root = rtgauge_sysinfo::SysRoot::live();
    let settings = rtgauge_sysinfo::DoctorSettings::for_cpus(&cpus)
        .at_priority(u32::try_from(args.priority).unwrap_or(0));
    let mut checks = rtgauge_sysinfo::doctor_with(&root, &settings);
    // Whether `--trace` and the timerlat probe can have tracefs: mounted, not mounted (rtgauge
    // mounts it as root; the command for everyone else) or not in the kernel.
    checks.push(rtgauge_trace::tracing_check());
    // Whether long runs can explain their spikes at little cost: the flight recorder loads.
    checks.push(rtgauge_core::trace_source::flight_recorder_check());
    if let Some(line) = super::tune::left_behind_warning() {
        eprintln!("rtgauge: {line}");
    }
    // A killed traced run leaves its tracefs instance recording; nobody else would remove it.
    if let Ok(removed) = rtgauge_trace::remove_stale() {
        for name in removed {
            eprintln!("removed the trace session {name} of an rtgauge run that no longer exists");
        }
    }
    // With --cpus, what may take those CPUs from a real-time loop: the platform's rules and
    // every thread and interrupt allowed there (docs/taskset.md, "the preemption map").
    let maps: Vec<(usize, Vec<String>)> = if args.cpus == "all" {
        Vec::new()
    } else {
        cpus.iter()
            .map(|&c| {
                let map = rtgauge_probes::taskset::preemption::read(&root, c);
                (c, rtgauge_probes::taskset::preemption::map_lines(&map, &[]))
            })
            .collect()
    };
    if args.json {
        let mut doc = serde_json::json!({
            "checks": checks,
            "fingerprint": rtgauge_sysinfo::collect(),
        });
        if !maps.is_empty() {
            doc["preemption_map"] = maps
                .iter()
                .map(|(c, lines)| (c.to_string(), serde_json::json!(lines)))
                .collect::<serde_json::Map<_, _>>()
                .into();
        }
        // Each check carries its own `fix`; asked for the hints, the script comes along too
        // rather than the flag being ignored.
        if args.fix_hint {
            doc["fix_script"] = rtgauge_sysinfo::render_fix_hints(&checks).into();
        }
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else if args.fix_hint {
        print!("{}", rtgauge_sysinfo::render_fix_hints(&checks));
    } else {
        print!(
            "{}",
            rtgauge_sysinfo::render_text(&checks, crate::display::color_on_stdout())
        );
        if !maps.is_empty() {
            println!("\npreemption map (what may run ahead of a real-time task; demand not measured here, `rtgauge run taskset` measures it):");
            for (_, lines) in &maps {
                for l in lines {
                    println!("{l}");
                }
            }
        }
    }
    // 2 when a check fails, so doctor can gate a CI stage.
    Ok(rtgauge_sysinfo::exit_code(&checks) as u8)
}
