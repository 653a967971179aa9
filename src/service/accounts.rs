//! The account's settings (docs/service.md `AccountService`): `max_wait`, the fetch allow list, the
//! quiet-hours policy and the default sender. Every field is checked before anything is stored,
//! and every problem is answered as a field violation.
//!
//! A change applies to transitions made after it: a wait or timeout already fixed on a run keeps
//! its time (docs/timing.md, "Fixed once"), because the engine reads the settings only when it enters a step.

use super::fields;
use super::{ServiceError, Violation, Violations};
use crate::code::Code;
use crate::flow::allow::{self, AllowEntry, AllowList};
use crate::inbound::providers::Provider;
use crate::runtime::Core;
use crate::store::{self, accounts::SettingsChange};
use crate::timing::Duration;
use chrono::{DateTime, Utc};

/// An account's settings as the API shows them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Account {
    pub id: String,
    pub name: String,
    /// As written (`7d`); `None`: no limit.
    pub max_wait: Option<String>,
    pub fetch_allow: AllowList,
    /// `{"policy": …, "overrides": […]}`; `None`: the federal policy.
    pub quiet_hours: Option<serde_json::Value>,
    pub default_sender_id: Option<String>,
    /// As written (`45s`); `None`: [`DEFAULT_CALL_CONNECTED_THRESHOLD_SECS`].
    pub call_connected_threshold: Option<String>,
    /// What a reply asking in words to stop does; unset reads as the default, `opt_out`.
    pub reply_unsubscribe: ReplyUnsubscribe,
    /// The providers whose webhook secret is set, and when (never the secrets).
    pub provider_secrets: Vec<(Provider, DateTime<Utc>)>,
}

/// A completed call at least this long is connected when the account sets no threshold.
pub const DEFAULT_CALL_CONNECTED_THRESHOLD_SECS: u64 = 30;

/// The shortest connected call of a stored `call_connected_threshold`, in seconds.
fn call_connected_secs(threshold: Option<&str>) -> u64 {
    threshold
        .and_then(|t| Duration::parse(t).ok())
        .filter(Duration::is_fixed)
        .map(|d| d.fixed_ms / 1000)
        .unwrap_or(DEFAULT_CALL_CONNECTED_THRESHOLD_SECS)
}

/// The account's stored row, or `NotFound`.
async fn account_row(
    core: &Core,
    account_id: &str,
) -> Result<store::accounts::Account, ServiceError> {
    store::accounts::find(&core.db, account_id)
        .await?
        .ok_or_else(|| ServiceError::NotFound {
            what: "account",
            id: account_id.to_string(),
        })
}

/// The account's shortest connected call, in seconds: what a call status is judged by, read
/// alone (not the whole account, whose provider secrets a call status has no use for).
pub async fn call_connected_threshold(core: &Core, account_id: &str) -> Result<u64, ServiceError> {
    let row = account_row(core, account_id).await?;
    Ok(call_connected_secs(row.call_connected_threshold.as_deref()))
}

pub use crate::inbound::intent::ReplyUnsubscribe;

/// A stored `reply_unsubscribe`: NULL is the default; a value that does not parse is a corrupt
/// account, never read as the default (that could opt out someone the account chose not to).
fn stored_reply_unsubscribe(
    account_id: &str,
    stored: Option<&str>,
) -> Result<ReplyUnsubscribe, ServiceError> {
    match stored {
        None => Ok(ReplyUnsubscribe::default()),
        Some(text) => ReplyUnsubscribe::parse(text).ok_or_else(|| {
            ServiceError::Internal(format!(
                "account {account_id}: stored reply_unsubscribe {} is neither `opt_out` nor \
                 `event`",
                crate::quote::quote(text)
            ))
        }),
    }
}

/// What a reply asking in words to stop does for the account, read alone (not the whole
/// account, whose provider secrets a reply has no use for).
pub async fn reply_unsubscribe(
    core: &Core,
    account_id: &str,
) -> Result<ReplyUnsubscribe, ServiceError> {
    let row = account_row(core, account_id).await?;
    stored_reply_unsubscribe(account_id, row.reply_unsubscribe.as_deref())
}

/// A field of [`Account`] an update may name (its `update_mask` path).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    MaxWait,
    FetchAllow,
    QuietHours,
    DefaultSenderId,
    CallConnectedThreshold,
    ReplyUnsubscribe,
}

impl Field {
    /// Every field, in the order an empty mask considers them.
    pub const ALL: [Field; 6] = [
        Field::MaxWait,
        Field::FetchAllow,
        Field::QuietHours,
        Field::DefaultSenderId,
        Field::CallConnectedThreshold,
        Field::ReplyUnsubscribe,
    ];

    /// The mask path (and the proto field name).
    pub fn as_str(self) -> &'static str {
        match self {
            Field::MaxWait => "max_wait",
            Field::FetchAllow => "fetch_allow",
            Field::QuietHours => "quiet_hours",
            Field::DefaultSenderId => "default_sender_id",
            Field::CallConnectedThreshold => "call_connected_threshold",
            Field::ReplyUnsubscribe => "reply_unsubscribe",
        }
    }

    pub fn parse(path: &str) -> Option<Field> {
        Field::ALL.into_iter().find(|f| f.as_str() == path)
    }
}

/// One allow-list entry as the API sends it in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowInput {
    pub host: String,
    /// 0: any port.
    pub port: u32,
    pub allow_private: bool,
}

/// What `UpdateAccount` sends in: the new values and the mask naming which to change.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UpdateInput {
    pub max_wait: String,
    pub fetch_allow: Vec<AllowInput>,
    pub quiet_hours: Option<serde_json::Value>,
    pub default_sender_id: String,
    pub call_connected_threshold: String,
    /// `opt_out` or `event`; empty: not set (with an empty mask), or back to the default
    /// `opt_out` (with a mask naming it).
    pub reply_unsubscribe: String,
    /// The `update_mask` paths; empty: every field set in the input (AIP-134).
    pub mask: Vec<String>,
}

/// The caller's account.
pub async fn get(core: &Core, account_id: &str) -> Result<Account, ServiceError> {
    shown(core, account_row(core, account_id).await?).await
}

/// A stored account as the API shows it (its provider secrets' dates read beside it).
async fn shown(core: &Core, row: store::accounts::Account) -> Result<Account, ServiceError> {
    let account_id = row.id.as_str();
    let fetch_allow = match &row.fetch_allow {
        Some(text) => serde_json::from_str(text).map_err(|e| {
            ServiceError::Internal(format!("account {account_id}: stored fetch_allow: {e}"))
        })?,
        None => Vec::new(),
    };
    let quiet_hours = match &row.quiet_hours {
        Some(text) => Some(serde_json::from_str(text).map_err(|e| {
            ServiceError::Internal(format!("account {account_id}: stored quiet_hours: {e}"))
        })?),
        None => None,
    };
    let reply_unsubscribe = stored_reply_unsubscribe(account_id, row.reply_unsubscribe.as_deref())?;
    let provider_secrets = store::provider_secrets::list(&core.db, account_id)
        .await?
        .into_iter()
        .map(|(p, at)| (p, crate::clock::from_millis(at)))
        .collect();
    Ok(Account {
        id: row.id,
        name: row.name,
        max_wait: row.max_wait,
        fetch_allow,
        quiet_hours,
        default_sender_id: row.default_sender_id,
        call_connected_threshold: row.call_connected_threshold,
        reply_unsubscribe,
        provider_secrets,
    })
}

/// The longest account id: it travels in webhook URLs (`?account=`) and metric labels.
pub const MAX_ACCOUNT_ID_CHARS: usize = 64;

/// Checks an account id: 1 to 64 of `a-z 0-9 - _`, starting with a letter or a digit (so it
/// reads the same in a URL, a metric label and a log line).
pub fn check_account_id(id: &str) -> Result<(), Violation> {
    let ok = !id.is_empty()
        && id.len() <= MAX_ACCOUNT_ID_CHARS
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
        && id.as_bytes()[0].is_ascii_alphanumeric();
    if ok {
        Ok(())
    } else {
        Err(Violation::new(
            "id",
            Code::BadSchema,
            format!(
                "{} is not an account id: use 1 to {MAX_ACCOUNT_ID_CHARS} of a-z, 0-9, `-` and `_`, \
                 starting with a letter or a digit (a CRM's workspace id, such as `acme-42`)",
                crate::quote::quote(id)
            ),
        ))
    }
}

/// Creates an account for a CRM's customer: its own webhook secret, a default sender in UTC.
/// `Conflict` (ALREADY_EXISTS) when the id is taken.
pub async fn create(
    core: &Core,
    id: &str,
    name: &str,
    now: DateTime<Utc>,
) -> Result<Account, ServiceError> {
    let mut problems = Violations::default();
    problems.check(check_account_id(id));
    let name = if name.trim().is_empty() {
        id
    } else {
        name.trim()
    };
    problems.check(fields::check_text("name", name, fields::Limit::Name));
    problems.finish()?;
    if !store::accounts::create_with_sender(&core.db, id, name, crate::clock::to_millis(now))
        .await?
    {
        return Err(ServiceError::Conflict(format!(
            "account `{id}` exists; choose another id, or make a token for it with `nudge token create --account {id}`"
        )));
    }
    get(core, id).await
}

/// A page of the installation's accounts by id, and the token of the next page.
pub async fn list(
    core: &Core,
    page_size: i32,
    page_token: &str,
) -> Result<(Vec<Account>, String), ServiceError> {
    let size = super::enrollments::page_size(page_size)?;
    fields::check_text("page.page_token", page_token, fields::Limit::PageToken)
        .map_err(|v| ServiceError::Invalid(vec![v]))?;
    let mut rows = store::accounts::list(&core.db, page_token, size + 1).await?;
    let next = super::next_page_token(&mut rows, size, |r| r.id.clone());
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        out.push(shown(core, row).await?);
    }
    Ok((out, next))
}

/// Sets (an empty `secret`: removes) the account's secret for `provider`, checked first; the
/// refusal never quotes the secret.
pub async fn set_provider_secret(
    core: &Core,
    account_id: &str,
    provider: &str,
    secret: &str,
) -> Result<Account, ServiceError> {
    let provider = Provider::parse(provider)
        .map_err(|m| ServiceError::Invalid(vec![Violation::new("provider", Code::BadSchema, m)]))?;
    let secret = if secret.trim().is_empty() {
        None
    } else {
        Some(provider.check_secret(secret).map_err(|m| {
            ServiceError::Invalid(vec![Violation::new("secret", Code::BadSchema, m)])
        })?)
    };
    let now = crate::clock::to_millis(core.clock.now());
    if !store::provider_secrets::set(&core.db, account_id, provider, secret.as_deref(), now).await?
    {
        return Err(ServiceError::NotFound {
            what: "account",
            id: account_id.to_string(),
        });
    }
    get(core, account_id).await
}

/// Checks every named field, then stores them together; nothing is stored when any is wrong.
pub async fn update(
    core: &Core,
    account_id: &str,
    input: UpdateInput,
) -> Result<Account, ServiceError> {
    let mut problems = Violations::default();
    let fields = mask_fields(&input, &mut problems);
    let mut change = SettingsChange::default();
    for field in &fields {
        match field {
            Field::MaxWait => {
                change.max_wait = Some(problems.check(parse_max_wait(&input.max_wait)).flatten());
            }
            Field::FetchAllow => {
                let list = parse_fetch_allow(&input.fetch_allow, &mut problems);
                let text = (!list.is_empty())
                    .then(|| serde_json::to_string(&list).expect("an allow list serializes"));
                change.fetch_allow = Some(text);
            }
            Field::QuietHours => {
                let text = match &input.quiet_hours {
                    None => None,
                    Some(v) => problems
                        .check(check_quiet_hours(v).map_err(|(field, message)| {
                            Violation::new(field, Code::BadSchema, message)
                        }))
                        .map(|()| v.to_string()),
                };
                change.quiet_hours = Some(text);
            }
            Field::DefaultSenderId => {
                let id = input.default_sender_id.trim();
                if id.is_empty() {
                    problems.push(Violation::new(
                        "account.default_sender_id",
                        Code::BadSchema,
                        "an account always has a default sender: name one of its senders",
                    ));
                } else if let Some(id) =
                    problems.check(fields::parse_id("account.default_sender_id", id))
                {
                    if store::senders::get(&core.db, account_id, &id)
                        .await?
                        .is_none()
                    {
                        problems.push(Violation::new(
                            "account.default_sender_id",
                            Code::BadSchema,
                            format!(
                                "the account has no sender {}: create it with \
                                 SenderService.UpsertSender first",
                                crate::quote::quote(&id)
                            ),
                        ));
                    } else {
                        change.default_sender_id = Some(id);
                    }
                }
            }
            Field::CallConnectedThreshold => {
                change.call_connected_threshold = Some(
                    problems
                        .check(parse_threshold(&input.call_connected_threshold))
                        .flatten(),
                );
            }
            Field::ReplyUnsubscribe => {
                if let Some(value) =
                    problems.check(parse_reply_unsubscribe(&input.reply_unsubscribe))
                {
                    change.reply_unsubscribe = Some(value.map(|v| v.as_str().to_string()));
                }
            }
        }
    }
    problems.finish()?;
    store::accounts::update_settings(&core.db, account_id, &change).await?;
    get(core, account_id).await
}

/// The fields an update changes: the mask's paths, or every field set when the mask is empty.
fn mask_fields(input: &UpdateInput, problems: &mut Violations) -> Vec<Field> {
    if input.mask.is_empty() {
        return Field::ALL
            .into_iter()
            .filter(|f| match f {
                Field::MaxWait => !input.max_wait.is_empty(),
                Field::FetchAllow => !input.fetch_allow.is_empty(),
                Field::QuietHours => input.quiet_hours.is_some(),
                Field::DefaultSenderId => !input.default_sender_id.is_empty(),
                Field::CallConnectedThreshold => !input.call_connected_threshold.is_empty(),
                Field::ReplyUnsubscribe => !input.reply_unsubscribe.is_empty(),
            })
            .collect();
    }
    let mut out = Vec::new();
    for (i, path) in input.mask.iter().enumerate() {
        match Field::parse(path) {
            Some(f) if !out.contains(&f) => out.push(f),
            Some(_) => {}
            None => problems.push(Violation::new(
                format!("update_mask.paths[{i}]"),
                Code::BadSchema,
                format!(
                    "{} is not a field UpdateAccount changes: use max_wait, fetch_allow, \
                     quiet_hours, default_sender_id, call_connected_threshold or \
                     reply_unsubscribe",
                    crate::quote::quote(path)
                ),
            )),
        }
    }
    out
}

/// `call_connected_threshold`: empty clears it (30 s); otherwise a fixed duration of 1 s to
/// 1 h (`45s`, `2m`).
fn parse_threshold(text: &str) -> Result<Option<String>, Violation> {
    const FIELD: &str = "account.call_connected_threshold";
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    fields::check_text(FIELD, text, fields::Limit::Name)?;
    let d = Duration::parse(text).map_err(|e| Violation::new(FIELD, e.code, e.message()))?;
    match d.fixed_ms {
        ms if d.is_fixed() && (1_000..=3_600_000).contains(&ms) => Ok(Some(text.to_string())),
        _ => Err(Violation::new(
            FIELD,
            Code::BadSchema,
            format!(
                "{} is not a call length: write seconds or minutes from 1s to 1h, such as \
                 `45s`",
                crate::quote::quote(text)
            ),
        )),
    }
}

/// `reply_unsubscribe`: empty clears it (the default, `opt_out`, stored as NULL); otherwise
/// `opt_out` or `event`.
fn parse_reply_unsubscribe(text: &str) -> Result<Option<ReplyUnsubscribe>, Violation> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    ReplyUnsubscribe::parse(text).map(Some).ok_or_else(|| {
        Violation::new(
            "account.reply_unsubscribe",
            Code::BadSchema,
            format!(
                "{} is not what a reply asking to stop does: use `opt_out` (an unsubscribe in \
                 words opts the contact out of the channel, the default) or `event` (it only \
                 raises `intent:unsubscribe`; the flow decides)",
                crate::quote::quote(text)
            ),
        )
    })
}

/// `max_wait`: empty clears it; otherwise a duration (`7d`, `30bd`).
fn parse_max_wait(text: &str) -> Result<Option<String>, Violation> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    fields::check_text("account.max_wait", text, fields::Limit::Name)?;
    match Duration::parse(text) {
        Ok(_) => Ok(Some(text.to_string())),
        Err(e) => Err(Violation::new(
            "account.max_wait",
            e.code,
            format!("{}; write a duration such as `7d` or `30bd`", e.message()),
        )),
    }
}

/// The allow list: each host a name, `*.domain` or an IP literal; a port 1–65535 when given;
/// no host twice on the same port.
fn parse_fetch_allow(items: &[AllowInput], problems: &mut Violations) -> AllowList {
    let mut out: AllowList = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let field = |name: &str| format!("account.fetch_allow[{i}].{name}");
        let host = match fields::check_text(&field("host"), &item.host, fields::Limit::Name)
            .and_then(|()| {
                allow::parse_pattern(&item.host)
                    .map_err(|m| Violation::new(field("host"), Code::BadSchema, m))
            }) {
            Ok(h) => Some(h),
            Err(v) => {
                problems.push(v);
                None
            }
        };
        let port = match item.port {
            0 => Some(None),
            p if p <= u32::from(u16::MAX) => Some(Some(p as u16)),
            p => {
                problems.push(Violation::new(
                    field("port"),
                    Code::BadSchema,
                    format!("{p} is not a port: use 1–65535, or 0 for any port"),
                ));
                None
            }
        };
        if let (Some(host), Some(port)) = (host, port) {
            if out.iter().any(|e| e.host == host && e.port == port) {
                problems.push(Violation::new(
                    field("host"),
                    Code::BadSchema,
                    format!("{host} is listed twice: remove one"),
                ));
                continue;
            }
            out.push(AllowEntry {
                host,
                port,
                allow_private: item.allow_private,
            });
        }
    }
    out
}

/// The quiet-hours policy: `{"policy": "federal"|"us_states", "overrides": [...]}`, read by the
/// timing core's own parser ([`crate::timing::QuietHours::from_json`]), so what is stored is
/// exactly what execution applies. Returns the field and the message of the first problem
/// (its JSON Pointer into the setting becomes the field path).
pub fn check_quiet_hours(value: &serde_json::Value) -> Result<(), (String, String)> {
    crate::timing::QuietHours::from_json(value)
        .map(|_| ())
        .map_err(|problems| {
            let first = problems
                .into_iter()
                .next()
                .expect("a refusal names a problem");
            let field = format!("account.quiet_hours{}", first.path.replace('/', "."));
            (field, first.message)
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn quiet_hours_policy() {
        assert!(check_quiet_hours(&json!({"policy": "federal"})).is_ok());
        assert!(check_quiet_hours(&json!({"policy": "us_states", "overrides": []})).is_ok());
        // No policy is the default, federal.
        assert!(check_quiet_hours(&json!({})).is_ok());
        for (bad, field) in [
            (json!("federal"), "account.quiet_hours"),
            (json!({"policy": "eu"}), "account.quiet_hours.policy"),
            (
                json!({"policy": "us_states", "overrides": [{"rule": 5}]}),
                "account.quiet_hours.overrides.0",
            ),
            (
                json!({"policy": "federal", "overrides": {}}),
                "account.quiet_hours.overrides",
            ),
            (
                json!({"policy": "federal", "x": 1}),
                "account.quiet_hours.x",
            ),
        ] {
            assert_eq!(check_quiet_hours(&bad).unwrap_err().0, field, "{bad}");
        }
    }

    #[test]
    fn reply_unsubscribe_names_round_trip() {
        assert_eq!(ReplyUnsubscribe::default(), ReplyUnsubscribe::OptOut);
        for r in ReplyUnsubscribe::ALL {
            assert_eq!(ReplyUnsubscribe::parse(r.as_str()), Some(r));
        }
        assert_eq!(ReplyUnsubscribe::OptOut.as_str(), "opt_out");
        assert_eq!(ReplyUnsubscribe::Event.as_str(), "event");
        for bad in ["", "events", "Event", "opt-out", " opt_out"] {
            assert_eq!(ReplyUnsubscribe::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn reply_unsubscribe_input_and_stored_value() {
        assert_eq!(parse_reply_unsubscribe("").unwrap(), None);
        assert_eq!(
            parse_reply_unsubscribe(" event ").unwrap(),
            Some(ReplyUnsubscribe::Event)
        );
        let refused = parse_reply_unsubscribe("events").unwrap_err();
        assert_eq!(refused.field, "account.reply_unsubscribe");
        assert!(
            refused.message.starts_with("`events` is not"),
            "{refused:?}"
        );
        assert_eq!(
            stored_reply_unsubscribe("a", None).unwrap(),
            ReplyUnsubscribe::OptOut
        );
        assert_eq!(
            stored_reply_unsubscribe("a", Some("event")).unwrap(),
            ReplyUnsubscribe::Event
        );
        match stored_reply_unsubscribe("acme", Some("maybe")) {
            Err(ServiceError::Internal(m)) => {
                assert!(m.contains("acme") && m.contains("`maybe`"), "{m}")
            }
            other => panic!("a corrupt value must not read as a default: {other:?}"),
        }
    }

    #[test]
    fn max_wait_and_allow_list() {
        assert_eq!(parse_max_wait("7d").unwrap(), Some("7d".into()));
        assert_eq!(parse_max_wait("").unwrap(), None);
        assert_eq!(parse_max_wait("7x").unwrap_err().field, "account.max_wait");
        let mut p = Violations::default();
        let list = parse_fetch_allow(
            &[
                AllowInput {
                    host: "CRM.example.com".into(),
                    port: 443,
                    allow_private: false,
                },
                AllowInput {
                    host: "https://x".into(),
                    port: 70000,
                    allow_private: true,
                },
            ],
            &mut p,
        );
        assert_eq!(list.len(), 1);
        assert_eq!(list[0].host, "crm.example.com");
        let fields: Vec<String> = p
            .into_violations()
            .unwrap_err()
            .into_iter()
            .map(|v| v.field)
            .collect();
        assert_eq!(
            fields,
            ["account.fetch_allow[1].host", "account.fetch_allow[1].port"]
        );
    }
}
