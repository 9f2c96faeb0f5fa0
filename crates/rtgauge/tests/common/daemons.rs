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

/// ptp4l as master and as slave over a veth pair between two network namespaces of the
/// test, software timestamping, the slave not steering the clock (free_running).
pub struct PtpPair {
    pub dir: tempfile::TempDir,
    pub daemons: Daemons,
    pub namespaces: [String; 2],
}

impl PtpPair {
    pub fn slave_socket(&self) -> PathBuf {
        self.dir.path().join("slave.uds")
    }

    pub fn start() -> Option<PtpPair> {
        if !is_root() || !installed("ptp4l") || !installed("pmc") || !installed("ip") {
            eprintln!("skipped: needs root, ptp4l, pmc and ip");
            return None;
        }
        let id = std::process::id();
        let namespaces = [format!("rtg-cs-m{id}"), format!("rtg-cs-s{id}")];
        let veth = [
            format!("rcs{}m", id % 100_000),
            format!("rcs{}s", id % 100_000),
        ];
        let mut daemons = Daemons::default();
        let ip = |args: &[&str]| {
            let ok = Command::new("ip")
                .args(args)
                .status()
                .is_ok_and(|s| s.success());
            assert!(ok, "ip {}", args.join(" "));
        };
        for ns in &namespaces {
            ip(&["netns", "add", ns]);
            daemons.namespaces.push(ns.clone());
        }
        ip(&[
            "link",
            "add",
            &veth[0],
            "netns",
            &namespaces[0],
            "type",
            "veth",
            "peer",
            "name",
            &veth[1],
            "netns",
            &namespaces[1],
        ]);
        for (i, ns) in namespaces.iter().enumerate() {
            let addr = format!("10.231.{}.{}/24", id % 200, i + 1);
            ip(&["-n", ns, "addr", "add", &addr, "dev", &veth[i]]);
            ip(&["-n", ns, "link", "set", &veth[i], "up"]);
            ip(&["-n", ns, "link", "set", "lo", "up"]);
        }
        let dir = tempfile::tempdir().unwrap();
        let common = "logAnnounceInterval -2\nannounceReceiptTimeout 2\nlogSyncInterval -3\nlogMinDelayReqInterval -3\n";
        let master = format!(
            "[global]\nuds_address {}/master.uds\npriority1 1\nmasterOnly 1\n{common}",
            dir.path().display()
        );
        std::fs::write(dir.path().join("master.cfg"), master).unwrap();
        let mut pair = PtpPair {
            dir,
            daemons,
            namespaces,
        };
        pair.daemons.start(
            "master",
            Command::new("ip")
                .args([
                    "netns",
                    "exec",
                    &pair.namespaces[0],
                    "ptp4l",
                    "-S",
                    "-i",
                    &veth[0],
                    "-f",
                ])
                .arg(pair.dir.path().join("master.cfg")),
        );
        Some(pair)
    }

    /// Starts (or restarts) the slave with `asymmetry_ns` as its delayAsymmetry, and waits until it
    /// follows the master.
    pub fn start_slave(&mut self, veth: &str, asymmetry_ns: i64) {
        self.daemons.stop("slave");
        let d = self.dir.path().display();
        let cfg = format!(
            "[global]\nuds_address {d}/slave.uds\nslaveOnly 1\nfree_running 1\ndelayAsymmetry {asymmetry_ns}\nlogAnnounceInterval -2\nannounceReceiptTimeout 2\nlogSyncInterval -3\nlogMinDelayReqInterval -3\n"
        );
        std::fs::write(self.dir.path().join("slave.cfg"), cfg).unwrap();
        self.daemons.start(
            "slave",
            Command::new("ip")
                .args([
                    "netns",
                    "exec",
                    &self.namespaces[1],
                    "ptp4l",
                    "-S",
                    "-i",
                    veth,
                    "-f",
                ])
                .arg(self.dir.path().join("slave.cfg")),
        );
        let socket = self.slave_socket();
        let client = self.dir.path().join("pmc-wait");
        let ready = wait_for("ptp4l slave", Duration::from_secs(30), || {
            let text = output_of(
                Command::new("pmc")
                    .args(["-u", "-b", "0", "-s"])
                    .arg(&socket)
                    .arg("-i")
                    .arg(&client)
                    .args(["GET TIME_STATUS_NP", "GET PORT_DATA_SET"]),
            );
            let _ = std::fs::remove_file(&client);
            let follows = text.contains("gmPresent                  true")
                && (text.contains("UNCALIBRATED")
                    || text.contains("portState               SLAVE"))
                && !text.contains("master_offset              0\n");
            match follows {
                true => Ok(()),
                false => Err("not following the master yet".into()),
            }
        });
        assert!(ready, "the ptp4l slave never followed its master");
    }

    pub fn veth(&self) -> String {
        format!("rcs{}s", std::process::id() % 100_000)
    }
}
