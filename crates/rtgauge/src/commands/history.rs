//! The run history: where it lives, keeping a run after its file is written, `history`,
//! `baseline`, and naming runs (`latest`, `previous`, an ID, a baseline name, a file) for
//! `show`, `compare` and `check`.

use crate::cli::{BaselineAction, BaselineArgs, HistoryArgs, StoreArgs};
use anyhow::{Context, Result};
use rtgauge_result::units::{closest, did_you_mean};
use rtgauge_result::{read_result, RunResult};
use rtgauge_store::{Filter, Latest, Store};
use std::path::{Path, PathBuf};

/// The history's path: `--store`/RTGAUGE_STORE, else the XDG data directory.
pub fn store_path(args: &StoreArgs) -> Result<PathBuf> {
    args.store
        .clone()
        .or_else(rtgauge_store::default_path)
        .context("no place for the run history: neither HOME nor XDG_DATA_HOME is set; give --store PATH or set RTGAUGE_STORE")
}

/// Opens a history that must exist (read commands).
pub fn open_existing(args: &StoreArgs) -> Result<Store> {
    Ok(Store::open_existing(&store_path(args)?)?)
}

/// Keeps a run whose result file is already written. A problem with the history (read-only,
/// corrupt, locked) is one warning line: the measurement is safe in its file. Returns the
/// line to print on success.
pub fn keep(result: &RunResult, file: &Path, args: &StoreArgs, origin: &str) -> Option<String> {
    let stored = store_path(args).and_then(|path| {
        let mut store = Store::open(&path)?;
        let id = store.insert(result, origin, &file.display().to_string())?;
        Ok((id, path))
    });
    match stored {
        Ok((id, path)) => Some(format!("history: run {id} in {}", path.display())),
        Err(e) => {
            eprintln!(
                "rtgauge: warning: {}; this run is not in the history (--no-store skips it), but the result file {} is complete",
                crate::one_line(&e),
                file.display()
            );
            None
        }
    }
}

/// Keeps a tune (its trials document, whole) in the history, as [`keep`] keeps a run: a
/// problem with the history is one warning line. Returns the line to print on success.
pub fn keep_tune(
    doc: &rtgauge_result::tune::TuneDocument,
    file: Option<&str>,
    args: &StoreArgs,
) -> Option<String> {
    let stored = store_path(args).and_then(|path| {
        let id = Store::open(&path)?.insert_tune(doc, file.unwrap_or(""))?;
        Ok((id, path))
    });
    match stored {
        Ok((id, path)) => Some(format!("history: tune {id} in {}", path.display())),
        Err(e) => {
            let kept = match file {
                Some(f) => format!("the trials are in {f}"),
                None => "write the trials with --output to keep them".into(),
            };
            eprintln!(
                "rtgauge: warning: {}; this tune is not in the history ({kept})",
                crate::one_line(&e)
            );
            None
        }
    }
}

/// A run named on the command line: a result file when one exists at that path, else
/// `latest`, `previous`, a stored run's ID or a baseline name. `latest` and `previous` are
/// rtgauge runs of this host unless `imported` (`--imported`) lets imports count. Returns the
/// result and how to name it in output.
pub fn resolve(name: &str, args: &StoreArgs, imported: bool) -> Result<(RunResult, String)> {
    let path = Path::new(name);
    if path.exists() {
        return Ok((read_result(path)?, name.to_string()));
    }
    let looks_stored = matches!(name, "latest" | "previous") || name.parse::<i64>().is_ok();
    let store = match open_existing(args) {
        Ok(store) => store,
        Err(e) if looks_stored => return Err(e),
        // A mistyped `latest` or `previous` (`lastest`): say which was meant.
        Err(_) if closest(name, ["latest", "previous"]).is_some() => anyhow::bail!(
            "{name}: no such result file or stored run{}",
            did_you_mean(name, ["latest", "previous"])
        ),
        // Neither a file nor a stored name: say the file is missing, the usual mistake.
        Err(_) => return Ok((read_result(path)?, name.to_string())),
    };
    let id = stored_id(&store, name, imported)?;
    Ok((store.get(id)?, format!("run {id}")))
}

/// The name of this machine, as its results record it.
fn this_host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default()
}

/// The stored run `latest`, `previous`, an ID or a baseline name stands for.
fn stored_id(store: &Store, name: &str, imported: bool) -> Result<i64> {
    if let Ok(id) = name.parse::<i64>() {
        return Ok(id);
    }
    if matches!(name, "latest" | "previous") {
        let host = this_host();
        let which = if imported {
            Latest::Any
        } else {
            Latest::RunsOf(host.clone())
        };
        let ids = store.latest_ids(2, &which)?;
        if let Some(id) = ids.get(usize::from(name == "previous")) {
            return Ok(*id);
        }
        let (imports, elsewhere) = store.others_than_runs_of(&host)?;
        let mut also = Vec::new();
        if imports > 0 && !imported {
            also.push(format!("{imports} imported (add --imported to count them)"));
        }
        if elsewhere > 0 && !imported {
            also.push(format!("{elsewhere} of other hosts"));
        }
        let held = if imported {
            format!("holds {} result(s)", ids.len())
        } else {
            format!("holds {} rtgauge run(s) of this host ({host})", ids.len())
        };
        let also = if also.is_empty() {
            String::new()
        } else {
            format!(", besides {}", also.join(" and "))
        };
        anyhow::bail!(
            "`{name}`: the run history {} {held}{also}; run `rtgauge run`, or name a result by its ID (`rtgauge history`)",
            store.path().display()
        );
    }
    if let Some(id) = store.baseline(name)? {
        return Ok(id);
    }
    let baselines = store.baselines()?;
    let known = ["latest", "previous"]
        .into_iter()
        .chain(baselines.iter().map(|(n, _)| n.as_str()));
    anyhow::bail!(
        "{name}: no such file, stored run or baseline in {}{}; `rtgauge history` and `rtgauge baseline list` show what it holds",
        store.path().display(),
        did_you_mean(name, known)
    )
}

/// `rtgauge history`.
pub fn history(args: HistoryArgs) -> Result<u8> {
    let store = open_existing(&args.store)?;
    if args.monitor {
        let host = args.host.as_deref();
        return super::monitor::listing::history(&store, host, args.since, args.limit);
    }
    let monitors = super::monitor::listing::summary_lines(&store, args.host.as_deref())?;
    let runs = store.list(&Filter {
        host: args.host.clone(),
        probe: args.probe.clone(),
        kernel: args.kernel.clone(),
        since_unix_ns: args.since,
        status: args.status.clone(),
        limit: args.limit,
    })?;
    // Tunes have no probe or status: a filter on those leaves them out.
    let tunes = if args.probe.is_none() && args.status.is_none() {
        let since = args.since.unwrap_or(0);
        let mut tunes = store.tunes(args.host.as_deref(), args.limit)?;
        tunes.retain(|t| {
            t.started_unix_ns >= since
                && args.kernel.as_ref().is_none_or(|k| *k == t.kernel_release)
        });
        tunes
    } else {
        Vec::new()
    };
    if runs.is_empty() {
        println!("no stored runs match (history: {})", store.path().display());
        print_tunes(&tunes);
        monitors.iter().for_each(|m| println!("{m}"));
        return Ok(crate::EXIT_OK);
    }
    let mut table = rtgauge_report::format::new_table(crate::display::text_style());
    table.set_header(vec![
        "ID",
        "Started (UTC)",
        "Host",
        "Kernel",
        "Preemption",
        "Status",
        "Probes",
        "From",
    ]);
    for r in &runs {
        table.add_row(vec![
            r.id.to_string(),
            // An import of a file without a date has none (not 1970).
            if r.started_unix_ns == 0 {
                "not recorded".to_string()
            } else {
                rtgauge_result::units::utc(r.started_unix_ns, "%Y-%m-%d %H:%M:%S")
            },
            r.host.clone(),
            r.kernel_release.clone(),
            r.preemption_model.clone(),
            if r.origin.starts_with("import") {
                "imported".to_string()
            } else {
                r.status.clone()
            },
            r.probes.join(", "),
            format!("{}: {}", r.origin, r.file),
        ]);
    }
    println!("{table}");
    print_tunes(&tunes);
    // The monitors keep intervals, not runs: one line each, read with `history --monitor`.
    for m in &monitors {
        println!("{m} (rtgauge history --monitor)");
    }
    Ok(crate::EXIT_OK)
}

/// The stored tunes, newest first: one row each, its verdict line under its figures.
fn print_tunes(tunes: &[rtgauge_store::StoredTune]) {
    if tunes.is_empty() {
        return;
    }
    let mut table = rtgauge_report::format::new_table(crate::display::text_style());
    table.set_header(vec![
        "Tune",
        "Started (UTC)",
        "Host",
        "Kernel",
        "Better",
        "Verdict",
        "Trials",
    ]);
    for t in tunes {
        table.add_row(vec![
            t.id.to_string(),
            if t.started_unix_ns == 0 {
                "not recorded".to_string()
            } else {
                rtgauge_result::units::utc(t.started_unix_ns, "%Y-%m-%d %H:%M:%S")
            },
            t.host.clone(),
            t.kernel_release.clone(),
            format!("{} of {}", t.better, t.tried),
            t.verdict.clone(),
            if t.file.is_empty() {
                "not written".to_string()
            } else {
                t.file.clone()
            },
        ]);
    }
    println!("\ntunes (rtgauge tune; `rtgauge report FILE` draws one, `rtgauge compare A B` compares two):\n{table}");
}

/// `rtgauge baseline set|list`.
pub fn baseline(args: BaselineArgs) -> Result<u8> {
    match args.action {
        BaselineAction::Set {
            run,
            name,
            force,
            store,
        } => {
            let mut db = open_existing(&store)?;
            let id = stored_id(&db, &run, false)?;
            let before = db.baseline(&name)?;
            match before {
                Some(old) if old != id && !force => anyhow::bail!(
                    "baseline {name} already names run {old}; add --force to point it at run {id} instead, or choose another --name"
                ),
                _ => {}
            }
            db.set_baseline(&name, id)?;
            match before {
                Some(old) if old != id => println!("baseline {name}: run {id} (was run {old})"),
                _ => println!("baseline {name}: run {id}"),
            }
        }
        BaselineAction::List { store } => {
            let db = open_existing(&store)?;
            for (name, id) in db.baselines()? {
                println!("{name}: run {id}");
            }
        }
    }
    Ok(crate::EXIT_OK)
}
