//! `rtgauge import`: other tools' results (and rtgauge files) into the run history and, with
//! --output-dir, into rtgauge result files.
//!
//! What imports keep: every input gets its own result file (`ct.txt` and `ct.json` do not
//! both become `ct.rtgauge.json`); an existing result file is replaced only with --force; the
//! history keeps one row per source file, found again by the hash of its content whatever
//! the file is called now.

use crate::cli::{ImportArgs, ImportFormat};
use anyhow::{Context, Result};
use rtgauge_import::{import_file, Source};
use rtgauge_result::output::{self, Existing};
use rtgauge_store::Store;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

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
    // Where each result goes, and that it may go there, before anything is written.
    let outputs: Vec<Option<PathBuf>> = match &args.output_dir {
        Some(dir) => output_names(dir, &args.files)
            .into_iter()
            .map(Some)
            .collect(),
        None => vec![None; args.files.len()],
    };
    let existing = if args.force {
        Existing::Replace
    } else {
        Existing::Refuse
    };
    for out in outputs.iter().flatten() {
        output::check(out, existing)?;
    }
    let mut store = if args.no_store {
        None
    } else {
        let path = super::history::store_path(&args.store)?;
        let store =
            Store::open(&path).map_err(|e| anyhow::anyhow!("{e}, or import with --no-store"))?;
        Some(store)
    };
    // A file already in the history is refused without --force, before anything is written.
    let mut stored: Vec<Option<(i64, String)>> = Vec::with_capacity(imported.len());
    for (path, i) in &imported {
        let found = match &store {
            Some(store) => store.imported_as(&i.content_hash)?,
            None => None,
        };
        if let (Some((id, file)), false) = (&found, args.force) {
            anyhow::bail!(
                "{}: already in the run history as run {id} (imported from {file}); nothing imported (--force writes its result file again, the history keeps its one row)",
                path.display()
            );
        }
        stored.push(found);
    }
    // The same content given twice in one import is stored once.
    let mut this_time: BTreeMap<&str, i64> = BTreeMap::new();
    for (((path, i), out), found) in imported.iter().zip(&outputs).zip(stored) {
        let tool = &i.result.tool;
        let mut line = format!("{}: {} {}", path.display(), tool.name, tool.version)
            .trim_end()
            .to_string();
        if let Some(out) = out {
            rtgauge_result::write_atomically(out, &i.result)
                .with_context(|| format!("cannot write {}", out.display()))?;
            line.push_str(&format!(" → {}", out.display()));
        }
        if let Some(store) = store.as_mut() {
            let again = found
                .map(|(id, _)| id)
                .or_else(|| this_time.get(i.content_hash.as_str()).copied());
            match again {
                Some(id) => line.push_str(&format!(
                    " (already in the history as run {id}: no row added)"
                )),
                None => {
                    let id = store.insert_imported(
                        &i.result,
                        &format!("import {}", i.result.tool.name),
                        &path.display().to_string(),
                        &i.content_hash,
                    )?;
                    this_time.insert(&i.content_hash, id);
                    line.push_str(&format!(" → run {id}"));
                }
            }
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

/// The result file of each input in `dir`: `NAME.rtgauge.json` from the input's name without
/// its extension; inputs sharing that name keep their extension (`ct.txt.rtgauge.json`,
/// `ct.json.rtgauge.json`), as does an input whose result of that longer name is already
/// there (so importing it again alone finds that result); any still alike are numbered
/// (`ct.txt-2.rtgauge.json`).
pub fn output_names(dir: &Path, files: &[PathBuf]) -> Vec<PathBuf> {
    let stem = |p: &PathBuf| {
        p.file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "imported".into())
    };
    let name = |p: &PathBuf| {
        p.file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "imported".into())
    };
    let stems: Vec<String> = files.iter().map(stem).collect();
    let mut chosen: Vec<String> = files
        .iter()
        .zip(&stems)
        .map(|(f, s)| {
            let long = name(f);
            if stems.iter().filter(|o| *o == s).count() > 1
                || dir.join(format!("{long}.rtgauge.json")).exists()
            {
                long
            } else {
                s.clone()
            }
        })
        .collect();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for c in &mut chosen {
        let n = seen.entry(c.clone()).or_insert(0);
        *n += 1;
        if *n > 1 {
            *c = format!("{c}-{n}");
        }
    }
    chosen
        .into_iter()
        .map(|c| dir.join(format!("{c}.rtgauge.json")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(files: &[&str]) -> Vec<String> {
        let files: Vec<PathBuf> = files.iter().map(PathBuf::from).collect();
        output_names(Path::new("D"), &files)
            .iter()
            .map(|p| p.display().to_string())
            .collect()
    }

    #[test]
    fn every_input_gets_its_own_result_file() {
        assert_eq!(
            names(&["a.txt", "b.json"]),
            ["D/a.rtgauge.json", "D/b.rtgauge.json"]
        );
        assert_eq!(
            names(&["ct.txt", "ct.json", "x.json"]),
            [
                "D/ct.txt.rtgauge.json",
                "D/ct.json.rtgauge.json",
                "D/x.rtgauge.json"
            ]
        );
        assert_eq!(
            names(&["one/ct.txt", "two/ct.txt"]),
            ["D/ct.txt.rtgauge.json", "D/ct.txt-2.rtgauge.json"]
        );
    }
}
