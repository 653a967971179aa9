//! The journey as stored: one row per step, holding the entries that step wrote (SPEC §6, §12).
//!
//! A planner step writes about five entries (the wait closed, the email's run opened, its
//! dispatch, its run closed, the next wait opened). Stored one per row, with a Watch log row
//! each, they were most of a step's rows, index entries and WAL (issue 18). A
//! [`JourneyStep`] row now holds them together: `entries` is a JSON array of `[kind, detail]`
//! pairs in order, entry `i` (from 0) has seq `seq + i`, and `last_pos` is the Watch position
//! of the last one (the first is `last_pos - n + 1`). Readers get one [`JourneyRow`] per
//! entry, exactly as before ([`StoredStep::expand`]); the view `journey` shows the same to SQL.
//!
//! Positions are handed out as the last statement of the writing transaction
//! ([`Tx::insert_journey`], or the same statement at the end of
//! [`pg_batch::write_with`](super::pg_batch::write_with)): see [`super::watch`] for why that
//! gives one commit order for every replica.

pub mod detail;

use super::schema::journey_steps;
use super::{Conn, StoreError, Tx};
use crate::engine::{Effect, JourneyKind};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use serde_json::value::RawValue;
use std::collections::BTreeMap;

/// One journey entry, as readers get it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JourneyRow {
    pub enrollment_id: String,
    pub seq: i64,
    pub at: i64,
    pub kind: String,
    /// The engine's effect or journey entry as JSON.
    pub detail: String,
}

/// The entries one step wrote to one enrollment, to be stored as one row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JourneyStep {
    pub enrollment_id: String,
    /// Whose Watch order the entries join.
    pub account_id: String,
    /// The seq of the first entry.
    pub seq: i64,
    pub at: i64,
    /// How many entries `entries` holds.
    pub n: i64,
    /// The entries as the JSON array to store ([`JourneyStep::push`] keeps it closed, so it is
    /// stored as it is, not copied to close it).
    pub entries: String,
}

/// Room for a planner step's entries (about five, 450 bytes), so pushing them does not grow the
/// text again and again.
const STEP_TEXT: usize = 640;

impl JourneyStep {
    /// An empty step of `enrollment_id` whose first entry will have seq `seq`.
    pub fn new(enrollment_id: &str, account_id: &str, seq: i64, at: i64) -> JourneyStep {
        JourneyStep {
            enrollment_id: enrollment_id.to_string(),
            account_id: account_id.to_string(),
            seq,
            at,
            n: 0,
            entries: {
                let mut text = String::with_capacity(STEP_TEXT);
                text.push_str("[]");
                text
            },
        }
    }

    /// Appends an entry: `kind` is a journey kind's name (`[a-z_]`), `detail` a JSON object's
    /// text, stored as it is (so a reader gets back the very text the engine wrote).
    pub fn push(&mut self, kind: &str, detail: &str) {
        debug_assert!(kind.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'));
        self.entries.pop(); // the closing `]`, put back below
        if self.n > 0 {
            self.entries.push(',');
        }
        self.entries.push_str("[\"");
        self.entries.push_str(kind);
        self.entries.push_str("\",");
        self.entries.push_str(detail);
        self.entries.push_str("]]");
        self.n += 1;
    }

    /// Appends the entry an engine effect makes: its kind, and its JSON ([`detail::detail`]:
    /// the text a `Value` of it prints, keys sorted, as entries were always written). Every
    /// writer of the journey encodes entries here.
    pub fn push_effect(&mut self, effect: &Effect) {
        self.push(JourneyKind::of(effect).as_str(), &detail::detail(effect));
    }

    /// The JSON array to store.
    pub fn encoded(&self) -> &str {
        &self.entries
    }
}

/// Each account of `steps` (sorted: the order their Watch heads are locked in) with how many
/// entries it gets, and for each step the count of its account's entries up to and including
/// it: the step's last position is the account's new head minus its total plus that count.
pub fn positions(steps: &[JourneyStep]) -> (Vec<(&str, i64)>, Vec<i64>) {
    let mut totals: BTreeMap<&str, i64> = BTreeMap::new();
    let cumulative = steps
        .iter()
        .map(|s| {
            let total = totals.entry(s.account_id.as_str()).or_insert(0);
            *total += s.n;
            *total
        })
        .collect();
    (totals.into_iter().collect(), cumulative)
}

/// A stored row, read back.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, QueryableByName)]
#[diesel(table_name = journey_steps)]
pub struct StoredStep {
    pub enrollment_id: String,
    pub seq: i64,
    pub n: i64,
    pub at: i64,
    pub last_pos: i64,
    pub entries: String,
}

impl StoredStep {
    /// The step's entries, each with its Watch position.
    pub fn expand(&self) -> Result<Vec<(i64, JourneyRow)>, StoreError> {
        let corrupt = |why: String| {
            StoreError::Corrupt(format!(
                "journey of enrollment {} at seq {}: {why}",
                self.enrollment_id, self.seq
            ))
        };
        let entries: Vec<(String, Box<RawValue>)> =
            serde_json::from_str(&self.entries).map_err(|e| corrupt(e.to_string()))?;
        if entries.len() != self.n as usize {
            return Err(corrupt(format!(
                "{} entries stored where n = {}",
                entries.len(),
                self.n
            )));
        }
        let first_pos = self.last_pos - self.n + 1;
        Ok(entries
            .into_iter()
            .enumerate()
            .map(|(i, (kind, detail))| {
                let i = i as i64;
                (
                    first_pos + i,
                    JourneyRow {
                        enrollment_id: self.enrollment_id.clone(),
                        seq: self.seq + i,
                        at: self.at,
                        kind,
                        detail: detail.get().to_string(),
                    },
                )
            })
            .collect())
    }
}

impl Tx {
    /// Stores `steps` and numbers their entries in their accounts' Watch order: call it as the
    /// transaction's last statement (the account's head stays locked until the commit). The
    /// planner's and the signal group's writes do the same inside their pipelined batch
    /// (PostgreSQL) or [`super::sqlite_batch::write`]; this is for the writers of a single
    /// entry, such as a dispatch's ack.
    pub async fn insert_journey(&mut self, steps: &[JourneyStep]) -> Result<(), StoreError> {
        if steps.is_empty() {
            return Ok(());
        }
        match &mut self.conn {
            Conn::Postgres(c) => {
                super::pg_batch::journey_statement(steps)
                    .execute(&mut **c)
                    .await?;
            }
            Conn::Sqlite(c) => {
                let owned = steps.to_vec();
                c.spawn_blocking(move |conn| super::sqlite_batch::insert_journey(conn, &owned))
                    .await?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_stores_its_entries_verbatim_and_reads_them_back_in_order() {
        let mut step = JourneyStep::new("en_1", "acc", 4, 1_000);
        step.push("run_closed", r#"{"step":"w1","branch":"then"}"#);
        step.push("dispatch", r#"{"to":"é \"q\"","n":1.50}"#);
        let stored = StoredStep {
            enrollment_id: step.enrollment_id.clone(),
            seq: step.seq,
            n: step.n,
            at: step.at,
            last_pos: 11,
            entries: step.encoded().to_string(),
        };
        let rows = stored.expand().unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(
            (rows[0].0, rows[0].1.seq, rows[0].1.kind.as_str()),
            (10, 4, "run_closed")
        );
        assert_eq!(rows[0].1.detail, r#"{"step":"w1","branch":"then"}"#);
        assert_eq!(
            (rows[1].0, rows[1].1.seq, rows[1].1.kind.as_str()),
            (11, 5, "dispatch")
        );
        // The very text written, not a re-serialisation (which would write 1.5).
        assert_eq!(rows[1].1.detail, r#"{"to":"é \"q\"","n":1.50}"#);
    }

    #[test]
    fn a_count_that_disagrees_with_the_entries_is_corrupt() {
        let stored = StoredStep {
            enrollment_id: "en_1".into(),
            seq: 1,
            n: 2,
            at: 0,
            last_pos: 2,
            entries: r#"[["enrolled",{}]]"#.into(),
        };
        assert!(matches!(stored.expand(), Err(StoreError::Corrupt(_))));
    }

    #[test]
    fn positions_count_each_accounts_entries_in_order() {
        let step = |account: &str, n: usize| {
            let mut s = JourneyStep::new("e", account, 1, 0);
            for _ in 0..n {
                s.push("enrolled", "{}");
            }
            s
        };
        let steps = [step("b", 2), step("a", 3), step("b", 1)];
        let (totals, cumulative) = positions(&steps);
        assert_eq!(totals, [("a", 3), ("b", 3)]);
        assert_eq!(cumulative, [2, 3, 3]);
    }
}
