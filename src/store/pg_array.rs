//! Arrays bound as statement parameters ([`super::pg_batch`]), encoded in one pass.
//!
//! diesel encodes an array parameter element by element, each through a temporary buffer into
//! an output buffer that starts empty and grows by doubling: a 1,000-step batch binds about a
//! megabyte of states, journey text and dispatch columns, and copying it several times was the
//! planner's largest single cost after the journey text. [`Arr`] writes the whole array
//! straight into the parameter's buffer, a small element with its length in one write.
//!
//! The encoding is PostgreSQL's binary array format (`array_recv`): one dimension, no null
//! bitmap flag, the element type's oid, the length, lower bound 1, then each element as its
//! length (-1 for NULL) and its binary value.

use diesel::pg::Pg;
use diesel::serialize::{self, IsNull, Output, ToSql};
use diesel::sql_types::{Array, BigInt, Binary, Bool, Integer, Nullable, Text};
use std::io::Write;

/// A column's values, bound as one array parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arr<T>(pub Vec<T>);

/// An element of an array parameter: its binary value, or `None` for NULL.
pub trait Element {
    /// The element type's oid.
    const OID: u32;
    /// The value's bytes, or `None` for NULL.
    fn bytes(&self) -> Option<ElementBytes<'_>>;
}

/// An element's binary value.
pub enum ElementBytes<'a> {
    Borrowed(&'a [u8]),
    Fixed([u8; 8], usize),
}

impl ElementBytes<'_> {
    fn as_slice(&self) -> &[u8] {
        match self {
            ElementBytes::Borrowed(b) => b,
            ElementBytes::Fixed(b, n) => &b[..*n],
        }
    }
}

/// Elements up to this long are written with their length in one write.
const SMALL: usize = 60;

const TEXT: u32 = 25;
const BYTEA: u32 = 17;
const INT8: u32 = 20;
const INT4: u32 = 23;
const BOOL: u32 = 16;

impl Element for &str {
    const OID: u32 = TEXT;
    fn bytes(&self) -> Option<ElementBytes<'_>> {
        Some(ElementBytes::Borrowed(self.as_bytes()))
    }
}

impl Element for String {
    const OID: u32 = TEXT;
    fn bytes(&self) -> Option<ElementBytes<'_>> {
        Some(ElementBytes::Borrowed(self.as_bytes()))
    }
}

impl Element for &[u8] {
    const OID: u32 = BYTEA;
    fn bytes(&self) -> Option<ElementBytes<'_>> {
        Some(ElementBytes::Borrowed(self))
    }
}

impl Element for i64 {
    const OID: u32 = INT8;
    fn bytes(&self) -> Option<ElementBytes<'_>> {
        Some(ElementBytes::Fixed(self.to_be_bytes(), 8))
    }
}

impl Element for i32 {
    const OID: u32 = INT4;
    fn bytes(&self) -> Option<ElementBytes<'_>> {
        let mut b = [0u8; 8];
        b[..4].copy_from_slice(&self.to_be_bytes());
        Some(ElementBytes::Fixed(b, 4))
    }
}

impl Element for bool {
    const OID: u32 = BOOL;
    fn bytes(&self) -> Option<ElementBytes<'_>> {
        Some(ElementBytes::Fixed(
            [u8::from(*self), 0, 0, 0, 0, 0, 0, 0],
            1,
        ))
    }
}

impl<T: Element> Element for Option<T> {
    const OID: u32 = T::OID;
    fn bytes(&self) -> Option<ElementBytes<'_>> {
        self.as_ref().and_then(Element::bytes)
    }
}

impl<T: Element> Arr<T> {
    /// Writes the parameter straight into diesel's buffer: encoding it into a vector of its
    /// own first copied every bound byte once more (a copy an instruction a byte, glibc's
    /// `rep movsb`).
    fn write_to(&self, out: &mut Output<'_, '_, Pg>) -> serialize::Result {
        self.write_into(out)?;
        Ok(IsNull::No)
    }

    /// The whole parameter, header then every element, into `out` (diesel's buffer, or a
    /// vector in the tests: one writer for both). A small element goes out with its length in
    /// one write.
    fn write_into(
        &self,
        out: &mut impl Write,
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        let mut head = [0u8; 20];
        head[0..4].copy_from_slice(&1i32.to_be_bytes()); // dimensions
        head[4..8].copy_from_slice(&0i32.to_be_bytes()); // flags
        head[8..12].copy_from_slice(&T::OID.to_be_bytes());
        head[12..16].copy_from_slice(&i32::try_from(self.0.len())?.to_be_bytes());
        head[16..20].copy_from_slice(&1i32.to_be_bytes()); // lower bound
        out.write_all(&head)?;
        let mut small = [0u8; 4 + SMALL];
        for element in &self.0 {
            match element.bytes() {
                Some(b) => {
                    let b = b.as_slice();
                    let len = i32::try_from(b.len())?.to_be_bytes();
                    if b.len() <= SMALL {
                        small[..4].copy_from_slice(&len);
                        small[4..4 + b.len()].copy_from_slice(b);
                        out.write_all(&small[..4 + b.len()])?;
                    } else {
                        out.write_all(&len)?;
                        out.write_all(b)?;
                    }
                }
                None => out.write_all(&(-1i32).to_be_bytes())?,
            }
        }
        Ok(())
    }
}

/// PostgreSQL's `tid`, where a row version is (see [`super::LockedRows`]): read and bound in
/// binary, six bytes, so claiming a row does not allocate text for its place.
#[derive(diesel::sql_types::SqlType, diesel::query_builder::QueryId)]
#[diesel(postgres_type(oid = 27, array_oid = 1010))]
pub struct Tid;

/// A row version's place: its page, and its item on the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, diesel::deserialize::FromSqlRow)]
pub struct Place {
    pub block: u32,
    pub item: u16,
}

impl diesel::deserialize::FromSql<Tid, Pg> for Place {
    fn from_sql(value: diesel::pg::PgValue<'_>) -> diesel::deserialize::Result<Self> {
        match *value.as_bytes() {
            [a, b, c, d, e, f] => Ok(Place {
                block: u32::from_be_bytes([a, b, c, d]),
                item: u16::from_be_bytes([e, f]),
            }),
            ref other => Err(format!("a tid is 6 bytes, not {}", other.len()).into()),
        }
    }
}

impl Element for Place {
    const OID: u32 = 27;
    fn bytes(&self) -> Option<ElementBytes<'_>> {
        let mut b = [0u8; 8];
        b[..4].copy_from_slice(&self.block.to_be_bytes());
        b[4..6].copy_from_slice(&self.item.to_be_bytes());
        Some(ElementBytes::Fixed(b, 6))
    }
}

macro_rules! array_of {
    ($sql:ty => $($t:ty),+) => {$(
        impl ToSql<Array<$sql>, Pg> for Arr<$t> {
            fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Pg>) -> serialize::Result {
                self.write_to(out)
            }
        }
    )+};
}

array_of!(Text => &str, String);
array_of!(Nullable<Text> => Option<&str>, Option<String>);
array_of!(Binary => &[u8]);
array_of!(BigInt => i64);
array_of!(Nullable<BigInt> => Option<i64>);
array_of!(Integer => i32);
array_of!(Bool => bool);
array_of!(Tid => Place);

#[cfg(test)]
mod tests {
    use super::*;

    /// What the parameter writer writes.
    fn encode<T: Element>(array: &Arr<T>) -> Vec<u8> {
        let mut out = Vec::new();
        array.write_into(&mut out).unwrap();
        out
    }

    /// PostgreSQL's binary array layout, spelled out for a small case, with an element past
    /// the small-element buffer. (That the server reads every element type back unchanged is
    /// checked against a real server by the integration test
    /// `store::pg::postgres::bound_arrays_round_trip`.)
    #[test]
    fn the_layout_is_array_recv_s() {
        let bytes = encode(&Arr(vec![Some("é"), None]));
        let mut expected = Vec::new();
        for word in [1i32, 0] {
            expected.extend_from_slice(&word.to_be_bytes());
        }
        expected.extend_from_slice(&25u32.to_be_bytes());
        for word in [2i32, 1, 2] {
            expected.extend_from_slice(&word.to_be_bytes());
        }
        expected.extend_from_slice("é".as_bytes());
        expected.extend_from_slice(&(-1i32).to_be_bytes());
        assert_eq!(bytes, expected);
        let ints = encode(&Arr(vec![1i64]));
        assert_eq!(&ints[8..12], &20u32.to_be_bytes());
        assert_eq!(&ints[20..], &[0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 1]);
        let long = "x".repeat(SMALL + 1);
        let bytes = encode(&Arr(vec![long.as_str(), "y"]));
        let n = SMALL + 1;
        assert_eq!(&bytes[12..16], &2i32.to_be_bytes());
        assert_eq!(&bytes[20..24], &(n as i32).to_be_bytes());
        assert_eq!(&bytes[24..24 + n], long.as_bytes());
        assert_eq!(&bytes[24 + n..], &[0, 0, 0, 1, b'y']);
    }
}
