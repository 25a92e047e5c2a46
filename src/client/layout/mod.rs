//! The layout of every response this crate reads from a broker, checked before the
//! `kafka-protocol` crate decodes it.
//!
//! `kafka-protocol` 0.18.0 reserves an array's capacity from the count it reads
//! (`Vec::with_capacity(n)`), before it reads any element, so a four-byte count could make it ask
//! for gigabytes. [`check`] walks a response body the way that crate's decoders do — the same
//! fields at the same versions, compact forms and tagged fields from the message's first flexible
//! version, known tagged fields decoded in place — and refuses a count that the bytes left cannot
//! hold before anything is allocated. A body that passes is one whose every array is backed by
//! its elements, so what the decoder then reserves is proportional to the frame's size.
//!
//! The layouts follow Kafka's message schemas (`clients/src/main/resources/common/message/`) at
//! the versions `kafka-protocol` 0.18.0 decodes; the tests check them against that crate's
//! encoder at every version, on generated messages.
//!
//! ```
//! use kstreams_assignor::client::layout::{self, LayoutErrorKind};
//!
//! // Heartbeat v4: correlation id 5, no header tags, throttle 0, error 27, no tags.
//! let body = [0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 27, 0];
//! layout::check(&layout::HEARTBEAT, 1, 4, &body).unwrap();
//!
//! // Metadata v12 whose broker array claims 2^32 − 2 entries in a 14-byte body.
//! let body = [0, 0, 0, 5, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f];
//! let err = layout::check(&layout::METADATA, 1, 12, &body).unwrap_err();
//! assert_eq!(err.path, "MetadataResponse.Brokers");
//! assert_eq!(err.offset, 9);
//! assert_eq!(err.kind, LayoutErrorKind::TooManyElements { count: 4_294_967_294, remaining: 0 });
//! ```

use std::fmt::Write as _;

/// A response message: its name, the versions it is checked at, and its first flexible version.
#[derive(Debug)]
pub struct Message {
    body: &'static Layout,
    min_version: i16,
    max_version: i16,
    flexible: i16,
}

impl Message {
    /// Kafka's name for the message (`MetadataResponse`).
    pub fn name(&self) -> &'static str {
        self.body.name
    }

    /// The versions [`check`] knows, the ones the `kafka-protocol` crate decodes.
    pub fn versions(&self) -> std::ops::RangeInclusive<i16> {
        self.min_version..=self.max_version
    }
}

/// Why a response does not have its message's layout. The offset counts from the first byte of
/// the body (the response header's correlation id) and points at the item that failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path} at byte {offset}: {kind}")]
#[non_exhaustive]
pub struct LayoutError {
    /// The field, as a path of Kafka's schema names with array indices
    /// (`MetadataResponse.Topics[2].Partitions`).
    pub path: String,
    /// Byte offset of the failing item.
    pub offset: usize,
    /// What was wrong.
    pub kind: LayoutErrorKind,
}

/// What was wrong with a response's layout.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LayoutErrorKind {
    /// The body ends inside the item.
    #[error("needed {needed} byte(s), only {available} left")]
    Truncated {
        /// Bytes the item needs.
        needed: u64,
        /// Bytes left.
        available: usize,
    },
    /// An array count that the bytes left cannot hold.
    #[error("{count} element(s) claimed, only {remaining} byte(s) left")]
    TooManyElements {
        /// The count read.
        count: u64,
        /// Bytes left after the count.
        remaining: usize,
    },
    /// A length or count below −1.
    #[error("negative length {0}")]
    NegativeLength(i64),
    /// A string that is not UTF-8.
    #[error("not UTF-8")]
    NotUtf8,
    /// A known tagged field whose value does not fill the size its header gives.
    #[error("tagged field {tag} declares {declared} byte(s), its value has {actual}")]
    TaggedFieldSize {
        /// The tag.
        tag: u32,
        /// The size in the field's header.
        declared: u32,
        /// The bytes its value took.
        actual: usize,
    },
    /// Bytes after the message.
    #[error("{0} byte(s) after the message")]
    Trailing(usize),
    /// A version outside [`Message::versions`].
    #[error("version {version} is not one of {min}..={max}")]
    UnsupportedVersion {
        /// The version asked for.
        version: i16,
        /// The lowest known.
        min: i16,
        /// The highest known.
        max: i16,
    },
}

/// Checks `body` — a response frame without its size: the header at `header_version` (0, or 1
/// with tagged fields), then `message` at `version` — against the message's layout. Every byte
/// must be used.
///
/// Complexity: O(body length); it allocates only the path (as deep as the message nests) and the
/// error.
pub fn check(message: &Message, header_version: i16, version: i16, body: &[u8]) -> Result<(), LayoutError> {
    let mut walk = Walk { buf: body, pos: 0, path: vec![(RESPONSE_HEADER.name, None)] };
    walk.structure(&RESPONSE_HEADER, header_version, 1)?;
    walk.path[0].0 = message.name();
    if !message.versions().contains(&version) {
        let kind = LayoutErrorKind::UnsupportedVersion { version, min: message.min_version, max: message.max_version };
        return Err(walk.error(walk.pos, kind));
    }
    walk.structure(message.body, version, message.flexible)?;
    match body.len() - walk.pos {
        0 => Ok(()),
        n => Err(walk.error(walk.pos, LayoutErrorKind::Trailing(n))),
    }
}

/// A struct: its fields in order, then (at flexible versions) its tagged fields, of which some
/// are known.
#[derive(Debug)]
struct Layout {
    name: &'static str,
    fields: &'static [Field],
    tags: &'static [Tag],
}

/// A field, present at `min..=max`.
#[derive(Debug)]
struct Field {
    name: &'static str,
    min: i16,
    max: i16,
    ty: Ty,
}

/// A known tagged field.
#[derive(Debug)]
struct Tag {
    tag: u32,
    name: &'static str,
    ty: Ty,
}

/// A field's type. Strings, bytes and arrays take their compact forms at flexible versions;
/// nulls are accepted wherever the encoding can say null (the decoder refuses them where the
/// schema does not allow one, after this check, with nothing allocated from a count).
#[derive(Debug, Clone, Copy)]
enum Ty {
    Bool,
    I8,
    I16,
    I32,
    I64,
    Uuid,
    Str,
    Bytes,
    /// An array of int32.
    I32s,
    /// An array of structs.
    Structs(&'static Layout),
}

use Ty::*;

const fn f(name: &'static str, min: i16, max: i16, ty: Ty) -> Field {
    Field { name, min, max, ty }
}

const fn tag(tag: u32, name: &'static str, ty: Ty) -> Tag {
    Tag { tag, name, ty }
}

struct Walk<'a> {
    buf: &'a [u8],
    pos: usize,
    /// The message's name, then field names with the index of the array element walked.
    path: Vec<(&'static str, Option<u64>)>,
}

impl Walk<'_> {
    fn error(&self, offset: usize, kind: LayoutErrorKind) -> LayoutError {
        let mut path = String::new();
        for (i, (name, index)) in self.path.iter().enumerate() {
            if i > 0 {
                path.push('.');
            }
            path.push_str(name);
            if let Some(index) = index {
                let _ = write!(path, "[{index}]");
            }
        }
        LayoutError { path, offset, kind }
    }

    fn take(&mut self, n: u64) -> Result<&[u8], LayoutError> {
        let available = self.buf.len() - self.pos;
        match usize::try_from(n) {
            Ok(n) if n <= available => {
                self.pos += n;
                Ok(&self.buf[self.pos - n..self.pos])
            }
            _ => Err(self.error(self.pos, LayoutErrorKind::Truncated { needed: n, available })),
        }
    }

    fn skip(&mut self, n: u64) -> Result<(), LayoutError> {
        self.take(n).map(|_| ())
    }

    /// An unsigned varint as `kafka-protocol` reads it: up to five bytes, the fifth one's
    /// continuation bit ignored.
    fn uvarint(&mut self) -> Result<u32, LayoutError> {
        let mut value = 0u32;
        for i in 0..5 {
            let b = u32::from(self.take(1)?[0]);
            value |= (b & 0x7f) << (i * 7);
            if b < 0x80 {
                break;
            }
        }
        Ok(value)
    }

    /// A length or count, `None` for null: a varint of length + 1 where `0` is null (`compact`),
    /// else an int16 (`short`) or int32 where `-1` is null.
    fn length(&mut self, compact: bool, short: bool) -> Result<Option<u64>, LayoutError> {
        let at = self.pos;
        if compact {
            return Ok(self.uvarint()?.checked_sub(1).map(u64::from));
        }
        let n = if short {
            i64::from(i16::from_be_bytes(self.take(2)?.try_into().expect("two bytes")))
        } else {
            i64::from(i32::from_be_bytes(self.take(4)?.try_into().expect("four bytes")))
        };
        match n {
            -1 => Ok(None),
            n if n < -1 => Err(self.error(at, LayoutErrorKind::NegativeLength(n))),
            n => Ok(Some(n as u64)),
        }
    }

    fn structure(&mut self, layout: &Layout, version: i16, flexible: i16) -> Result<(), LayoutError> {
        for field in layout.fields.iter().filter(|f| (f.min..=f.max).contains(&version)) {
            self.path.push((field.name, None));
            self.value(field.ty, version, flexible)?;
            self.path.pop();
        }
        if version < flexible {
            return Ok(());
        }
        for _ in 0..self.uvarint()? {
            let tag = self.uvarint()?;
            let size = self.uvarint()?;
            let Some(known) = layout.tags.iter().find(|t| t.tag == tag) else {
                self.skip(u64::from(size))?;
                continue;
            };
            // Decoded in place, as the decoder does; the size must match.
            let start = self.pos;
            self.path.push((known.name, None));
            self.value(known.ty, version, flexible)?;
            self.path.pop();
            if self.pos - start != size as usize {
                return Err(self.error(start, LayoutErrorKind::TaggedFieldSize { tag, declared: size, actual: self.pos - start }));
            }
        }
        Ok(())
    }

    fn value(&mut self, ty: Ty, version: i16, flexible: i16) -> Result<(), LayoutError> {
        let compact = version >= flexible;
        match ty {
            Bool | I8 => self.skip(1),
            I16 => self.skip(2),
            I32 => self.skip(4),
            I64 => self.skip(8),
            Uuid => self.skip(16),
            Str => {
                let Some(len) = self.length(compact, true)? else { return Ok(()) };
                let at = self.pos;
                match std::str::from_utf8(self.take(len)?) {
                    Ok(_) => Ok(()),
                    Err(_) => Err(self.error(at, LayoutErrorKind::NotUtf8)),
                }
            }
            Bytes => match self.length(compact, false)? {
                Some(len) => self.skip(len),
                None => Ok(()),
            },
            I32s => match self.count(compact, 4)? {
                // The count was checked against the bytes left: they are all there.
                Some(count) => self.skip(count * 4),
                None => Ok(()),
            },
            Structs(layout) => {
                let Some(count) = self.count(compact, 1)? else { return Ok(()) };
                for i in 0..count {
                    self.path.last_mut().expect("inside a field").1 = Some(i);
                    self.structure(layout, version, flexible)?;
                }
                self.path.last_mut().expect("inside a field").1 = None;
                Ok(())
            }
        }
    }

    /// An array's count, `None` for null, refused when the bytes left cannot hold that many
    /// elements of at least `least` bytes each (a struct takes one at least: its tag count, if
    /// nothing else).
    fn count(&mut self, compact: bool, least: u64) -> Result<Option<u64>, LayoutError> {
        let at = self.pos;
        let Some(count) = self.length(compact, false)? else { return Ok(None) };
        let remaining = self.buf.len() - self.pos;
        if count.saturating_mul(least) > remaining as u64 {
            return Err(self.error(at, LayoutErrorKind::TooManyElements { count, remaining }));
        }
        Ok(Some(count))
    }
}


/// The response header: a correlation id, then (at header version 1) tagged fields.
const RESPONSE_HEADER: Layout = Layout {
    name: "ResponseHeader",
    fields: &[
        f("CorrelationId", 0, 1, I32),
    ],
    tags: &[],
};

mod messages;
pub use messages::*;

#[cfg(test)]
mod tests;
