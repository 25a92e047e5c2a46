//! The flexible-version forms of Kafka's generated messages over the crate's checked
//! [`Reader`] and [`Writer`]: unsigned varints, compact strings and arrays (length + 1, `0` for
//! null), nullable structs (an `i8` marker, `-1` for null) and tagged-field sections.
//!
//! Every count is checked against the bytes left before anything is reserved: an element takes
//! at least [`Struct::MIN_SIZE`] bytes, so a count the input cannot hold is refused at once.

use crate::wire::codec::{Reader, Writer};
use crate::wire::{DecodeError, DecodeErrorKind, EncodeError, Lenience};

/// The longest string Kafka's generated messages read or write (`0x7fff` bytes).
pub(crate) const MAX_STRING_BYTES: usize = 0x7fff;

/// A struct of a flexible-version message, read and written at a version.
pub(crate) trait Struct: Sized {
    /// The fewest bytes one encoded value takes (the bound on a count of them).
    const MIN_SIZE: usize;
    /// Reads one value (its tagged-field section included).
    fn read(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError>;
    /// Writes one value (its tagged-field section included).
    fn write(&self, w: &mut Writer, version: i16) -> Result<(), EncodeError>;
}

/// An unsigned varint of at most five bytes, as Kafka's `ByteUtils.readUnsignedVarint`.
pub(crate) fn uvarint(r: &mut Reader<'_>, field: &'static str) -> Result<u32, DecodeError> {
    let at = r.position();
    let mut value: u32 = 0;
    for i in 0..5 {
        let byte = r.take(1, field).map_err(|e| r.error_at(at, field, e.kind))?[0];
        value |= u32::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(r.error_at(at, field, DecodeErrorKind::MalformedVarint))
}

/// A compact length: `None` for the null marker `0`, else the length, bounded by what is left
/// (`min_size` bytes per element, 1 for a byte string).
fn compact_len(r: &mut Reader<'_>, field: &'static str, min_size: usize) -> Result<Option<usize>, DecodeError> {
    let at = r.position();
    let Some(len) = uvarint(r, field)?.checked_sub(1) else { return Ok(None) };
    let len = len as usize;
    let available = r.remaining();
    if len.saturating_mul(min_size) > available {
        let kind = if min_size == 1 {
            DecodeErrorKind::Truncated { needed: len, available }
        } else {
            DecodeErrorKind::CountExceedsInput { count: len, min_element_size: min_size, available }
        };
        return Err(r.error_at(at, field, kind));
    }
    Ok(Some(len))
}

/// A nullable compact string; invalid UTF-8 is replaced as Java does, and noted.
pub(crate) fn nullable_string(r: &mut Reader<'_>, field: &'static str) -> Result<Option<String>, DecodeError> {
    let at = r.position();
    let Some(len) = compact_len(r, field, 1)? else { return Ok(None) };
    if len > MAX_STRING_BYTES {
        return Err(r.error_at(at, field, DecodeErrorKind::StringTooLong { len, max: MAX_STRING_BYTES }));
    }
    let bytes = r.take(len, field)?;
    Ok(Some(match std::str::from_utf8(bytes) {
        Ok(s) => s.to_owned(),
        Err(_) => {
            r.note(Lenience::ReplacedInvalidUtf8 { field, offset: at });
            String::from_utf8_lossy(bytes).into_owned()
        }
    }))
}

/// A non-nullable compact string (null is refused, as Java's "non-nullable field … was
/// serialized as null").
pub(crate) fn string(r: &mut Reader<'_>, field: &'static str) -> Result<String, DecodeError> {
    let at = r.position();
    nullable_string(r, field)?.ok_or_else(|| r.error_at(at, field, DecodeErrorKind::NegativeLength { value: -1 }))
}

/// The count of a non-nullable compact array of elements of at least `min_size` bytes.
fn count(r: &mut Reader<'_>, field: &'static str, min_size: usize) -> Result<usize, DecodeError> {
    let at = r.position();
    compact_len(r, field, min_size)?.ok_or_else(|| r.error_at(at, field, DecodeErrorKind::NegativeLength { value: -1 }))
}

/// A nullable compact array of structs.
pub(crate) fn nullable_array<T: Struct>(r: &mut Reader<'_>, field: &'static str, version: i16) -> Result<Option<Vec<T>>, DecodeError> {
    let Some(n) = compact_len(r, field, T::MIN_SIZE)? else { return Ok(None) };
    let mut out = Vec::new();
    for _ in 0..n {
        out.push(T::read(r, version)?);
    }
    Ok(Some(out))
}

/// A non-nullable compact array of structs.
pub(crate) fn array<T: Struct>(r: &mut Reader<'_>, field: &'static str, version: i16) -> Result<Vec<T>, DecodeError> {
    let at = r.position();
    nullable_array(r, field, version)?.ok_or_else(|| r.error_at(at, field, DecodeErrorKind::NegativeLength { value: -1 }))
}

/// A non-nullable compact array of non-nullable compact strings.
pub(crate) fn strings(r: &mut Reader<'_>, field: &'static str) -> Result<Vec<String>, DecodeError> {
    let n = count(r, field, 1)?;
    let mut out = Vec::new();
    for _ in 0..n {
        out.push(string(r, field)?);
    }
    Ok(out)
}

/// A non-nullable compact array of `int32`.
pub(crate) fn i32s(r: &mut Reader<'_>, field: &'static str) -> Result<Vec<i32>, DecodeError> {
    let n = count(r, field, 4)?;
    let mut out = Vec::new();
    for _ in 0..n {
        out.push(r.i32(field)?);
    }
    Ok(out)
}

/// A non-nullable compact array of `int16`.
pub(crate) fn i16s(r: &mut Reader<'_>, field: &'static str) -> Result<Vec<i16>, DecodeError> {
    let n = count(r, field, 2)?;
    let mut out = Vec::new();
    for _ in 0..n {
        out.push(r.i16(field)?);
    }
    Ok(out)
}

/// A `bool` (any byte but `0` is true, as Java's `readByte() != 0`).
pub(crate) fn boolean(r: &mut Reader<'_>, field: &'static str) -> Result<bool, DecodeError> {
    Ok(r.i8(field)? != 0)
}

/// A nullable struct: an `i8` marker (negative: null), then the struct.
pub(crate) fn nullable_struct<T: Struct>(r: &mut Reader<'_>, field: &'static str, version: i16) -> Result<Option<T>, DecodeError> {
    if r.i8(field)? < 0 {
        return Ok(None);
    }
    T::read(r, version).map(Some)
}

/// A tagged-field section. This message defines no tagged fields, so each one is unknown and
/// skipped (its size checked against the bytes left), as Java keeps it aside.
pub(crate) fn tagged_fields(r: &mut Reader<'_>, field: &'static str) -> Result<(), DecodeError> {
    let n = uvarint(r, field)?;
    for _ in 0..n {
        uvarint(r, field)?;
        let at = r.position();
        let size = uvarint(r, field)? as usize;
        let available = r.remaining();
        if size > available {
            return Err(r.error_at(at, field, DecodeErrorKind::Truncated { needed: size, available }));
        }
        r.take(size, field)?;
    }
    Ok(())
}

/// Writes an unsigned varint.
pub(crate) fn put_uvarint(w: &mut Writer, mut v: u32) {
    while v >= 0x80 {
        w.raw(&[(v as u8 & 0x7f) | 0x80]);
        v >>= 7;
    }
    w.raw(&[v as u8]);
}

/// Writes a compact length + 1 for `len` elements.
fn put_len(w: &mut Writer, field: &'static str, len: usize) -> Result<(), EncodeError> {
    let n = u32::try_from(len).ok().filter(|&n| n < i32::MAX as u32).ok_or(EncodeError::TooManyElements {
        message: w.message(),
        field,
        len,
    })?;
    put_uvarint(w, n + 1);
    Ok(())
}

/// Writes a nullable compact string.
pub(crate) fn put_nullable_string(w: &mut Writer, field: &'static str, s: Option<&str>) -> Result<(), EncodeError> {
    let Some(s) = s else {
        put_uvarint(w, 0);
        return Ok(());
    };
    if s.len() > MAX_STRING_BYTES {
        return Err(EncodeError::StringTooLong { message: w.message(), field, len: s.len(), max: MAX_STRING_BYTES });
    }
    put_len(w, field, s.len())?;
    w.raw(s.as_bytes());
    Ok(())
}

/// Writes a compact string.
pub(crate) fn put_string(w: &mut Writer, field: &'static str, s: &str) -> Result<(), EncodeError> {
    put_nullable_string(w, field, Some(s))
}

/// Writes a nullable compact array of structs.
pub(crate) fn put_nullable_array<T: Struct>(w: &mut Writer, field: &'static str, items: Option<&[T]>, version: i16) -> Result<(), EncodeError> {
    let Some(items) = items else {
        put_uvarint(w, 0);
        return Ok(());
    };
    put_len(w, field, items.len())?;
    items.iter().try_for_each(|item| item.write(w, version))
}

/// Writes a compact array of structs.
pub(crate) fn put_array<T: Struct>(w: &mut Writer, field: &'static str, items: &[T], version: i16) -> Result<(), EncodeError> {
    put_nullable_array(w, field, Some(items), version)
}

/// Writes a compact array of compact strings.
pub(crate) fn put_strings(w: &mut Writer, field: &'static str, items: &[String]) -> Result<(), EncodeError> {
    put_len(w, field, items.len())?;
    items.iter().try_for_each(|s| put_string(w, field, s))
}

/// Writes a compact array of `int32`.
pub(crate) fn put_i32s(w: &mut Writer, field: &'static str, items: &[i32]) -> Result<(), EncodeError> {
    put_len(w, field, items.len())?;
    items.iter().for_each(|&v| w.i32(v));
    Ok(())
}

/// Writes a compact array of `int16`.
pub(crate) fn put_i16s(w: &mut Writer, field: &'static str, items: &[i16]) -> Result<(), EncodeError> {
    put_len(w, field, items.len())?;
    items.iter().for_each(|&v| w.i16(v));
    Ok(())
}

/// Writes a nullable struct with its marker.
pub(crate) fn put_nullable_struct<T: Struct>(w: &mut Writer, value: Option<&T>, version: i16) -> Result<(), EncodeError> {
    match value {
        None => {
            w.i8(-1);
            Ok(())
        }
        Some(v) => {
            w.i8(1);
            v.write(w, version)
        }
    }
}

/// Writes an empty tagged-field section.
pub(crate) fn put_no_tags(w: &mut Writer) {
    put_uvarint(w, 0);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::MessageKind;

    const MSG: MessageKind = MessageKind::StreamsGroupDescribeResponse;

    #[test]
    fn reads_varints_of_one_to_five_bytes_and_refuses_a_sixth() {
        for v in [0u32, 1, 127, 128, 300, 16_384, u32::MAX] {
            let mut w = Writer::new(MSG, 8);
            put_uvarint(&mut w, v);
            let bytes = w.finish();
            let mut r = Reader::new(&bytes, MSG);
            assert_eq!(uvarint(&mut r, "x").unwrap(), v);
            assert_eq!(r.remaining(), 0);
        }
        let mut r = Reader::new(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x01], MSG);
        let err = uvarint(&mut r, "GroupIds").unwrap_err();
        assert_eq!((err.field, err.offset, err.kind), ("GroupIds", 0, DecodeErrorKind::MalformedVarint));
        let mut r = Reader::new(&[0x80], MSG);
        assert!(matches!(uvarint(&mut r, "x").unwrap_err().kind, DecodeErrorKind::Truncated { .. }));
    }

    #[test]
    fn refuses_a_count_the_bytes_left_cannot_hold() {
        // 2^28 partitions (varint 0x80 0x80 0x80 0x80 0x01 = 2^28 + 1 − 1) in 3 bytes.
        let mut r = Reader::new(&[0x81, 0x80, 0x80, 0x80, 0x01, 0, 0, 0], MSG);
        let err = i32s(&mut r, "Partitions").unwrap_err();
        assert_eq!(err.offset, 0);
        assert_eq!(err.kind, DecodeErrorKind::CountExceedsInput { count: 1 << 28, min_element_size: 4, available: 3 });
    }

    #[test]
    fn refuses_null_where_a_value_is_required_and_strings_above_the_limit() {
        let mut r = Reader::new(&[0], MSG);
        assert_eq!(string(&mut r, "GroupId").unwrap_err().kind, DecodeErrorKind::NegativeLength { value: -1 });
        let mut r = Reader::new(&[0], MSG);
        assert_eq!(nullable_string(&mut r, "ErrorMessage").unwrap(), None);
        let mut bytes = Vec::new();
        let mut w = Writer::new(MSG, 4);
        put_uvarint(&mut w, 0x8001);
        bytes.extend(w.finish());
        bytes.extend(vec![b'a'; 0x8000]);
        let mut r = Reader::new(&bytes, MSG);
        assert_eq!(string(&mut r, "GroupId").unwrap_err().kind, DecodeErrorKind::StringTooLong { len: 0x8000, max: 0x7fff });
    }

    #[test]
    fn skips_unknown_tagged_fields_within_the_input() {
        let mut r = Reader::new(&[2, 0, 1, 9, 5, 2, 7, 7, 42], MSG);
        tagged_fields(&mut r, "_tagged").unwrap();
        assert_eq!(r.remaining(), 1);
        let mut r = Reader::new(&[1, 0, 9, 1], MSG);
        let err = tagged_fields(&mut r, "_tagged").unwrap_err();
        assert_eq!((err.offset, err.kind), (2, DecodeErrorKind::Truncated { needed: 9, available: 1 }));
    }
}
