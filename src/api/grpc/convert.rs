//! Wire ↔ domain conversions for every nudge.v1 message, in one place.

use crate::code::Code;
use crate::proto::v1 as pb;
use crate::service::contacts::{Contact, ContactInput};
use crate::service::flows::{Flow, Warning};
use crate::service::senders::{Sender, SenderInput};
use crate::service::{ServiceError, Violation};
use chrono::{DateTime, Utc};
use prost_types::value::Kind;
use serde_json::{Map, Number, Value};

/// JSON numbers that are whole and within ±2^53 come back as integers: `google.protobuf.Struct`
/// carries every number as a double, and `3` should not be stored as `3.0`.
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_992.0;

pub fn timestamp(instant: DateTime<Utc>) -> prost_types::Timestamp {
    prost_types::Timestamp {
        seconds: instant.timestamp(),
        nanos: instant.timestamp_subsec_nanos() as i32,
    }
}

/// An optional instant on the wire.
pub fn opt_timestamp(instant: Option<DateTime<Utc>>) -> Option<prost_types::Timestamp> {
    instant.map(timestamp)
}

pub fn contact_input(contact: Option<pb::Contact>) -> Result<ContactInput, ServiceError> {
    let contact = contact.ok_or_else(|| missing("contact"))?;
    let attributes = match contact.attributes {
        None => Map::new(),
        Some(s) => {
            struct_to_json("contact.attributes", s).map_err(|v| ServiceError::Invalid(vec![v]))?
        }
    };
    Ok(ContactInput {
        id: contact.id,
        email: contact.email,
        phone: contact.phone,
        tz: contact.tz,
        country: contact.country,
        attributes,
    })
}

impl From<Contact> for pb::Contact {
    fn from(c: Contact) -> pb::Contact {
        pb::Contact {
            id: c.id,
            email: c.email.unwrap_or_default(),
            phone: c.phone.unwrap_or_default(),
            tz: c.tz.unwrap_or_default(),
            country: c.country.unwrap_or_default(),
            attributes: Some(json_to_struct(c.attributes)),
            opted_out: c
                .opted_out
                .iter()
                .map(|ch| ch.as_str().to_string())
                .collect(),
            created_at: Some(timestamp(c.created_at)),
            updated_at: Some(timestamp(c.updated_at)),
        }
    }
}

pub fn sender_input(sender: Option<pb::Sender>) -> Result<SenderInput, ServiceError> {
    let sender = sender.ok_or_else(|| missing("sender"))?;
    Ok(SenderInput {
        id: sender.id,
        email: sender.email,
        tz: sender.tz,
        calendar: sender.calendar,
        caps: sender.caps.map(caps_doc),
    })
}

/// The proto caps as the docs/capacity.md JSON document the service validates (one validation path for
/// every edge). Unset fields are left out.
pub fn caps_doc(c: pb::SenderCaps) -> serde_json::Value {
    let mut out = serde_json::Map::new();
    for (name, ch) in [
        ("email", c.email),
        ("sms", c.sms),
        ("call", c.call),
        ("linkedin", c.linkedin),
    ] {
        let Some(ch) = ch else { continue };
        let mut m = serde_json::Map::new();
        if let Some(n) = ch.daily {
            m.insert("daily".into(), n.into());
        }
        if let Some(n) = ch.weekly {
            m.insert("weekly".into(), n.into());
        }
        if !ch.min_gap.is_empty() {
            m.insert("min_gap".into(), ch.min_gap.into());
        }
        if !ch.gap_jitter.is_empty() {
            m.insert("gap_jitter".into(), ch.gap_jitter.into());
        }
        if let Some(n) = ch.domain_daily {
            m.insert("domain_daily".into(), n.into());
        }
        if let Some(r) = ch.ramp {
            m.insert(
                "ramp".into(),
                serde_json::json!({"start": r.start, "step": r.step, "every": r.every, "from": r.from}),
            );
        }
        out.insert(name.into(), serde_json::Value::Object(m));
    }
    serde_json::Value::Object(out)
}

/// The stored caps document back as proto.
fn caps_proto(doc: &serde_json::Value) -> pb::SenderCaps {
    let ch = |name: &str| -> Option<pb::ChannelCaps> {
        let m = doc.get(name)?;
        let text = |k: &str| {
            m.get(k)
                .and_then(|v| v.as_str())
                .unwrap_or_default()
                .to_string()
        };
        Some(pb::ChannelCaps {
            daily: m.get("daily").and_then(|v| v.as_i64()),
            weekly: m.get("weekly").and_then(|v| v.as_i64()),
            min_gap: text("min_gap"),
            gap_jitter: text("gap_jitter"),
            domain_daily: m.get("domain_daily").and_then(|v| v.as_i64()),
            ramp: m.get("ramp").map(|r| pb::Ramp {
                start: r.get("start").and_then(|v| v.as_i64()).unwrap_or_default(),
                step: r.get("step").and_then(|v| v.as_i64()).unwrap_or_default(),
                every: r
                    .get("every")
                    .and_then(|v| v.as_str())
                    .unwrap_or_default()
                    .into(),
                from: r
                    .get("from")
                    .and_then(|v| v.as_str())
                    .unwrap_or_default()
                    .into(),
            }),
        })
    };
    pb::SenderCaps {
        email: ch("email"),
        sms: ch("sms"),
        call: ch("call"),
        linkedin: ch("linkedin"),
    }
}

impl From<Sender> for pb::Sender {
    fn from(s: Sender) -> pb::Sender {
        pb::Sender {
            id: s.id,
            email: s.email.unwrap_or_default(),
            tz: s.tz,
            calendar: s.calendar.unwrap_or_default(),
            is_default: s.is_default,
            created_at: Some(timestamp(s.created_at)),
            updated_at: Some(timestamp(s.updated_at)),
            caps: s.caps.as_ref().map(caps_proto),
        }
    }
}

impl From<Flow> for pb::Flow {
    fn from(f: Flow) -> pb::Flow {
        pb::Flow {
            id: f.id,
            name: f.name,
            version: f.version,
            definition: f.definition,
            created_at: Some(timestamp(f.created_at)),
        }
    }
}

impl From<Warning> for pb::Problem {
    fn from(w: Warning) -> pb::Problem {
        pb::Problem {
            code: w.code.as_str().to_string(),
            path: w.path,
            message: w.message,
            severity: "warning".to_string(),
        }
    }
}

fn missing(field: &str) -> ServiceError {
    ServiceError::Invalid(vec![Violation::new(
        field,
        Code::BadSchema,
        format!("`{field}` is required"),
    )])
}

/// A `google.protobuf.Struct` as a JSON object. Refuses non-finite numbers (JSON has none).
pub fn struct_to_json(
    field: &str,
    s: prost_types::Struct,
) -> Result<Map<String, Value>, Violation> {
    s.fields
        .into_iter()
        .map(|(k, v)| {
            let path = format!("{field}.{k}");
            value_to_json(&path, v).map(|v| (k, v))
        })
        .collect()
}

fn value_to_json(path: &str, value: prost_types::Value) -> Result<Value, Violation> {
    Ok(match value.kind {
        None | Some(Kind::NullValue(_)) => Value::Null,
        Some(Kind::BoolValue(b)) => Value::Bool(b),
        Some(Kind::StringValue(s)) => Value::String(s),
        Some(Kind::NumberValue(n)) => {
            if n.fract() == 0.0 && n.abs() <= MAX_SAFE_INTEGER {
                Value::Number(Number::from(n as i64))
            } else {
                Value::Number(Number::from_f64(n).ok_or_else(|| {
                    Violation::new(
                        path,
                        Code::BadSchema,
                        format!("{n} is not a JSON number; use a finite number"),
                    )
                })?)
            }
        }
        Some(Kind::StructValue(s)) => Value::Object(struct_to_json(path, s)?),
        Some(Kind::ListValue(list)) => Value::Array(
            list.values
                .into_iter()
                .enumerate()
                .map(|(i, v)| value_to_json(&format!("{path}[{i}]"), v))
                .collect::<Result<_, _>>()?,
        ),
    })
}

/// A JSON object as a `google.protobuf.Struct`.
pub fn json_to_struct(map: Map<String, Value>) -> prost_types::Struct {
    prost_types::Struct {
        fields: map
            .into_iter()
            .map(|(k, v)| (k, json_to_value(v)))
            .collect(),
    }
}

fn json_to_value(value: Value) -> prost_types::Value {
    let kind = match value {
        Value::Null => Kind::NullValue(0),
        Value::Bool(b) => Kind::BoolValue(b),
        Value::Number(n) => Kind::NumberValue(n.as_f64().unwrap_or(0.0)),
        Value::String(s) => Kind::StringValue(s),
        Value::Array(items) => Kind::ListValue(prost_types::ListValue {
            values: items.into_iter().map(json_to_value).collect(),
        }),
        Value::Object(map) => Kind::StructValue(json_to_struct(map)),
    };
    prost_types::Value { kind: Some(kind) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn struct_round_trip_keeps_integers_whole() {
        let json: Value = serde_json::json!({"plan": "pro", "seats": 3, "ratio": 0.5, "tags": ["a", null], "nested": {"ok": true}});
        let Value::Object(map) = json.clone() else {
            unreachable!()
        };
        let back = struct_to_json("a", json_to_struct(map)).unwrap();
        assert_eq!(Value::Object(back).to_string(), json.to_string());
    }

    #[test]
    fn non_finite_numbers_are_refused() {
        let s = prost_types::Struct {
            fields: [(
                "x".to_string(),
                prost_types::Value {
                    kind: Some(Kind::NumberValue(f64::NAN)),
                },
            )]
            .into(),
        };
        assert_eq!(
            struct_to_json("attributes", s).unwrap_err().field,
            "attributes.x"
        );
    }
}
