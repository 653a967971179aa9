//! How an enrollment's [`EnrollmentState`] is kept in `enrollments.state`: MessagePack, with
//! the struct's field names (so a field added later, or left out when empty, reads back as
//! its default, as JSON did), behind a one-byte tag.
//!
//! Every step decodes the state and encodes it again, and as JSON that was a quarter of the
//! planner's instructions (escaping every string on the way out, looking for escapes and
//! parsing digits on the way in; docs/benchmarks.md). MessagePack copies strings as they are
//! and keeps instants as integers ([`crate::engine::instant::stored`] writes milliseconds to a
//! format that is not human-readable).
//!
//! States written before (JSON text, which always starts with `{`) are still read: the column
//! changed to bytes with its text kept (migration `2026-12-07-100000_state_encoding`), and a
//! state is written in the new form the next time it steps. [`decode`] tells the two apart by
//! the first byte, so no stored state needs rewriting at once.

use crate::engine::EnrollmentState;

/// The first byte of a MessagePack state (never `{`, which opens the JSON of older ones).
const MSGPACK: u8 = 1;

/// Why a stored state could not be read.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    #[error("stored state (JSON): {0}")]
    Json(#[from] serde_json::Error),
    #[error("stored state (MessagePack): {0}")]
    MessagePack(#[from] rmp_serde::decode::Error),
    #[error("stored state starts with byte {0:#04x}: neither JSON nor nudge's MessagePack")]
    Unknown(u8),
    #[error("stored state is empty")]
    Empty,
}

/// Writes `state` into `out` (cleared first; its capacity is reused).
pub fn encode_into(state: &EnrollmentState, out: &mut Vec<u8>) {
    out.clear();
    out.push(MSGPACK);
    rmp_serde::encode::write_named(out, state).expect("an engine state encodes");
}

/// `state` encoded as it is stored.
pub fn encode(state: &EnrollmentState) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    encode_into(state, &mut out);
    out
}

/// Reads a stored state, in either form.
pub fn decode(bytes: &[u8]) -> Result<EnrollmentState, DecodeError> {
    match bytes.first() {
        Some(&MSGPACK) => Ok(rmp_serde::from_slice(&bytes[1..])?),
        Some(b'{') => Ok(serde_json::from_slice(bytes)?),
        Some(&other) => Err(DecodeError::Unknown(other)),
        None => Err(DecodeError::Empty),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_and_empty_are_errors_that_say_so() {
        assert_eq!(
            decode(b"\x07abc").unwrap_err().to_string(),
            "stored state starts with byte 0x07: neither JSON nor nudge's MessagePack"
        );
        assert_eq!(
            decode(b"").unwrap_err().to_string(),
            "stored state is empty"
        );
    }
}
