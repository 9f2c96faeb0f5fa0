//! `exec:CMD`: any command as a load (stress-ng, hackbench, a real kernel build), run with
//! `/bin/sh -c` in the worker's process group and restarted whenever it exits.

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use super::{die_with_parent, own_pid, Ctx, Outcome};
use crate::kinds::idx;

const POLL: Duration = Duration::from_millis(50);
/// A first run that fails within this is a broken command, reported at start.
const FIRST_RUN_CHECK: Duration = Duration::from_millis(200);
/// Restarting a command that keeps exiting at once is slowed down to at most this rate.
const MAX_BACKOFF: Duration = Duration::from_secs(2);

pub(crate) fn run(ctx: &Ctx) -> Outcome {
    let command = ctx
        .cfg
        .command
        .as_deref()
        .ok_or("an exec load without a command")?;
    let mut backoff = Duration::ZERO;
    let mut first = true;
    loop {
        let started = Instant::now();
        let mut child = spawn(command)?;
        let status = wait(
            &mut child,
            ctx,
            if first { Some(FIRST_RUN_CHECK) } else { None },
        )?;
        let Some(status) = status else {
            // The first run is still going after the check: the load is up.
            first = false;
            ctx.slot.set_running();
            let status = wait(&mut child, ctx, None)?.ok_or("the command vanished")?;
            backoff = restarted(ctx, status, started.elapsed(), backoff);
            continue;
        };
        if first && !status.success() {
            return Err(format!(
                "the command `{command}` {}; check it in a shell",
                describe(status)
            ));
        }
        if first {
            first = false;
            ctx.slot.set_running();
        }
        backoff = restarted(ctx, status, started.elapsed(), backoff);
    }
}

fn spawn(command: &str) -> Result<Child, String> {
    let worker = own_pid();
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: die_with_parent makes only async-signal-safe calls. The shell stays in the
    // worker's process group (no setpgid), so stopping the group stops what it started.
    unsafe {
        cmd.pre_exec(move || die_with_parent(worker));
    }
    cmd.spawn()
        .map_err(|e| format!("cannot run /bin/sh -c `{command}`: {e}"))
}

/// Waits for the command, adding its runtime as it goes; `limit` bounds the wait (None when
/// it is still running then).
fn wait(
    child: &mut Child,
    ctx: &Ctx,
    limit: Option<Duration>,
) -> Result<Option<ExitStatus>, String> {
    let start = Instant::now();
    let mut last = start;
    loop {
        if let Some(status) = child
            .try_wait()
            .map_err(|e| format!("cannot wait for the command: {e}"))?
        {
            ctx.slot
                .add(idx::EXEC_RUNTIME_NS, last.elapsed().as_nanos() as u64);
            return Ok(Some(status));
        }
        if limit.is_some_and(|l| start.elapsed() >= l) {
            return Ok(None);
        }
        std::thread::sleep(POLL);
        ctx.slot
            .add(idx::EXEC_RUNTIME_NS, last.elapsed().as_nanos() as u64);
        last = Instant::now();
    }
}

/// Counts a restart, notes how the command ended, and backs off if it keeps exiting at once.
fn restarted(ctx: &Ctx, status: ExitStatus, ran: Duration, backoff: Duration) -> Duration {
    ctx.slot.add(idx::OPS, 1);
    ctx.slot.set_message(&format!(
        "the command {} and was restarted",
        describe(status)
    ));
    if ran >= Duration::from_secs(1) {
        return Duration::ZERO;
    }
    let backoff = (backoff * 2).clamp(Duration::from_millis(100), MAX_BACKOFF);
    std::thread::sleep(backoff);
    backoff
}

fn describe(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(127), _) => "exited with status 127 (command not found)".to_string(),
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(sig)) => format!("was killed by signal {sig}"),
        _ => "ended".to_string(),
    }
}
