//! The names an `AssignmentInfo` repeats: the string table its decoder reads names through
//! (each name converted once, short ones found by their bytes), and where a host map's topic
//! indexes sit in the dictionary.

use rustc_hash::FxHashMap as HashMap;

use super::codec::Reader;
use super::error::{DecodeError, DecodeErrorKind, Lenience};
use super::java_string::{JavaString, ShortAscii};

/// Reads `AssignmentInfo`'s strings. A name of up to 22 bytes of plain ASCII (hosts and topics
/// usually are) is found again by its bytes as three words, in a small table (a copy of it costs
/// what a shared one would). A longer one shares one allocation among repeats of the same bytes
/// (topic names recur once per partition); a repeat of the string just read (partitions of one
/// topic come together) is found without hashing.
pub(super) struct Strings<'a> {
    seen: HashMap<&'a [u8], (JavaString, bool)>,
    last: Option<(&'a [u8], JavaString, bool)>,
    /// Short names by a hash of their [`ShortKey`], probed in turn: 1 + their place in `short`, 0 where
    /// none is. At most half the slots are taken, so a probe ends at an empty one.
    short_slots: [u8; SHORT_SLOTS],
    short: Vec<(ShortKey, ShortAscii)>,
}

/// A short string's bytes as words (overlapping loads that cover every byte), with its length:
/// equal keys, equal bytes.
type ShortKey = (u64, u64, u64, usize);

#[inline]
fn short_key(b: &[u8]) -> ShortKey {
    let n = b.len();
    let w8 = |at: usize| u64::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3], b[at + 4], b[at + 5], b[at + 6], b[at + 7]]);
    let w4 = |at: usize| u64::from(u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]));
    if n >= 8 {
        (w8(0), w8(8.min(n - 8)), w8(n - 8), n)
    } else if n >= 4 {
        (w4(0) | (w4(n - 4) << 32), 0, 0, n)
    } else {
        (b.iter().fold(0, |acc, &x| (acc << 8) | u64::from(x)), 0, 0, n)
    }
}

const SHORT_SLOTS: usize = 128;

impl Default for Strings<'_> {
    fn default() -> Self {
        Self { seen: HashMap::default(), last: None, short_slots: [0; SHORT_SLOTS], short: Vec::new() }
    }
}

impl<'a> Strings<'a> {
    /// The string `bytes` when reading it needs no note: a short one of plain ASCII, or a long one
    /// already read and canonical.
    #[inline]
    pub(super) fn known(&mut self, bytes: &[u8]) -> Option<JavaString> {
        if JavaString::is_inline_len(bytes.len()) {
            return self.short_plain(bytes);
        }
        match &self.last {
            Some((last, s, true)) if *last == bytes => Some(s.clone()),
            _ => match self.seen.get(bytes) {
                Some((s, true)) => Some(s.clone()),
                _ => None,
            },
        }
    }

    /// A short string of plain ASCII (at most 22 bytes), from the table or made and put in it;
    /// `None` for any other.
    #[inline(always)]
    fn short_plain(&mut self, bytes: &[u8]) -> Option<JavaString> {
        let (a, b, c, n) = short_key(bytes);
        let h = (a ^ b.rotate_left(21) ^ c.rotate_left(42) ^ n as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let mut slot = (h >> (64 - SHORT_SLOTS.trailing_zeros())) as usize;
        loop {
            match self.short_slots[slot] {
                0 => break,
                at => {
                    let &((ka, kb, kc, kn), s) = &self.short[usize::from(at) - 1];
                    if ka == a && kb == b && kc == c && kn == n {
                        return Some(JavaString::from_short(s));
                    }
                }
            }
            slot = (slot + 1) % SHORT_SLOTS;
        }
        let s = ShortAscii::new(bytes)?;
        if self.short.len() < SHORT_SLOTS / 2 {
            self.short.push(((a, b, c, n), s));
            self.short_slots[slot] = self.short.len() as u8;
        }
        Some(JavaString::from_short(s))
    }

    #[inline]
    pub(super) fn read(&mut self, r: &mut Reader<'a>, field: &'static str) -> Result<JavaString, DecodeError> {
        let at = r.position();
        let len = r.u16(field)?;
        let bytes = r.take(len.into(), field)?;
        let (s, canonical) = if let Some(s) = self.known_short(bytes) {
            (s, true)
        } else if JavaString::is_inline_len(bytes.len()) {
            JavaString::from_modified_utf8_checked(bytes)
                .map_err(|e| r.error_at(at, field, DecodeErrorKind::MalformedModifiedUtf8 { at: e.at, reason: e.reason }))?
        } else {
            self.shared(r, at, field, bytes)?
        };
        if !canonical {
            r.note(Lenience::NonCanonicalModifiedUtf8 { field, offset: at });
        }
        Ok(s)
    }

    #[inline]
    fn known_short(&mut self, bytes: &[u8]) -> Option<JavaString> {
        if JavaString::is_inline_len(bytes.len()) { self.short_plain(bytes) } else { None }
    }

    /// A long string, shared with its earlier reads.
    fn shared(&mut self, r: &Reader<'a>, at: usize, field: &'static str, bytes: &'a [u8]) -> Result<(JavaString, bool), DecodeError> {
        if let Some((last, s, canonical)) = &self.last {
            if *last == bytes {
                return Ok((s.clone(), *canonical));
            }
        }
        let (s, canonical) = match self.seen.get(bytes) {
            Some(known) => known.clone(),
            None => {
                let fresh = JavaString::from_modified_utf8_checked(bytes)
                    .map_err(|e| r.error_at(at, field, DecodeErrorKind::MalformedModifiedUtf8 { at: e.at, reason: e.reason }))?;
                self.seen.insert(bytes, fresh.clone());
                fresh
            }
        };
        self.last = Some((bytes, s.clone(), canonical));
        Ok((s, canonical))
    }
}

/// The topic indexes a v5+ dictionary defines. Java numbers them 0, 1, 2, … (in the order it
/// met the topics, written in its map's order), so they are looked up in a table by index.
pub(super) enum DictionaryIndexes {
    /// Exactly `0..n`, in any order (an index's sorted position is itself).
    Dense(usize),
    /// Small indexes in any order: the position of each index, [`NOT_DEFINED`] where none is.
    Table(Vec<u32>),
    /// Anything else, sorted.
    Sorted(Vec<i32>),
}

const NOT_DEFINED: u32 = u32::MAX;

impl DictionaryIndexes {
    pub(super) fn of(topics: &[(i32, JavaString)]) -> Self {
        let dense = |indexes: &mut dyn Iterator<Item = i32>| indexes.enumerate().all(|(i, index)| usize::try_from(index) == Ok(i));
        if dense(&mut topics.iter().map(|(index, _)| *index)) {
            return Self::Dense(topics.len());
        }
        let mut indexes: Vec<i32> = topics.iter().map(|(i, _)| *i).collect();
        indexes.sort_unstable();
        // `0..n` in another order (Java's map order): each index's sorted position is itself.
        if dense(&mut indexes.iter().copied()) {
            return Self::Dense(topics.len());
        }
        // A table no larger than a few times the dictionary (the count was checked against the
        // input, so this allocates no more than the input justifies).
        let small = indexes.first().is_some_and(|&lo| lo >= 0) && indexes.last().is_some_and(|&hi| (hi as usize) < 4 * topics.len() + 64);
        if small {
            let mut table = vec![NOT_DEFINED; indexes[indexes.len() - 1] as usize + 1];
            // The position in sorted order, as the sorted form gives it (a repeated index: its
            // first position, as a binary search over equal entries need not give; any
            // position holds the same index).
            for (at, &index) in indexes.iter().enumerate().rev() {
                table[index as usize] = at as u32;
            }
            return Self::Table(table);
        }
        Self::Sorted(indexes)
    }

    /// Whether every pair's topic index is defined (without a branch per pair when the indexes
    /// are `0..n`).
    #[inline]
    pub(super) fn all_known(&self, pairs: &[(i32, i32)]) -> bool {
        match self {
            Self::Dense(n) => pairs.iter().fold(true, |ok, &(index, _)| ok & ((index as u32 as usize) < *n)),
            _ => pairs.iter().all(|&(index, _)| self.position(index).is_some()),
        }
    }

    /// Where `index` is in the dictionary's order of indexes, if it is there.
    #[inline]
    pub(super) fn position(&self, index: i32) -> Option<usize> {
        match self {
            Self::Dense(n) => usize::try_from(index).ok().filter(|i| i < n),
            Self::Table(table) => {
                let at = *table.get(usize::try_from(index).ok()?)?;
                (at != NOT_DEFINED).then_some(at as usize)
            }
            Self::Sorted(indexes) => indexes.binary_search(&index).ok(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn dictionary(indexes: &[i32]) -> Vec<(i32, JavaString)> {
        indexes.iter().map(|&i| (i, JavaString::new(&format!("t{i}")))).collect()
    }

    proptest! {
        /// Every form answers as a binary search over the sorted indexes: the same indexes
        /// known, and one position per index that holds it.
        #[test]
        fn dictionary_indexes_agree_with_a_sorted_search(indexes in proptest::collection::vec(-3i32..40, 0..24), probe in -5i32..200) {
            let form = DictionaryIndexes::of(&dictionary(&indexes));
            let mut sorted = indexes.clone();
            sorted.sort_unstable();
            for index in sorted.iter().copied().chain([probe]) {
                let expected = sorted.binary_search(&index).ok();
                let got = form.position(index);
                prop_assert_eq!(got.is_some(), expected.is_some(), "index {}", index);
                if let Some(at) = got {
                    prop_assert_eq!(sorted[at], index);
                }
            }
        }
    }

    #[test]
    fn a_permuted_dictionary_is_dense_a_sparse_one_a_table_and_a_wide_one_is_searched() {
        assert!(matches!(DictionaryIndexes::of(&dictionary(&[0, 1, 2])), DictionaryIndexes::Dense(3)));
        assert!(matches!(DictionaryIndexes::of(&dictionary(&[2, 0, 1])), DictionaryIndexes::Dense(3)));
        assert!(matches!(DictionaryIndexes::of(&dictionary(&[3, 0, 1])), DictionaryIndexes::Table(_)));
        assert!(matches!(DictionaryIndexes::of(&dictionary(&[1, 0, 1])), DictionaryIndexes::Table(_)));
        assert!(matches!(DictionaryIndexes::of(&dictionary(&[0, i32::MAX])), DictionaryIndexes::Sorted(_)));
        assert!(matches!(DictionaryIndexes::of(&dictionary(&[-1, 0])), DictionaryIndexes::Sorted(_)));
    }

    proptest! {
        /// A short name found again by its key is the one read: names of every length up to and
        /// past the short ones, differing in one byte, repeated; any bytes beside them.
        #[test]
        fn the_short_names_table_gives_back_the_bytes_read(
            names in proptest::collection::vec((0usize..30, 0usize..30, any::<u8>()), 1..200),
        ) {
            let base: Vec<u8> = (0..30).map(|i| b'a' + i as u8).collect();
            let texts: Vec<Vec<u8>> = names
                .iter()
                .map(|&(len, at, b)| {
                    let mut t = base[..len].to_vec();
                    if at < len {
                        t[at] = b;
                    }
                    t
                })
                .collect();
            let wires: Vec<Vec<u8>> = texts
                .iter()
                .map(|t| {
                    let mut wire = (t.len() as u16).to_be_bytes().to_vec();
                    wire.extend_from_slice(t);
                    wire
                })
                .collect();
            let mut strings = Strings::default();
            for (t, wire) in texts.iter().zip(&wires) {
                let expected = JavaString::from_modified_utf8_checked(t).ok();
                let plain = expected.as_ref().is_some_and(|(_, canonical)| *canonical) && !t.contains(&0) && t.is_ascii();
                let known = strings.known(t);
                if t.len() <= 22 {
                    prop_assert_eq!(known.is_some(), plain);
                }
                if let Some(k) = known {
                    prop_assert_eq!(k.as_bytes(), &t[..]);
                }
                let mut r = Reader::new(wire, crate::wire::error::MessageKind::AssignmentInfo);
                match (strings.read(&mut r, "t"), expected) {
                    (Ok(s), Some((e, canonical))) => {
                        prop_assert_eq!(s.as_bytes(), e.as_bytes());
                        prop_assert_eq!(r.finish().is_empty(), canonical);
                    }
                    (Err(_), None) => {}
                    (got, expected) => prop_assert!(false, "{:?} {:?}", got, expected),
                }
            }
        }
    }
}
