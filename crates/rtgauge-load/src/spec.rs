//! The user's load text (`cpu:4`, `net+messaging`, `exec:stress-ng --cpu 2`, `all`), parsed into
//! a [`LoadSpec`], and the catalogue shown by `rtgauge loads`.

use std::fmt;
use std::num::NonZeroU32;
use std::str::FromStr;

use crate::error::LoadError;
use crate::kinds::{Kind, KINDS};

/// Listed in every parse error, so that the user sees what would have been accepted.
pub const ACCEPTED_FORMS: &str = "none, cpu[:N], syscall[:N], memory[:N], rt-memory[:N], \
     messaging[:N], io[:N], net[:N], compile[:N] (N = workers, default one per load CPU), \
     exec:COMMAND, all, or several joined with + (exec: last)";

/// Upper bound on workers per load: a typo like `cpu:10000` must not fork-bomb the target.
pub(crate) const MAX_WORKERS: u32 = 256;

/// One load generator of a spec, with its intensity.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Part {
    pub kind: Kind,
    /// Workers asked for; `None` = one per load CPU (always one for `exec:`).
    pub workers: Option<NonZeroU32>,
    /// The command of an `exec:` load.
    pub command: Option<String>,
}

impl Part {
    fn name(&self) -> String {
        match (&self.command, self.workers) {
            (Some(cmd), _) => format!("exec:{cmd}"),
            (None, Some(n)) => format!("{}:{n}", self.kind.name()),
            (None, None) => self.kind.name().to_string(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Inner {
    None,
    /// Every built-in load, one after another: only meaningful to [`expand`].
    All,
    /// One load, or several run at the same time (`net+messaging`, Gleixner and Niehaus's "both").
    Mix(Vec<Part>),
}

/// A load as the user named it. Parse it with `"cpu:4".parse::<LoadSpec>()`; its
/// [`name`](LoadSpec::name) gives back the canonical text, which parses to the same spec.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LoadSpec {
    pub(crate) inner: Inner,
}

impl LoadSpec {
    /// The idle "load".
    pub fn none() -> LoadSpec {
        LoadSpec { inner: Inner::None }
    }

    /// Canonical text of the spec: `none`, `cpu`, `cpu:4`, `net+messaging`, `exec:CMD`, `all`.
    pub fn name(&self) -> String {
        match &self.inner {
            Inner::None => "none".to_string(),
            Inner::All => "all".to_string(),
            Inner::Mix(parts) => parts.iter().map(Part::name).collect::<Vec<_>>().join("+"),
        }
    }

    /// True for `none` (idle): starting it starts nothing.
    pub fn is_none(&self) -> bool {
        self.inner == Inner::None
    }

    /// True for a named mix that [`expand`] turns into a list of loads (`all`).
    pub fn is_mix_name(&self) -> bool {
        self.inner == Inner::All
    }

    pub(crate) fn parts(&self) -> &[Part] {
        match &self.inner {
            Inner::Mix(parts) => parts,
            Inner::None | Inner::All => &[],
        }
    }
}

impl fmt::Display for LoadSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

impl FromStr for LoadSpec {
    type Err = LoadError;

    fn from_str(text: &str) -> Result<LoadSpec, LoadError> {
        let invalid = |reason: String| LoadError::InvalidSpec {
            spec: text.to_string(),
            reason,
        };
        let trimmed = text.trim();
        match trimmed {
            "" => return Err(invalid("the load is empty".to_string())),
            "none" | "idle" => return Ok(LoadSpec::none()),
            "all" => return Ok(LoadSpec { inner: Inner::All }),
            _ => {}
        }
        let mut parts: Vec<Part> = Vec::new();
        let mut rest = trimmed;
        while !rest.is_empty() {
            // `exec:` takes the rest of the text: a command may itself contain `+` or `:`.
            if let Some(command) = rest.strip_prefix("exec:") {
                let command = command.trim();
                if command.is_empty() {
                    return Err(invalid(
                        "`exec:` needs a command, e.g. `exec:stress-ng --cpu 2`".to_string(),
                    ));
                }
                parts.push(Part {
                    kind: Kind::Exec,
                    workers: None,
                    command: Some(command.to_string()),
                });
                break;
            }
            let (item, tail) = match rest.split_once('+') {
                Some((item, tail)) => (item.trim(), tail.trim_start()),
                None => (rest.trim(), ""),
            };
            if tail.is_empty() && rest.trim_end().ends_with('+') {
                return Err(invalid(
                    "a `+` must be followed by another load".to_string(),
                ));
            }
            parts.push(parse_part(item).map_err(invalid)?);
            rest = tail;
        }
        let mut seen = std::collections::HashSet::new();
        for part in &parts {
            if !seen.insert(part.kind) {
                return Err(invalid(format!(
                    "`{}` appears twice in the mix; give it once with more workers instead",
                    part.kind.name()
                )));
            }
        }
        Ok(LoadSpec {
            inner: Inner::Mix(parts),
        })
    }
}

/// Parses `name` or `name:N` (not `exec:`, handled by the caller).
fn parse_part(item: &str) -> Result<Part, String> {
    let (name, intensity) = match item.split_once(':') {
        Some((name, n)) => (name.trim(), Some(n.trim())),
        None => (item, None),
    };
    let kind = match Kind::from_name(name) {
        Some(Kind::Exec) => return Err("`exec` needs a command: `exec:COMMAND`".to_string()),
        Some(kind) => kind,
        None if name == "none" || name == "all" => {
            return Err(format!("`{name}` cannot be combined or given an intensity"))
        }
        None if name.is_empty() => return Err("a load name is empty".to_string()),
        None => {
            let names = KINDS
                .iter()
                .filter(|k| **k != Kind::Exec)
                .map(|k| k.name())
                .chain(["none", "all", "exec"]);
            return Err(format!(
                "no load is named `{name}`{}",
                rtgauge_result::units::did_you_mean(name, names)
            ));
        }
    };
    let workers = match intensity {
        None => None,
        Some(n) => {
            let n: u32 = n.parse().map_err(|_| {
                format!("the intensity of `{name}` must be a whole number of workers, not `{n}`")
            })?;
            if n == 0 {
                return Err(format!(
                    "the intensity of `{name}` must be at least 1 worker"
                ));
            }
            if n > MAX_WORKERS {
                return Err(format!(
                    "the intensity of `{name}` is at most {MAX_WORKERS} workers"
                ));
            }
            NonZeroU32::new(n)
        }
    };
    Ok(Part {
        kind,
        workers,
        command: None,
    })
}

/// Parses a comma-separated list of loads (`none,cpu,io,exec:stress-ng --cpu 2`). An `exec:`
/// item takes the rest of the text, so that its command may contain commas; put it last.
pub fn parse_list(text: &str) -> Result<Vec<LoadSpec>, LoadError> {
    let mut specs = Vec::new();
    let mut rest = text.trim();
    while !rest.is_empty() {
        // An item containing `exec:` (alone or at the end of a mix) swallows the remainder.
        let comma = rest.find(',');
        let exec = rest.find("exec:");
        match (comma, exec) {
            (Some(c), e) if e.is_none_or(|e| c < e) => {
                specs.push(rest[..c].parse()?);
                rest = rest[c + 1..].trim_start();
                if rest.is_empty() {
                    return Err(LoadError::InvalidSpec {
                        spec: text.to_string(),
                        reason: "the list ends with a comma".to_string(),
                    });
                }
            }
            _ => {
                specs.push(rest.parse()?);
                rest = "";
            }
        }
    }
    if specs.is_empty() {
        return Err(LoadError::InvalidSpec {
            spec: text.to_string(),
            reason: "the list of loads is empty".to_string(),
        });
    }
    Ok(specs)
}

/// Replaces named mixes (`all`) by the loads they stand for and drops repeats, keeping order.
/// `all` = every built-in generator (not `none`, not `exec:`), each run on its own.
pub fn expand(specs: &[LoadSpec]) -> Vec<LoadSpec> {
    let mut out: Vec<LoadSpec> = Vec::new();
    let mut push = |spec: LoadSpec| {
        if !out.contains(&spec) {
            out.push(spec);
        }
    };
    for spec in specs {
        match spec.inner {
            Inner::All => {
                for kind in KINDS.iter().copied().filter(|k| k.in_all()) {
                    push(LoadSpec {
                        inner: Inner::Mix(vec![Part {
                            kind,
                            workers: None,
                            command: None,
                        }]),
                    });
                }
            }
            _ => push(spec.clone()),
        }
    }
    out
}

/// A line of `rtgauge loads`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadInfo {
    /// As typed by the user (`cpu`, `exec:CMD`, `all`).
    pub name: &'static str,
    /// What the load stresses.
    pub stresses: &'static str,
    /// `Err(reason and fix)` when the load cannot start on this machine.
    pub available: Result<(), String>,
    /// A part of the load that will not run here, with the reason (ICMP without raw sockets).
    pub note: Option<String>,
}

/// Every load with what it stresses and whether it can start here. Cheap: no load is started.
pub fn catalogue() -> Vec<LoadInfo> {
    let mut out = vec![LoadInfo {
        name: "none",
        stresses: "nothing: the idle baseline every loaded figure is compared with",
        available: Ok(()),
        note: None,
    }];
    for kind in KINDS {
        let (name, available, note) = match kind {
            Kind::Exec => (
                "exec:CMD",
                crate::sys::shell_available().map_err(|e| e.to_string()),
                None,
            ),
            Kind::Compile => (
                kind.name(),
                crate::sys::find_compiler()
                    .map(|_| ())
                    .map_err(|e| e.to_string()),
                None,
            ),
            Kind::RtMemory => (
                kind.name(),
                crate::sys::rt_permitted(1).map_err(|reason| {
                    LoadError::RtNotPermitted {
                        load: kind.name().to_string(),
                        priority: 1,
                        reason,
                    }
                    .to_string()
                }),
                None,
            ),
            Kind::Net => (
                kind.name(),
                Ok(()),
                crate::worker::net::icmp_socket().err().map(|reason| {
                    format!("ICMP echo flood unavailable ({reason}); UDP flood only")
                }),
            ),
            _ => (kind.name(), Ok(()), None),
        };
        out.push(LoadInfo {
            name,
            stresses: kind.stresses(),
            available,
            note,
        });
    }
    out.push(LoadInfo {
        name: "all",
        stresses: "every load above except none and exec, one after another",
        available: Ok(()),
        note: None,
    });
    out
}

impl serde::Serialize for LoadSpec {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.name())
    }
}

impl<'de> serde::Deserialize<'de> for LoadSpec {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<LoadSpec, String> {
        text.parse::<LoadSpec>().map_err(|e| e.to_string())
    }

    #[test]
    fn names_round_trip() {
        for text in [
            "none",
            "cpu",
            "cpu:4",
            "syscall",
            "memory:2",
            "rt-memory",
            "messaging",
            "io",
            "net",
            "compile:3",
            "exec:stress-ng --cpu 2",
            "net+messaging",
            "cpu:1+exec:sh -c 'a+b'",
            "all",
        ] {
            let spec = parse(text).unwrap();
            assert_eq!(spec.name(), text);
            assert_eq!(parse(&spec.name()).unwrap(), spec);
        }
        assert_eq!(parse(" cpu : 2 ").unwrap().name(), "cpu:2");
        assert!(parse("none").unwrap().is_none());
        assert!(!parse("cpu").unwrap().is_none());
    }

    #[test]
    fn bad_specs_are_one_short_line_pointing_at_the_load_list() {
        for (text, hint) in [
            ("bogus", "no load is named `bogus`; `rtgauge loads`"),
            ("cpy", "no load is named `cpy` (did you mean `cpu`?)"),
            ("nosuch", "no load is named `nosuch`; `rtgauge loads`"),
            ("cpu:0", "at least 1 worker"),
            ("cpu:x", "whole number"),
            ("cpu:100000", "at most"),
            ("exec:", "needs a command"),
            ("exec", "needs a command"),
            ("", "empty"),
            ("cpu+", "followed by another load"),
            ("cpu+cpu", "twice"),
            ("none+cpu", "cannot be combined"),
        ] {
            let err = parse(text).unwrap_err();
            assert!(err.contains(hint), "{text}: {err}");
            assert!(err.contains("`rtgauge loads` lists"), "{text}: {err}");
            assert!(!err.contains('\n') && err.len() < 160, "{text}: {err}");
        }
    }

    #[test]
    fn expand_all_lists_every_builtin_once() {
        let specs = parse_list("none,cpu,all").unwrap();
        let names: Vec<String> = expand(&specs).iter().map(LoadSpec::name).collect();
        // The catalogue's order, exec (which needs a command) and `all` itself left out.
        let catalogue: Vec<String> = catalogue()
            .into_iter()
            .map(|l| l.name.to_string())
            .filter(|n| n != "exec:CMD" && n != "all")
            .collect();
        assert_eq!(names, catalogue);
    }

    #[test]
    fn lists_keep_commas_inside_exec() {
        let specs = parse_list("none, io,exec:stress-ng --cpu 1,2").unwrap();
        let names: Vec<String> = specs.iter().map(LoadSpec::name).collect();
        assert_eq!(names, ["none", "io", "exec:stress-ng --cpu 1,2"]);
        assert!(parse_list("cpu,").is_err());
        assert!(parse_list("").is_err());
    }

    #[test]
    fn specs_serialize_as_their_name() {
        let spec = parse("cpu:2+net").unwrap();
        let json = serde_json::to_string(&spec).unwrap();
        assert_eq!(json, "\"cpu:2+net\"");
        assert_eq!(serde_json::from_str::<LoadSpec>(&json).unwrap(), spec);
    }
}
