//! `rtgauge submit squad` against a real SQUAD (PyPI, Django, SQLite) started on 127.0.0.1 by
//! the test: a submission while SQUAD is down is spooled and lands once it runs; a refused
//! token is one line with the fix; SQUAD's API returns the metrics with the submitted values,
//! each submission once.
//!
//! SQUAD is installed into target/squad-venv by tests/squad/install.sh (.ci/run calls it);
//! without it the test skips with the reason unless RTGAUGE_LAB=1, which CI sets.

mod common;

use common::rtgauge;
use serde_json::Value;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const TOKEN: &str = "0123456789abcdef0123456789abcdef01234567";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../rtgauge-report/tests/fixtures")
        .join(name)
}

fn venv() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/squad-venv/bin")
}

/// SQUAD's management command with its database in `dir`.
fn squad_admin(dir: &Path) -> Command {
    let mut cmd = Command::new(venv().join("squad-admin"));
    cmd.current_dir(dir)
        .env(
            "DATABASE",
            format!("NAME={}", dir.join("db.sqlite3").display()),
        )
        .env("SECRET_KEY", "rtgauge-test")
        .env("SQUAD_STORAGE_DIR", dir.join("storage"));
    cmd
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A plain HTTP GET of `path` on 127.0.0.1:`port`: the body, or None while nothing listens.
fn get(port: u16, path: &str) -> Option<String> {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(30))).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    let (head, body) = text.split_once("\r\n\r\n")?;
    head.starts_with("HTTP/1.1 200").then(|| body.to_string())
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn submit(
    store: &Path,
    port: u16,
    token: Option<&str>,
    results: &[PathBuf],
) -> std::process::Output {
    let mut cmd = rtgauge();
    cmd.env("RTGAUGE_STORE", store.join("history.sqlite"))
        .env_remove("SQUAD_TOKEN")
        .args(["submit", "squad", &format!("http://127.0.0.1:{port}")])
        .args(["--group", "rt", "--project", "board", "--build", "6.1.0-rt"])
        .args(["--environment", "qemu-x86_64", "--timeout", "20"])
        .args(results);
    if let Some(t) = token {
        cmd.env("SQUAD_TOKEN", t);
    }
    cmd.output().unwrap()
}

fn spooled(store: &Path) -> usize {
    std::fs::read_dir(store.join("squad-spool"))
        .map(|d| d.count())
        .unwrap_or(0)
}

fn one_line_error(out: &std::process::Output) -> String {
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr).trim().to_string();
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    err
}

#[test]
fn submissions_reach_squad_and_survive_its_absence() {
    if !venv().join("squad-admin").exists() {
        assert_ne!(
            std::env::var("RTGAUGE_LAB").as_deref(),
            Ok("1"),
            "RTGAUGE_LAB=1 but SQUAD is not installed: run tests/squad/install.sh"
        );
        eprintln!("skipped: needs SQUAD in target/squad-venv (tests/squad/install.sh); set RTGAUGE_LAB=1 to require it (CI does)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let squad = dir.path().join("squad");
    std::fs::create_dir_all(&squad).unwrap();
    let store = dir.path().join("store");
    let port = free_port();

    // The result files are copied: a submission never touches them.
    let loaded = dir.path().join("loaded.json");
    let idle = dir.path().join("idle.json");
    std::fs::copy(fixture("loaded.json"), &loaded).unwrap();
    std::fs::copy(fixture("idle.json"), &idle).unwrap();
    let before = std::fs::read(&loaded).unwrap();

    // A token on the command line is refused with the fix, and nothing is spooled.
    let mut cmd = rtgauge();
    let out = cmd
        .env("RTGAUGE_STORE", store.join("history.sqlite"))
        .args([
            "submit",
            "squad",
            "http://127.0.0.1:1",
            "--group",
            "g",
            "--project",
            "p",
        ])
        .args(["--build", "b", "--environment", "e", "--token", TOKEN])
        .arg(&loaded)
        .output()
        .unwrap();
    assert!(one_line_error(&out).contains("export SQUAD_TOKEN"));
    assert_eq!(spooled(&store), 0);

    // SQUAD is not running yet: the submission is spooled, one line says so, exit 1.
    let spec = fixture("spec.toml");
    let out = submit(
        &store,
        port,
        Some(TOKEN),
        &[loaded.clone(), "--spec".into(), spec],
    );
    let err = one_line_error(&out);
    assert!(
        err.contains("cannot reach SQUAD") && err.contains("kept in"),
        "{err}"
    );
    assert_eq!(spooled(&store), 1);
    assert_eq!(
        std::fs::read(&loaded).unwrap(),
        before,
        "the result is untouched"
    );
    // The token is never written to the spool.
    for entry in std::fs::read_dir(store.join("squad-spool")).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        assert!(!text.contains(TOKEN));
    }

    // A real SQUAD: database, a user with a token, a group with a project.
    let started = Instant::now();
    let migrate = squad_admin(&squad)
        .args(["migrate", "-v0"])
        .output()
        .unwrap();
    assert!(
        migrate.status.success(),
        "{}",
        String::from_utf8_lossy(&migrate.stderr)
    );
    let setup = format!(
        "from django.contrib.auth.models import User\n\
         from rest_framework.authtoken.models import Token\n\
         from squad.core.models import Group\n\
         u = User.objects.create_superuser('ci', 'ci@example.org', 'ci-password')\n\
         Token.objects.create(user=u, key='{TOKEN}')\n\
         g = Group.objects.create(slug='rt')\n\
         g.add_admin(u)\n\
         g.projects.create(slug='board')\n"
    );
    let shell = squad_admin(&squad)
        .args(["shell", "-c", &setup])
        .output()
        .unwrap();
    assert!(
        shell.status.success(),
        "{}",
        String::from_utf8_lossy(&shell.stderr)
    );
    let _server = Server(
        squad_admin(&squad)
            .args(["runserver", &format!("127.0.0.1:{port}"), "--noreload"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    while get(port, "/api/").is_none() {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "SQUAD did not start"
        );
        std::thread::sleep(Duration::from_millis(300));
    }
    eprintln!("SQUAD ready after {:.1} s", started.elapsed().as_secs_f64());

    // A refused token: one line with the fix; the spooled submission stays.
    let out = submit(&store, port, Some("not-a-token"), &[]);
    let err = one_line_error(&out);
    assert!(
        err.contains("refused the token") && err.contains("SQUAD_TOKEN"),
        "{err}"
    );
    assert_eq!(spooled(&store), 1);

    // A copy of the spooled entry, to play a submission whose answer was lost (SQUAD got it,
    // the spool entry stayed): sent again, SQUAD must not record it twice.
    let entry = std::fs::read_dir(store.join("squad-spool"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let copy = std::fs::read(&entry).unwrap();

    // The next submit sends the spooled one and its own, then the spool is empty.
    let out = submit(&store, port, Some(TOKEN), std::slice::from_ref(&idle));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.matches("submitted to").count(), 2, "{text}");
    assert!(text.contains("(spooled earlier)"), "{text}");
    assert_eq!(spooled(&store), 0);
    // Nothing left: a further submit sends nothing again.
    let out = submit(&store, port, Some(TOKEN), &[]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("nothing to submit"));

    std::fs::write(&entry, &copy).unwrap();
    let out = submit(&store, port, Some(TOKEN), &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("already held it"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(spooled(&store), 0);

    // SQUAD's API holds each submission once, with the values of the result documents.
    let metrics: Value =
        serde_json::from_str(&get(port, "/api/metrics/?limit=1000").unwrap()).unwrap();
    let metrics = metrics["results"].as_array().unwrap();
    let named: Vec<&Value> = metrics
        .iter()
        .filter(|m| m["name"] == "rtgauge/cyclic-rt-cpu0-latency-max")
        .collect();
    assert_eq!(named.len(), 2, "one per submission, none twice");
    let mut got: Vec<f64> = named
        .iter()
        .map(|m| m["result"].as_f64().unwrap())
        .collect();
    got.sort_by(f64::total_cmp);
    let mut want: Vec<f64> = [&idle, &loaded]
        .iter()
        .map(|p| {
            let r: Value = serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
            let run = r["runs"]
                .as_array()
                .unwrap()
                .iter()
                .find(|run| run["probe"] == "cyclic" && run["mode"] == "rt")
                .unwrap();
            let s = run["series"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["name"] == "latency" && s["labels"]["cpu"] == "0")
                .unwrap();
            s["stats"]["max_ns"].as_f64().unwrap() / 1000.0
        })
        .collect();
    want.sort_by(f64::total_cmp);
    assert_eq!(got, want);
    let runs: Value = serde_json::from_str(&get(port, "/api/testruns/").unwrap()).unwrap();
    assert_eq!(runs["results"].as_array().unwrap().len(), 2, "{runs}");
    // The spec's verdicts arrived as tests: the loaded run's rt maximum is beyond its limit.
    let tests: Value = serde_json::from_str(&get(port, "/api/tests/?limit=1000").unwrap()).unwrap();
    let max = tests["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "rtgauge/cyclic-rt-cpu0-latency-max")
        .expect("the judged maximum is a test");
    assert_eq!(max["status"], "fail", "{max}");
}
