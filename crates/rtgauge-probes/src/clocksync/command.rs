//! A daemon's client program run with a bound on its time: the answer, or why there is none.
//! Nothing here waits longer than the timeout it is given, whatever the daemon does.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How often a running client is looked at while waiting for it.
const LOOK_EVERY: Duration = Duration::from_millis(5);
/// At most this much of a client's output is kept (a garbage answer cannot grow memory).
const MAX_OUTPUT: u64 = 256 * 1024;

/// Runs `program args…` and returns its standard output when it exits 0 within `timeout`;
/// otherwise one line: not installed, killed at the timeout, or its exit status and the first
/// line of what it printed.
pub fn run(program: &str, args: &[String], timeout: Duration) -> Result<String, String> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => format!("{program} is not installed (not in PATH)"),
            _ => format!("{program} could not start: {e}"),
        })?;
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() >= timeout => {
                // The client (or the daemon behind it) hangs: end it, never wait for it.
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{program} got no answer within {} ms (stopped)",
                    timeout.as_millis()
                ));
            }
            Ok(None) => std::thread::sleep(LOOK_EVERY),
            Err(e) => return Err(format!("{program}: waiting for it failed: {e}")),
        }
    };
    let mut out = String::new();
    let mut err = String::new();
    if let Some(stdout) = child.stdout.take() {
        let _ = stdout.take(MAX_OUTPUT).read_to_string(&mut out);
    }
    if let Some(stderr) = child.stderr.take() {
        let _ = stderr.take(MAX_OUTPUT).read_to_string(&mut err);
    }
    if status.success() {
        return Ok(out);
    }
    let said = err
        .lines()
        .chain(out.lines())
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("nothing");
    Err(format!("{program} failed ({status}): {said}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_that_hangs_is_stopped_at_the_timeout() {
        let t = Instant::now();
        let e = run("sleep", &["30".into()], Duration::from_millis(200)).unwrap_err();
        assert!(e.contains("no answer within 200 ms"), "{e}");
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    }

    #[test]
    fn a_missing_client_and_a_failing_one_say_so() {
        let e = run("rtgauge-no-such-client", &[], Duration::from_secs(1)).unwrap_err();
        assert!(e.contains("not installed"), "{e}");
        let e = run(
            "sh",
            &["-c".into(), "echo broken >&2; exit 3".into()],
            Duration::from_secs(5),
        )
        .unwrap_err();
        assert!(e.contains("broken") && e.contains('3'), "{e}");
        let ok = run(
            "sh",
            &["-c".into(), "echo fine".into()],
            Duration::from_secs(5),
        )
        .unwrap();
        assert_eq!(ok.trim(), "fine");
    }
}
