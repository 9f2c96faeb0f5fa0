//! Debian's Prometheus started by a test on 127.0.0.1, and what a test asks it or a monitor:
//! plain HTTP GETs, instant PromQL queries, waits bounded in time.

use serde_json::Value;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub fn contrib() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../contrib/monitor")
}

/// A plain HTTP/1.0 GET; the status line and body.
pub fn get(port: u16, path: &str, accept: &str) -> Option<(String, String)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nAccept: {accept}\r\n\r\n"
    )
    .ok()?;
    let mut text = String::new();
    stream.read_to_string(&mut text).ok()?;
    let (head, body) = text.split_once("\r\n\r\n")?;
    Some((head.to_string(), body.to_string()))
}

pub fn encode(q: &str) -> String {
    q.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// An instant PromQL query; the whole JSON answer.
pub fn query(port: u16, q: &str) -> Value {
    let (_, body) = get(port, &format!("/api/v1/query?query={}", encode(q)), "*/*")
        .unwrap_or_else(|| panic!("prometheus did not answer {q}"));
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("{q}: {e}: {body}"))
}

/// The single value of an instant query.
pub fn scalar(port: u16, q: &str) -> f64 {
    let answer = query(port, q);
    assert_eq!(answer["status"], "success", "{q}: {answer}");
    let result = &answer["data"]["result"];
    assert_eq!(result.as_array().map(Vec::len), Some(1), "{q}: {answer}");
    result[0]["value"][1].as_str().unwrap().parse().unwrap()
}

pub fn wait_until(what: &str, limit: Duration, mut ready: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(start.elapsed() < limit, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

pub struct Killed(pub Child);
impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Debian's Prometheus on a free port of 127.0.0.1, scraping `targets` every second (job
/// `rtgauge`), its data in `dir`; returned once it is ready, with its port.
pub fn start_prometheus(dir: &Path, targets: &[u16], flags: &[&str]) -> (Killed, u16) {
    let port = free_port();
    let targets: Vec<String> = targets.iter().map(|t| format!("'127.0.0.1:{t}'")).collect();
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: rtgauge\n    static_configs:\n      - targets: [{}]\n",
            targets.join(", ")
        ),
    )
    .unwrap();
    let prometheus = Killed(
        Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("tsdb").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .args(flags)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("Debian's prometheus (apt-get install prometheus; .ci/run installs it)"),
    );
    wait_until("prometheus is ready", Duration::from_secs(30), || {
        get(port, "/-/ready", "*/*").is_some_and(|(h, _)| h.contains(" 200"))
    });
    (prometheus, port)
}

/// Sends SIGTERM to a monitor and waits for it to end (at most 20 s).
pub fn sigterm(child: &mut Killed) -> std::process::ExitStatus {
    // SAFETY: signalling a process this test started.
    unsafe { libc::kill(child.0.id() as i32, libc::SIGTERM) };
    let start = Instant::now();
    loop {
        if let Some(status) = child.0.try_wait().unwrap() {
            return status;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "monitor ignored SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}
