//! `rtgauge submit squad`: results to SQUAD's submit API, through a spool that loses nothing.
//!
//! Every submission is first written to the spool (`squad-spool/` beside the run history), then
//! sent; an entry is removed only after SQUAD answered 2xx (or said it already holds the
//! entry's job_id, which is the entry's own name: a submission whose answer was lost is never
//! recorded twice). The token comes from SQUAD_TOKEN only and is never written anywhere.

use crate::cli::SquadArgs;
use anyhow::{Context, Result};
use rtgauge_report::lava::LabResults;
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One submission waiting in the spool.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct Entry {
    /// Also SQUAD's job_id: a second delivery of the same entry is refused by SQUAD.
    id: String,
    url: String,
    group: String,
    project: String,
    build: String,
    environment: String,
    tests: Map<String, Value>,
    metrics: Map<String, Value>,
    metadata: Map<String, Value>,
    attachment_name: String,
    attachment: String,
}

/// Why one submission did not land.
#[derive(Debug, thiserror::Error)]
enum SubmitError {
    #[error("cannot reach SQUAD at {url}: {reason}; check the URL and the network")]
    Unreachable { url: String, reason: String },
    #[error("SQUAD refused the token (HTTP {status}): SQUAD_TOKEN must be the API token of a user who may submit to {group}/{project}")]
    Token {
        status: u16,
        group: String,
        project: String,
    },
    #[error("SQUAD has no project {group}/{project} at {url} (HTTP 404): create it in SQUAD or correct --group/--project")]
    NoProject {
        url: String,
        group: String,
        project: String,
    },
    #[error("SQUAD answered HTTP {status}: {message}")]
    Refused { status: u16, message: String },
}

const SUITE: &str = "rtgauge";

pub fn squad(args: SquadArgs) -> Result<u8> {
    if args.token.is_some() {
        anyhow::bail!(
            "--token: a token on the command line is visible to every user (ps) and kept in shell history; export SQUAD_TOKEN=TOKEN instead"
        );
    }
    let url = args.url.trim_end_matches('/').to_string();
    anyhow::ensure!(
        url.starts_with("http://") || url.starts_with("https://"),
        "'{}' is not a SQUAD URL; write it as https://squad.example.org",
        args.url
    );
    for (what, slug) in [
        ("--group", &args.group),
        ("--project", &args.project),
        ("--build", &args.build),
        ("--environment", &args.environment),
    ] {
        anyhow::ensure!(
            !slug.is_empty()
                && !slug.contains(['/', '?', '#'])
                && !slug.contains(char::is_whitespace),
            "{what} '{slug}' cannot be part of SQUAD's URL; use letters, digits, '.', '_' or '-'"
        );
    }
    let spool = spool_dir(&args.store)?;
    // Every result becomes a spool entry before anything is sent: a failure loses nothing.
    let mut new = Vec::new();
    for path in &args.results {
        let (result, source) =
            super::history::resolve(&path.to_string_lossy(), &args.store, args.imported)?;
        let check = super::lava::verdict(
            std::slice::from_ref(&result),
            &args.judge,
            &args.store,
            args.imported,
        )?;
        let lab = LabResults::of(&result, check.as_ref());
        let entry = entry(&args, &url, &result, &lab, &source)?;
        std::fs::create_dir_all(&spool).with_context(|| {
            format!(
                "cannot create the spool {}; choose a writable history with --store",
                spool.display()
            )
        })?;
        let file = spool.join(format!("{}.json", entry.id));
        rtgauge_result::write_bytes_atomically(&file, &serde_json::to_vec(&entry)?)
            .with_context(|| format!("cannot write the spool entry {}", file.display()))?;
        new.push(entry.id);
    }
    let waiting = pending(&spool, &url)?;
    if waiting.is_empty() {
        println!(
            "nothing to submit: no RESULT given and no submission waiting in {}",
            spool.display()
        );
        return Ok(crate::EXIT_OK);
    }
    let Some(token) = std::env::var("SQUAD_TOKEN").ok().filter(|t| !t.is_empty()) else {
        anyhow::bail!(
            "SQUAD_TOKEN is not set: export SQUAD_TOKEN=TOKEN (the API token of your SQUAD user); {} submission(s) kept in {}, sent by the next `rtgauge submit squad`",
            waiting.len(),
            spool.display()
        );
    };
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(args.timeout.max(1))))
        .http_status_as_error(false)
        .build()
        .into();
    for (file, entry) in &waiting {
        match send(&agent, entry, &token) {
            Ok(note) => {
                std::fs::remove_file(file).with_context(|| {
                    format!(
                        "SQUAD accepted {} but its spool entry {} cannot be removed; remove it by hand, or it is sent again (SQUAD refuses the repeat)",
                        entry.id,
                        file.display()
                    )
                })?;
                let retried = if new.contains(&entry.id) {
                    ""
                } else {
                    " (spooled earlier)"
                };
                println!(
                    "submitted to {}/{}/{}/{}/{}: {} metrics, {} tests{retried}{note}",
                    entry.url,
                    entry.group,
                    entry.project,
                    entry.build,
                    entry.environment,
                    entry.metrics.len(),
                    entry.tests.len()
                );
            }
            Err(e) => {
                let left = pending(&spool, &url)
                    .map(|p| p.len())
                    .unwrap_or(waiting.len());
                anyhow::bail!(
                    "{e}; {left} submission(s) kept in {}, sent by the next `rtgauge submit squad`",
                    spool.display()
                );
            }
        }
    }
    Ok(crate::EXIT_OK)
}

/// `squad-spool/` beside the run history.
fn spool_dir(store: &crate::cli::StoreArgs) -> Result<PathBuf> {
    let history = super::history::store_path(store)?;
    Ok(history
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
        .join("squad-spool"))
}

/// The spooled entries for this server, oldest first (names start with the time).
fn pending(spool: &Path, url: &str) -> Result<Vec<(PathBuf, Entry)>> {
    let Ok(dir) = std::fs::read_dir(spool) else {
        return Ok(Vec::new());
    };
    let mut files: Vec<PathBuf> = dir
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for file in files {
        let text = std::fs::read(&file)
            .with_context(|| format!("cannot read the spool entry {}", file.display()))?;
        let entry: Entry = serde_json::from_slice(&text).with_context(|| {
            format!(
                "the spool entry {} is damaged; move it away to submit the others",
                file.display()
            )
        })?;
        if entry.url == url {
            out.push((file, entry));
        }
    }
    Ok(out)
}

fn entry(
    args: &SquadArgs,
    url: &str,
    result: &rtgauge_result::RunResult,
    lab: &LabResults,
    source: &str,
) -> Result<Entry> {
    let mut tests = Map::new();
    let mut metrics = Map::new();
    for case in lab.cases() {
        let name = format!("{SUITE}/{}", case.name);
        if case.judged {
            tests.insert(name.clone(), json!(case.result.as_str()));
        }
        if let Some(m) = &case.measurement {
            let value = m.number();
            if value.is_finite() {
                metrics.insert(name, json!(value));
            }
        }
    }
    static COUNTER: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let id = format!(
        "{}-{:09}-{}-{}",
        now.as_secs(),
        now.subsec_nanos(),
        std::process::id(),
        COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    let fp = &result.fingerprint;
    let mut metadata = Map::new();
    for (k, v) in [
        ("job_id", id.clone()),
        ("rtgauge_version", result.tool.version.clone()),
        ("hostname", fp.hostname.clone()),
        ("kernel_release", fp.kernel_release.clone()),
        ("preemption_model", fp.preemption_model.clone()),
        ("architecture", fp.architecture.clone()),
        ("cpu_model", fp.cpu_model.clone()),
        ("run_status", result.status.as_str().to_string()),
        (
            "datetime",
            rtgauge_result::units::utc(result.started_unix_ns, "%Y-%m-%dT%H:%M:%SZ"),
        ),
        ("source", source.to_string()),
    ] {
        metadata.insert(k.into(), json!(v));
    }
    Ok(Entry {
        id,
        url: url.to_string(),
        group: args.group.clone(),
        project: args.project.clone(),
        build: args.build.clone(),
        environment: args.environment.clone(),
        tests,
        metrics,
        metadata,
        attachment_name: "result.json".into(),
        attachment: String::from_utf8(rtgauge_result::document_bytes(result))?,
    })
}

/// Posts one entry; `Ok` with a note when SQUAD holds it (accepted now, or already).
fn send(agent: &ureq::Agent, e: &Entry, token: &str) -> Result<String, SubmitError> {
    let endpoint = format!(
        "{}/api/submit/{}/{}/{}/{}",
        e.url, e.group, e.project, e.build, e.environment
    );
    let boundary = format!("rtgauge-{}", e.id);
    let mut body = Vec::new();
    let mut part = |name: &str, filename: Option<&str>, content: &[u8]| {
        body.extend_from_slice(format!("--{boundary}\r\n").as_bytes());
        let disposition = match filename {
            Some(f) => format!("Content-Disposition: form-data; name=\"{name}\"; filename=\"{f}\"\r\nContent-Type: application/json\r\n"),
            None => format!("Content-Disposition: form-data; name=\"{name}\"\r\n"),
        };
        body.extend_from_slice(disposition.as_bytes());
        body.extend_from_slice(b"\r\n");
        body.extend_from_slice(content);
        body.extend_from_slice(b"\r\n");
    };
    if !e.tests.is_empty() {
        part(
            "tests",
            None,
            Value::Object(e.tests.clone()).to_string().as_bytes(),
        );
    }
    part(
        "metrics",
        None,
        Value::Object(e.metrics.clone()).to_string().as_bytes(),
    );
    part(
        "metadata",
        None,
        Value::Object(e.metadata.clone()).to_string().as_bytes(),
    );
    part(
        "attachment",
        Some(&e.attachment_name),
        e.attachment.as_bytes(),
    );
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    let answer = agent
        .post(&endpoint)
        .header("Auth-Token", token)
        .header(
            "Content-Type",
            format!("multipart/form-data; boundary={boundary}"),
        )
        .send(&body[..]);
    let mut answer = answer.map_err(|err| SubmitError::Unreachable {
        url: e.url.clone(),
        reason: err.to_string(),
    })?;
    let status = answer.status().as_u16();
    let text = answer
        .body_mut()
        .with_config()
        .limit(64 * 1024)
        .read_to_string()
        .unwrap_or_default();
    match status {
        200..=299 => Ok(String::new()),
        400 if text.contains("already a test run with job_id") => {
            Ok(" (SQUAD already held it: not recorded twice)".into())
        }
        401 | 403 => Err(SubmitError::Token {
            status,
            group: e.group.clone(),
            project: e.project.clone(),
        }),
        404 => Err(SubmitError::NoProject {
            url: e.url.clone(),
            group: e.group.clone(),
            project: e.project.clone(),
        }),
        _ => Err(SubmitError::Refused {
            status,
            message: text
                .lines()
                .next()
                .unwrap_or("")
                .chars()
                .take(200)
                .collect(),
        }),
    }
}
