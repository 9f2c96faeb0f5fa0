//! Synchronisation daemons started by the tests themselves (chronyd, ptp4l), with their own
//! configuration files naming only 127.0.0.1 or the test's own network namespaces, and stopped
//! (a guard with Drop) even when the test fails. The packaged services are never started.

use super::is_root;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Whether `program` can be run (installed, in PATH).
pub fn installed(program: &str) -> bool {
    Command::new(program)
        .arg("-v")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

/// Daemons started by a test, stopped (SIGTERM, then waited for) when it ends, passed or not;
/// network namespaces it added are deleted after them.
#[derive(Default)]
pub struct Daemons {
    pub children: Vec<(String, Child)>,
    pub namespaces: Vec<String>,
}

impl Daemons {
    pub fn start(&mut self, what: &str, cmd: &mut Command) {
        let child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{what} could not start: {e}"));
        self.children.push((what.to_string(), child));
    }

    /// Stops the daemon started as `what`.
    pub fn stop(&mut self, what: &str) {
        if let Some(i) = self.children.iter().position(|(w, _)| w == what) {
            let (_, mut child) = self.children.remove(i);
            terminate(&mut child);
        }
    }
}

pub fn terminate(child: &mut Child) {
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    let end = Instant::now() + Duration::from_secs(5);
    while Instant::now() < end {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}

impl Drop for Daemons {
    fn drop(&mut self) {
        for (_, child) in &mut self.children {
            terminate(child);
        }
        for ns in &self.namespaces {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
    }
}

/// Polls `check` every 250 ms for up to `limit`, printing each attempt; true once it holds.
pub fn wait_for(
    what: &str,
    limit: Duration,
    mut check: impl FnMut() -> Result<(), String>,
) -> bool {
    let end = Instant::now() + limit;
    for attempt in 1.. {
        match check() {
            Ok(()) => {
                eprintln!("{what}: attempt {attempt}: ready");
                return true;
            }
            Err(why) => eprintln!("{what}: attempt {attempt}: {why}"),
        }
        if Instant::now() >= end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    false
}

pub fn output_of(cmd: &mut Command) -> String {
    cmd.output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default()
}

/// A chronyd serving time on 127.0.0.1 and a client chronyd that does not steer the clock
/// (`-x`), its source configured with a 5 ms offset correction.
pub struct ChronyPair {
    pub dir: tempfile::TempDir,
    pub daemons: Daemons,
}

impl ChronyPair {
    pub fn client_socket(&self) -> PathBuf {
        self.dir.path().join("client.sock")
    }

    pub fn start() -> Option<ChronyPair> {
        if !is_root() || !installed("chronyd") || !installed("chronyc") {
            eprintln!("skipped: needs root, chronyd and chronyc");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        // chronyd refuses a command socket in a directory others can enter.
        std::fs::set_permissions(
            dir.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o700),
        )
        .unwrap();
        let d = dir.path().display().to_string();
        let port = 20_000 + std::process::id() % 20_000;
        let server = format!(
            "port {port}\nbindaddress 127.0.0.1\nlocal stratum 1\nallow 127.0.0.1\ncmdport 0\nbindcmdaddress {d}/server.sock\npidfile {d}/server.pid\ndriftfile {d}/server.drift\n"
        );
        let client = format!(
            "port 0\nserver 127.0.0.1 port {port} iburst minpoll -2 maxpoll -2 offset 0.005\ncmdport 0\nbindcmdaddress {d}/client.sock\npidfile {d}/client.pid\ndriftfile {d}/client.drift\n"
        );
        std::fs::write(dir.path().join("server.conf"), server).unwrap();
        std::fs::write(dir.path().join("client.conf"), client).unwrap();
        let mut daemons = Daemons::default();
        for who in ["server", "client"] {
            daemons.start(
                who,
                Command::new("chronyd")
                    .args(["-n", "-x", "-u", "root", "-f"])
                    .arg(dir.path().join(format!("{who}.conf")))
                    .arg("-l")
                    .arg(dir.path().join(format!("{who}.log"))),
            );
        }
        let pair = ChronyPair { dir, daemons };
        let socket = pair.client_socket();
        let synced = wait_for("chrony client", Duration::from_secs(30), || {
            let text = output_of(
                Command::new("chronyc")
                    .arg("-h")
                    .arg(&socket)
                    .args(["-c", "-n", "sources"]),
            );
            match text.lines().any(|l| l.starts_with("^,*,")) {
                true => Ok(()),
                false => Err(format!("not selected yet: {}", text.trim())),
            }
        });
        assert!(
            synced,
            "the client chronyd never selected its server; see {}",
            pair.dir.path().display()
        );
        Some(pair)
    }
}
