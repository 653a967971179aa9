//! The journey as stored: one row per step, holding the entries that step wrote (docs/service.md, "Delivery"; docs/operations.md).
//!
//! A planner step writes about five entries (the wait closed, the email's run opened, its
//! dispatch, its run closed, the next wait opened). Stored one per row, with a Watch log row
//! each, they were most of a step's rows, index entries and WAL. A [`JourneyStep`] row now
//! holds them together: `entries` is a JSON array of `[kind, detail]` pairs in order, and
//! entry `i` (from 0) has seq `seq + i`. Readers get one [`JourneyRow`] per entry, exactly as
//! before ([`StoredStep::expand`]); the view `journey` shows the same to SQL.
//!
//! Each row also carries `xid`, its place in Watch's order: see [`super::watch`] for how it is
//! chosen and why no writer waits for another to get it.
//!
//! On PostgreSQL a new enrollment's first step (seq 1) is kept on its `enrollment_keys` row
//! instead (`first_xid`, `first_n`, `first_at`, `first_entries`; migration
//! `first_journey_step`), and every reader takes it from there too, with
//! [`first_step_columns!`].

pub mod detail;

/// The columns of a `journey_steps` row (`enrollment_id, seq, n, at, xid, entries`), read from
/// the keys row `k` that holds an enrollment's first step, for a query to take beside
/// `journey_steps` (`UNION ALL`). A literal, so `concat!` and `format!` take it.
macro_rules! first_step_columns {
    () => {
        "k.id AS enrollment_id, CAST(1 AS BIGINT) AS seq, k.first_n AS n, \
         k.first_at AS at, k.first_xid AS xid, k.first_entries AS entries"
    };
}
pub(crate) use first_step_columns;

use super::schema::journey_steps;
use super::{Conn, StoreError, Tx};
use crate::engine::{Effect, JourneyKind};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use serde_json::value::RawValue;

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

/// Room for a planner step's entries (about five: a wait closed, an email's run opened, its
/// dispatch and closing, the next wait opened, some 700 bytes), so pushing them does not grow
/// the text. Under 1,009 bytes: glibc serves that from its small bins, where a larger request
/// first consolidates every small chunk freed since the last (a few hundred instructions a
/// step).
const STEP_TEXT: usize = 1000;

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
        self.open_entry(kind);
        self.entries.push_str(detail);
        self.entries.push_str("]]");
    }

    /// Appends the entry an engine effect makes: its kind, and its JSON ([`detail::detail`]:
    /// the text a `Value` of it prints, keys sorted, as entries were always written). Every
    /// writer of the journey encodes entries here.
    pub fn push_effect(&mut self, effect: &Effect) {
        self.push_effects(std::slice::from_ref(effect));
    }

    /// [`JourneyStep::push_effect`] for each of `effects`, in order (their instants, mostly
    /// the same one, spelled once).
    pub fn push_effects(&mut self, effects: &[Effect]) {
        self.push_effects_with(effects, &mut detail::Instants::default());
    }

    /// [`JourneyStep::push_effects`] with the instants spelled so far in this batch (a planner
    /// batch's steps share their `now`).
    pub fn push_effects_with(&mut self, effects: &[Effect], instants: &mut detail::Instants) {
        for effect in effects {
            self.open_entry(JourneyKind::of(effect).as_str());
            detail::push_detail(&mut self.entries, effect, instants);
            self.entries.push_str("]]");
        }
    }

    /// Opens entry `n`: the closing `]` taken off, then `,["kind",` (see [`JourneyStep::push`]).
    fn open_entry(&mut self, kind: &str) {
        debug_assert!(kind.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'));
        self.entries.pop(); // the closing `]`, put back by the caller
        if self.n > 0 {
            self.entries.push(',');
        }
        self.entries.push_str("[\"");
        self.entries.push_str(kind);
        self.entries.push_str("\",");
        self.n += 1;
    }

    /// The JSON array to store.
    pub fn encoded(&self) -> &str {
        &self.entries
    }
}

/// A stored row, read back.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, QueryableByName)]
#[diesel(table_name = journey_steps)]
pub struct StoredStep {
    pub enrollment_id: String,
    pub seq: i64,
    pub n: i64,
    pub at: i64,
    /// Watch's key for the row's entries (see [`super::watch`]).
    pub xid: i64,
    pub entries: String,
}

impl StoredStep {
    /// The step's entries, in order.
    pub fn expand(&self) -> Result<Vec<JourneyRow>, StoreError> {
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
        Ok(entries
            .into_iter()
            .enumerate()
            .map(|(i, (kind, detail))| JourneyRow {
                enrollment_id: self.enrollment_id.clone(),
                seq: self.seq + i as i64,
                at: self.at,
                kind,
                detail: detail.get().to_string(),
            })
            .collect())
    }
}

impl Tx {
    /// Stores `steps` with their Watch key ([`super::watch`]). The planner's and the signal
    /// group's writes do the same inside their pipelined batch (PostgreSQL) or
    /// [`super::sqlite_batch::write`]; this is for the writers of a single entry, such as a
    /// dispatch's ack. The enrollments must be locked (or new) in this transaction.
    pub async fn insert_journey(&mut self, steps: &[JourneyStep]) -> Result<(), StoreError> {
        if steps.is_empty() {
            return Ok(());
        }
        match &mut self.conn {
            Conn::Postgres(c) => {
                // The previous keys are looked up: this writer passes no enrollment rows.
                super::pg_batch::journey_statement(steps, &vec![None; steps.len()])
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
            xid: 11,
            entries: step.encoded().to_string(),
        };
        let rows = stored.expand().unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[0].seq, rows[0].kind.as_str()), (4, "run_closed"));
        assert_eq!(rows[0].detail, r#"{"step":"w1","branch":"then"}"#);
        assert_eq!((rows[1].seq, rows[1].kind.as_str()), (5, "dispatch"));
        // The very text written, not a re-serialisation (which would write 1.5).
        assert_eq!(rows[1].detail, r#"{"to":"é \"q\"","n":1.50}"#);
    }

    #[test]
    fn a_count_that_disagrees_with_the_entries_is_corrupt() {
        let stored = StoredStep {
            enrollment_id: "en_1".into(),
            seq: 1,
            n: 2,
            at: 0,
            xid: 2,
            entries: r#"[["enrolled",{}]]"#.into(),
        };
        assert!(matches!(stored.expand(), Err(StoreError::Corrupt(_))));
    }
}
