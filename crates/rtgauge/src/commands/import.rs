//! `rtgauge import`: other tools' results (and rtgauge files) into the run history and, with
//! --output-dir, into rtgauge result files.

use crate::cli::{ImportArgs, ImportFormat};
use anyhow::{Context, Result};
use rtgauge_import::{import_file, Source};
use rtgauge_result::output::{self, Existing};
use rtgauge_store::Store;

pub fn import(args: ImportArgs) -> Result<u8> {
    let source = match args.format {
        ImportFormat::Auto => None,
        ImportFormat::Cyclictest => Some(Source::RtTests),
        ImportFormat::Timerlat => Some(Source::Rtla),
        ImportFormat::Hwlatdetect => Some(Source::Hwlatdetect),
        ImportFormat::Jitterdebugger => Some(Source::Jitterdebugger),
        ImportFormat::Rtgauge => Some(Source::Rtgauge),
    };
    if let Some(dir) = &args.output_dir {
        output::check_directory(dir)?;
    }
    // Every file is read before anything is written: a malformed one stops the import.
    let imported = args
        .files
        .iter()
        .map(|path| {
            let source = match (source, path.extension().and_then(|e| e.to_str())) {
                // jitterdebugger's samples are a CSV the content check also recognises;
                // its results JSON is named with --format jitterdebugger or detected.
                (Some(Source::Jitterdebugger), Some("csv")) => Some(Source::JitterdebuggerSamples),
                (s, _) => s,
            };
            import_file(path, source).map(|i| (path, i))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut store = if args.no_store {
        None
    } else {
        Some(Store::open(&super::history::store_path(&args.store)?)?)
    };
    for (path, i) in &imported {
        let tool = &i.result.tool;
        let mut line = format!("{}: {} {}", path.display(), tool.name, tool.version)
            .trim_end()
            .to_string();
        if let Some(dir) = &args.output_dir {
            let stem = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "imported".into());
            let out = dir.join(format!("{stem}.rtgauge.json"));
            output::check(&out, Existing::Replace)?;
            rtgauge_result::write_atomically(&out, &i.result)
                .with_context(|| format!("cannot write {}", out.display()))?;
            line.push_str(&format!(" → {}", out.display()));
        }
        if let Some(store) = store.as_mut() {
            let id = store.insert(
                &i.result,
                &format!("import {}", i.result.tool.name),
                &path.display().to_string(),
            )?;
            line.push_str(&format!(" → run {id}"));
        }
        // Said again wherever the result is shown (show, report, history).
        for w in i.result.warnings.iter().filter(|w| w.code != "imported") {
            line.push_str(&format!(
                "\n  note: {}",
                w.message.replace('\n', "\n        ")
            ));
        }
        println!("{line}");
    }
    Ok(crate::EXIT_OK)
}
