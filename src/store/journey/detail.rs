//! The JSON text of a journey entry's `detail`.
//!
//! The reference encoding is the engine's effect through a `serde_json::Value` (keys sorted, as
//! `Value`'s map keeps them), printed: [`reference`]. Every stored entry has that text, and
//! readers get it back byte for byte. Building a `Value` tree for each of the five entries a
//! planner step writes was about a third of the planner's own CPU, so the entries
//! every step writes (a run opened, a run closed, a dispatch) are written straight into the
//! text, keys in the same order; anything unusual on them (a hold, a fetch, a capacity
//! reservation) and every other entry goes the reference way. The tests below hold the two to
//! the same bytes.

use crate::engine::{Dispatch, Effect, Run};
use chrono::{DateTime, Utc};
use serde::Serialize;

/// The text stored for `effect`'s journey entry.
pub fn detail(effect: &Effect) -> String {
    fast(effect).unwrap_or_else(|| reference(effect))
}

/// The reference encoding: through a `Value`, as every entry was always written.
pub fn reference(effect: &Effect) -> String {
    match effect {
        Effect::Journey(entry) => serde_json::to_value(entry),
        other => serde_json::to_value(other),
    }
    .expect("engine effects serialize")
    .to_string()
}

/// The entries written straight, or `None` for the reference way.
fn fast(effect: &Effect) -> Option<String> {
    match effect {
        Effect::RunOpened(run) => run_opened(run),
        Effect::RunClosed {
            run,
            step,
            closed,
            branch,
            woken_by,
        } => {
            let mut o = Object::new(96);
            if let Some(b) = branch {
                o.field("branch", b.as_str());
            }
            o.instant("closed", closed);
            o.field("kind", "run_closed");
            o.field("run", run);
            o.field("step", step.as_str());
            if let Some(w) = woken_by {
                o.field("woken_by", w.as_str());
            }
            Some(o.finish())
        }
        Effect::Dispatch(d) => dispatch(d),
        _ => None,
    }
}

fn run_opened(run: &Run) -> Option<String> {
    // Fields whose values are objects or rare go the reference way.
    if run.hold.is_some() || run.fetch.is_some() || run.deferred_reason.is_some() {
        return None;
    }
    let mut o = Object::new(160);
    if let Some(c) = &run.contact_holidays {
        o.field("contact_holidays", c.as_str());
    }
    if let Some(t) = &run.deferred_to {
        o.instant("deferred_to", t);
    }
    o.instant("entered", &run.entered);
    if !run.events.is_empty() {
        o.field("events", &run.events);
    }
    o.field("id", &run.id);
    o.field("kind", "run_opened");
    if let Some(t) = &run.link_expires {
        o.instant("link_expires", t);
    }
    if run.moved {
        o.field("moved", &true);
    }
    if let Some(p) = &run.pending_outcome {
        o.field("pending_outcome", p.as_str());
    }
    if let Some(r) = &run.rule {
        o.field("rule", r.as_str());
    }
    if let Some(t) = &run.scheduled {
        o.instant("scheduled", t);
    }
    o.field("step", run.step.as_str());
    if let Some(t) = &run.task {
        o.field("task", t);
    }
    o.field("type", &run.step_type);
    if let Some(t) = &run.until {
        o.instant("until", t);
    }
    if let Some(w) = &run.wait_reason {
        o.field("wait_reason", w);
    }
    Some(o.finish())
}

fn dispatch(d: &Dispatch) -> Option<String> {
    if d.reservation.is_some() {
        return None;
    }
    let mut o = Object::new(256);
    o.field("channel", &d.channel);
    if let Some(p) = &d.channel_params {
        o.field("channel_params", p);
    }
    o.field("idempotency_key", d.idempotency_key.as_str());
    o.field("input", &d.input);
    o.field("kind", "dispatch");
    if let Some(m) = &d.message_id {
        o.field("message_id", m.as_str());
    }
    o.field("recipient", d.recipient.as_str());
    o.field("run", &d.run);
    o.field("step", d.step.as_str());
    o.field("template", d.template.as_str());
    if let Some(v) = &d.variant {
        o.field("variant", v.as_str());
    }
    Some(o.finish())
}

/// A JSON object written field by field; the caller gives the keys in sorted order.
struct Object {
    text: Vec<u8>,
}

impl Object {
    fn new(capacity: usize) -> Object {
        let mut text = Vec::with_capacity(capacity);
        text.push(b'{');
        Object { text }
    }

    /// Appends `"key":value`. A value is any of the plain types the engine's effects hold
    /// (strings, numbers, instants, unit enums, string lists, `Value`s, whose maps are
    /// sorted): each prints as it does inside a `Value`.
    fn field<T: Serialize + ?Sized + Plain>(&mut self, key: &str, value: &T) {
        self.key(key);
        serde_json::to_writer(&mut self.text, value).expect("plain values serialize");
    }

    /// Appends `"key":"instant"`, in the text chrono's serde writes.
    fn instant(&mut self, key: &str, t: &DateTime<Utc>) {
        self.key(key);
        self.text.push(b'"');
        crate::engine::instant::write_stored(&mut self.text, t);
        self.text.push(b'"');
    }

    fn key(&mut self, key: &str) {
        if self.text.len() > 1 {
            self.text.push(b',');
        }
        self.text.push(b'"');
        self.text.extend_from_slice(key.as_bytes());
        self.text.extend_from_slice(b"\":");
    }

    fn finish(mut self) -> String {
        self.text.push(b'}');
        String::from_utf8(self.text).expect("serde_json writes UTF-8")
    }
}

/// Types that print the same written straight as through a `Value`: no struct whose keys a
/// `Value` would reorder.
trait Plain {}
impl Plain for str {}
impl Plain for u64 {}
impl Plain for bool {}
impl Plain for Vec<String> {}
impl Plain for serde_json::Value {}
impl Plain for serde_json::Map<String, serde_json::Value> {}
impl Plain for crate::timing::Channel {}
impl Plain for crate::flow::StepKind {}
impl Plain for crate::engine::state::TaskPhase {}
impl Plain for crate::timing::ClosedBy {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flow::StepKind;
    use crate::timing::{Channel, ClosedBy};
    use proptest::prelude::*;

    fn at(ms: i64) -> DateTime<Utc> {
        crate::clock::from_millis(ms)
    }

    fn text() -> impl Strategy<Value = String> {
        // Quotes, backslashes, control characters and non-ASCII: escaping must match too.
        prop_oneof![
            "[a-z_]{1,12}",
            "\\PC{0,8}",
            Just("quote \" back \\ tab \t nl \n é 𝄞".to_string()),
        ]
    }

    fn instant() -> impl Strategy<Value = DateTime<Utc>> {
        // Whole seconds and milliseconds print differently.
        prop_oneof![
            (0i64..4_000_000_000).prop_map(|s| at(s * 1000)),
            (0i64..4_000_000_000_000).prop_map(at),
        ]
    }

    fn json() -> impl Strategy<Value = serde_json::Value> {
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::from),
            any::<i64>().prop_map(serde_json::Value::from),
            (-1e9f64..1e9).prop_map(serde_json::Value::from),
            text().prop_map(serde_json::Value::from),
        ];
        leaf.prop_recursive(3, 16, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::from),
                prop::collection::btree_map(text(), inner, 0..4)
                    .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
            ]
        })
    }

    fn step_kind() -> impl Strategy<Value = StepKind> {
        prop::sample::select(vec![
            StepKind::Wait,
            StepKind::WaitFor,
            StepKind::Email,
            StepKind::Sms,
            StepKind::Call,
            StepKind::End,
        ])
    }

    prop_compose! {
        fn run()(
            id in any::<u64>(),
            step in text(),
            step_type in step_kind(),
            entered in instant(),
            until in prop::option::of(instant()),
            scheduled in prop::option::of(instant()),
            deferred_to in prop::option::of(instant()),
            events in prop::collection::vec(text(), 0..3),
            task in prop::option::of(prop::sample::select(vec![
                crate::engine::state::TaskPhase::Scheduled,
                crate::engine::state::TaskPhase::Open,
            ])),
            pending_outcome in prop::option::of(text()),
            moved in any::<bool>(),
            wait_reason in prop::option::of(prop::sample::select(vec![
                ClosedBy::Window, ClosedBy::Holiday, ClosedBy::QuietHours,
            ])),
            rule in prop::option::of(text()),
            contact_holidays in prop::option::of(text()),
            link_expires in prop::option::of(instant()),
        ) -> Run {
            Run {
                id, step, step_type, entered, until, scheduled, deferred_to, events, task,
                pending_outcome, hold: None, moved, deferred_reason: None, wait_reason, rule,
                contact_holidays, fetch: None, link_expires,
            }
        }
    }

    prop_compose! {
        fn dispatch()(
            key in text(),
            run in any::<u64>(),
            step in text(),
            channel in prop::sample::select(vec![Channel::Email, Channel::Sms]),
            recipient in text(),
            template in text(),
            input in json(),
            params in prop::option::of(prop::collection::btree_map(text(), json(), 0..3)),
            message_id in prop::option::of(text()),
            variant in prop::option::of(text()),
        ) -> Dispatch {
            Dispatch {
                idempotency_key: key, run, step, channel, recipient, template, input,
                channel_params: params.map(|m| m.into_iter().collect()),
                message_id, reservation: None, variant,
            }
        }
    }

    fn effect() -> impl Strategy<Value = Effect> {
        prop_oneof![
            run().prop_map(Effect::RunOpened),
            (
                any::<u64>(),
                text(),
                instant(),
                prop::option::of(text()),
                prop::option::of(text())
            )
                .prop_map(|(run, step, closed, branch, woken_by)| Effect::RunClosed {
                    run,
                    step,
                    closed,
                    branch,
                    woken_by,
                }),
            dispatch().prop_map(Effect::Dispatch),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]

        /// The straight text is the reference text, byte for byte, for every field combination.
        #[test]
        fn written_straight_is_the_reference_text(e in effect()) {
            prop_assert!(fast(&e).is_some(), "a hot entry went the slow way");
            prop_assert_eq!(detail(&e), reference(&e));
        }
    }

    #[test]
    fn the_entries_of_a_planner_step_are_written_straight() {
        let run = Run {
            id: 2,
            step: "mail".into(),
            step_type: StepKind::Email,
            entered: at(1_796_196_858_714),
            until: None,
            scheduled: Some(at(1_796_196_858_714)),
            deferred_to: None,
            events: vec![],
            task: None,
            pending_outcome: None,
            hold: None,
            moved: false,
            deferred_reason: None,
            wait_reason: None,
            rule: None,
            contact_holidays: None,
            fetch: None,
            link_expires: None,
        };
        assert_eq!(
            detail(&Effect::RunOpened(run)),
            r#"{"entered":"2026-12-02T07:34:18.714Z","id":2,"kind":"run_opened","scheduled":"2026-12-02T07:34:18.714Z","step":"mail","type":"email"}"#
        );
    }

    #[test]
    fn other_entries_go_the_reference_way() {
        let e = Effect::Journey(crate::engine::JourneyEntry::Enrolled { step: "a".into() });
        assert_eq!(fast(&e), None);
        assert_eq!(detail(&e), r#"{"event":"enrolled","step":"a"}"#);
    }
}
