//! Java's modified UTF-8 (`DataOutputStream.writeUTF` / `DataInputStream.readUTF`).
//!
//! `AssignmentInfo` writes every host and topic name this way. It differs from UTF-8 in three
//! ways: U+0000 is written as `C0 80`; a character outside the Basic Multilingual Plane is written
//! as its two UTF-16 surrogates, three bytes each; and an unpaired surrogate is written like any
//! other code unit. Java's reader is lenient: it also takes a raw `00`, and overlong forms.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

/// Longest string `writeUTF` accepts, in encoded bytes.
pub const MAX_MODIFIED_UTF8_LEN: usize = u16::MAX as usize;

/// A Java `String` as it travels in modified UTF-8, kept as the raw bytes that were read so that
/// re-encoding is byte-exact. It can hold anything a Java string can, including NUL and unpaired
/// surrogates.
///
/// ```
/// use kstreams_assignor::wire::JavaString;
///
/// let s = JavaString::new("a\u{0}😀");
/// assert_eq!(s.as_bytes(), &[0x61, 0xc0, 0x80, 0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80]);
/// assert_eq!(s.to_string_lossy(), "a\u{0}😀");
///
/// // Java's reader also takes a raw NUL; the bytes are kept, the text is the same.
/// let raw = JavaString::from_modified_utf8(b"a\x00").unwrap();
/// assert!(!raw.is_canonical());
/// assert_eq!(raw.to_string_lossy(), "a\u{0}");
///
/// assert!(JavaString::from_modified_utf8(&[0xff]).is_err());
/// ```
///
/// A name of up to 22 bytes (topics and hosts usually are) is held in place: copying one is a copy
/// of 24 bytes, with no shared count to change, which is most of what decoding a member's
/// assignment does per partition.
#[derive(Clone)]
pub struct JavaString(Repr);

/// Longest string held in place.
const INLINE: usize = 22;

#[derive(Clone)]
enum Repr {
    Inline(Inline),
    Shared(Arc<[u8]>),
}

/// A string held in place that is plain ASCII (canonical, no NUL): copied as it is.
#[derive(Clone, Copy)]
pub(crate) struct ShortAscii(Inline);

impl ShortAscii {
    /// `bytes`, when they are at most 22 bytes of plain ASCII.
    #[inline]
    pub(crate) fn new(bytes: &[u8]) -> Option<Self> {
        if bytes.len() > INLINE || !is_plain_ascii(bytes) {
            return None;
        }
        let mut inline = [0; INLINE];
        inline[..bytes.len()].copy_from_slice(bytes);
        Some(Self(Inline { len: bytes.len() as u8, bytes: inline }))
    }
}

/// A short string's bytes, aligned so that a copy moves whole words. The bytes past `len` are
/// zero.
#[derive(Clone, Copy)]
#[repr(align(8))]
struct Inline {
    len: u8,
    bytes: [u8; INLINE],
}

impl Default for JavaString {
    fn default() -> Self {
        Self(Repr::Inline(Inline { len: 0, bytes: [0; INLINE] }))
    }
}

impl PartialEq for JavaString {
    fn eq(&self, other: &Self) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl Eq for JavaString {}

impl std::hash::Hash for JavaString {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_bytes().hash(state);
    }
}

impl PartialOrd for JavaString {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for JavaString {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_bytes().cmp(other.as_bytes())
    }
}

/// Why bytes are not modified UTF-8 that Java's `readUTF` accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("malformed modified UTF-8 at byte {at}: {reason}")]
pub struct MalformedModifiedUtf8 {
    /// Offset of the offending byte within the string.
    pub at: usize,
    /// What was wrong.
    pub reason: &'static str,
}

/// Result of scanning modified UTF-8.
struct Scan {
    canonical: bool,
}

fn scan(bytes: &[u8], mut unit: impl FnMut(u16)) -> Result<Scan, MalformedModifiedUtf8> {
    let mut canonical = true;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match b >> 4 {
            0..=7 => {
                canonical &= b != 0;
                unit(u16::from(b));
                i += 1;
            }
            12 | 13 => {
                let Some(&c) = bytes.get(i + 1) else {
                    return Err(MalformedModifiedUtf8 { at: i, reason: "partial character at end" });
                };
                if c & 0xc0 != 0x80 {
                    return Err(MalformedModifiedUtf8 { at: i + 1, reason: "expected a continuation byte" });
                }
                let v = (u16::from(b & 0x1f) << 6) | u16::from(c & 0x3f);
                canonical &= v == 0 || v >= 0x80;
                unit(v);
                i += 2;
            }
            14 => {
                let (Some(&c1), Some(&c2)) = (bytes.get(i + 1), bytes.get(i + 2)) else {
                    return Err(MalformedModifiedUtf8 { at: i, reason: "partial character at end" });
                };
                if c1 & 0xc0 != 0x80 || c2 & 0xc0 != 0x80 {
                    return Err(MalformedModifiedUtf8 { at: i + 1, reason: "expected a continuation byte" });
                }
                let v = (u16::from(b & 0x0f) << 12) | (u16::from(c1 & 0x3f) << 6) | u16::from(c2 & 0x3f);
                canonical &= v >= 0x800;
                unit(v);
                i += 3;
            }
            _ => return Err(MalformedModifiedUtf8 { at: i, reason: "not a valid lead byte" }),
        }
    }
    Ok(Scan { canonical })
}

fn encoded_len(units: impl Iterator<Item = u16>) -> usize {
    units.map(|u| match u {
        0x0001..=0x007f => 1,
        0x0000 | 0x0080..=0x07ff => 2,
        _ => 3,
    })
    .sum()
}

fn push_unit(out: &mut Vec<u8>, u: u16) {
    match u {
        0x0001..=0x007f => out.push(u as u8),
        0x0000 | 0x0080..=0x07ff => {
            out.push(0xc0 | (u >> 6) as u8);
            out.push(0x80 | (u & 0x3f) as u8);
        }
        _ => {
            out.push(0xe0 | (u >> 12) as u8);
            out.push(0x80 | ((u >> 6) & 0x3f) as u8);
            out.push(0x80 | (u & 0x3f) as u8);
        }
    }
}

fn is_plain_ascii(bytes: &[u8]) -> bool {
    bytes.iter().all(|&b| (0x01..0x80).contains(&b))
}

impl JavaString {
    /// Holds `bytes` (already known to be modified UTF-8).
    fn raw(bytes: &[u8]) -> Self {
        if bytes.len() <= INLINE {
            let mut inline = [0; INLINE];
            inline[..bytes.len()].copy_from_slice(bytes);
            return Self(Repr::Inline(Inline { len: bytes.len() as u8, bytes: inline }));
        }
        Self(Repr::Shared(bytes.into()))
    }

    /// Encodes `s` the way Java's `writeUTF` does. Lengths are checked when a message is encoded.
    pub fn new(s: &str) -> Self {
        if is_plain_ascii(s.as_bytes()) {
            return Self::raw(s.as_bytes());
        }
        let mut out = Vec::with_capacity(encoded_len(s.encode_utf16()));
        s.encode_utf16().for_each(|u| push_unit(&mut out, u));
        Self::raw(&out)
    }

    /// Encodes a sequence of UTF-16 code units (any Java string, unpaired surrogates included).
    pub fn from_utf16(units: &[u16]) -> Self {
        let mut out = Vec::with_capacity(encoded_len(units.iter().copied()));
        units.iter().for_each(|&u| push_unit(&mut out, u));
        Self::raw(&out)
    }

    /// Takes raw bytes that Java's `readUTF` would accept.
    pub fn from_modified_utf8(bytes: &[u8]) -> Result<Self, MalformedModifiedUtf8> {
        scan(bytes, |_| {})?;
        Ok(Self::raw(bytes))
    }

    /// Like [`JavaString::from_modified_utf8`], also telling whether the bytes are in the
    /// canonical form Java writes.
    pub(crate) fn from_modified_utf8_checked(bytes: &[u8]) -> Result<(Self, bool), MalformedModifiedUtf8> {
        if is_plain_ascii(bytes) {
            return Ok((Self::raw(bytes), true));
        }
        let Scan { canonical } = scan(bytes, |_| {})?;
        Ok((Self::raw(bytes), canonical))
    }

    /// `s`, held in place.
    #[inline]
    pub(crate) fn from_short(s: ShortAscii) -> Self {
        Self(Repr::Inline(s.0))
    }

    /// Whether a string of `len` bytes is held in place (copied without a shared count).
    #[inline]
    pub(crate) const fn is_inline_len(len: usize) -> bool {
        len <= INLINE
    }

    /// Whether `self` and `other` are equal, found cheaply: a short string's bytes compared in
    /// place, a long one by its allocation (long strings that are equal without sharing one
    /// answer `false`).
    pub(crate) fn shares(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            // The bytes past the length are zero: the whole arrays compare, as a few words.
            (Repr::Inline(a), Repr::Inline(b)) => a.len == b.len && a.bytes == b.bytes,
            (Repr::Shared(a), Repr::Shared(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }

    /// The raw modified UTF-8 bytes.
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        match &self.0 {
            Repr::Inline(Inline { len, bytes }) => &bytes[..usize::from(*len)],
            Repr::Shared(bytes) => bytes,
        }
    }

    /// Encoded length in bytes.
    pub fn len(&self) -> usize {
        self.as_bytes().len()
    }

    /// Whether the string is empty.
    pub fn is_empty(&self) -> bool {
        self.as_bytes().is_empty()
    }

    /// The Java string's UTF-16 code units.
    pub fn to_utf16(&self) -> Vec<u16> {
        let mut units = Vec::with_capacity(self.len());
        scan(self.as_bytes(), |u| units.push(u)).expect("validated on construction");
        units
    }

    /// The text, with U+FFFD for each unpaired surrogate.
    pub fn to_string_lossy(&self) -> Cow<'_, str> {
        if is_plain_ascii(self.as_bytes()) {
            // Plain ASCII is valid UTF-8 with the same bytes.
            return Cow::Borrowed(std::str::from_utf8(self.as_bytes()).expect("ASCII"));
        }
        Cow::Owned(String::from_utf16_lossy(&self.to_utf16()))
    }

    /// Whether the bytes are exactly what Java's `writeUTF` writes for this text.
    pub fn is_canonical(&self) -> bool {
        is_plain_ascii(self.as_bytes()) || scan(self.as_bytes(), |_| {}).map(|s| s.canonical).unwrap_or(false)
    }
}

impl From<&str> for JavaString {
    fn from(s: &str) -> Self {
        Self::new(s)
    }
}

impl fmt::Display for JavaString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_string_lossy())
    }
}

impl fmt::Debug for JavaString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.to_string_lossy(), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn encodes_like_java_write_utf() {
        // Vector from Java: host "a\u0000😀", topic "é".
        assert_eq!(JavaString::new("a\u{0}😀").as_bytes(), &hex_literal("61c080eda0bdedb880"));
        assert_eq!(JavaString::new("é").as_bytes(), &[0xc3, 0xa9]);
        assert_eq!(JavaString::from_utf16(&[0x78, 0xd800, 0x79]).as_bytes(), &[0x78, 0xed, 0xa0, 0x80, 0x79]);
    }

    #[test]
    fn accepts_what_java_read_utf_accepts() {
        let s = JavaString::from_modified_utf8(&[0xed, 0xa0, 0x80]).unwrap();
        assert_eq!(s.to_utf16(), vec![0xd800]);
        assert!(s.is_canonical());
        let overlong = JavaString::from_modified_utf8(&[0xc1, 0x81]).unwrap();
        assert_eq!(overlong.to_utf16(), vec![0x41]);
        assert!(!overlong.is_canonical());
        assert!(JavaString::from_modified_utf8(&[0xc0, 0x80]).unwrap().is_canonical());
    }

    #[test]
    fn refuses_what_java_read_utf_refuses() {
        for (bytes, at) in [(&[0xffu8][..], 0), (&[0x41, 0x80][..], 1), (&[0xc3][..], 0), (&[0xe2, 0x82][..], 0), (&[0xc3, 0x41][..], 1), (&[0xf0, 0x9f, 0x98, 0x80][..], 0)] {
            assert_eq!(JavaString::from_modified_utf8(bytes).unwrap_err().at, at, "{bytes:x?}");
        }
    }

    fn hex_literal(s: &str) -> Vec<u8> {
        hex::decode(s).unwrap()
    }

    proptest! {
        #[test]
        fn can_round_trip_any_utf16(units in proptest::collection::vec(any::<u16>(), 0..64)) {
            let s = JavaString::from_utf16(&units);
            prop_assert!(s.is_canonical());
            prop_assert_eq!(s.to_utf16(), units.clone());
            prop_assert_eq!(JavaString::from_modified_utf8(s.as_bytes()).unwrap(), s);
        }

        #[test]
        fn can_round_trip_any_str(text in any::<String>()) {
            let s = JavaString::new(&text);
            prop_assert_eq!(s.to_string_lossy(), text.as_str());
            prop_assert_eq!(s, JavaString::from_utf16(&text.encode_utf16().collect::<Vec<_>>()));
        }

        #[test]
        fn never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            if let Ok(s) = JavaString::from_modified_utf8(&bytes) {
                let _ = s.to_string_lossy();
                prop_assert_eq!(s.as_bytes(), &bytes[..]);
            }
        }
    }
}
