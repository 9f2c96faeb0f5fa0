//! rt-app's JSON as rt-app reads it. rt-app parses with json-c, which is not strict: it
//! takes C and C++ comments and trailing commas, and rt-app reads an event object's repeated
//! keys (two `"run"` in one phase) as events in the order written. Here the comments and
//! trailing commas are blanked out first (every other byte, and so every line and column,
//! stays where it was), then the text is read by serde_json into a tree that keeps each
//! object's keys in order, repeats included. A broken file is refused in one line naming
//! its line and column.

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// A JSON value whose objects keep their keys in the order written, repeats included.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    /// The first value of `key` in an object.
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn as_object(&self) -> Option<&[(String, Json)]> {
        match self {
            Json::Object(entries) => Some(entries),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Json::Number(n) => n.as_i64(),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[Json]> {
        match self {
            Json::Array(items) => Some(items),
            _ => None,
        }
    }
}

impl fmt::Display for Json {
    /// Compact JSON, for messages.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Json::Null => f.write_str("null"),
            Json::Bool(b) => write!(f, "{b}"),
            Json::Number(n) => write!(f, "{n}"),
            Json::String(s) => write!(f, "{}", serde_json::Value::String(s.clone())),
            Json::Array(items) => {
                f.write_str("[")?;
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{v}")?;
                }
                f.write_str("]")
            }
            Json::Object(entries) => {
                f.write_str("{")?;
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{}: {v}", serde_json::Value::String(k.clone()))?;
                }
                f.write_str("}")
            }
        }
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }
    fn visit_none<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Json, E> {
        Ok(Json::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Json, E> {
        Ok(Json::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Json, E> {
        Ok(Json::Number(v.into()))
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Json, E> {
        serde_json::Number::from_f64(v)
            .map(Json::Number)
            .ok_or_else(|| E::custom("a number that is not finite"))
    }
    fn visit_str<E>(self, v: &str) -> Result<Json, E> {
        Ok(Json::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Json, E> {
        Ok(Json::String(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(v) = seq.next_element()? {
            items.push(v);
        }
        Ok(Json::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        // serde_json hands every key over as written, repeats included, in order.
        let mut entries = Vec::new();
        while let Some((k, v)) = map.next_entry::<String, Json>()? {
            entries.push((k, v));
        }
        Ok(Json::Object(entries))
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Json, D::Error> {
        d.deserialize_any(JsonVisitor)
    }
}

/// The text with its comments (`/* … */`, `// …`) and trailing commas (a comma whose next
/// token closes an object or array) replaced by spaces; newlines and everything else,
/// strings included, are kept byte for byte, so a position in the result is the same line
/// and column in the text as written. A text without comments and trailing commas comes
/// back unchanged.
pub fn blank_comments_and_trailing_commas(text: &str) -> String {
    let mut out = text.as_bytes().to_vec();
    let b = text.as_bytes();
    let mut i = 0;
    let mut in_string = false;
    // The last comma seen outside strings, until the next token shows whether it trails.
    let mut pending_comma: Option<usize> = None;
    while i < b.len() {
        let c = b[i];
        if in_string {
            match c {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        match c {
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = text[i + 2..].find("*/").map_or(b.len(), |e| i + 2 + e + 2);
                blank(&mut out, i, end);
                i = end;
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = text[i..].find('\n').map_or(b.len(), |e| i + e);
                blank(&mut out, i, end);
                i = end;
                continue;
            }
            b' ' | b'\t' | b'\r' | b'\n' => {}
            b'}' | b']' => {
                if let Some(p) = pending_comma.take() {
                    out[p] = b' ';
                }
            }
            b',' => pending_comma = Some(i),
            b'"' => {
                pending_comma = None;
                in_string = true;
            }
            _ => pending_comma = None,
        }
        i += 1;
    }
    // Only whole comments (from an ASCII opener to an ASCII closer or the end) were
    // blanked, so the bytes are still UTF-8.
    String::from_utf8(out).expect("blanking whole comments keeps UTF-8")
}

/// Spaces over `out[from..to]`, keeping its newlines.
fn blank(out: &mut [u8], from: usize, to: usize) {
    for byte in &mut out[from..to] {
        if *byte != b'\n' {
            *byte = b' ';
        }
    }
}

/// Reads rt-app JSON as rt-app does. The error is one line: `line L, column C: what`.
pub fn parse(text: &str) -> Result<Json, String> {
    let blanked = blank_comments_and_trailing_commas(text);
    serde_json::from_str::<Json>(&blanked).map_err(|e| {
        let full = e.to_string();
        let what = full
            .rsplit_once(" at line ")
            .map_or(full.as_str(), |(what, _)| what);
        let hint = if what.starts_with("expected `:`") {
            " (every key needs a value: \"key\": value)"
        } else if what.starts_with("expected `,`") {
            " (a comma is missing between two entries)"
        } else {
            ""
        };
        format!("line {}, column {}: {what}{hint}", e.line(), e.column())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn comments_and_trailing_commas_are_blanked_in_place() {
        let text = "{ /* a\n b */ \"a\": [1, 2, ], // c, }\n \"s\": \"/* not, ]\",\n}";
        let blanked = blank_comments_and_trailing_commas(text);
        assert_eq!(blanked.len(), text.len());
        assert_eq!(blanked.matches('\n').count(), text.matches('\n').count());
        assert!(blanked.contains("\"/* not, ]\""), "{blanked}");
        let v = parse(text).unwrap();
        assert_eq!(v.get("a").unwrap().as_array().unwrap().len(), 2);
        assert_eq!(v.get("s").unwrap().as_str(), Some("/* not, ]"));
    }

    #[test]
    fn a_file_opening_with_a_comment_is_still_rt_app_json() {
        use super::super::spec::looks_like_json;
        assert!(looks_like_json("/* my set */\n// more\n{ \"tasks\": {} }"));
        assert!(looks_like_json("  {"));
        assert!(!looks_like_json("[[task]]\nname = \"{x\"\n"));
        assert!(!looks_like_json("# {\n[[task]]"));
    }

    #[test]
    fn repeated_keys_are_kept_in_order() {
        let v = parse(r#"{ "run": 1, "sleep": 2, "run": 3 }"#).unwrap();
        let keys: Vec<(&str, i64)> = v
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_i64().unwrap()))
            .collect();
        assert_eq!(keys, [("run", 1), ("sleep", 2), ("run", 3)]);
    }

    #[test]
    fn a_broken_file_names_its_line_and_column() {
        // A key without a value (rt-app's own video-short.json has one).
        let e = parse("{\n  \"tasks\": {\n    \"suspend\",\n    \"run\": 1\n  }\n}").unwrap_err();
        assert!(e.starts_with("line 3, column 14: expected `:`"), "{e}");
        assert!(!e.contains('\n'));
        // A missing comma.
        let e = parse("{\n \"a\": 1\n \"b\": 2\n}").unwrap_err();
        assert!(
            e.starts_with("line 3, column 2: expected `,` or `}`"),
            "{e}"
        );
        assert!(e.contains("a comma is missing"), "{e}");
    }

    fn any_json() -> impl Strategy<Value = serde_json::Value> {
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::Bool),
            any::<i64>().prop_map(|n| serde_json::Value::Number(n.into())),
            // Strings full of what the pass looks for.
            "[a-z/*,\\]}\"\\\\ \n]{0,12}".prop_map(serde_json::Value::String),
        ];
        leaf.prop_recursive(4, 40, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(serde_json::Value::Array),
                prop::collection::vec(("[a-z/*,]{1,6}", inner), 0..5)
                    .prop_map(|kv| serde_json::Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn a_file_without_comments_or_trailing_commas_is_never_changed(v in any_json()) {
            for text in [v.to_string(), serde_json::to_string_pretty(&v).unwrap()] {
                prop_assert_eq!(blank_comments_and_trailing_commas(&text), text);
            }
        }

        #[test]
        fn any_text_is_read_or_refused_in_one_line_never_a_panic(text in "[ -~\n\t]{0,200}") {
            let blanked = blank_comments_and_trailing_commas(&text);
            prop_assert_eq!(blanked.len(), text.len());
            prop_assert_eq!(blanked.matches('\n').count(), text.matches('\n').count());
            if let Err(e) = parse(&text) {
                prop_assert!(e.starts_with("line ") && !e.contains('\n'), "{}", e);
            }
        }

        #[test]
        fn comments_and_trailing_commas_read_as_the_plain_file(v in any_json()) {
            let pretty = serde_json::to_string_pretty(&v).unwrap();
            // A comment at the end of every line, and a comma after every last entry.
            let mut decorated = String::new();
            let lines: Vec<&str> = pretty.lines().collect();
            for (k, line) in lines.iter().enumerate() {
                decorated.push_str(line);
                let next = lines.get(k + 1).map(|l| l.trim_start());
                if next.is_some_and(|n| n.starts_with('}') || n.starts_with(']'))
                    && !line.ends_with('{')
                    && !line.ends_with('[')
                {
                    decorated.push(',');
                }
                decorated.push_str(" // a, \"note\" }\n/* and */\n");
            }
            prop_assert_eq!(parse(&decorated).unwrap(), parse(&pretty).unwrap());
        }
    }
}
