//! Point names and the globs that enable them.

use crate::layout::NAME_MAX;
use crate::AppError;

/// Characters a point name may hold besides ASCII letters and digits; `.` separates levels.
const NAME_PUNCTUATION: &[u8] = b"._-";

/// Checks a point name: 1..=63 bytes of ASCII letters, digits, `_`, `-` and `.`, with
/// non-empty levels (`servo.read`, never `.servo`, `servo..read` or `servo.`).
pub fn validate_name(name: &str) -> Result<(), AppError> {
    let invalid = |reason: String| AppError::InvalidName {
        name: printable(name),
        reason,
    };
    if name.is_empty() {
        return Err(invalid("it is empty".into()));
    }
    if name.len() > NAME_MAX {
        return Err(invalid(format!(
            "it is {} bytes long, the limit is {NAME_MAX}",
            name.len()
        )));
    }
    if let Some(c) = name.chars().find(|c| {
        !(c.is_ascii_alphanumeric() || NAME_PUNCTUATION.contains(&(*c as u8)) && c.is_ascii())
    }) {
        return Err(invalid(format!("'{}' is not allowed", c.escape_default())));
    }
    if name.split('.').any(str::is_empty) {
        return Err(invalid("a level between dots is empty".into()));
    }
    Ok(())
}

/// The name as a message can quote it (control characters escaped, long names cut).
fn printable(name: &str) -> String {
    let escaped: String = name.chars().flat_map(char::escape_default).collect();
    if escaped.len() > 80 {
        let cut: String = escaped.chars().take(77).collect();
        format!("{cut}...")
    } else {
        escaped
    }
}

/// Which points are enabled: comma-separated globs (`*` any run of characters, `?` one),
/// a leading `-` disabling; the last pattern that matches a name decides. Without any
/// enabling pattern every point starts enabled, so `-servo.debug` alone disables one point.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    rules: Vec<(bool, String)>,
}

impl Selection {
    /// Every point enabled (no `RTGAUGE_POINTS`).
    pub fn all() -> Selection {
        Selection { rules: Vec::new() }
    }

    /// Parses `servo.*,-servo.debug`; a bad pattern is an error naming it.
    pub fn parse(text: &str) -> Result<Selection, AppError> {
        Selection::parse_from(text, crate::layout::POINTS_ENV)
    }

    /// [`Selection::parse`] of globs that came from `origin` (what the error names).
    pub fn parse_from(text: &str, origin: &'static str) -> Result<Selection, AppError> {
        let mut rules = Vec::new();
        for item in text.split(',').map(str::trim) {
            let bad = |reason: &str| AppError::InvalidPattern {
                origin,
                pattern: printable(item),
                reason: reason.to_string(),
            };
            let (enable, glob) = match item.strip_prefix('-') {
                Some(rest) => (false, rest),
                None => (true, item),
            };
            if glob.is_empty() {
                return Err(bad("it is empty"));
            }
            if let Some(c) = glob.chars().find(|c| {
                !(c.is_ascii_alphanumeric()
                    || c.is_ascii() && NAME_PUNCTUATION.contains(&(*c as u8))
                    || *c == '*'
                    || *c == '?')
            }) {
                return Err(bad(&format!(
                    "'{}' can be in no point name; use letters, digits, '_', '-', '.', '*' and '?'",
                    c.escape_default()
                )));
            }
            rules.push((enable, glob.to_string()));
        }
        Ok(Selection { rules })
    }

    /// From `RTGAUGE_POINTS` (every point when unset).
    pub fn from_env() -> Result<Selection, AppError> {
        match std::env::var(crate::layout::POINTS_ENV) {
            Ok(text) => Selection::parse(&text),
            Err(_) => Ok(Selection::all()),
        }
    }

    pub fn enabled(&self, name: &str) -> bool {
        let mut enabled = !self.rules.iter().any(|(enable, _)| *enable);
        for (enable, glob) in &self.rules {
            if glob_matches(glob.as_bytes(), name.as_bytes()) {
                enabled = *enable;
            }
        }
        enabled
    }
}

/// `*` matches any run of bytes (dots included), `?` one byte.
fn glob_matches(glob: &[u8], text: &[u8]) -> bool {
    // Iterative matching with one backtrack point: linear in practice, never exponential.
    let (mut g, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match glob.get(g) {
            Some(b'*') => {
                star = Some((g, t));
                g += 1;
            }
            Some(&c) if c == b'?' || c == text[t] => {
                g += 1;
                t += 1;
            }
            _ => match star {
                Some((sg, st)) => {
                    g = sg + 1;
                    t = st + 1;
                    star = Some((sg, st + 1));
                }
                None => return false,
            },
        }
    }
    glob[g..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn good_names_pass_and_bad_names_say_why() {
        for good in ["servo.read", "a", "x_1-2.y", &"n".repeat(NAME_MAX)] {
            validate_name(good).unwrap();
        }
        let why = |name: &str| validate_name(name).unwrap_err().to_string();
        assert!(why(&"n".repeat(NAME_MAX + 1)).contains("64 bytes long, the limit is 63"));
        assert!(why("servo read").contains("' ' is not allowed"));
        assert!(why("servo/read").contains("'/' is not allowed"));
        assert!(why("servo.é").contains("is not allowed"));
        assert!(why("servo..read").contains("empty"));
        assert!(why(".servo").contains("empty"));
        assert!(why("").contains("empty"));
        assert!(!why("a\nb").contains('\n'), "one line");
    }

    #[test]
    fn last_matching_pattern_decides() {
        let s = Selection::parse("servo.*,-servo.debug").unwrap();
        assert!(s.enabled("servo.read"));
        assert!(s.enabled("servo.compute.inner"));
        assert!(!s.enabled("servo.debug"));
        assert!(!s.enabled("io.read"));
        let only_off = Selection::parse("-servo.debug").unwrap();
        assert!(only_off.enabled("io.read"));
        assert!(!only_off.enabled("servo.debug"));
        assert!(Selection::parse("servo.?ead")
            .unwrap()
            .enabled("servo.read"));
        assert!(Selection::all().enabled("anything"));
    }

    #[test]
    fn bad_patterns_are_named() {
        for (text, named) in [
            ("servo.*,servo[0]", "'servo[0]'"),
            ("servo.*,,x", "''"),
            ("-", "'-'"),
            ("a b", "'a b'"),
        ] {
            let e = Selection::parse(text).unwrap_err().to_string();
            assert!(e.contains(&format!("pattern {named} is refused")), "{e}");
            assert!(!e.contains('\n'));
        }
    }

    /// A reference matcher: plain recursion, obviously right, exponential (small inputs only).
    fn reference(g: &[u8], t: &[u8]) -> bool {
        match (g.first(), t.first()) {
            (None, _) => t.is_empty(),
            (Some(b'*'), _) => reference(&g[1..], t) || (!t.is_empty() && reference(g, &t[1..])),
            (Some(&c), Some(&d)) if c == b'?' || c == d => reference(&g[1..], &t[1..]),
            _ => false,
        }
    }

    proptest! {
        #[test]
        fn glob_matches_as_the_reference_does(g in "[ab.*?]{0,8}", t in "[ab.]{0,10}") {
            prop_assert_eq!(glob_matches(g.as_bytes(), t.as_bytes()), reference(g.as_bytes(), t.as_bytes()));
        }

        #[test]
        fn every_valid_name_matches_itself_and_star(name in "[a-z][a-z0-9_-]{0,10}(\\.[a-z0-9_-]{1,10}){0,3}") {
            prop_assert!(validate_name(&name).is_ok());
            let own = Selection::parse(&name).unwrap();
            prop_assert!(own.enabled(&name));
            let all_but = Selection::parse(&format!("*,-{}", name)).unwrap();
            prop_assert!(!all_but.enabled(&name));
        }
    }
}
