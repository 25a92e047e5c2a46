//! A checked cursor over untrusted bytes, and a writer.
//!
//! Every read checks the remaining length first and reports a [`DecodeError`] naming the field
//! and its byte offset; nothing indexes out of bounds and nothing allocates from a length prefix
//! before the input is known to hold that many bytes.

use super::error::{DecodeError, DecodeErrorKind, EncodeError, Lenience, MessageKind};
use uuid::Uuid;

/// Cursor over the bytes of one message.
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    message: MessageKind,
    lenience: Vec<Lenience>,
}

impl<'a> Reader<'a> {
    #[inline]
    pub(crate) fn new(buf: &'a [u8], message: MessageKind) -> Self {
        Self { buf, pos: 0, message, lenience: Vec::new() }
    }

    /// Offset of the next byte to read.
    #[inline]
    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    #[inline]
    pub(crate) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub(crate) fn error_at(&self, offset: usize, field: &'static str, kind: DecodeErrorKind) -> DecodeError {
        DecodeError { message: self.message, field, offset, kind }
    }

    pub(crate) fn note(&mut self, lenience: Lenience) {
        self.lenience.push(lenience);
    }

    /// Takes `n` bytes, or fails without consuming anything.
    #[inline]
    pub(crate) fn take(&mut self, n: usize, field: &'static str) -> Result<&'a [u8], DecodeError> {
        let rest = &self.buf[self.pos..];
        match rest.split_at_checked(n) {
            Some((head, _)) => {
                self.pos += n;
                Ok(head)
            }
            None => Err(self.error_at(
                self.pos,
                field,
                DecodeErrorKind::Truncated { needed: n, available: rest.len() },
            )),
        }
    }

    /// The bytes not read yet, to read in place where a fixed layout is checked at once.
    #[inline]
    pub(crate) fn rest(&self) -> &'a [u8] {
        &self.buf[self.pos..]
    }

    /// Moves past `n` bytes the caller has read from [`rest`](Self::rest).
    #[inline]
    pub(crate) fn advance(&mut self, n: usize) {
        debug_assert!(n <= self.remaining());
        self.pos += n;
    }

    /// Takes the next `N` bytes when the input holds them (one bounds check for a run of
    /// fixed-size fields); `None`, consuming nothing, when it does not, so that the caller can
    /// read field by field and name the one that is cut off.
    #[inline]
    pub(crate) fn chunk<const N: usize>(&mut self) -> Option<&'a [u8; N]> {
        let (head, _) = self.buf[self.pos..].split_first_chunk::<N>()?;
        self.pos += N;
        Some(head)
    }

    #[inline]
    fn array<const N: usize>(&mut self, field: &'static str) -> Result<[u8; N], DecodeError> {
        let bytes = self.take(N, field)?;
        let mut out = [0u8; N];
        out.copy_from_slice(bytes);
        Ok(out)
    }

    #[inline]
    pub(crate) fn i8(&mut self, field: &'static str) -> Result<i8, DecodeError> {
        Ok(i8::from_be_bytes(self.array(field)?))
    }

    #[inline]
    pub(crate) fn i16(&mut self, field: &'static str) -> Result<i16, DecodeError> {
        Ok(i16::from_be_bytes(self.array(field)?))
    }

    #[inline]
    pub(crate) fn u16(&mut self, field: &'static str) -> Result<u16, DecodeError> {
        Ok(u16::from_be_bytes(self.array(field)?))
    }

    #[inline]
    pub(crate) fn i32(&mut self, field: &'static str) -> Result<i32, DecodeError> {
        Ok(i32::from_be_bytes(self.array(field)?))
    }

    #[inline]
    pub(crate) fn i64(&mut self, field: &'static str) -> Result<i64, DecodeError> {
        Ok(i64::from_be_bytes(self.array(field)?))
    }

    #[inline]
    pub(crate) fn uuid(&mut self, field: &'static str) -> Result<Uuid, DecodeError> {
        Ok(Uuid::from_bytes(self.array(field)?))
    }

    /// Reads an `i32` element count and checks that the rest of the input could hold that many
    /// elements of at least `min_element_size` bytes. A negative count is an error.
    #[inline]
    pub(crate) fn count(&mut self, field: &'static str, min_element_size: usize) -> Result<usize, DecodeError> {
        let at = self.pos;
        let raw = self.i32(field)?;
        if raw < 0 {
            return Err(self.error_at(at, field, DecodeErrorKind::NegativeLength { value: raw }));
        }
        self.check_count(at, field, raw as usize, min_element_size)
    }

    #[inline]
    fn check_count(
        &self,
        at: usize,
        field: &'static str,
        count: usize,
        min_element_size: usize,
    ) -> Result<usize, DecodeError> {
        let available = self.remaining();
        if count.saturating_mul(min_element_size) > available {
            return Err(self.error_at(
                at,
                field,
                DecodeErrorKind::CountExceedsInput { count, min_element_size, available },
            ));
        }
        Ok(count)
    }

    /// Non-nullable `i32`-length bytes (Kafka's generated-message `bytes`).
    #[inline]
    pub(crate) fn bytes_i32(&mut self, field: &'static str) -> Result<&'a [u8], DecodeError> {
        let at = self.pos;
        let len = self.i32(field)?;
        if len < 0 {
            return Err(self.error_at(at, field, DecodeErrorKind::NegativeLength { value: len }));
        }
        self.take_prefixed(at, field, len as usize)
    }

    /// Nullable `i32`-length bytes: any negative length is null (the canonical null is `-1`).
    #[inline]
    pub(crate) fn nullable_bytes_i32(&mut self, field: &'static str) -> Result<Option<&'a [u8]>, DecodeError> {
        let at = self.pos;
        let len = self.i32(field)?;
        if len < 0 {
            if len != -1 {
                self.note(Lenience::NegativeAsEmpty { field, offset: at, value: len });
            }
            return Ok(None);
        }
        self.take_prefixed(at, field, len as usize).map(Some)
    }

    /// Non-nullable `i16`-length string (raw bytes; the caller decides how to treat bad UTF-8).
    #[inline]
    pub(crate) fn string_i16(&mut self, field: &'static str) -> Result<&'a [u8], DecodeError> {
        let at = self.pos;
        let len = self.i16(field)?;
        if len < 0 {
            return Err(self.error_at(at, field, DecodeErrorKind::NegativeLength { value: len.into() }));
        }
        self.take_prefixed(at, field, len as usize)
    }

    /// Nullable `i16`-length UTF-8 string: any negative length is null.
    #[inline]
    pub(crate) fn nullable_string_i16(&mut self, field: &'static str) -> Result<Option<&'a [u8]>, DecodeError> {
        let at = self.pos;
        let len = self.i16(field)?;
        if len < 0 {
            if len != -1 {
                self.note(Lenience::NegativeAsEmpty { field, offset: at, value: len.into() });
            }
            return Ok(None);
        }
        self.take_prefixed(at, field, len as usize).map(Some)
    }

    pub(crate) fn check_utf8(&mut self, at: usize, field: &'static str, bytes: &[u8]) {
        if std::str::from_utf8(bytes).is_err() {
            self.note(Lenience::InvalidUtf8 { field, offset: at });
        }
    }

    #[inline]
    fn take_prefixed(&mut self, at: usize, field: &'static str, len: usize) -> Result<&'a [u8], DecodeError> {
        let available = self.remaining();
        if len > available {
            return Err(self.error_at(at, field, DecodeErrorKind::Truncated { needed: len, available }));
        }
        self.take(len, field)
    }

    /// Everything not read yet; noted as trailing bytes when non-empty.
    pub(crate) fn trailing(&mut self) -> &'a [u8] {
        let rest = &self.buf[self.pos..];
        if !rest.is_empty() {
            self.note(Lenience::TrailingBytes { offset: self.pos, len: rest.len() });
        }
        self.pos = self.buf.len();
        rest
    }

    pub(crate) fn finish(self) -> Vec<Lenience> {
        self.lenience
    }
}

/// Appends big-endian fields to a `Vec<u8>`.
pub(crate) struct Writer {
    pub(crate) buf: Vec<u8>,
    message: MessageKind,
}

impl Writer {
    #[inline]
    pub(crate) fn new(message: MessageKind, capacity: usize) -> Self {
        Self { buf: Vec::with_capacity(capacity), message }
    }

    /// A writer that appends to `buf`, with room for `additional` more bytes.
    #[inline]
    pub(crate) fn onto(message: MessageKind, mut buf: Vec<u8>, additional: usize) -> Self {
        buf.reserve(additional);
        Self { buf, message }
    }

    #[inline]
    pub(crate) fn i8(&mut self, v: i8) {
        self.buf.push(v as u8);
    }

    #[inline]
    pub(crate) fn i16(&mut self, v: i16) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    #[inline]
    pub(crate) fn u16(&mut self, v: u16) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    #[inline]
    pub(crate) fn i32(&mut self, v: i32) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    #[inline]
    pub(crate) fn i64(&mut self, v: i64) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    #[inline]
    pub(crate) fn uuid(&mut self, v: &Uuid) {
        self.buf.extend_from_slice(v.as_bytes());
    }

    #[inline]
    pub(crate) fn raw(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Appends one `N`-byte record per item, each made by `record`, into space sized once (no
    /// capacity check per field, fixed-size copies).
    #[inline]
    pub(crate) fn records<const N: usize, T>(&mut self, items: &[T], mut record: impl FnMut(&T) -> [u8; N]) {
        let start = self.buf.len();
        self.buf.resize(start + N * items.len(), 0);
        for (out, item) in self.buf[start..].chunks_exact_mut(N).zip(items) {
            out.copy_from_slice(&record(item));
        }
    }

    /// An `i32` element count.
    #[inline]
    pub(crate) fn count(&mut self, field: &'static str, len: usize) -> Result<(), EncodeError> {
        let n = i32::try_from(len).map_err(|_| EncodeError::TooManyElements { message: self.message, field, len })?;
        self.i32(n);
        Ok(())
    }

    #[inline]
    pub(crate) fn bytes_i32(&mut self, field: &'static str, bytes: &[u8]) -> Result<(), EncodeError> {
        self.count(field, bytes.len())?;
        self.raw(bytes);
        Ok(())
    }

    #[inline]
    pub(crate) fn nullable_bytes_i32(&mut self, field: &'static str, bytes: Option<&[u8]>) -> Result<(), EncodeError> {
        match bytes {
            None => {
                self.i32(-1);
                Ok(())
            }
            Some(b) => self.bytes_i32(field, b),
        }
    }

    /// A UTF-8 string with an `i16` length (Kafka's generated-message `string`, at most 32,767 bytes).
    #[inline]
    pub(crate) fn string_i16(&mut self, field: &'static str, bytes: &[u8]) -> Result<(), EncodeError> {
        let len = i16::try_from(bytes.len()).map_err(|_| EncodeError::StringTooLong {
            message: self.message,
            field,
            len: bytes.len(),
            max: i16::MAX as usize,
        })?;
        self.i16(len);
        self.raw(bytes);
        Ok(())
    }

    #[inline]
    pub(crate) fn nullable_string_i16(&mut self, field: &'static str, bytes: Option<&[u8]>) -> Result<(), EncodeError> {
        match bytes {
            None => {
                self.i16(-1);
                Ok(())
            }
            Some(b) => self.string_i16(field, b),
        }
    }

    pub(crate) fn message(&self) -> MessageKind {
        self.message
    }

    pub(crate) fn finish(self) -> Vec<u8> {
        self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_truncated_fixed_fields_without_consuming() {
        let mut r = Reader::new(&[1, 2, 3], MessageKind::SubscriptionInfo);
        let err = r.i32("version").unwrap_err();
        assert_eq!(err.offset, 0);
        assert_eq!(err.kind, DecodeErrorKind::Truncated { needed: 4, available: 3 });
        assert_eq!(r.position(), 0);
        assert_eq!(r.i16("x").unwrap(), 0x0102);
    }

    #[test]
    fn refuses_counts_the_input_cannot_hold() {
        let mut r = Reader::new(&[0x7f, 0xff, 0xff, 0xff, 0, 0], MessageKind::AssignmentInfo);
        let err = r.count("activeTasks", 8).unwrap_err();
        assert_eq!(
            err.kind,
            DecodeErrorKind::CountExceedsInput { count: i32::MAX as usize, min_element_size: 8, available: 2 }
        );
    }

    #[test]
    fn refuses_negative_non_nullable_lengths() {
        let mut r = Reader::new(&[0xff, 0xff, 0xff, 0xff], MessageKind::SubscriptionInfo);
        let err = r.bytes_i32("userEndPoint").unwrap_err();
        assert_eq!(err.kind, DecodeErrorKind::NegativeLength { value: -1 });
    }

    #[test]
    fn accepts_any_negative_nullable_length_as_null_and_notes_non_canonical_ones() {
        let mut r = Reader::new(&[0xff, 0xfe, 0xff, 0xff], MessageKind::SubscriptionInfo);
        assert_eq!(r.nullable_string_i16("namedTopology").unwrap(), None);
        assert_eq!(r.nullable_string_i16("namedTopology").unwrap(), None);
        assert_eq!(
            r.finish(),
            vec![Lenience::NegativeAsEmpty { field: "namedTopology", offset: 0, value: -2 }]
        );
    }
}
