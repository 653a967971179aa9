//! `$:` expressions in timing slots (docs/timing.md, "Expressions in timing slots").
//!
//! A slot whose string starts with `$:` holds an expression instead of a literal:
//! `"duration": "$: input.nudge_ms * 2"`, `"until": "$: input.demo_at - 86400000"`.
//!
//! # Grammar
//!
//! ```text
//! expr   := term (("+" | "-") term)*
//! term   := unary (("*" | "/") unary)*
//! unary  := "-" unary | atom
//! atom   := number | path | "(" expr ")"
//! number := digits ["." digits]                 (no exponent, no sign: use unary minus)
//! path   := "input." field
//!         | "contact." ("id" | "email" | "phone" | "tz")
//!         | "contact.attributes." field
//!         | "fetch.status" | "fetch.body" ("." field)*
//!         | "signal." ("intent" | "channel" | "resume_on" | "referral.email" | "referral.name")
//! field  := [A-Za-z_][A-Za-z0-9_]*
//! ```
//! Spaces are allowed between tokens.
//!
//! # Types
//!
//! `input.<field>` has the type the flow's `input` schema declares (`number`, `string`,
//! `timestamp`, `boolean`); an undeclared field is refused. `contact.id|email|phone|tz` are
//! strings. `fetch.status` (the last `fetch` step's HTTP status, docs/flows.md, "fetch") is a
//! number and `fetch.body.*` is untyped like an attribute. `signal.*` reads the signal that closed
//! the last `wait_for`, the way `fetch.*` reads the last fetch: `signal.intent`, `signal.channel`,
//! `signal.referral.email` and `signal.referral.name` are strings, and `signal.resume_on` (the
//! date a "not now" reply named) is a timestamp, the start of that day in the contact's zone, else
//! the sender's. `contact.attributes.<x>` is untyped CRM data: it may appear in an expression, but an
//! untyped operand is refused wherever a number or timestamp is needed (`EXPR_TYPE`; declare an
//! `input` field of the right type and pass the value at enrollment instead), so a timing slot can
//! never depend on data whose type nobody promised.
//!
//! | operation | result |
//! |---|---|
//! | number `+ - * /` number | number |
//! | `-` number | number |
//! | timestamp `+` number, number `+` timestamp, timestamp `-` number | timestamp (the number is milliseconds) |
//! | timestamp `-` timestamp | number (milliseconds) |
//! | anything else | refused (`EXPR_TYPE`) |
//!
//! A duration slot needs a number (milliseconds); an `until` slot a timestamp or a number (epoch
//! milliseconds).
//!
//! # Evaluation
//!
//! [`eval`] runs when the step is entered, on the enrollment's input, the contact, the last fetch
//! and the signal that closed the last `wait_for`; numbers are `f64`. A division by zero or a
//! non-finite result is an [`ExprError`] of kind [`ExprErrorKind::Invalid`]. A path with no value
//! at that moment (an input field not given, a signal that did not carry `resume_on`, no
//! `wait_for` closed by a signal yet) is one of kind [`ExprErrorKind::Missing`], which fails the
//! step with `EXPR_MISSING`: a flow that may lack a value tests it with `exists` in a `branch`
//! before a timing slot reads it.

use crate::flow::model::{ContactField, FieldType, InputSchema, Path, SignalField};
use crate::inbound::intent::{Intent, Referral};
use chrono::{DateTime, Utc};
use std::fmt;

/// The prefix that marks a slot as an expression.
pub const PREFIX: &str = "$:";

/// A parsed `$:` expression, with its source text for messages and the journey.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    /// The text after `$:`, trimmed.
    pub source: String,
    /// The parsed tree, what inference and evaluation walk.
    pub node: Node,
}

/// An expression tree.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    /// A number literal (milliseconds, or epoch milliseconds next to a timestamp).
    Number(f64),
    /// A value read at run time: `input.*`, `contact.*`, `contact.attributes.*`, `fetch.*`,
    /// `signal.*`.
    Path(Path),
    /// Unary minus.
    Neg(Box<Node>),
    /// `left op right`.
    Binary(Op, Box<Node>, Box<Node>),
}

/// A binary operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `+`: numbers, or a timestamp and a number of milliseconds.
    Add,
    /// `-`: numbers, a timestamp minus milliseconds, or two timestamps (a span).
    Sub,
    /// `*`: numbers only.
    Mul,
    /// `/`: numbers only.
    Div,
}

impl Op {
    fn symbol(self) -> char {
        match self {
            Op::Add => '+',
            Op::Sub => '-',
            Op::Mul => '*',
            Op::Div => '/',
        }
    }
}

/// The static type of an expression.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Type {
    /// A number; in a duration slot, milliseconds.
    Number,
    /// A string: never a timing value, hence `EXPR_TYPE` in a slot.
    String,
    /// An instant: what an `until` slot wants.
    Timestamp,
    /// A boolean.
    Boolean,
    /// `contact.attributes.*`: nobody promised a type.
    Untyped,
}

impl Type {
    fn of_field(t: FieldType) -> Type {
        match t {
            FieldType::Number => Type::Number,
            FieldType::String => Type::String,
            FieldType::Timestamp => Type::Timestamp,
            FieldType::Boolean => Type::Boolean,
        }
    }

    /// The name messages use (`number`, …, `untyped attribute`).
    pub fn as_str(self) -> &'static str {
        match self {
            Type::Number => "number",
            Type::String => "string",
            Type::Timestamp => "timestamp",
            Type::Boolean => "boolean",
            Type::Untyped => "untyped attribute",
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A refused expression: what is wrong, and where in the source (byte offset) when known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExprError {
    /// What is wrong and how to fix it.
    pub message: String,
    /// Byte offset into the expression's source, when a single place is to blame.
    pub position: Option<usize>,
    /// Whether the expression is wrong, or only a value it reads is missing right now.
    pub kind: ExprErrorKind,
}

/// What kind of problem an [`ExprError`] is: what the engine fails a step with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExprErrorKind {
    /// The expression itself is wrong: syntax, types, a division by zero, a value out of range
    /// (`EXPR_TYPE` at run time, or the slot's grammar code at validation).
    #[default]
    Invalid,
    /// A path it reads has no value when it is evaluated (`EXPR_MISSING`): the flow should test
    /// it with `exists` in a branch first.
    Missing,
}

impl ExprError {
    fn at(position: usize, message: impl Into<String>) -> ExprError {
        ExprError {
            message: message.into(),
            position: Some(position),
            kind: ExprErrorKind::Invalid,
        }
    }

    fn new(message: impl Into<String>) -> ExprError {
        ExprError {
            message: message.into(),
            position: None,
            kind: ExprErrorKind::Invalid,
        }
    }

    /// `path` has no value: says what absent means for its source, and how to guard it.
    fn missing(path: &Path) -> ExprError {
        let why = match path {
            Path::Input(_) => "the enrollment input has no value for it",
            Path::Contact(_) => "the contact has none",
            Path::Attribute(_) => "the contact has no such attribute",
            Path::Fetch(_) => "no fetch has answered yet, or its response has no such field",
            Path::Signal(_) => {
                "the last `wait_for` closed without a signal, or its signal did not carry it"
            }
        };
        ExprError {
            message: format!(
                "`{path}` is missing ({why}): test it with `exists` in a branch first"
            ),
            position: None,
            kind: ExprErrorKind::Missing,
        }
    }

    /// True when a value the expression reads is missing (`EXPR_MISSING`), not the expression
    /// wrong.
    pub fn is_missing(&self) -> bool {
        self.kind == ExprErrorKind::Missing
    }
}

impl fmt::Display for ExprError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.position {
            Some(p) => write!(f, "at position {p}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for ExprError {}

/// True when a slot's text contains a `${ }` interpolation, which is refused by name.
pub fn is_interpolation(text: &str) -> bool {
    text.contains("${")
}

/// The expression text of a slot when it starts with `$:`, else `None` (a literal).
pub fn strip_prefix(text: &str) -> Option<&str> {
    text.trim_start().strip_prefix(PREFIX)
}

impl Expr {
    /// Parses the text after `$:`. Positions in errors are byte offsets into `text`.
    pub fn parse(text: &str) -> Result<Expr, ExprError> {
        let mut p = Parser { src: text, pos: 0 };
        p.skip_ws();
        if p.pos == text.len() {
            return Err(ExprError::at(
                p.pos,
                "the expression is empty: write e.g. `$: input.wait_ms`",
            ));
        }
        let node = p.expr()?;
        p.skip_ws();
        if p.pos < text.len() {
            return Err(ExprError::at(
                p.pos,
                format!(
                    "unexpected `{}`: an expression is paths, numbers, `+ - * /` and parentheses",
                    &text[p.pos..].chars().next().unwrap_or(' ')
                ),
            ));
        }
        Ok(Expr {
            source: text.trim().to_string(),
            node,
        })
    }

    /// Infers the type against the flow's `input` schema.
    pub fn infer(&self, input: &InputSchema) -> Result<Type, ExprError> {
        infer(&self.node, input)
    }

    /// Every path the expression reads.
    pub fn paths(&self) -> Vec<&Path> {
        fn walk<'a>(n: &'a Node, out: &mut Vec<&'a Path>) {
            match n {
                Node::Number(_) => {}
                Node::Path(p) => out.push(p),
                Node::Neg(a) => walk(a, out),
                Node::Binary(_, a, b) => {
                    walk(a, out);
                    walk(b, out);
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.node, &mut out);
        out
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "$: {}", self.source)
    }
}

struct Parser<'a> {
    src: &'a str,
    pos: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.src.as_bytes().get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn expr(&mut self) -> Result<Node, ExprError> {
        let mut left = self.term()?;
        loop {
            self.skip_ws();
            let op = match self.peek() {
                Some(b'+') => Op::Add,
                Some(b'-') => Op::Sub,
                _ => return Ok(left),
            };
            self.pos += 1;
            let right = self.term()?;
            left = Node::Binary(op, Box::new(left), Box::new(right));
        }
    }

    fn term(&mut self) -> Result<Node, ExprError> {
        let mut left = self.unary()?;
        loop {
            self.skip_ws();
            let op = match self.peek() {
                Some(b'*') => Op::Mul,
                Some(b'/') => Op::Div,
                _ => return Ok(left),
            };
            self.pos += 1;
            let right = self.unary()?;
            left = Node::Binary(op, Box::new(left), Box::new(right));
        }
    }

    fn unary(&mut self) -> Result<Node, ExprError> {
        self.skip_ws();
        if self.peek() == Some(b'-') {
            self.pos += 1;
            return Ok(Node::Neg(Box::new(self.unary()?)));
        }
        self.atom()
    }

    fn atom(&mut self) -> Result<Node, ExprError> {
        self.skip_ws();
        let start = self.pos;
        match self.peek() {
            Some(b'(') => {
                self.pos += 1;
                let inner = self.expr()?;
                self.skip_ws();
                if self.peek() != Some(b')') {
                    return Err(ExprError::at(
                        self.pos,
                        format!("missing `)` to close the `(` at position {start}"),
                    ));
                }
                self.pos += 1;
                Ok(inner)
            }
            Some(c) if c.is_ascii_digit() => {
                while matches!(self.peek(), Some(c) if c.is_ascii_digit()) {
                    self.pos += 1;
                }
                if self.peek() == Some(b'.') {
                    self.pos += 1;
                    let frac = self.pos;
                    while matches!(self.peek(), Some(c) if c.is_ascii_digit()) {
                        self.pos += 1;
                    }
                    if self.pos == frac {
                        return Err(ExprError::at(self.pos, "a digit must follow the `.`"));
                    }
                }
                let text = &self.src[start..self.pos];
                text.parse::<f64>()
                    .map(Node::Number)
                    .map_err(|_| ExprError::at(start, format!("`{text}` is not a number")))
            }
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => self.path(),
            Some(_) => Err(ExprError::at(
                start,
                format!(
                    "expected a number, a path (`input.<field>`, `contact.<field>`) or `(`, found `{}`",
                    self.src[start..].chars().next().unwrap_or(' ')
                ),
            )),
            None => Err(ExprError::at(
                start,
                "the expression ends too early: an operand is missing",
            )),
        }
    }

    fn ident(&mut self) -> Option<&str> {
        let start = self.pos;
        if !matches!(self.peek(), Some(c) if c.is_ascii_alphabetic() || c == b'_') {
            return None;
        }
        while matches!(self.peek(), Some(c) if c.is_ascii_alphanumeric() || c == b'_') {
            self.pos += 1;
        }
        Some(&self.src[start..self.pos])
    }

    fn path(&mut self) -> Result<Node, ExprError> {
        let start = self.pos;
        let mut parts: Vec<String> = Vec::new();
        loop {
            let seg_start = self.pos;
            match self.ident() {
                Some(s) => parts.push(s.to_string()),
                None => {
                    return Err(ExprError::at(
                        seg_start,
                        "a field name (letters, digits, `_`) must follow the `.`",
                    ))
                }
            }
            if self.peek() == Some(b'.') {
                self.pos += 1;
            } else {
                break;
            }
        }
        let text = &self.src[start..self.pos];
        let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
        let path = match parts.as_slice() {
            ["input", field] => Path::Input(field.to_string()),
            ["contact", "attributes", name] => Path::Attribute(name.to_string()),
            ["fetch", "status"] => Path::Fetch(vec!["status".into()]),
            ["fetch", "body", rest @ ..] => Path::Fetch(
                std::iter::once("body")
                    .chain(rest.iter().copied())
                    .map(String::from)
                    .collect(),
            ),
            ["fetch", ..] => {
                return Err(ExprError::at(
                    start,
                    format!("`{text}`: the last fetch has `fetch.status` and `fetch.body.<field>…`"),
                ))
            }
            ["signal", rest @ ..] => match SignalField::parse(&rest.join(".")) {
                Some(f) => Path::Signal(f),
                None => {
                    let names: Vec<String> = SignalField::ALL
                        .iter()
                        .map(|f| format!("`signal.{}`", f.as_str()))
                        .collect();
                    return Err(ExprError::at(
                        start,
                        format!(
                            "`{text}`: the signal that closed the last `wait_for` has {} and {}",
                            names[..names.len() - 1].join(", "),
                            names[names.len() - 1]
                        ),
                    ));
                }
            },
            ["contact", field] => match ContactField::parse(field) {
                Some(f) => Path::Contact(f),
                None => {
                    return Err(ExprError::at(
                        start,
                        format!("`{text}`: a contact has `id`, `email`, `phone`, `tz` and `attributes.<name>`"),
                    ))
                }
            },
            ["input"] | ["input", ..] => {
                return Err(ExprError::at(
                    start,
                    format!("`{text}`: write `input.<field>` with one field name"),
                ))
            }
            ["contact", ..] => {
                return Err(ExprError::at(
                    start,
                    format!("`{text}`: write `contact.<field>` or `contact.attributes.<name>`"),
                ))
            }
            _ => {
                return Err(ExprError::at(
                    start,
                    format!("`{text}`: a path starts with `input.`, `contact.`, `fetch.` or `signal.`"),
                ))
            }
        };
        Ok(Node::Path(path))
    }
}

fn infer(node: &Node, input: &InputSchema) -> Result<Type, ExprError> {
    match node {
        Node::Number(_) => Ok(Type::Number),
        Node::Path(Path::Input(name)) => match input.get(name) {
            Some(t) => Ok(Type::of_field(*t)),
            None => Err(ExprError::new(format!(
                "`input.{name}` is not declared: add `\"{name}\": \"number\"` (or its type) to the flow's `input`"
            ))),
        },
        Node::Path(Path::Contact(_)) => Ok(Type::String),
        Node::Path(Path::Attribute(_)) => Ok(Type::Untyped),
        Node::Path(Path::Fetch(parts)) if parts.len() == 1 => Ok(Type::Number),
        Node::Path(Path::Fetch(_)) => Ok(Type::Untyped),
        Node::Path(Path::Signal(SignalField::ResumeOn)) => Ok(Type::Timestamp),
        Node::Path(Path::Signal(_)) => Ok(Type::String),
        Node::Neg(a) => match infer(a, input)? {
            Type::Number => Ok(Type::Number),
            t => Err(ExprError::new(format!("`-` needs a number, not a {t}"))),
        },
        Node::Binary(op, a, b) => {
            let (ta, tb) = (infer(a, input)?, infer(b, input)?);
            binary_type(*op, ta, tb).ok_or_else(|| {
                let extra = if ta == Type::Untyped || tb == Type::Untyped {
                    ": contact attributes are untyped; declare an `input` field of the right type and pass the value at enrollment"
                } else {
                    ""
                };
                ExprError::new(format!(
                    "`{ta} {} {tb}` is not allowed (numbers combine with `+ - * /`; a timestamp takes `+`/`-` a number of milliseconds; timestamp `-` timestamp is milliseconds){extra}",
                    op.symbol()
                ))
            })
        }
    }
}

fn binary_type(op: Op, a: Type, b: Type) -> Option<Type> {
    use Type::*;
    match (op, a, b) {
        (_, Number, Number) => Some(Number),
        (Op::Add, Timestamp, Number) | (Op::Add, Number, Timestamp) => Some(Timestamp),
        (Op::Sub, Timestamp, Number) => Some(Timestamp),
        (Op::Sub, Timestamp, Timestamp) => Some(Number),
        _ => None,
    }
}

/// What an expression reads about the contact at run time.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ContactView {
    /// `contact.id`.
    pub id: String,
    /// `contact.email`.
    pub email: Option<String>,
    /// `contact.phone` (E.164).
    pub phone: Option<String>,
    /// The zone name, when set or inferred.
    pub tz: Option<String>,
    /// Free-form CRM attributes.
    pub attributes: serde_json::Map<String, serde_json::Value>,
    /// The last `fetch` response as `{"status": n, "body": …}` (docs/flows.md, "fetch"); `None` before
    /// any fetch answered.
    pub fetch: Option<serde_json::Value>,
    /// What `signal.*` reads: the signal that closed the last `wait_for`; `None` before any
    /// did, and after a `wait_for` that closed by its timeout.
    pub signal: Option<SignalView>,
}

/// The signal that closed the last `wait_for`, as `signal.*` reads it. A field it did not carry
/// is `None`, and a path to it is missing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SignalView {
    /// `signal.channel`.
    pub channel: Option<String>,
    /// `signal.intent`.
    pub intent: Option<Intent>,
    /// `signal.resume_on`: already the instant the named day starts in the contact's zone (else
    /// the sender's); the engine resolves the zone when it builds the view.
    pub resume_on: Option<DateTime<Utc>>,
    /// `signal.referral.email` and `signal.referral.name`.
    pub referral: Option<Referral>,
}

impl SignalView {
    /// The typed value of `field`, `None` when the signal did not carry it.
    pub fn value(&self, field: SignalField) -> Option<Value> {
        match field {
            SignalField::Intent => self.intent.map(|i| Value::String(i.as_str().to_string())),
            SignalField::Channel => self.channel.clone().map(Value::String),
            SignalField::ResumeOn => self.resume_on.map(Value::Timestamp),
            SignalField::ReferralEmail => self
                .referral
                .as_ref()
                .map(|r| Value::String(r.email.clone())),
            SignalField::ReferralName => self
                .referral
                .as_ref()
                .and_then(|r| r.name.clone())
                .map(Value::String),
        }
    }
}

impl ContactView {
    /// The JSON value at a path (`None` when absent or null), for branch conditions.
    pub fn get(&self, path: &Path, input: &serde_json::Value) -> Option<serde_json::Value> {
        use serde_json::Value as J;
        let v = match path {
            Path::Input(name) => input.get(name).cloned(),
            Path::Contact(ContactField::Id) => Some(J::String(self.id.clone())),
            Path::Contact(ContactField::Email) => self.email.clone().map(J::String),
            Path::Contact(ContactField::Phone) => self.phone.clone().map(J::String),
            Path::Contact(ContactField::Tz) => self.tz.clone().map(J::String),
            Path::Attribute(name) => self.attributes.get(name).cloned(),
            Path::Fetch(parts) => {
                let mut at = self.fetch.as_ref()?;
                for part in parts {
                    at = at.get(part)?;
                }
                Some(at.clone())
            }
            Path::Signal(field) => self.signal.as_ref()?.value(*field).map(|v| match v {
                Value::Timestamp(t) => {
                    J::String(t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
                }
                Value::String(s) => J::String(s),
                Value::Number(n) => serde_json::Number::from_f64(n).map_or(J::Null, J::Number),
                Value::Boolean(b) => J::Bool(b),
            }),
        };
        v.filter(|v| !v.is_null())
    }
}

/// A value at run time.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A number.
    Number(f64),
    /// An instant.
    Timestamp(DateTime<Utc>),
    /// A string.
    String(String),
    /// A boolean.
    Boolean(bool),
}

impl Value {
    fn type_name(&self) -> &'static str {
        match self {
            Value::Number(_) => "number",
            Value::Timestamp(_) => "timestamp",
            Value::String(_) => "string",
            Value::Boolean(_) => "boolean",
        }
    }
}

/// Evaluates `expr` on an enrollment's `input` (a JSON object; a `timestamp` field is an RFC 3339
/// string) and its contact. The engine calls this when the step is entered.
///
/// An input field's JSON value is read by its declared meaning: a string that parses as RFC 3339
/// is a timestamp (a `timestamp` field), a number a number. Contact attributes are read by their
/// JSON type the same way.
pub fn eval(
    expr: &Expr,
    input: &serde_json::Value,
    contact: &ContactView,
) -> Result<Value, ExprError> {
    eval_node(&expr.node, input, contact)
}

/// Evaluates a duration slot's expression to whole milliseconds (rounded to the nearest; may be
/// negative or zero: the slot decides, docs/timing.md, "A target already in the past").
pub fn eval_millis(
    expr: &Expr,
    input: &serde_json::Value,
    contact: &ContactView,
) -> Result<i64, ExprError> {
    match eval(expr, input, contact)? {
        Value::Number(n) => to_millis(n),
        other => Err(ExprError::new(format!(
            "`{}` gave a {}, not a number of milliseconds",
            expr.source,
            other.type_name()
        ))),
    }
}

/// Evaluates an `until` slot's expression to an instant (a timestamp, or a number of epoch
/// milliseconds).
pub fn eval_instant(
    expr: &Expr,
    input: &serde_json::Value,
    contact: &ContactView,
) -> Result<DateTime<Utc>, ExprError> {
    match eval(expr, input, contact)? {
        Value::Timestamp(t) => Ok(t),
        Value::Number(n) => DateTime::from_timestamp_millis(to_millis(n)?).ok_or_else(|| {
            ExprError::new(format!(
                "`{}` gave {n}, which is not an instant",
                expr.source
            ))
        }),
        other => Err(ExprError::new(format!(
            "`{}` gave a {}, not a timestamp",
            expr.source,
            other.type_name()
        ))),
    }
}

fn to_millis(n: f64) -> Result<i64, ExprError> {
    let r = n.round();
    if !r.is_finite() || r.abs() > 8.64e15 {
        return Err(ExprError::new(format!(
            "{n} is out of range for milliseconds"
        )));
    }
    Ok(r as i64)
}

fn read_json(path: &Path, v: serde_json::Value) -> Result<Value, ExprError> {
    use serde_json::Value as J;
    match v {
        J::Number(n) => n
            .as_f64()
            .map(Value::Number)
            .ok_or_else(|| ExprError::new(format!("`{path}` is not a finite number"))),
        J::Bool(b) => Ok(Value::Boolean(b)),
        J::String(s) => Ok(match DateTime::parse_from_rfc3339(&s) {
            Ok(t) => Value::Timestamp(t.with_timezone(&Utc)),
            Err(_) => Value::String(s),
        }),
        other => Err(ExprError::new(format!(
            "`{path}` holds {other}, which is not a number, string, timestamp or boolean"
        ))),
    }
}

fn eval_node(
    node: &Node,
    input: &serde_json::Value,
    contact: &ContactView,
) -> Result<Value, ExprError> {
    match node {
        Node::Number(n) => Ok(Value::Number(*n)),
        // Signal fields are typed already: a referral's name stays a string even when it reads
        // like a timestamp.
        Node::Path(p @ Path::Signal(field)) => contact
            .signal
            .as_ref()
            .and_then(|s| s.value(*field))
            .ok_or_else(|| ExprError::missing(p)),
        Node::Path(p) => {
            let raw = contact.get(p, input).ok_or_else(|| ExprError::missing(p))?;
            match p {
                // Contact fields are strings even when they look like a timestamp.
                Path::Contact(_) => Ok(Value::String(raw.as_str().unwrap_or_default().into())),
                _ => read_json(p, raw),
            }
        }
        Node::Neg(a) => match eval_node(a, input, contact)? {
            Value::Number(n) => Ok(Value::Number(-n)),
            v => Err(ExprError::new(format!(
                "`-` needs a number, not a {}",
                v.type_name()
            ))),
        },
        Node::Binary(op, a, b) => {
            let (va, vb) = (eval_node(a, input, contact)?, eval_node(b, input, contact)?);
            let ms = |n: f64| to_millis(n).map(chrono::Duration::milliseconds);
            let out = match (op, &va, &vb) {
                (Op::Add, Value::Number(x), Value::Number(y)) => Value::Number(x + y),
                (Op::Sub, Value::Number(x), Value::Number(y)) => Value::Number(x - y),
                (Op::Mul, Value::Number(x), Value::Number(y)) => Value::Number(x * y),
                (Op::Div, Value::Number(_), Value::Number(y)) if *y == 0.0 => {
                    return Err(ExprError::new("division by zero"))
                }
                (Op::Div, Value::Number(x), Value::Number(y)) => Value::Number(x / y),
                (Op::Add, Value::Timestamp(t), Value::Number(n))
                | (Op::Add, Value::Number(n), Value::Timestamp(t)) => Value::Timestamp(
                    t.checked_add_signed(ms(*n)?)
                        .ok_or_else(|| ExprError::new("the timestamp is out of range"))?,
                ),
                (Op::Sub, Value::Timestamp(t), Value::Number(n)) => Value::Timestamp(
                    t.checked_sub_signed(ms(*n)?)
                        .ok_or_else(|| ExprError::new("the timestamp is out of range"))?,
                ),
                (Op::Sub, Value::Timestamp(x), Value::Timestamp(y)) => {
                    Value::Number((*x - *y).num_milliseconds() as f64)
                }
                _ => {
                    return Err(ExprError::new(format!(
                        "`{} {} {}` is not allowed",
                        va.type_name(),
                        op.symbol(),
                        vb.type_name()
                    )))
                }
            };
            match out {
                Value::Number(n) if !n.is_finite() => {
                    Err(ExprError::new("the result is not a finite number"))
                }
                v => Ok(v),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> InputSchema {
        [
            ("wait_ms", FieldType::Number),
            ("demo_at", FieldType::Timestamp),
            ("plan", FieldType::String),
            ("vip", FieldType::Boolean),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }

    #[test]
    fn parse_errors_point_at_the_problem() {
        let cases: &[(&str, usize, &str)] = &[
            ("", 0, "empty"),
            ("   ", 3, "empty"),
            ("input.wait_ms +", 15, "ends too early"),
            ("input.wait_ms ) ", 14, "unexpected `)`"),
            ("(1 + 2", 6, "missing `)`"),
            ("input", 0, "`input.<field>`"),
            ("input.a.b", 0, "one field name"),
            ("contact.name", 0, "a contact has"),
            ("nudge_ms", 0, "starts with `input.`"),
            ("1 + 'x'", 4, "expected a number"),
            ("1.", 2, "digit must follow"),
            ("input.", 6, "field name"),
            ("1e5", 1, "unexpected `e`"),
            (
                "signal",
                0,
                "the signal that closed the last `wait_for` has",
            ),
            ("signal.intents", 0, "`signal.intent`, `signal.channel`"),
            (
                "signal.referral",
                0,
                "`signal.referral.email` and `signal.referral.name`",
            ),
            ("signal.referral.phone", 0, "`signal.resume_on`"),
            ("signal.resume_on.day", 0, "the signal that closed"),
            ("1 + signal.payload", 4, "the signal that closed"),
        ];
        for (text, pos, needle) in cases {
            let err = Expr::parse(text).unwrap_err();
            assert_eq!(err.position, Some(*pos), "{text:?}: {err}");
            assert!(err.message.contains(needle), "{text:?}: {err}");
        }
    }

    #[test]
    fn signal_paths_parse_and_print_back() {
        use SignalField::*;
        let cases = [
            ("signal.intent", Intent),
            ("signal.channel", Channel),
            ("signal.resume_on", ResumeOn),
            ("signal.referral.email", ReferralEmail),
            ("signal.referral.name", ReferralName),
        ];
        for (text, field) in cases {
            let e = Expr::parse(text).unwrap();
            assert_eq!(e.node, Node::Path(Path::Signal(field)), "{text}");
            assert_eq!(Path::Signal(field).to_string(), text);
            assert_eq!(SignalField::parse(&text["signal.".len()..]), Some(field));
        }
        assert_eq!(SignalField::ALL.len(), cases.len(), "every field has a row");
        // Any other name is refused with the five listed, each by its full path.
        let err = Expr::parse("signal.sentiment").unwrap_err();
        for (text, _) in cases {
            assert!(err.message.contains(&format!("`{text}`")), "{err}");
        }
    }

    #[test]
    fn precedence_and_associativity() {
        let e = Expr::parse("1 - 2 - 3 * 4 / 2").unwrap();
        let v = eval(&e, &json!({}), &ContactView::default()).unwrap();
        assert_eq!(v, Value::Number(1.0 - 2.0 - 3.0 * 4.0 / 2.0));
        let e = Expr::parse("-(1 + 2) * 2").unwrap();
        assert_eq!(
            eval(&e, &json!({}), &ContactView::default()).unwrap(),
            Value::Number(-6.0)
        );
    }

    #[test]
    fn type_inference_table() {
        use Type::*;
        let cases: &[(&str, Option<Type>)] = &[
            ("input.wait_ms", Some(Number)),
            ("input.wait_ms * 2 + 1000", Some(Number)),
            ("input.demo_at", Some(Timestamp)),
            ("input.demo_at - 86400000", Some(Timestamp)),
            ("3600000 + input.demo_at", Some(Timestamp)),
            ("input.demo_at - input.demo_at", Some(Number)),
            ("-input.wait_ms", Some(Number)),
            ("input.plan", Some(String)),
            ("contact.email", Some(String)),
            ("contact.attributes.score", Some(Untyped)),
            ("input.demo_at + input.demo_at", None),
            ("1000 - input.demo_at", None),
            ("input.demo_at * 2", None),
            ("input.plan + 1", None),
            ("input.vip * 1", None),
            ("contact.attributes.score * 1000", None),
            ("-input.demo_at", None),
            ("input.missing", None),
            ("signal.intent", Some(String)),
            ("signal.channel", Some(String)),
            ("signal.resume_on", Some(Timestamp)),
            ("signal.referral.email", Some(String)),
            ("signal.referral.name", Some(String)),
            ("signal.resume_on + 3600000", Some(Timestamp)),
            ("signal.resume_on - input.demo_at", Some(Number)),
            ("signal.resume_on + signal.resume_on", None),
            ("signal.intent * 2", None),
            ("-signal.resume_on", None),
        ];
        for (text, want) in cases {
            let got = Expr::parse(text).unwrap().infer(&schema()).ok();
            assert_eq!(got, *want, "{text}");
        }
    }

    #[test]
    fn untyped_attribute_refusal_says_what_to_do() {
        let err = Expr::parse("contact.attributes.score * 1000")
            .unwrap()
            .infer(&schema())
            .unwrap_err();
        assert!(err.message.contains("declare an `input` field"), "{err}");
    }

    #[test]
    fn evaluation() {
        let input = json!({"wait_ms": 1500, "demo_at": "2026-09-01T10:00:00+02:00"});
        let contact = ContactView {
            id: "c1".into(),
            attributes: serde_json::Map::from_iter([("score".into(), json!(3))]),
            ..ContactView::default()
        };
        let e = |s: &str| Expr::parse(s).unwrap();
        assert_eq!(
            eval_millis(&e("input.wait_ms * 2"), &input, &contact),
            Ok(3000)
        );
        assert_eq!(
            eval_millis(&e("input.wait_ms / 1000"), &input, &contact),
            Ok(2)
        );
        assert_eq!(
            eval_instant(&e("input.demo_at - 3600000"), &input, &contact)
                .unwrap()
                .to_rfc3339(),
            "2026-09-01T07:00:00+00:00"
        );
        assert_eq!(
            eval_instant(&e("1000"), &input, &contact)
                .unwrap()
                .to_rfc3339(),
            "1970-01-01T00:00:01+00:00"
        );
        assert_eq!(
            eval(&e("contact.attributes.score * 2"), &input, &contact),
            Ok(Value::Number(6.0))
        );
        assert_eq!(
            eval(&e("input.demo_at - input.demo_at"), &input, &contact),
            Ok(Value::Number(0.0))
        );
        let err = eval(&e("input.nope"), &input, &contact).unwrap_err();
        assert!(err.message.contains("`input.nope` is missing"), "{err}");
        let err = eval(&e("1 / (input.wait_ms - 1500)"), &input, &contact).unwrap_err();
        assert!(err.message.contains("division by zero"), "{err}");
        assert!(eval_millis(&e("input.demo_at"), &input, &contact).is_err());
        assert!(eval_instant(&e("contact.id"), &input, &contact).is_err());
    }

    fn signal_contact(view: Option<SignalView>) -> ContactView {
        ContactView {
            id: "c1".into(),
            signal: view,
            ..ContactView::default()
        }
    }

    #[test]
    fn signal_paths_read_the_facts_they_were_given() {
        let day = DateTime::parse_from_rfc3339("2027-03-01T07:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let full = signal_contact(Some(SignalView {
            channel: Some("email".into()),
            intent: Some(Intent::NotNow),
            resume_on: Some(day),
            referral: Some(Referral {
                email: "bo@example.com".into(),
                // Reads like a timestamp, and is still the string it was written as.
                name: Some("2027-03-01T00:00:00Z".into()),
            }),
        }));
        let e = |s: &str| Expr::parse(s).unwrap();
        let input = json!({});
        let s = |v: &str| Ok(Value::String(v.into()));
        assert_eq!(eval(&e("signal.intent"), &input, &full), s("not_now"));
        assert_eq!(eval(&e("signal.channel"), &input, &full), s("email"));
        assert_eq!(
            eval(&e("signal.referral.email"), &input, &full),
            s("bo@example.com")
        );
        assert_eq!(
            eval(&e("signal.referral.name"), &input, &full),
            s("2027-03-01T00:00:00Z")
        );
        assert_eq!(eval_instant(&e("signal.resume_on"), &input, &full), Ok(day));
        assert_eq!(
            eval_instant(&e("signal.resume_on + 3600000"), &input, &full)
                .unwrap()
                .to_rfc3339(),
            "2027-03-01T08:00:00+00:00"
        );
        // Branch conditions read the same values as JSON: a timestamp as RFC 3339.
        let get = |p: &str| full.get(&Path::Signal(SignalField::parse(p).unwrap()), &input);
        assert_eq!(get("resume_on"), Some(json!("2027-03-01T07:00:00.000Z")));
        assert_eq!(get("intent"), Some(json!("not_now")));
        // A string where a number is needed is the expression's fault, not a missing value.
        let err = eval_millis(&e("signal.intent"), &input, &full).unwrap_err();
        assert_eq!(err.kind, ExprErrorKind::Invalid, "{err}");
    }

    #[test]
    fn absent_signal_fields_are_missing() {
        // No wait_for closed by a signal (or the last one timed out): every field is missing.
        let none = signal_contact(None);
        // A signal that carried only its channel: the rest is missing.
        let bare = signal_contact(Some(SignalView {
            channel: Some("sms".into()),
            ..SignalView::default()
        }));
        // A referral without a name: the name is missing, the address is not.
        let referred = signal_contact(Some(SignalView {
            referral: Some(Referral {
                email: "bo@example.com".into(),
                name: None,
            }),
            ..SignalView::default()
        }));
        let input = json!({});
        let cases: &[(&ContactView, &str, bool)] = &[
            (&none, "signal.channel", true),
            (&none, "signal.resume_on", true),
            (&bare, "signal.channel", false),
            (&bare, "signal.intent", true),
            (&bare, "signal.resume_on + 1000", true),
            (&bare, "signal.referral.email", true),
            (&referred, "signal.referral.email", false),
            (&referred, "signal.referral.name", true),
        ];
        for (contact, text, missing) in cases {
            let path = Expr::parse(text).unwrap().paths()[0].clone();
            let got = eval(&Expr::parse(text).unwrap(), &input, contact);
            assert_eq!(got.is_err(), *missing, "{text}: {got:?}");
            assert_eq!(contact.get(&path, &input).is_none(), *missing, "{text}");
            if let Err(err) = got {
                assert!(err.is_missing(), "{text}: {err:?}");
                assert!(
                    err.message.contains(&format!("`{path}` is missing")),
                    "{err}"
                );
                assert!(err.message.contains("`exists`"), "{err}");
            }
        }
    }

    #[test]
    fn missing_is_its_own_kind_for_every_source() {
        let contact = ContactView {
            id: "c1".into(),
            fetch: Some(json!({"status": 200, "body": {}})),
            ..ContactView::default()
        };
        let input = json!({"wait_ms": 5});
        for text in [
            "input.demo_at",
            "contact.attributes.delay",
            "fetch.body.days",
            "signal.resume_on",
            "contact.phone",
        ] {
            let err = eval(&Expr::parse(text).unwrap(), &input, &contact).unwrap_err();
            assert_eq!(err.kind, ExprErrorKind::Missing, "{text}: {err}");
        }
        let err = eval(
            &Expr::parse("1 / (input.wait_ms - 5)").unwrap(),
            &input,
            &contact,
        )
        .unwrap_err();
        assert_eq!(err.kind, ExprErrorKind::Invalid, "division by zero: {err}");
    }

    #[test]
    fn slot_prefixes() {
        assert_eq!(strip_prefix("$: input.x"), Some(" input.x"));
        assert_eq!(strip_prefix("  $:input.x"), Some("input.x"));
        assert_eq!(strip_prefix("2bd"), None);
        assert!(is_interpolation("${input.x}"));
        assert!(is_interpolation("2d ${x}"));
        assert!(!is_interpolation("$: input.x"));
    }
}
