//! `rtgauge tune`: one row per tune — its machine, its verdict line, the file of its trials
//! document and the document whole — listed by `history` after the runs.

use crate::{Store, StoreError};
use rtgauge_result::tune::{TuneDocument, Verdict};
use rusqlite::params;

/// One stored tune as `history` lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredTune {
    pub id: i64,
    pub started_unix_ns: u64,
    pub host: String,
    pub kernel_release: String,
    /// The loop tuned (`a 1ms loop on CPU 1 under load cpu`).
    pub the_loop: String,
    /// Settings tried, and how many of them were better.
    pub tried: u64,
    pub better: u64,
    /// The verdict line tune printed first.
    pub verdict: String,
    /// The trials document written (`--output`), or empty.
    pub file: String,
}

impl Store {
    /// Keeps a tune; returns its ID (tunes are numbered apart from runs).
    pub fn insert_tune(&mut self, doc: &TuneDocument, file: &str) -> Result<i64, StoreError> {
        let document = serde_json::to_string(doc).map_err(|e| StoreError::Write {
            path: self.path.clone(),
            detail: e.to_string(),
        })?;
        let classify = Store::classify_for(&self.path);
        // IMMEDIATE: the write lock before the next ID is read, as for runs.
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(&classify)?;
        let id: i64 = tx
            .query_row("SELECT COALESCE(MAX(id), 0) + 1 FROM tunes", [], |r| {
                r.get(0)
            })
            .map_err(&classify)?;
        let better = doc
            .trials
            .iter()
            .filter(|t| t.verdict() == Some(Verdict::Better))
            .count();
        tx.execute(
            "INSERT INTO tunes (id, started_unix_ns, finished_unix_ns, stored_unix_ns, host, \
             kernel_release, the_loop, tried, better, verdict, file, document) VALUES (?1, ?2, \
             ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            params![
                id,
                doc.started_unix_ns as i64,
                doc.finished_unix_ns as i64,
                crate::now_unix_ns() as i64,
                doc.host,
                doc.kernel_release,
                doc.the_loop,
                doc.trials.len() as i64,
                better as i64,
                doc.verdict,
                file,
                document
            ],
        )
        .map_err(&classify)?;
        tx.commit().map_err(&classify)?;
        Ok(id)
    }

    /// The stored tunes (of `host`, or of every host), newest first, at most `limit`.
    pub fn tunes(
        &self,
        host: Option<&str>,
        limit: Option<usize>,
    ) -> Result<Vec<StoredTune>, StoreError> {
        let mut sql = String::from(
            "SELECT id, started_unix_ns, host, kernel_release, the_loop, tried, better, verdict, \
             file FROM tunes WHERE (?1 IS NULL OR host = ?1) \
             ORDER BY started_unix_ns DESC, id DESC",
        );
        if let Some(n) = limit {
            sql.push_str(&format!(" LIMIT {n}"));
        }
        self.rows(&sql, params![host], |r| {
            Ok(StoredTune {
                id: r.get(0)?,
                started_unix_ns: r.get::<_, i64>(1)? as u64,
                host: r.get(2)?,
                kernel_release: r.get(3)?,
                the_loop: r.get(4)?,
                tried: r.get::<_, i64>(5)? as u64,
                better: r.get::<_, i64>(6)? as u64,
                verdict: r.get(7)?,
                file: r.get(8)?,
            })
        })
    }

    /// The trials document of a stored tune.
    pub fn tune_document(&self, id: i64) -> Result<Option<TuneDocument>, StoreError> {
        let text = self.rows(
            "SELECT document FROM tunes WHERE id = ?1",
            params![id],
            |r| r.get::<_, String>(0),
        )?;
        let Some(text) = text.into_iter().next() else {
            return Ok(None);
        };
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| StoreError::Corrupt {
                path: self.path.clone(),
                detail: format!("tune {id}: {e}"),
            })?;
        rtgauge_result::tune::parse_tune_value(value)
            .map(Some)
            .map_err(|e| StoreError::Corrupt {
                path: self.path.clone(),
                detail: e
                    .at(std::path::Path::new(&format!("the document of tune {id}")))
                    .to_string(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(host: &str, started: u64, verdict: &str) -> TuneDocument {
        let mut value: serde_json::Value = serde_json::from_str(include_str!(
            "../../rtgauge-report/tests/fixtures/trials.json"
        ))
        .unwrap();
        value["host"] = host.into();
        value["started_unix_ns"] = started.into();
        value["verdict"] = verdict.into();
        rtgauge_result::tune::parse_tune_value(value).unwrap()
    }

    #[test]
    fn tunes_are_kept_one_row_each_and_listed_newest_first() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.sqlite");
        let mut store = Store::open(&path).unwrap();
        let first = doc("bench", 1_000, "first");
        assert_eq!(store.insert_tune(&first, "/tmp/a-trials.json").unwrap(), 1);
        assert_eq!(
            store
                .insert_tune(&doc("other", 2_000, "second"), "")
                .unwrap(),
            2
        );
        drop(store);
        let store = Store::open_existing(&path).unwrap();
        let all = store.tunes(None, None).unwrap();
        assert_eq!(
            all.iter().map(|t| t.verdict.as_str()).collect::<Vec<_>>(),
            ["second", "first"]
        );
        assert_eq!((all[1].tried, all[1].better), (4, 2));
        assert_eq!(all[1].file, "/tmp/a-trials.json");
        assert_eq!(store.tunes(Some("bench"), None).unwrap().len(), 1);
        assert_eq!(store.tunes(None, Some(1)).unwrap()[0].id, 2);
        assert_eq!(store.tune_document(1).unwrap(), Some(first));
        assert_eq!(store.tune_document(9).unwrap(), None);
        // Tunes are not runs: the run listing stays empty.
        assert!(store.list(&crate::Filter::default()).unwrap().is_empty());
    }
}
