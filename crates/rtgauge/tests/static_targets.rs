//! The static release binaries (`scripts/build-release.sh`, docs/targets.md): linked statically,
//! packaged with their man pages and completions, the aarch64 one measuring under `qemu-aarch64`
//! (user-mode emulation), and the small target build without Parquet and PNG.
//!
//! They need the binaries the release script built and qemu-user, so they run only when
//! `RTGAUGE_CROSS=1`; CI's `.ci/cross` builds the binaries and sets it:
//!
//!     scripts/build-release.sh --install
//!     RTGAUGE_CROSS=1 cargo test -p rtgauge --test static_targets
//!
//! `RTGAUGE_CROSS_BUILDS` names the builds to test when the script built only some
//! (`--only`); CI builds one per architecture and flavour, `x86_64,aarch64-small`, to save the
//! quarter of an hour the other two take to compile:
//!
//!     RTGAUGE_CROSS=1 RTGAUGE_CROSS_BUILDS=x86_64,aarch64-small cargo test -p rtgauge --test static_targets
//!
//! Emulation is slow and its timing meaningless: only the shape of each result is asserted.

mod common;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// Where the release script leaves the binaries (`ARCH[-small]/rtgauge`) and the tarballs.
fn dist() -> Option<PathBuf> {
    if std::env::var_os("RTGAUGE_CROSS").is_none() {
        eprintln!(
            "skipped: set RTGAUGE_CROSS=1 after scripts/build-release.sh to test the static binaries"
        );
        return None;
    }
    Some(match std::env::var_os("RTGAUGE_CROSS_DIST") {
        Some(dir) => PathBuf::from(dir),
        None => workspace().join("target/release-static/dist"),
    })
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The builds to test (`x86_64`, `aarch64-small`, …): `RTGAUGE_CROSS_BUILDS`, by default all
/// four the release script builds.
fn builds() -> Vec<String> {
    std::env::var("RTGAUGE_CROSS_BUILDS")
        .unwrap_or_else(|_| "x86_64,x86_64-small,aarch64,aarch64-small".to_string())
        .split(',')
        .map(|b| b.trim().to_string())
        .filter(|b| !b.is_empty())
        .collect()
}

fn built(build: &str) -> bool {
    builds().iter().any(|b| b == build)
}

/// The architecture a build is for (`aarch64-small` → `aarch64`).
fn arch_of(build: &str) -> &str {
    build.strip_suffix("-small").unwrap_or(build)
}

/// Runs `build`'s binary: directly for the host's architecture, under qemu-user otherwise.
fn command_for(dist: &Path, build: &str) -> Command {
    let program = binary(dist, build);
    let arch = arch_of(build);
    if arch == std::env::consts::ARCH {
        Command::new(program)
    } else {
        let mut c = Command::new(format!("qemu-{arch}"));
        c.arg(program);
        c
    }
}

/// The release binary of `build` (`aarch64`, `x86_64-small`, …).
fn binary(dist: &Path, build: &str) -> PathBuf {
    let path = dist.join(build).join("rtgauge");
    assert!(
        path.is_file(),
        "{} is missing: run scripts/build-release.sh",
        path.display()
    );
    path
}

/// A small build: the host architecture's when built (run natively), else aarch64's under
/// emulation.
fn small(dist: &Path) -> Command {
    let native = format!("{}-small", std::env::consts::ARCH);
    command_for(
        dist,
        if built(&native) {
            &native
        } else {
            "aarch64-small"
        },
    )
}

/// Runs an aarch64 release binary (the full one when built, else the small one) under
/// qemu-aarch64 (directly on an aarch64 host).
fn aarch64(dist: &Path, args: &[&str]) -> Output {
    let build = if built("aarch64") {
        "aarch64"
    } else {
        "aarch64-small"
    };
    command_for(dist, build)
        .args(args)
        .output()
        .expect("qemu-aarch64 runs (package qemu-user)")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Measures `probes` in normal mode with the emulated binary and returns the result document,
/// checked against the committed schema.
fn emulated_run(dist: &Path, dir: &Path, probes: &[&str]) -> Value {
    let _one_at_a_time = common::exclusive();
    let out = dir.join("result.json");
    let mut args = vec!["run"];
    args.extend_from_slice(probes);
    args.extend_from_slice(&["--mode", "normal", "--duration", "1s", "--warmup", "100ms"]);
    args.extend_from_slice(&["--quiet", "--no-report", "-o", out.to_str().unwrap()]);
    let output = aarch64(dist, &args);
    common::assert_success(&output);
    let result = common::read_json(&out);
    common::assert_follows_committed_schema(&result);
    assert_eq!(result["status"], "complete", "{result}");
    result
}

/// The probes that ran in a result, by name.
fn probes_run(result: &Value) -> Vec<String> {
    result["runs"]
        .as_array()
        .expect("runs[]")
        .iter()
        .map(|r| r["probe"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn release_binaries_are_statically_linked_for_their_architecture() {
    let Some(dist) = dist() else { return };
    for build in builds() {
        let machine = match arch_of(&build) {
            "x86_64" => "x86-64",
            "aarch64" => "ARM aarch64",
            other => panic!("no release build for {other}"),
        };
        let out = Command::new("file")
            .arg(binary(&dist, &build))
            .output()
            .expect("file(1) is installed");
        let text = stdout(&out);
        assert!(text.contains("statically linked"), "{build}: {text}");
        assert!(text.contains(machine), "{build}: {text}");
        assert!(
            text.contains("stripped") && !text.contains("not stripped"),
            "{build}: {text}"
        );
    }
}

/// Compares the builds of each architecture built in both flavours (a release builds all four;
/// CI builds one of each and prints that nothing was compared).
#[test]
fn small_build_is_smaller_than_the_full_build() {
    let Some(dist) = dist() else { return };
    for arch in ["x86_64", "aarch64"] {
        if !built(arch) || !built(&format!("{arch}-small")) {
            eprintln!("{arch}: not built in both flavours, not compared");
            continue;
        }
        let size = |build: &str| std::fs::metadata(binary(&dist, build)).unwrap().len();
        let (full, small) = (size(arch), size(&format!("{arch}-small")));
        eprintln!("{arch}: full {full} bytes, small {small} bytes");
        assert!(small < full, "{arch}: small {small} >= full {full}");
    }
}

#[test]
fn tarballs_hold_binary_man_pages_completions_docs_and_licences() {
    let Some(dist) = dist() else { return };
    let version = env!("CARGO_PKG_VERSION");
    for build in builds() {
        let suffix = if build.ends_with("-small") {
            "-small"
        } else {
            ""
        };
        let name = format!("rtgauge-{version}-{}-linux{suffix}", arch_of(&build));
        let tarball = dist.join(format!("{name}.tar.gz"));
        let out = Command::new("tar")
            .arg("-tzf")
            .arg(&tarball)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}: unreadable", tarball.display());
        let listing = stdout(&out);
        for file in [
            "rtgauge",
            "man/man1/rtgauge.1",
            "man/man1/rtgauge-run.1",
            "completions/rtgauge.bash",
            "completions/_rtgauge",
            "completions/rtgauge.fish",
            "README.md",
            "doc/methodology.md",
            "doc/targets.md",
            "LICENSE-MIT",
            "LICENSE-APACHE",
            "licences/DejaVuSans.LICENSE",
            "licences/uPlot.LICENSE",
        ] {
            let entry = format!("{name}/{file}");
            assert!(
                listing.lines().any(|l| l == entry),
                "{} lacks {entry}",
                tarball.display()
            );
        }
    }
}

/// The acceptance run, `rtgauge run clock memop --mode normal` under qemu-aarch64, made once
/// for the tests that look at it (emulated, it takes about half a minute).
fn clock_memop_result(dist: &Path) -> &'static Value {
    static RESULT: OnceLock<Value> = OnceLock::new();
    RESULT.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        emulated_run(dist, dir.path(), &["clock", "memop"])
    })
}

#[test]
fn aarch64_binary_measures_clock_and_memop_and_its_fingerprint_says_aarch64() {
    let Some(dist) = dist() else { return };
    let result = clock_memop_result(&dist);
    let ran = probes_run(result);
    assert!(ran.iter().any(|p| p == "clock"), "{ran:?}");
    assert!(ran.iter().any(|p| p == "memop"), "{ran:?}");
    let fingerprint = result["fingerprint"].as_object().expect("fingerprint");
    assert!(
        fingerprint.values().any(|v| v
            .as_str()
            .is_some_and(|s| s.starts_with("aarch64") || s.starts_with("arm64"))),
        "the fingerprint names no aarch64 architecture: {fingerprint:?}"
    );
}

/// On ARM the clock probe reads the CPU's own counter, the generic timer (CNTVCT_EL0), as it
/// reads the TSC on x86. qemu-user emulates the counter from the host's clock scaled to the
/// rate it declares in CNTFRQ_EL0, so the properties hold there too: a rate that agrees with
/// the declared one, reads that never go backwards, no TSC anywhere.
#[test]
fn aarch64_clock_probe_measures_the_generic_timer() {
    let Some(dist) = dist() else { return };
    let result = clock_memop_result(&dist);
    let clock = result["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["probe"] == "clock")
        .expect("a clock probe run");
    let series = clock["series"].as_array().unwrap();
    let label = |s: &Value| s["labels"]["clock"].as_str().unwrap_or("").to_string();
    assert!(
        !series.iter().any(|s| label(s) == "tsc"),
        "a TSC row on aarch64: {clock}"
    );
    let counter = series
        .iter()
        .find(|s| label(s) == "cntvct")
        .unwrap_or_else(|| panic!("no cntvct row: {clock}"));
    let metric = |k: &str| {
        counter["metrics"][k]
            .as_f64()
            .unwrap_or_else(|| panic!("no {k}: {counter}"))
    };
    let (measured, declared) = (metric("cntvct_hz"), metric("cntvct_declared_hz"));
    eprintln!("cntvct: measured {measured:.0} Hz, CNTFRQ_EL0 {declared:.0} Hz");
    assert!(declared > 0.0);
    assert!(
        (measured - declared).abs() / declared < 0.01,
        "measured {measured} Hz vs declared {declared} Hz"
    );
    assert_eq!(counter["counters"]["backward_steps"], 0, "{counter}");
    assert!(
        counter["counters"]["reads"].as_u64().unwrap() > 0,
        "{counter}"
    );
    assert!(
        counter["metrics"]["cntvct_read_trapped"].is_number(),
        "{counter}"
    );
}

/// README's size table is what the release script built (within 1 %), for every build made.
#[test]
fn readme_size_table_matches_the_built_binaries() {
    let Some(dist) = dist() else { return };
    let readme = std::fs::read_to_string(workspace().join("README.md")).unwrap();
    let sizes = std::fs::read_to_string(dist.join("sizes.tsv")).expect("dist/sizes.tsv");
    for build in builds() {
        let built: u64 = sizes
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{build}\t")))
            .unwrap_or_else(|| panic!("sizes.tsv has no line for {build}: {sizes}"))
            .trim()
            .parse()
            .unwrap();
        let documented = readme_size(&readme, &build);
        let off = (documented as f64 - built as f64).abs() / built as f64;
        eprintln!("{build}: built {built} bytes, README {documented} bytes");
        assert!(
            off <= 0.01,
            "README says {documented} bytes for {build}, the build made {built} (off by {:.1} %): update the size table",
            off * 100.0
        );
    }
}

/// The bytes README's size table gives for `build`: the row (`full`/`small`), the column of
/// its architecture, the number in `(12,074,776 bytes)`.
fn readme_size(readme: &str, build: &str) -> u64 {
    let rows: Vec<Vec<&str>> = readme
        .lines()
        .filter(|l| l.starts_with('|'))
        .map(|l| l.split('|').map(str::trim).collect())
        .collect();
    let header = rows
        .iter()
        .find(|r| r.get(1) == Some(&"build") && r.contains(&"x86_64"))
        .expect("README has a size table headed | build | x86_64 | aarch64 |");
    let column = header.iter().position(|c| *c == arch_of(build)).unwrap();
    let flavour = if build.ends_with("-small") {
        "small"
    } else {
        "full"
    };
    let row = rows
        .iter()
        .find(|r| r.get(1).is_some_and(|c| c.starts_with(flavour)))
        .unwrap_or_else(|| panic!("README's size table has no {flavour} row"));
    let cell = row[column];
    let digits: String = cell
        .split('(')
        .nth(1)
        .and_then(|c| c.split(" bytes").next())
        .unwrap_or_else(|| panic!("no '(N bytes)' in README's cell for {build}: {cell}"))
        .chars()
        .filter(char::is_ascii_digit)
        .collect();
    digits.parse().unwrap()
}

/// The small build keeps `submit squad` and says in one line that it has no network client.
#[test]
fn small_build_says_it_has_no_network_client() {
    let Some(dist) = dist() else { return };
    let out = small(&dist)
        .args([
            "submit",
            "squad",
            "http://127.0.0.1:1",
            "--group",
            "g",
            "--project",
            "p",
        ])
        .args(["--build", "b", "--environment", "e"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no network client"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

#[test]
fn aarch64_binary_measures_alloc_primitive_and_cyclic_in_normal_mode() {
    let Some(dist) = dist() else { return };
    let dir = tempfile::tempdir().unwrap();
    let result = emulated_run(&dist, dir.path(), &["alloc", "primitive", "cyclic"]);
    let ran = probes_run(&result);
    for probe in ["alloc", "primitive", "cyclic"] {
        assert!(ran.iter().any(|p| p == probe), "{probe} missing: {ran:?}");
    }
}

#[test]
fn aarch64_binary_says_io_ports_exist_only_on_x86() {
    let Some(dist) = dist() else { return };
    let out = aarch64(&dist, &["probes"]);
    common::assert_success(&out);
    let text = stdout(&out);
    let ioport = text
        .lines()
        .find(|l| l.contains("ioport"))
        .unwrap_or_else(|| panic!("no ioport line in:\n{text}"));
    assert!(
        text.contains("I/O ports exist only on x86"),
        "ioport on aarch64: {ioport}\n{text}"
    );
}

#[test]
fn aarch64_doctor_audits_the_machine_as_json() {
    let Some(dist) = dist() else { return };
    assert_doctor_audited(&aarch64(&dist, &["doctor", "--json"]));
}

/// `doctor --json` ran its checks: exit 0 (nothing fails) or 2 (a failing check: a shared
/// build machine is not a tuned board), and printed them as JSON.
fn assert_doctor_audited(out: &Output) {
    assert!(
        matches!(out.status.code(), Some(0 | 2)),
        "{:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let checks: Value = serde_json::from_slice(&out.stdout).expect("doctor --json prints JSON");
    assert!(checks.to_string().contains("clocksource"), "{checks}");
}

#[test]
fn small_build_exports_csv_and_refuses_parquet_naming_the_alternative() {
    let Some(dist) = dist() else { return };
    let dir = tempfile::tempdir().unwrap();
    let result = dir.path().join("run.json");
    let run = small(&dist)
        .args(["run", "cyclic", "--mode", "normal", "--period", "1ms"])
        .args(["--warmup", "10ms", "--loops", "200", "--record", "cyclic"])
        .args(["--quiet", "--no-report", "-o"])
        .arg(&result)
        .output()
        .unwrap();
    common::assert_success(&run);
    let doc = common::read_json(&result);
    let recording = dir
        .path()
        .join(doc["recordings"][0]["path"].as_str().expect("a recording"));
    let export = |format: &str, file: &str| {
        small(&dist)
            .arg("export")
            .arg(&recording)
            .args(["--format", format, "-o"])
            .arg(dir.path().join(file))
            .output()
            .unwrap()
    };
    common::assert_success(&export("csv", "r.csv"));
    let refused = export("parquet", "r.parquet");
    assert_eq!(refused.status.code(), Some(1));
    let message = String::from_utf8_lossy(&refused.stderr);
    assert!(message.contains("--format csv"), "{message}");
    assert!(!dir.path().join("r.parquet").exists());
}

#[test]
fn small_build_prints_the_committed_schema() {
    // The small build prints docs/result.schema.json as embedded when it was built, without the
    // generator; the full build's generator is held to that file by
    // `committed_schema_matches_the_types` (tests/cyclic.rs).
    let Some(dist) = dist() else { return };
    let out = small(&dist).arg("schema").output().unwrap();
    common::assert_success(&out);
    let committed = std::fs::read_to_string(workspace().join("docs/result.schema.json")).unwrap();
    assert!(
        stdout(&out) == committed,
        "the small build's schema is not docs/result.schema.json: rebuild it"
    );
}

/// The small build writes the HTML report but refuses `--images` in one line, before writing
/// anything: it has no plotting library.
#[test]
fn small_build_writes_the_report_and_refuses_images() {
    let Some(dist) = dist() else { return };
    let dir = tempfile::tempdir().unwrap();
    let report = |extra: &[&std::ffi::OsStr]| {
        small(&dist)
            .arg("report")
            .arg(common::report_fixture("idle.json"))
            .arg("-o")
            .arg(dir.path().join("r.html"))
            .args(extra)
            .output()
            .unwrap()
    };
    let images = dir.path().join("img");
    let out = report(&["--images".as_ref(), images.as_os_str()]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("this build draws no images"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(!images.exists() && !dir.path().join("r.html").exists());
    common::assert_success(&report(&[]));
    assert!(dir.path().join("r.html").is_file());
}

#[test]
fn completions_are_generated_for_bash_zsh_and_fish_from_the_cli_definitions() {
    // Runs without the release binaries: the packages take their completions from this command.
    let dir = tempfile::tempdir().unwrap();
    for (shell, file) in [
        ("bash", "rtgauge.bash"),
        ("zsh", "_rtgauge"),
        ("fish", "rtgauge.fish"),
    ] {
        common::rtgauge()
            .args(["completions", shell])
            .arg(dir.path())
            .assert()
            .success();
        let text = std::fs::read_to_string(dir.path().join(file)).unwrap();
        for subcommand in ["run", "doctor", "report", "export"] {
            assert!(text.contains(subcommand), "{shell}: no {subcommand}");
        }
    }
    let refused = common::rtgauge()
        .args(["completions", "tcsh"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("invalid value 'tcsh'"));
}

/// The Debian package `scripts/build-release.sh --deb` wrote for `debarch` (amd64, arm64).
fn debian_package(dist: &Path, debarch: &str) -> PathBuf {
    let path = dist.join(format!(
        "rtgauge_{}-1_{debarch}.deb",
        env!("CARGO_PKG_VERSION")
    ));
    assert!(
        path.is_file(),
        "{} is missing: run scripts/build-release.sh --deb",
        path.display()
    );
    path
}

/// Runs `command`, asserts that it succeeded and returns what it printed.
fn output_of(command: &mut Command) -> String {
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("{command:?}: {e}"));
    assert!(
        out.status.success(),
        "{command:?}: {}{}",
        stdout(&out),
        String::from_utf8_lossy(&out.stderr)
    );
    stdout(&out)
}

fn dpkg_deb(option: &str, package: &Path) -> String {
    output_of(Command::new("dpkg-deb").arg(option).arg(package))
}

#[test]
fn debian_packages_hold_binary_man_pages_and_completions_and_depend_on_nothing() {
    let Some(dist) = dist() else { return };
    // Packages are made of full builds.
    for (debarch, build) in [("amd64", "x86_64"), ("arm64", "aarch64")] {
        if !built(build) {
            eprintln!("{debarch}: {build} not built, no package to check");
            continue;
        }
        let package = debian_package(&dist, debarch);
        let info = dpkg_deb("--info", &package);
        eprintln!("{debarch}:\n{info}");
        let field = |name: &str| {
            info.lines()
                .find_map(|l| l.trim_start().strip_prefix(&format!("{name}: ")))
                .map(str::to_string)
        };
        assert_eq!(field("Package").as_deref(), Some("rtgauge"));
        assert_eq!(field("Architecture").as_deref(), Some(debarch));
        let version = format!("{}-1", env!("CARGO_PKG_VERSION"));
        assert_eq!(field("Version"), Some(version));
        // A static binary needs no shared library: any dependency would only stop the package
        // from installing on a minimal board.
        for relation in ["Depends", "Pre-Depends", "Recommends"] {
            assert_eq!(field(relation), None, "{debarch}: {relation} in\n{info}");
        }
        let listing = dpkg_deb("--contents", &package);
        let entry = |path: &str| {
            listing
                .lines()
                .find(|l| l.ends_with(&format!(" .{path}")))
                .unwrap_or_else(|| panic!("{debarch}: no {path} in\n{listing}"))
                .to_string()
        };
        let program = entry("/usr/bin/rtgauge");
        assert!(program.starts_with("-rwxr-xr-x root/root"), "{program}");
        // The packaged binary is the release binary of its architecture.
        let unpacked = tempfile::tempdir().unwrap();
        output_of(
            Command::new("dpkg-deb")
                .arg("--extract")
                .arg(&package)
                .arg(unpacked.path()),
        );
        let packaged = std::fs::read(unpacked.path().join("usr/bin/rtgauge")).unwrap();
        assert!(
            packaged == std::fs::read(binary(&dist, build)).unwrap(),
            "{debarch}: the packaged binary is not {build}/rtgauge"
        );
        for path in [
            "/usr/share/man/man1/rtgauge.1.gz",
            "/usr/share/man/man1/rtgauge-run.1.gz",
            "/usr/share/man/man1/rtgauge-doctor.1.gz",
            "/usr/share/bash-completion/completions/rtgauge",
            "/usr/share/zsh/vendor-completions/_rtgauge",
            "/usr/share/fish/vendor_completions.d/rtgauge.fish",
            "/usr/share/doc/rtgauge/copyright",
            "/usr/share/doc/rtgauge/README.md",
            "/usr/share/doc/rtgauge/methodology.md",
            "/usr/share/doc/rtgauge/licences/uPlot.LICENSE",
        ] {
            assert!(entry(path).starts_with("-rw-r--r-- root/root"), "{path}");
        }
    }
}

#[test]
fn debian_package_installs_into_a_scratch_root_and_runs_there() {
    let Some(dist) = dist() else { return };
    let debarch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => panic!("no Debian package is built for {other}"),
    };
    assert!(
        built(std::env::consts::ARCH),
        "the host's full build is needed for its package: add it to RTGAUGE_CROSS_BUILDS"
    );
    let package = debian_package(&dist, debarch);
    let root = tempfile::tempdir().unwrap();
    // dpkg installs into a root of its own when that root has a dpkg database.
    let admin = root.path().join("var/lib/dpkg");
    for dir in ["info", "updates"] {
        std::fs::create_dir_all(admin.join(dir)).unwrap();
    }
    for file in ["status", "available"] {
        std::fs::write(admin.join(file), "").unwrap();
    }
    let dpkg = |args: &[&str]| {
        output_of(
            Command::new("dpkg")
                .arg("--root")
                .arg(root.path())
                .args(args),
        )
    };
    dpkg(&["--force-not-root", "--install", package.to_str().unwrap()]);
    let files = dpkg(&["--listfiles", "rtgauge"]);
    assert!(files.lines().any(|l| l == "/usr/bin/rtgauge"), "{files}");

    let installed = root.path().join("usr/bin/rtgauge");
    let version = Command::new(&installed).arg("--version").output().unwrap();
    common::assert_success(&version);
    assert!(
        stdout(&version).contains(env!("CARGO_PKG_VERSION")),
        "{}",
        stdout(&version)
    );
    let doctor = Command::new(&installed)
        .args(["doctor", "--json"])
        .env("RTGAUGE_NO_STORE", "1")
        .output()
        .unwrap();
    assert_doctor_audited(&doctor);
}
