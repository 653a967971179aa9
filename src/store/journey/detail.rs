//! The JSON text of a journey entry's `detail`.
//!
//! The reference encoding is the engine's effect through a `serde_json::Value` (keys sorted, as
//! `Value`'s map keeps them), printed: [`reference`]. Every stored entry has that text, and
//! readers get it back byte for byte. Building a `Value` tree for each of the five entries a
//! planner step writes was about a third of the planner's own CPU, so the entries
//! every step writes (a run opened, a run closed, a dispatch) are written straight into the
//! text, keys in the same order, and so is the `enrolled` entry every enrollment starts with
//! (through a `Value` it was a third of what the engine spent enrolling one); anything unusual
//! on them (a hold, a fetch, a capacity reservation) and every other entry goes the reference
//! way. The tests below hold the two to the same bytes.

use crate::engine::{Dispatch, Effect, Run};
use chrono::{DateTime, Utc};
use serde::Serialize;

/// `",\"key\":"`: a key as [`Object`] writes it, spelled at compile time (one copy a field, not
/// four pushes).
macro_rules! k {
    ($key:literal) => {
        concat!(",\"", $key, "\":")
    };
}

/// The text stored for `effect`'s journey entry.
pub fn detail(effect: &Effect) -> String {
    let mut out = String::new();
    push_detail(&mut out, effect, &mut Instants::default());
    out
}

/// Appends the text stored for `effect`'s journey entry to `out` (a step's entries are
/// written straight into their one `String`: no text per entry to build, check and copy).
/// `instants` keeps the last instant spelled, for the entries of one step.
pub fn push_detail(out: &mut String, effect: &Effect, instants: &mut Instants) {
    if !fast(out, effect, instants) {
        out.push_str(&reference(effect));
    }
}

/// The last two instants spelled and their texts, kept for the entries of a whole batch: most
/// instants of a step's entries are the batch's `now` (a run closed, the next one entered and
/// scheduled) or one timer after it (the next wait's `until`), so each is spelled once a batch
/// and its text checked as UTF-8 once (checking it at each use was most of what an instant
/// cost; with one slot, `now` and the timer pushed each other out at every step).
#[derive(Debug, Clone, Default)]
pub struct Instants {
    slots: [Option<(DateTime<Utc>, String)>; 2],
    /// The slot the next new instant takes.
    next: usize,
}

impl Instants {
    fn push(&mut self, out: &mut String, t: &DateTime<Utc>) {
        if let Some((_, text)) = self.slots.iter().flatten().find(|(at, _)| at == t) {
            out.push_str(text);
            return;
        }
        match crate::engine::instant::spelled(t) {
            Some((buf, len)) => {
                let slot = &mut self.slots[self.next];
                self.next = 1 - self.next;
                let (at, text) = slot.get_or_insert_with(|| (*t, String::with_capacity(32)));
                *at = *t;
                text.clear();
                text.push_str(std::str::from_utf8(&buf[..len]).expect("ASCII"));
                out.push_str(text);
            }
            None => crate::engine::instant::push_stored(out, t),
        }
    }
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

/// Appends the entries written straight and returns true, or returns false (having written
/// nothing) for the reference way.
fn fast(out: &mut String, effect: &Effect, instants: &mut Instants) -> bool {
    match effect {
        Effect::RunOpened(run) => run_opened(out, run, instants),
        Effect::RunClosed {
            run,
            step,
            closed,
            branch,
            woken_by,
        } => {
            let mut o = Object::new(out, instants);
            if let Some(b) = branch {
                o.str(k!("branch"), b);
            }
            o.instant(k!("closed"), closed);
            o.lit(",\"kind\":\"run_closed\"");
            o.u64(k!("run"), *run);
            o.str(k!("step"), step);
            if let Some(w) = woken_by {
                o.str(k!("woken_by"), w);
            }
            o.finish();
            true
        }
        Effect::Dispatch(d) => dispatch(out, d, instants),
        Effect::Journey(crate::engine::JourneyEntry::Enrolled { step }) => {
            let mut o = Object::new(out, instants);
            o.lit(",\"event\":\"enrolled\"");
            o.str(k!("step"), step);
            o.finish();
            true
        }
        _ => false,
    }
}

fn run_opened(out: &mut String, run: &Run, instants: &mut Instants) -> bool {
    // Fields whose values are objects or rare go the reference way.
    if run.hold.is_some() || run.fetch.is_some() || run.deferred_reason.is_some() {
        return false;
    }
    let mut o = Object::new(out, instants);
    if let Some(c) = &run.contact_holidays {
        o.str(k!("contact_holidays"), c);
    }
    if let Some(t) = &run.deferred_to {
        o.instant(k!("deferred_to"), t);
    }
    o.instant(k!("entered"), &run.entered);
    if !run.events.is_empty() {
        o.field(k!("events"), &run.events);
    }
    o.u64(k!("id"), run.id);
    o.lit(",\"kind\":\"run_opened\"");
    if let Some(t) = &run.link_expires {
        o.instant(k!("link_expires"), t);
    }
    if run.moved {
        o.raw(k!("moved"), "true");
    }
    if let Some(p) = &run.pending_outcome {
        o.str(k!("pending_outcome"), p);
    }
    if let Some(r) = &run.rule {
        o.str(k!("rule"), r);
    }
    if let Some(t) = &run.scheduled {
        o.instant(k!("scheduled"), t);
    }
    o.str(k!("step"), &run.step);
    if let Some(t) = &run.task {
        o.field(k!("task"), t);
    }
    o.plain(k!("type"), run.step_type.as_str());
    if let Some(t) = &run.until {
        o.instant(k!("until"), t);
    }
    if let Some(w) = &run.wait_reason {
        o.field(k!("wait_reason"), w);
    }
    o.finish();
    true
}

fn dispatch(out: &mut String, d: &Dispatch, instants: &mut Instants) -> bool {
    if d.reservation.is_some() {
        return false;
    }
    let mut o = Object::new(out, instants);
    o.plain(k!("channel"), d.channel.as_str());
    if let Some(p) = &d.channel_params {
        o.field(k!("channel_params"), p);
    }
    o.str(k!("idempotency_key"), &d.idempotency_key);
    o.value(k!("input"), &d.input);
    o.lit(",\"kind\":\"dispatch\"");
    if let Some(m) = &d.message_id {
        o.str(k!("message_id"), m);
    }
    o.str(k!("recipient"), &d.recipient);
    o.u64(k!("run"), d.run);
    o.str(k!("step"), &d.step);
    o.str(k!("template"), &d.template);
    if let Some(v) = &d.variant {
        o.str(k!("variant"), v);
    }
    o.finish();
    true
}

/// A JSON object written field by field onto the end of a `String`; the caller gives the keys
/// in sorted order, each as `k!` spells it.
struct Object<'a> {
    text: &'a mut String,
    instants: &'a mut Instants,
    /// No field written yet.
    first: bool,
}

impl<'a> Object<'a> {
    fn new(text: &'a mut String, instants: &'a mut Instants) -> Object<'a> {
        text.push('{');
        Object {
            text,
            instants,
            first: true,
        }
    }

    /// Appends `"key":value` for any of the plain types the engine's effects hold (string
    /// lists, unit enums, `Value` maps, whose maps are sorted): each prints as it does inside
    /// a `Value`. Rare fields: it goes through serde_json's own text.
    fn field<T: Serialize + ?Sized + Plain>(&mut self, key: &str, value: &T) {
        self.key(key);
        self.text
            .push_str(&serde_json::to_string(value).expect("plain values serialize"));
    }

    /// Appends `"key":value` for a `Value`; an empty object (a dispatch's usual input) is
    /// spelled without serde_json.
    fn value(&mut self, key: &str, value: &serde_json::Value) {
        match value {
            serde_json::Value::Object(map) if map.is_empty() => self.raw(key, "{}"),
            serde_json::Value::Null => self.raw(key, "null"),
            other => self.field(key, other),
        }
    }

    /// Appends `"key":"text"`, escaped as serde_json escapes a string.
    fn str(&mut self, key: &str, value: &str) {
        self.key(key);
        push_json_str(self.text, value);
    }

    /// Appends `"key":"name"` for one of nudge's own names (a step type, a channel), which
    /// never need escaping.
    fn plain(&mut self, key: &str, name: &str) {
        debug_assert!(!needs_escape(name.as_bytes()));
        self.key(key);
        self.text.push('"');
        self.text.push_str(name);
        self.text.push('"');
    }

    fn u64(&mut self, key: &str, n: u64) {
        self.key(key);
        crate::engine::effect::push_decimal(self.text, n);
    }

    /// Appends `"key":` and `json` as it is.
    fn raw(&mut self, key: &str, json: &str) {
        self.key(key);
        self.text.push_str(json);
    }

    /// Appends `"key":"instant"`, in the text chrono's serde writes.
    fn instant(&mut self, key: &str, t: &DateTime<Utc>) {
        self.key(key);
        self.text.push('"');
        self.instants.push(self.text, t);
        self.text.push('"');
    }

    /// Appends a whole field given as `,"key":value` (a constant one), its comma dropped when
    /// it is the first.
    fn lit(&mut self, field: &str) {
        self.key(field);
    }

    /// Appends `,"key":` as `k!` spells it (no comma before the first).
    fn key(&mut self, key: &str) {
        debug_assert!(key.starts_with(",\""));
        let key = if std::mem::take(&mut self.first) {
            &key[1..]
        } else {
            key
        };
        self.text.push_str(key);
    }

    fn finish(self) {
        self.text.push('}');
    }
}

/// Appends `s` as a JSON string, escaped byte for byte as serde_json escapes it: `"` and `\`
/// with a backslash, the control characters below 0x20 as `\b \t \n \f \r` or `\u00xx`
/// (lower-case hex), everything else (DEL, non-ASCII) as it is.
fn push_json_str(out: &mut String, s: &str) {
    out.push('"');
    if !needs_escape(s.as_bytes()) {
        out.push_str(s);
        out.push('"');
        return;
    }
    let bytes = s.as_bytes();
    let mut plain = 0; // the start of the run not yet copied
    for (i, &b) in bytes.iter().enumerate() {
        if b >= 0x20 && b != b'"' && b != b'\\' {
            continue;
        }
        // `b` is ASCII, so `i` and `i + 1` are character boundaries.
        out.push_str(&s[plain..i]);
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\t' => out.push_str("\\t"),
            b'\r' => out.push_str("\\r"),
            0x08 => out.push_str("\\b"),
            0x0c => out.push_str("\\f"),
            _ => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.push_str("\\u00");
                out.push(char::from(HEX[usize::from(b >> 4)]));
                out.push(char::from(HEX[usize::from(b & 0xf)]));
            }
        }
        plain = i + 1;
    }
    out.push_str(&s[plain..]);
    out.push('"');
}

/// Whether any byte of `bytes` is escaped in a JSON string (`"`, `\`, below 0x20), eight
/// bytes at a time: most strings need no escape and are copied whole.
fn needs_escape(bytes: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // A byte of `w` is below `n` (n <= 0x80) where `(w - n) & !w` sets its high bit.
    let any = |w: u64| {
        let below_space = w.wrapping_sub(ONES * 0x20) & !w;
        let quote = w ^ (ONES * u64::from(b'"'));
        let backslash = w ^ (ONES * u64::from(b'\\'));
        let zero = |x: u64| x.wrapping_sub(ONES) & !x;
        (below_space | zero(quote) | zero(backslash)) & HIGH != 0
    };
    let word = |b: &[u8]| u64::from_le_bytes(b.try_into().expect("8 bytes"));
    if bytes.len() < 8 {
        // Padded with spaces, which are never escaped.
        let mut padded = [b' '; 8];
        padded[..bytes.len()].copy_from_slice(bytes);
        return any(u64::from_le_bytes(padded));
    }
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        if any(word(chunk)) {
            return true;
        }
    }
    // The last eight bytes, overlapping the last chunk: the remainder without a byte loop.
    !chunks.remainder().is_empty() && any(word(&bytes[bytes.len() - 8..]))
}

/// Types that print the same written straight as through a `Value`: no struct whose keys a
/// `Value` would reorder.
trait Plain {}
impl Plain for Vec<String> {}
impl Plain for serde_json::Value {}
impl Plain for serde_json::Map<String, serde_json::Value> {}
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
            "[\\x00-\\x1f\\x7f\"\\\\a-z]{0,8}",
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
            text().prop_map(|step| Effect::Journey(crate::engine::JourneyEntry::Enrolled { step })),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]

        /// The straight text is the reference text, byte for byte, for every field combination.
        #[test]
        fn written_straight_is_the_reference_text(e in effect()) {
            let mut text = String::from("[\"before\",");
            prop_assert!(fast(&mut text, &e, &mut Instants::default()), "a hot entry went the slow way");
            prop_assert_eq!(&text, &format!("[\"before\",{}", reference(&e)));
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
        let e = Effect::Journey(crate::engine::JourneyEntry::Completed {
            outcome: Some("a".into()),
        });
        let mut text = String::new();
        assert!(!fast(&mut text, &e, &mut Instants::default()));
        assert_eq!(text, "");
        assert_eq!(detail(&e), r#"{"event":"completed","outcome":"a"}"#);
    }

    #[test]
    fn the_enrolled_entry_is_written_straight() {
        let e = Effect::Journey(crate::engine::JourneyEntry::Enrolled { step: "a".into() });
        let mut text = String::new();
        assert!(fast(&mut text, &e, &mut Instants::default()));
        assert_eq!(text, r#"{"event":"enrolled","step":"a"}"#);
        assert_eq!(detail(&e), reference(&e));
    }
}
