//! `EnrollmentService.Watch`: the account's journey entries in one stable order, as a bounded
//! stream.
//!
//! The order is the database's ([`crate::store::watch`]): a key per entry, read only once no
//! writer can add one before it, the same for every replica. A reader task pages through the log after the
//! cursor and hands entries to a channel of [`WATCH_BUFFER`] entries; when the consumer is
//! slower than the log, `send` waits and the reader stops reading (back-pressure), so memory
//! per Watch stays bounded whatever the backlog. At the end of the log it looks again every
//! [`WATCH_POLL`].

use super::Entry;
use crate::auth::{Principal, Scope};
use crate::code::Code;
use crate::engine::{JourneyKind, ShownZone};
use crate::quote::quote;
use crate::runtime::Core;
use crate::service::fields::{self, Limit};
use crate::service::{ServiceError, Violation, Violations};
use crate::store;
use crate::store::watch::WatchKey;
use base64::Engine;
use std::time::Duration;
use tokio::sync::mpsc;

/// Entries a Watch holds for a slow consumer before its reader pauses.
pub const WATCH_BUFFER: usize = 64;
/// How often a Watch at the end of the log looks for new entries.
pub const WATCH_POLL: Duration = Duration::from_millis(200);
/// Log entries read per query.
const PAGE: i64 = 200;

/// What to watch.
#[derive(Debug, Clone, Default)]
pub struct WatchFilter {
    /// The flow's id or name; empty: all.
    pub flow_id: String,
    /// The contact's id; empty: all.
    pub contact_id: String,
    /// Journey kinds; empty: all.
    pub kinds: Vec<String>,
    /// After the entry that carried it; empty: from the start.
    pub cursor: String,
}

/// One watched entry.
#[derive(Debug, Clone, PartialEq)]
pub struct WatchItem {
    /// Where a Watch resumes after this entry.
    pub cursor: String,
    pub enrollment_id: String,
    pub flow_id: String,
    pub flow_version: i32,
    pub contact_id: String,
    pub entry: Entry,
}

/// The cursor of the entry at `key` in `account`'s log: opaque to callers, and naming its
/// account so that a cursor of another account is refused rather than read as a key here.
pub fn cursor(account: &str, key: &WatchKey) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!(
        "w2:{}:{}:{}:{account}",
        key.xid, key.seq, key.enrollment_id
    ))
}

/// What a cursor names: a key, or (handed out before keys) a position.
enum Resume {
    Key(WatchKey),
    Position(i64),
}

fn parse_cursor(account: &str, text: &str) -> Result<Resume, ServiceError> {
    if text.is_empty() {
        return Ok(Resume::Key(WatchKey::start()));
    }
    let bad = |why: &str| bad_cursor(text, why);
    let decoded = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(text)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .ok_or_else(|| bad("is not a Watch cursor"))?;
    let (owner, resume) = if let Some(rest) = decoded.strip_prefix("w2:") {
        let mut parts = rest.splitn(4, ':');
        let (Some(xid), Some(seq), Some(enrollment_id), Some(owner)) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(bad("is not a Watch cursor"));
        };
        let key = WatchKey {
            xid: xid.parse().map_err(|_| bad("is not a Watch cursor"))?,
            seq: seq
                .parse()
                .ok()
                .filter(|s| *s >= 0)
                .ok_or_else(|| bad("is not a Watch cursor"))?,
            enrollment_id: enrollment_id.to_string(),
        };
        (owner, Resume::Key(key))
    } else {
        // A cursor of the releases that numbered entries: `w1:{account}:{position}`.
        let (owner, pos) = decoded
            .strip_prefix("w1:")
            .and_then(|rest| rest.rsplit_once(':'))
            .ok_or_else(|| bad("is not a Watch cursor"))?;
        let pos: i64 = pos
            .parse()
            .ok()
            .filter(|p| *p >= 0)
            .ok_or_else(|| bad("is not a Watch cursor"))?;
        (owner, Resume::Position(pos))
    };
    if owner != account {
        return Err(bad("belongs to another account"));
    }
    Ok(resume)
}

fn bad_cursor(text: &str, why: &str) -> ServiceError {
    ServiceError::Invalid(vec![Violation::new(
        "cursor",
        Code::BadSchema,
        format!(
            "{} {why}; pass the `cursor` of an entry this account's Watch returned, or none to start from the beginning",
            quote(text)
        ),
    )])
}

/// The key a cursor resumes after: a position is looked up as the entry it named.
async fn resume_key(
    core: &Core,
    account: &str,
    text: &str,
    resume: Resume,
) -> Result<WatchKey, ServiceError> {
    match resume {
        Resume::Key(key) => Ok(key),
        Resume::Position(0) => Ok(WatchKey::start()),
        Resume::Position(pos) => store::watch::key_at_position(&core.db, account, pos)
            .await?
            .ok_or_else(|| bad_cursor(text, "names no entry of this account's journey")),
    }
}

/// Starts a Watch; entries (or the error that ended it) arrive on the returned channel, which
/// ends the Watch when dropped.
pub async fn watch(
    core: &Core,
    who: &Principal,
    filter: WatchFilter,
) -> Result<mpsc::Receiver<Result<WatchItem, ServiceError>>, ServiceError> {
    if let Scope::Enrollment(own) = &who.scope {
        return Err(ServiceError::Forbidden(format!(
            "this token is scoped to enrollment `{own}`; Watch reads the whole account, so it needs a full-account token"
        )));
    }
    let mut problems = Violations::default();
    problems.check(fields::check_text("flow_id", &filter.flow_id, Limit::Name));
    problems.check(fields::check_text(
        "contact_id",
        &filter.contact_id,
        Limit::Id,
    ));
    problems.check(fields::check_text(
        "cursor",
        &filter.cursor,
        Limit::PageToken,
    ));
    let mut kinds = Vec::new();
    for (i, k) in filter.kinds.iter().enumerate() {
        match JourneyKind::parse(k) {
            Some(kind) => kinds.push(kind.as_str()),
            None => problems.push(Violation::new(
                format!("kinds[{i}]"),
                Code::BadSchema,
                format!(
                    "{} is not a journey kind; use one of {}",
                    quote(k),
                    JourneyKind::ALL.map(JourneyKind::as_str).join(", ")
                ),
            )),
        }
    }
    problems.finish()?;
    let account = who.account_id.clone();
    let resume = parse_cursor(&account, &filter.cursor)?;
    let mut after = resume_key(core, &account, &filter.cursor, resume).await?;
    let flow_id = if filter.flow_id.is_empty() {
        None
    } else {
        Some(
            match store::flows::get(&core.db, &account, &filter.flow_id, 0).await? {
                Some(f) => f.flow.id,
                None => filter.flow_id.clone(),
            },
        )
    };
    let contact_id = Some(filter.contact_id).filter(|c| !c.is_empty());
    let (tx, rx) = mpsc::channel(WATCH_BUFFER);
    let db = core.db.clone();
    tokio::spawn(async move {
        let mut zone: Option<(store::watch::RowZones, ShownZone)> = None;
        loop {
            let page = match store::watch::page(
                &db,
                &account,
                &after,
                flow_id.as_deref(),
                contact_id.as_deref(),
                PAGE,
            )
            .await
            {
                Ok(page) => page,
                Err(e) => {
                    let _ = tx.send(Err(e.into())).await;
                    return;
                }
            };
            let full = page.len() as i64 == PAGE;
            for row in page {
                after = row.key;
                if !kinds.is_empty() && !kinds.contains(&row.kind.as_str()) {
                    continue;
                }
                // Consecutive entries are mostly one enrollment's: its zone is found once.
                if zone.as_ref().is_none_or(|(of, _)| *of != row.zones) {
                    let z = &row.zones;
                    let shown = ShownZone::of(
                        z.contact_tz.as_deref(),
                        z.contact_phone.as_deref(),
                        z.sender_tz.as_deref(),
                    );
                    zone = Some((row.zones.clone(), shown));
                }
                let shown = zone
                    .as_ref()
                    .map_or(ShownZone::of(None, None, None), |z| z.1);
                let item = Entry::read(
                    &after.enrollment_id,
                    after.seq,
                    row.at,
                    row.kind,
                    &row.detail,
                    &shown,
                )
                .map_err(ServiceError::from)
                .map(|entry| WatchItem {
                    cursor: cursor(&account, &after),
                    enrollment_id: after.enrollment_id.clone(),
                    flow_id: row.flow_id,
                    flow_version: row.flow_version,
                    contact_id: row.contact_id,
                    entry,
                });
                // Waits while the consumer is behind: the back-pressure.
                if tx.send(item).await.is_err() {
                    return;
                }
            }
            if !full {
                tokio::select! {
                    () = tokio::time::sleep(WATCH_POLL) => {}
                    () = tx.closed() => return,
                }
            }
        }
    });
    Ok(rx)
}
