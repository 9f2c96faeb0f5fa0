//! rt-app task descriptions run by the taskset probe: real files from the rt-app project and
//! from other projects, read as rt-app reads them. The files are kept beside the clone in
//! `../shared/real-clients/rt-app/` (origins in `../shared/real-clients/SOURCES.md`), never
//! copied into the repository.

mod common;
use common::*;

use std::path::PathBuf;

/// A file of `../shared/real-clients/rt-app/` (relative to the repository root).
fn real_file(name: &str) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/real-clients/rt-app")
        .join(name);
    assert!(
        path.exists(),
        "{} is missing: these tests read real third-party files from ../shared/real-clients beside the clone",
        path.display()
    );
    path
}

/// A broken file (a key without a value in rt-app's own video-short.json; a missing comma
/// in a file posted to LKML) is refused in one line naming the line and column, and nothing
/// runs: no result is written.
#[test]
fn broken_rt_app_files_are_refused_naming_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "rt-app_video-short.json",
            "not valid rt-app JSON: line 6, column 13: expected `:`",
        ),
        (
            "rt-app_lkml-2020-eggemann-dl-capacity-v3_deadline-2x4inst_missing-comma_wrapped.json",
            "not valid rt-app JSON: line 19, column 3: expected `,` or `}`",
        ),
    ];
    for (name, expected) in cases {
        let out = dir.path().join("result.json");
        let file = real_file(name);
        let err = one_line_error(&[
            "run".as_ref(),
            "taskset".as_ref(),
            "--tasks".as_ref(),
            file.as_os_str(),
            "-o".as_ref(),
            out.as_os_str(),
        ]);
        assert!(err.contains(expected), "{name}: {err}");
        assert!(!out.exists(), "{name}: a result was written");
    }
}
