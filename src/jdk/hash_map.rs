//! `java.util.HashMap`/`HashSet` of JDK 17: the table, its buckets and its resizes. The tree
//! bins are in [`tree_bin`].
//!
//! A few of Kafka's assignor loops walk a `HashMap` or `HashSet`, so their decisions depend on
//! that order. [`JavaHashMap`] replays the JDK 17 implementation step by step: a power-of-two
//! table indexed by `(h ^ h >>> 16) & (capacity - 1)`; a bucket is a list in insertion order until
//! a put makes it 9 long in a table of at least 64 buckets (a smaller table doubles instead), when
//! it becomes a red-black tree ordered by (hash, `compareTo`) whose root moves to the front of the
//! bucket's list; new keys then enter the list after their tree parent. The table doubles when the
//! size exceeds `0.75 × capacity`, splitting each bucket in order (tree halves of 6 or fewer nodes
//! become lists again). Removing a key through the map shrinks small trees back to lists and
//! re-roots, removing through an iterator does not. Initial capacities follow `new HashMap()`,
//! `new HashMap(n)`, `putAll` into an empty map and `new HashSet(collection)`.
//!
//! Iteration orders are JDK-specific; these are JDK 17's (the pinned environment), which did not
//! change between JDK 8 and 17 except for `new HashSet(collection)` sizing in JDK 19.

mod tree_bin;

use std::borrow::Borrow;

use super::cmp::JavaComparable;
use super::hash::{JavaHashCode, spread};


/// `HashMap.tableSizeFor`: the smallest power of two ≥ `cap` (at least 1, at most 2^30).
fn table_size_for(cap: usize) -> usize {
    cap.clamp(1, MAX_CAPACITY).next_power_of_two()
}

const DEFAULT_CAPACITY: usize = 16;
const MAX_CAPACITY: usize = 1 << 30;
/// A bucket becomes a tree when a put makes it this long (`TREEIFY_THRESHOLD + 1`).
const TREEIFY_LENGTH: usize = 9;
/// A tree half of at most this many nodes becomes a list again when the table grows.
const UNTREEIFY_THRESHOLD: usize = 6;
const MIN_TREEIFY_CAPACITY: usize = 64;

type Link = Option<usize>;

/// A `HashMap.Node`, or a `HashMap.TreeNode` when `tree` is set (then the tree links are used).
#[derive(Debug, Clone)]
struct Node<K, V> {
    hash: i32,
    key: K,
    value: V,
    next: Link,
    tree: bool,
    prev: Link,
    parent: Link,
    left: Link,
    right: Link,
    red: bool,
}

/// A hash map that iterates in `java.util.HashMap`'s order (JDK 17), tree bins included.
///
/// Nodes live in an arena and link to each other by index, as Java's objects link by reference:
/// every bucket is a `next`-linked list (its iteration order); a bucket whose first node is a tree
/// node is also a red-black tree ordered by (hash, `compareTo`).
#[derive(Debug, Clone)]
pub(crate) struct JavaHashMap<K, V> {
    nodes: Vec<Option<Node<K, V>>>,
    free: Vec<usize>,
    /// Bucket heads; empty until the first insertion (Java allocates lazily).
    table: Vec<Link>,
    /// Java's `threshold`: before allocation, the initial capacity (0 = default).
    threshold: usize,
    len: usize,
}

/// A hash set that iterates in `java.util.HashSet`'s order.
pub(crate) type JavaHashSet<K> = JavaHashMap<K, ()>;

impl<K: JavaHashCode + JavaComparable + Eq, V> JavaHashMap<K, V> {
    /// `new HashMap<>()`.
    pub(crate) fn new() -> Self {
        Self { nodes: Vec::new(), free: Vec::new(), table: Vec::new(), threshold: 0, len: 0 }
    }

    /// `new HashMap<>(initialCapacity)`.
    pub(crate) fn with_capacity(initial_capacity: usize) -> Self {
        Self { threshold: table_size_for(initial_capacity), ..Self::new() }
    }

    /// The map `new HashSet<>(c)` starts with for a collection of `len` elements (JDK 17:
    /// `new HashMap<>(Math.max((int) (c.size() / .75f) + 1, 16))`).
    pub(crate) fn for_collection_of(len: usize) -> Self {
        let sized = (len as f32 / 0.75f32) as usize + 1;
        Self::with_capacity(sized.max(DEFAULT_CAPACITY))
    }

    /// A new `HashMap` after `putAll` of a map with `len` entries has pre-sized it (before the
    /// entries are put).
    pub(crate) fn presized_for_put_all(len: usize) -> Self {
        if len == 0 {
            return Self::new();
        }
        let ft = len as f32 / 0.75f32 + 1.0f32;
        let t = if ft < MAX_CAPACITY as f32 { ft as usize } else { MAX_CAPACITY };
        Self::with_capacity(t)
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn n(&self, i: usize) -> &Node<K, V> {
        self.nodes[i].as_ref().expect("live node")
    }

    fn m(&mut self, i: usize) -> &mut Node<K, V> {
        self.nodes[i].as_mut().expect("live node")
    }

    fn index_of(&self, hash: i32) -> usize {
        hash as u32 as usize & (self.table.len() - 1)
    }

    fn alloc(&mut self, node: Node<K, V>) -> usize {
        match self.free.pop() {
            Some(i) => {
                self.nodes[i] = Some(node);
                i
            }
            None => {
                self.nodes.push(Some(node));
                self.nodes.len() - 1
            }
        }
    }

    /// The node holding `key`.
    fn find<Q: JavaHashCode + Eq + ?Sized>(&self, key: &Q) -> Option<usize>
    where
        K: Borrow<Q>,
    {
        if self.table.is_empty() {
            return None;
        }
        let hash = spread(key.java_hash_code());
        let mut e = self.table[self.index_of(hash)];
        while let Some(i) = e {
            let node = self.n(i);
            if node.hash == hash && node.key.borrow() == key {
                return Some(i);
            }
            e = node.next;
        }
        None
    }

    pub(crate) fn get<Q: JavaHashCode + Eq + ?Sized>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
    {
        self.find(key).map(|i| &self.n(i).value)
    }

    pub(crate) fn contains_key<Q: JavaHashCode + Eq + ?Sized>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        self.find(key).is_some()
    }

    /// `put`: replaces the value of a present key in place; otherwise appends the key to its
    /// bucket (or inserts it into the bucket's tree), turns a long bucket into a tree, and grows
    /// the table as Java does.
    pub(crate) fn insert(&mut self, key: K, value: V) -> Option<V> {
        if let Some(i) = self.find(&key) {
            return Some(std::mem::replace(&mut self.m(i).value, value));
        }
        if self.table.is_empty() {
            self.resize();
        }
        let hash = spread(key.java_hash_code());
        let b = self.index_of(hash);
        let node = Node { hash, key, value, next: None, tree: false, prev: None, parent: None, left: None, right: None, red: false };
        match self.table[b] {
            None => {
                let x = self.alloc(node);
                self.table[b] = Some(x);
            }
            Some(first) if self.n(first).tree => self.put_tree_val(first, node),
            Some(first) => {
                let mut p = first;
                let mut length = 1;
                while let Some(e) = self.n(p).next {
                    p = e;
                    length += 1;
                }
                let x = self.alloc(node);
                self.m(p).next = Some(x);
                if length + 1 >= TREEIFY_LENGTH {
                    self.treeify_bin(b);
                }
            }
        }
        self.len += 1;
        if self.len > self.threshold {
            self.resize();
        }
        None
    }

    /// `computeIfAbsent(key, k -> value)` with a non-null value; returns whether the key was
    /// absent. Unlike `put` it grows a full table *before* looking the key up (so also when the
    /// key is present), puts a new key at the *front* of its bucket's list, and turns the bucket
    /// into a tree when it held 7 keys or more before.
    pub(crate) fn compute_if_absent(&mut self, key: K, value: impl FnOnce() -> V) -> bool {
        if self.table.is_empty() || self.len > self.threshold {
            self.resize();
        }
        if self.find(&key).is_some() {
            return false;
        }
        let hash = spread(key.java_hash_code());
        let b = self.index_of(hash);
        let first = self.table[b];
        let node =
            Node { hash, key, value: value(), next: first, tree: false, prev: None, parent: None, left: None, right: None, red: false };
        match first {
            Some(first) if self.n(first).tree => self.put_tree_val(first, Node { next: None, ..node }),
            _ => {
                let mut listed = 0;
                let mut e = first;
                while let Some(i) = e {
                    listed += 1;
                    e = self.n(i).next;
                }
                let x = self.alloc(node);
                self.table[b] = Some(x);
                if listed >= TREEIFY_LENGTH - 2 {
                    self.treeify_bin(b);
                }
            }
        }
        self.len += 1;
        true
    }

    /// `remove(key)`: a removed tree node may turn a small tree back into a list and moves the
    /// tree's root to the front of its bucket.
    pub(crate) fn remove<Q: JavaHashCode + Eq + ?Sized>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
    {
        let i = self.find(key)?;
        Some(self.remove_node(i, true))
    }

    /// Removes `key` as `Iterator.remove` does on the iterator's current entry (no re-rooting, no
    /// shrinking of trees); the other entries keep their order.
    pub(crate) fn remove_by_iterator<Q: JavaHashCode + Eq + ?Sized>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
    {
        let i = self.find(key)?;
        Some(self.remove_node(i, false))
    }

    /// Keeps the entries `keep` accepts, removing the others as an iterator's `remove` does
    /// (`retainAll`, `removeIf`, `Iterator.remove`: trees are neither shrunk to lists nor
    /// re-rooted).
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(&K, &V) -> bool) {
        for i in self.node_order() {
            let node = self.n(i);
            if !keep(&node.key, &node.value) {
                self.remove_node(i, false);
            }
        }
    }

    /// `AbstractSet.removeAll(c)` for a collection `c` of `c_len` elements iterated as `items`:
    /// removes each element of `c` through `remove` when this set is larger, otherwise walks this
    /// set and removes through the iterator.
    pub(crate) fn remove_all<'q, Q>(&mut self, items: impl IntoIterator<Item = &'q Q>, c_len: usize, contains: impl Fn(&K) -> bool)
    where
        K: Borrow<Q>,
        Q: JavaHashCode + Eq + ?Sized + 'q,
    {
        if self.len > c_len {
            for item in items {
                self.remove(item);
            }
        } else {
            self.retain(|k, _| !contains(k));
        }
    }

    /// The number of buckets that are trees.
    #[cfg(test)]
    fn tree_bins(&self) -> usize {
        self.table.iter().filter(|h| h.is_some_and(|i| self.n(i).tree)).count()
    }

    /// Node indices in iteration order.
    fn node_order(&self) -> Vec<usize> {
        let mut order = Vec::with_capacity(self.len);
        for head in &self.table {
            let mut e = *head;
            while let Some(i) = e {
                order.push(i);
                e = self.n(i).next;
            }
        }
        order
    }

    /// Entries in Java's iteration order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        self.table.iter().flat_map(move |head| {
            let mut e = *head;
            std::iter::from_fn(move || {
                let i = e?;
                let node = self.n(i);
                e = node.next;
                Some((&node.key, &node.value))
            })
        })
    }

    /// Keys in Java's iteration order.
    pub(crate) fn keys(&self) -> impl Iterator<Item = &K> {
        self.iter().map(|(k, _)| k)
    }

    /// `HashMap.removeNode` of node `i`.
    fn remove_node(&mut self, i: usize, movable: bool) -> V {
        let b = self.index_of(self.n(i).hash);
        if self.n(i).tree {
            self.remove_tree_node(i, b, movable);
        } else if self.table[b] == Some(i) {
            self.table[b] = self.n(i).next;
        } else {
            let mut p = self.table[b].expect("bucket of a live node");
            while self.n(p).next != Some(i) {
                p = self.n(p).next.expect("node is in its bucket");
            }
            self.m(p).next = self.n(i).next;
        }
        self.len -= 1;
        self.free.push(i);
        self.nodes[i].take().expect("live node").value
    }

    /// `HashMap.resize`.
    fn resize(&mut self) {
        let old_cap = self.table.len();
        let old_thr = self.threshold;
        let (new_cap, mut new_thr) = if old_cap > 0 {
            if old_cap >= MAX_CAPACITY {
                self.threshold = i32::MAX as usize;
                return;
            }
            let new_cap = old_cap << 1;
            (new_cap, if new_cap < MAX_CAPACITY && old_cap >= DEFAULT_CAPACITY { old_thr << 1 } else { 0 })
        } else if old_thr > 0 {
            (old_thr, 0)
        } else {
            (DEFAULT_CAPACITY, DEFAULT_CAPACITY * 3 / 4)
        };
        if new_thr == 0 {
            let ft = new_cap as f32 * 0.75f32;
            new_thr = if new_cap < MAX_CAPACITY && ft < MAX_CAPACITY as f32 { ft as usize } else { i32::MAX as usize };
        }
        self.threshold = new_thr;
        let old = std::mem::replace(&mut self.table, vec![None; new_cap]);
        for (j, head) in old.into_iter().enumerate() {
            let Some(e) = head else { continue };
            if self.n(e).next.is_none() {
                let b = self.index_of(self.n(e).hash);
                self.table[b] = Some(e);
            } else if self.n(e).tree {
                self.split(e, j, old_cap);
            } else {
                let (lo, hi) = self.split_list(e, old_cap, false);
                self.table[j] = lo.first().copied();
                self.table[j + old_cap] = hi.first().copied();
            }
        }
    }

    /// Splits the list starting at `e` by the `bit` of the hash, keeping the order; links each
    /// half by `next` (and by `prev` when `tree`).
    fn split_list(&mut self, e: usize, bit: usize, tree: bool) -> (Vec<usize>, Vec<usize>) {
        let mut lo = Vec::new();
        let mut hi = Vec::new();
        let mut cur = Some(e);
        while let Some(i) = cur {
            cur = self.n(i).next;
            if self.n(i).hash as u32 as usize & bit == 0 { lo.push(i) } else { hi.push(i) }
        }
        for half in [&lo, &hi] {
            for (k, &i) in half.iter().enumerate() {
                let next = half.get(k + 1).copied();
                let prev = if k == 0 { None } else { Some(half[k - 1]) };
                let node = self.m(i);
                node.next = next;
                if tree {
                    node.prev = prev;
                }
            }
        }
        (lo, hi)
    }

    /// `TreeNode.split` when the table doubles.
    fn split(&mut self, e: usize, index: usize, bit: usize) {
        let (lo, hi) = self.split_list(e, bit, true);
        for (half, other, at) in [(&lo, &hi, index), (&hi, &lo, index + bit)] {
            let Some(&head) = half.first() else { continue };
            if half.len() <= UNTREEIFY_THRESHOLD {
                self.untreeify(head);
                self.table[at] = Some(head);
            } else {
                self.table[at] = Some(head);
                if !other.is_empty() {
                    self.treeify(head);
                }
            }
        }
    }

}

impl<K: JavaHashCode + JavaComparable + Eq> JavaHashSet<K> {
    /// `add`; returns whether the key was new.
    pub(crate) fn add(&mut self, key: K) -> bool {
        self.insert(key, ()).is_none()
    }

    /// `new HashSet<>(c)` for a collection iterated in the order given.
    pub(crate) fn from_collection(items: impl ExactSizeIterator<Item = K>) -> Self {
        let mut set = Self::for_collection_of(items.len());
        for item in items {
            set.add(item);
        }
        set
    }
}

#[cfg(test)]
mod tests;
