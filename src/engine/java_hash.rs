//! Java's hash codes and the iteration order of `java.util.HashMap`/`HashSet` (JDK 17).
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

use std::borrow::Borrow;
use std::cmp::Ordering;

use super::order::{cmp_java_strings, cmp_process_ids, cmp_task_ids};
use crate::wire::{HostInfo, ProcessId, TaskId, TopicPartition};

/// Java's `hashCode()` of a value.
pub(crate) trait JavaHashCode {
    fn java_hash_code(&self) -> i32;
}

/// `String.hashCode`: `s[0]·31^(n-1) + … + s[n-1]` over UTF-16 code units, wrapping.
pub(crate) fn string_hash(s: &str) -> i32 {
    s.encode_utf16().fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)))
}

/// `Objects.hash(a, b, c)` = `Arrays.hashCode(new Object[]{a, b, c})`.
pub(crate) fn objects_hash(parts: &[i32]) -> i32 {
    parts.iter().fold(1i32, |h, &p| h.wrapping_mul(31).wrapping_add(p))
}

impl JavaHashCode for TaskId {
    /// `Objects.hash(subtopology, partition, topologyName)`; an `Integer` hashes to its value and
    /// a null name to 0.
    fn java_hash_code(&self) -> i32 {
        let name = self.topology.as_deref().map_or(0, string_hash);
        objects_hash(&[self.subtopology, self.partition, name])
    }
}

impl JavaHashCode for ProcessId {
    /// `UUID.hashCode`: `(int) (hilo >> 32) ^ (int) hilo` with `hilo = most ^ least`.
    fn java_hash_code(&self) -> i32 {
        let (hi, lo) = self.0.as_u64_pair();
        let hilo = hi ^ lo;
        ((hilo >> 32) as i32) ^ (hilo as i32)
    }
}

impl JavaHashCode for str {
    fn java_hash_code(&self) -> i32 {
        string_hash(self)
    }
}

impl JavaHashCode for String {
    fn java_hash_code(&self) -> i32 {
        string_hash(self)
    }
}

impl JavaHashCode for TopicPartition {
    /// `TopicPartition.hashCode`: `31 · (31 + partition) + topic.hashCode()`.
    fn java_hash_code(&self) -> i32 {
        31i32.wrapping_mul(31i32.wrapping_add(self.partition)).wrapping_add(string_hash(&self.topic))
    }
}

impl JavaHashCode for HostInfo {
    /// `HostInfo.hashCode`: `31 · host.hashCode() + port`.
    fn java_hash_code(&self) -> i32 {
        31i32.wrapping_mul(string_hash(&self.host)).wrapping_add(self.port)
    }
}

/// `TopologyMetadata.Subtopology`: a sub-topology id and an optional topology name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Subtopology {
    pub(crate) id: i32,
    pub(crate) topology: Option<std::sync::Arc<str>>,
}

impl JavaHashCode for Subtopology {
    /// `Objects.hash(nodeGroupId, namedTopology)`.
    fn java_hash_code(&self) -> i32 {
        objects_hash(&[self.id, self.topology.as_deref().map_or(0, string_hash)])
    }
}

impl<T: JavaHashCode + ?Sized> JavaHashCode for &T {
    fn java_hash_code(&self) -> i32 {
        (**self).java_hash_code()
    }
}

/// Java's `compareTo` of keys that implement `Comparable<Self>`; a tree bin orders keys of equal
/// hash by it.
pub(crate) trait JavaComparable {
    fn java_cmp(&self, other: &Self) -> Ordering;
}

impl JavaComparable for TaskId {
    fn java_cmp(&self, other: &Self) -> Ordering {
        cmp_task_ids(self, other)
    }
}

impl JavaComparable for ProcessId {
    fn java_cmp(&self, other: &Self) -> Ordering {
        cmp_process_ids(self, other)
    }
}

impl JavaComparable for Subtopology {
    /// `Subtopology.compareTo`: id, then topology name (null first).
    fn java_cmp(&self, other: &Self) -> Ordering {
        self.id.cmp(&other.id).then_with(|| match (&self.topology, &other.topology) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
            (Some(a), Some(b)) => cmp_java_strings(a, b),
        })
    }
}

impl JavaComparable for str {
    /// `String.compareTo`: over UTF-16 code units.
    fn java_cmp(&self, other: &Self) -> Ordering {
        cmp_java_strings(self, other)
    }
}

impl JavaComparable for String {
    fn java_cmp(&self, other: &Self) -> Ordering {
        cmp_java_strings(self, other)
    }
}

impl JavaComparable for TopicPartition {
    /// `TopicPartition` is not `Comparable`: Java orders two distinct partitions of equal hash in
    /// a tree bin by their identity hash codes, which differ from run to run. This fixed order
    /// (topic, then partition) stands in for it; only such a tree bin can iterate differently.
    fn java_cmp(&self, other: &Self) -> Ordering {
        cmp_java_strings(&self.topic, &other.topic).then(self.partition.cmp(&other.partition))
    }
}

impl JavaComparable for HostInfo {
    /// `HostInfo` is not `Comparable` either; as for [`TopicPartition`], a fixed stand-in
    /// (host, then port) for Java's identity-hash tie break.
    fn java_cmp(&self, other: &Self) -> Ordering {
        cmp_java_strings(&self.host, &other.host).then(self.port.cmp(&other.port))
    }
}

impl<T: JavaComparable + ?Sized> JavaComparable for &T {
    fn java_cmp(&self, other: &Self) -> Ordering {
        (**self).java_cmp(*other)
    }
}

/// `HashMap.hash`: the hash code with its high half folded into the low half.
pub(crate) fn spread(h: i32) -> i32 {
    h ^ ((h as u32) >> 16) as i32
}

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

    /// `treeifyBin`: a small table grows instead.
    fn treeify_bin(&mut self, b: usize) {
        if self.table.len() < MIN_TREEIFY_CAPACITY {
            self.resize();
            return;
        }
        let mut prev = None;
        let mut e = self.table[b];
        while let Some(i) = e {
            let node = self.m(i);
            node.tree = true;
            node.prev = prev;
            prev = Some(i);
            e = node.next;
        }
        if let Some(head) = self.table[b] {
            self.treeify(head);
        }
    }

    /// Compares `key` (with spread hash `h`) with node `p` as a tree orders them: hash (as a
    /// signed int), then `compareTo`. Kafka's keys never compare equal unless equal.
    fn tree_dir(&self, h: i32, key: &K, p: usize) -> Ordering {
        let node = self.n(p);
        match node.hash.cmp(&h) {
            Ordering::Greater => Ordering::Less,
            Ordering::Less => Ordering::Greater,
            Ordering::Equal => {
                let dir = key.java_cmp(&node.key);
                debug_assert_ne!(dir, Ordering::Equal, "distinct keys compare equal");
                dir
            }
        }
    }

    /// `TreeNode.treeify`: builds the tree from the list starting at `head`, in list order.
    fn treeify(&mut self, head: usize) {
        let mut root: Option<usize> = None;
        let mut x = Some(head);
        while let Some(xi) = x {
            x = self.n(xi).next;
            {
                let node = self.m(xi);
                node.left = None;
                node.right = None;
            }
            match root {
                None => {
                    let node = self.m(xi);
                    node.parent = None;
                    node.red = false;
                    root = Some(xi);
                }
                Some(r) => {
                    let h = self.n(xi).hash;
                    let mut p = r;
                    loop {
                        let dir = {
                            let node = self.n(xi);
                            self.tree_dir(h, &node.key, p)
                        };
                        let child = if dir != Ordering::Greater { self.n(p).left } else { self.n(p).right };
                        match child {
                            Some(c) => p = c,
                            None => {
                                self.m(xi).parent = Some(p);
                                if dir != Ordering::Greater {
                                    self.m(p).left = Some(xi);
                                } else {
                                    self.m(p).right = Some(xi);
                                }
                                break;
                            }
                        }
                    }
                    root = Some(self.balance_insertion(r, xi));
                }
            }
        }
        if let Some(r) = root {
            self.move_root_to_front(r);
        }
    }

    /// `TreeNode.untreeify`: the list from `head` becomes plain nodes, in the same order.
    fn untreeify(&mut self, head: usize) {
        let mut e = Some(head);
        while let Some(i) = e {
            let node = self.m(i);
            node.tree = false;
            node.prev = None;
            node.parent = None;
            node.left = None;
            node.right = None;
            node.red = false;
            e = node.next;
        }
    }

    /// The root of the tree containing `i`.
    fn root_of(&self, mut i: usize) -> usize {
        while let Some(p) = self.n(i).parent {
            i = p;
        }
        i
    }

    /// `TreeNode.putTreeVal` for a key known to be absent.
    fn put_tree_val(&mut self, first: usize, node: Node<K, V>) {
        let root = self.root_of(first);
        let h = node.hash;
        let mut p = root;
        let (xp, dir) = loop {
            let dir = self.tree_dir(h, &node.key, p);
            let child = if dir != Ordering::Greater { self.n(p).left } else { self.n(p).right };
            match child {
                Some(c) => p = c,
                None => break (p, dir),
            }
        };
        let xpn = self.n(xp).next;
        let x = self.alloc(Node { next: xpn, tree: true, prev: Some(xp), parent: Some(xp), ..node });
        if dir != Ordering::Greater {
            self.m(xp).left = Some(x);
        } else {
            self.m(xp).right = Some(x);
        }
        self.m(xp).next = Some(x);
        if let Some(n) = xpn {
            self.m(n).prev = Some(x);
        }
        let r = self.balance_insertion(root, x);
        self.move_root_to_front(r);
    }

    /// `TreeNode.moveRootToFront`.
    fn move_root_to_front(&mut self, root: usize) {
        let index = self.index_of(self.n(root).hash);
        let first = self.table[index];
        if first == Some(root) {
            return;
        }
        self.table[index] = Some(root);
        let (rp, rn) = (self.n(root).prev, self.n(root).next);
        if let Some(n) = rn {
            self.m(n).prev = rp;
        }
        if let Some(p) = rp {
            self.m(p).next = rn;
        }
        if let Some(f) = first {
            self.m(f).prev = Some(root);
        }
        let node = self.m(root);
        node.next = first;
        node.prev = None;
    }

    /// `TreeNode.removeTreeNode` of node `this` in bucket `index`.
    fn remove_tree_node(&mut self, this: usize, index: usize, movable: bool) {
        let original_first = self.table[index].expect("bucket of a live node");
        let (succ, pred) = (self.n(this).next, self.n(this).prev);
        let first = if let Some(p) = pred {
            self.m(p).next = succ;
            Some(original_first)
        } else {
            self.table[index] = succ;
            succ
        };
        if let Some(s) = succ {
            self.m(s).prev = pred;
        }
        let Some(first) = first else { return };
        let mut root = self.root_of(original_first);
        if movable {
            let too_small = match (self.n(root).right, self.n(root).left) {
                (None, _) | (_, None) => true,
                (Some(_), Some(rl)) => self.n(rl).left.is_none(),
            };
            if too_small {
                self.untreeify(first);
                self.table[index] = Some(first);
                return;
            }
        }
        let p = this;
        let (pl, pr) = (self.n(p).left, self.n(p).right);
        let replacement = match (pl, pr) {
            (Some(pl), Some(pr)) => {
                let mut s = pr;
                while let Some(sl) = self.n(s).left {
                    s = sl;
                }
                let c = self.n(s).red;
                let p_red = self.n(p).red;
                self.m(s).red = p_red;
                self.m(p).red = c;
                let sr = self.n(s).right;
                let pp = self.n(p).parent;
                if s == pr {
                    self.m(p).parent = Some(s);
                    self.m(s).right = Some(p);
                } else {
                    let sp = self.n(s).parent;
                    self.m(p).parent = sp;
                    if let Some(sp) = sp {
                        if self.n(sp).left == Some(s) {
                            self.m(sp).left = Some(p);
                        } else {
                            self.m(sp).right = Some(p);
                        }
                    }
                    self.m(s).right = Some(pr);
                    self.m(pr).parent = Some(s);
                }
                self.m(p).left = None;
                self.m(p).right = sr;
                if let Some(sr) = sr {
                    self.m(sr).parent = Some(p);
                }
                self.m(s).left = Some(pl);
                self.m(pl).parent = Some(s);
                self.m(s).parent = pp;
                match pp {
                    None => root = s,
                    Some(pp) if self.n(pp).left == Some(p) => self.m(pp).left = Some(s),
                    Some(pp) => self.m(pp).right = Some(s),
                }
                sr.unwrap_or(p)
            }
            (Some(pl), None) => pl,
            (None, Some(pr)) => pr,
            (None, None) => p,
        };
        if replacement != p {
            let pp = self.n(p).parent;
            self.m(replacement).parent = pp;
            match pp {
                None => {
                    root = replacement;
                    self.m(replacement).red = false;
                }
                Some(pp) if self.n(pp).left == Some(p) => self.m(pp).left = Some(replacement),
                Some(pp) => self.m(pp).right = Some(replacement),
            }
            let node = self.m(p);
            node.parent = None;
            node.left = None;
            node.right = None;
        }
        let r = if self.n(p).red { root } else { self.balance_deletion(root, replacement) };
        if replacement == p {
            if let Some(pp) = self.n(p).parent {
                self.m(p).parent = None;
                if self.n(pp).left == Some(p) {
                    self.m(pp).left = None;
                } else if self.n(pp).right == Some(p) {
                    self.m(pp).right = None;
                }
            }
        }
        if movable {
            self.move_root_to_front(r);
        }
    }

    fn red(&self, i: Link) -> bool {
        i.is_some_and(|i| self.n(i).red)
    }

    /// A child link of node `i`.
    fn child(&self, i: usize, side: Side) -> Link {
        match side {
            Side::Left => self.n(i).left,
            Side::Right => self.n(i).right,
        }
    }

    fn set_child(&mut self, i: usize, side: Side, to: Link) {
        match side {
            Side::Left => self.m(i).left = to,
            Side::Right => self.m(i).right = to,
        }
    }

    /// `TreeNode.rotateLeft` (`toward` left) and `TreeNode.rotateRight`: the child of `p` on the
    /// other side takes its place. Each checks first whether `p` is its parent's child on the
    /// `toward` side, as Java does.
    fn rotate(&mut self, mut root: usize, p: usize, toward: Side) -> usize {
        let away = toward.other();
        if let Some(c) = self.child(p, away) {
            let inner = self.child(c, toward);
            self.set_child(p, away, inner);
            if let Some(inner) = inner {
                self.m(inner).parent = Some(p);
            }
            let pp = self.n(p).parent;
            self.m(c).parent = pp;
            match pp {
                None => {
                    root = c;
                    self.m(c).red = false;
                }
                Some(pp) if self.child(pp, toward) == Some(p) => self.set_child(pp, toward, Some(c)),
                Some(pp) => self.set_child(pp, away, Some(c)),
            }
            self.set_child(c, toward, Some(p));
            self.m(p).parent = Some(c);
        }
        root
    }

    /// `TreeNode.balanceInsertion`. Java writes out both mirror cases; here `side` is the side of
    /// the grandparent that the parent is on.
    fn balance_insertion(&mut self, mut root: usize, mut x: usize) -> usize {
        self.m(x).red = true;
        loop {
            let Some(mut xp) = self.n(x).parent else {
                self.m(x).red = false;
                return x;
            };
            if !self.n(xp).red {
                return root;
            }
            let Some(mut xpp) = self.n(xp).parent else { return root };
            let side = if self.n(xpp).left == Some(xp) { Side::Left } else { Side::Right };
            let uncle = self.child(xpp, side.other());
            if self.red(uncle) {
                let uncle = uncle.expect("red node");
                self.m(uncle).red = false;
                self.m(xp).red = false;
                self.m(xpp).red = true;
                x = xpp;
                continue;
            }
            if self.child(xp, side.other()) == Some(x) {
                x = xp;
                root = self.rotate(root, x, side);
                match self.n(x).parent {
                    Some(p) => {
                        xp = p;
                        match self.n(xp).parent {
                            Some(pp) => xpp = pp,
                            None => {
                                self.m(xp).red = false;
                                continue;
                            }
                        }
                    }
                    None => continue,
                }
            }
            self.m(xp).red = false;
            self.m(xpp).red = true;
            root = self.rotate(root, xpp, side.other());
        }
    }

    /// `TreeNode.balanceDeletion`. Java writes out both mirror cases; here `side` is the side of
    /// its parent that `x` is on.
    fn balance_deletion(&mut self, mut root: usize, mut x: usize) -> usize {
        loop {
            if x == root {
                return root;
            }
            let Some(mut xp) = self.n(x).parent else {
                self.m(x).red = false;
                return x;
            };
            if self.n(x).red {
                self.m(x).red = false;
                return root;
            }
            let side = if self.n(xp).left == Some(x) { Side::Left } else { Side::Right };
            let away = side.other();
            let mut sibling = self.child(xp, away);
            if self.red(sibling) {
                self.m(sibling.expect("red node")).red = false;
                self.m(xp).red = true;
                root = self.rotate(root, xp, side);
                match self.n(x).parent {
                    Some(p) => {
                        xp = p;
                        sibling = self.child(xp, away);
                    }
                    // Java continues with xp = null and a null sibling, then sets x = xp.
                    None => return root,
                }
            }
            let Some(s) = sibling else {
                x = xp;
                continue;
            };
            let (near, far) = (self.child(s, side), self.child(s, away));
            if !self.red(near) && !self.red(far) {
                self.m(s).red = true;
                x = xp;
                continue;
            }
            let mut sibling = Some(s);
            let mut xp_opt = Some(xp);
            if !self.red(far) {
                if let Some(near) = near {
                    self.m(near).red = false;
                }
                self.m(s).red = true;
                root = self.rotate(root, s, away);
                xp_opt = self.n(x).parent;
                sibling = xp_opt.and_then(|p| self.child(p, away));
            }
            if let Some(s) = sibling {
                let red = xp_opt.is_some_and(|p| self.n(p).red);
                self.m(s).red = red;
                if let Some(far) = self.child(s, away) {
                    self.m(far).red = false;
                }
            }
            if let Some(xp) = xp_opt {
                self.m(xp).red = false;
                root = self.rotate(root, xp, side);
            }
            x = root;
        }
    }
}

/// A side of a tree node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Left,
    Right,
}

impl Side {
    fn other(self) -> Self {
        match self {
            Self::Left => Self::Right,
            Self::Right => Self::Left,
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
mod tests {
    use super::*;

    #[test]
    fn hash_codes_match_java() {
        // Values printed by JDK 17.
        assert_eq!(string_hash("rack"), 3_492_567);
        assert_eq!(string_hash("héllo wörld"), 1_628_148_953);
        assert_eq!(TaskId::new(0, 0).java_hash_code(), 29_791);
        assert_eq!(TaskId::new(3, 7).java_hash_code(), 32_891);
        assert_eq!(TaskId::named("topo", 1, 2).java_hash_code(), 30_814 + string_hash("topo"));
        let pid: ProcessId = "00112233-4455-6677-8899-aabbccddeeff".parse().unwrap();
        assert_eq!(pid.java_hash_code(), 0x00112233 ^ 0x44556677 ^ 0x8899aabbu32 as i32 ^ 0xccddeeffu32 as i32);
    }

    #[test]
    fn iteration_follows_buckets_then_insertion() {
        // Integer-like keys through TaskId: hash 29791 + 961 s + 31 p.
        let mut m = JavaHashMap::new();
        for p in [40, 9, 1] {
            m.insert(TaskId::new(0, p), ());
        }
        m.insert(TaskId::new(1, 9), ());
        let order: Vec<String> = m.keys().map(ToString::to_string).collect();
        // Buckets (mod 16): 0_9 → 6, 0_40 → 7, 1_9 → 7 (same hash as 0_40), 0_1 → 14. Checked
        // against a JDK 17 HashMap of Kafka's TaskId.
        assert_eq!(order, ["0_9", "0_40", "1_9", "0_1"]);
    }

    /// One random sequence of operations for the differential test against `java.util.HashSet`:
    /// keys crowd into few buckets (`31·s + p` constant gives equal hashes) so that buckets turn
    /// into trees, split, shrink and lose their roots.
    fn random_ops(rng: &mut crate::engine::scenario::Rng) -> serde_json::Value {
        let crowded = rng.range(1, 6);
        let key = |rng: &mut crate::engine::scenario::Rng| {
            if rng.chance(0.7) {
                let v = 31 * 12 + rng.range(0, crowded - 1) * 64;
                let s = rng.range(0, 11);
                TaskId::new(s as i32, (v - 31 * s) as i32)
            } else {
                TaskId::new(rng.range(0, 40) as i32, rng.range(0, 400) as i32)
            }
        };
        let init = match rng.range(0, 2) {
            0 => serde_json::json!({"kind": "new"}),
            1 => serde_json::json!({"kind": "capacity", "n": rng.range(0, 300)}),
            _ => {
                let items: Vec<String> = (0..rng.range(0, 200)).map(|_| key(rng).to_string()).collect();
                serde_json::json!({"kind": "collection", "items": items})
            }
        };
        let mut ops = Vec::new();
        for _ in 0..rng.range(1, 600) {
            let op = match rng.range(0, 19) {
                0..=9 => serde_json::json!(["put", key(rng).to_string()]),
                10..=12 => serde_json::json!(["remove", key(rng).to_string()]),
                13..=15 => serde_json::json!(["iterRemove", key(rng).to_string()]),
                16 => {
                    let keep: Vec<String> = (0..rng.range(0, 300)).map(|_| key(rng).to_string()).collect();
                    serde_json::json!(["retain", keep])
                }
                17 => {
                    let items: Vec<String> = (0..rng.range(0, 40)).map(|_| key(rng).to_string()).collect();
                    serde_json::json!(["removeAll", items])
                }
                _ => serde_json::json!(["check"]),
            };
            ops.push(op);
        }
        ops.push(serde_json::json!(["check"]));
        serde_json::json!({"init": init, "ops": ops})
    }

    /// Runs one sequence; returns the iteration order at each `check`, and the most tree bins
    /// seen at a check.
    fn run_ops(seq: &serde_json::Value) -> (Vec<Vec<String>>, usize) {
        let task = |v: &serde_json::Value| v.as_str().unwrap().parse::<TaskId>().unwrap();
        let tasks = |v: &serde_json::Value| v.as_array().unwrap().iter().map(task).collect::<Vec<_>>();
        let init = &seq["init"];
        let mut set: JavaHashSet<TaskId> = match init["kind"].as_str().unwrap() {
            "new" => JavaHashSet::new(),
            "capacity" => JavaHashSet::with_capacity(init["n"].as_u64().unwrap() as usize),
            _ => JavaHashSet::from_collection(tasks(&init["items"]).into_iter()),
        };
        let mut orders = Vec::new();
        let mut trees = 0;
        for op in seq["ops"].as_array().unwrap() {
            match op[0].as_str().unwrap() {
                "put" => {
                    set.add(task(&op[1]));
                }
                "remove" => {
                    set.remove(&task(&op[1]));
                }
                "iterRemove" => {
                    set.remove_by_iterator(&task(&op[1]));
                }
                "retain" => {
                    let keep: std::collections::HashSet<TaskId> = tasks(&op[1]).into_iter().collect();
                    set.retain(|k, _| keep.contains(k));
                }
                "removeAll" => {
                    let mut items = tasks(&op[1]);
                    let mut seen = std::collections::HashSet::new();
                    items.retain(|t| seen.insert(t.clone()));
                    set.remove_all(items.iter(), items.len(), |k| seen.contains(k));
                }
                _ => {
                    trees = trees.max(set.tree_bins());
                    orders.push(set.keys().map(ToString::to_string).collect());
                }
            }
        }
        (orders, trees)
    }

    /// Writes random operation sequences and this map's answers to `$HASHMAP_DIR`; driven by
    /// `compat/java/parity.sh`, which runs the same sequences on `java.util.HashSet`.
    #[test]
    #[ignore = "driven by compat/java/parity.sh"]
    fn java_differential_generate() {
        use std::io::Write;
        let dir = std::path::PathBuf::from(std::env::var("HASHMAP_DIR").unwrap());
        let count: u64 = std::env::var("HASHMAP_SEQUENCES").map_or(300, |s| s.parse().unwrap());
        std::fs::create_dir_all(&dir).unwrap();
        let mut ops = std::fs::File::create(dir.join("hashmap-ops.jsonl")).unwrap();
        let mut rust = std::fs::File::create(dir.join("hashmap-rust.jsonl")).unwrap();
        let mut rng = crate::engine::scenario::Rng::new(42);
        let mut with_trees = 0;
        for id in 0..count {
            let mut seq = random_ops(&mut rng);
            seq["id"] = id.into();
            let (orders, trees) = run_ops(&seq);
            with_trees += usize::from(trees > 0);
            writeln!(ops, "{seq}").unwrap();
            writeln!(rust, "{}", serde_json::json!({"id": id, "orders": orders})).unwrap();
        }
        println!("HashSet sequences: {count}, {with_trees} with tree bins");
    }

    /// Compares with Java's answers in `$HASHMAP_DIR/hashmap-java.jsonl`.
    #[test]
    #[ignore = "driven by compat/java/parity.sh"]
    fn java_differential_compare() {
        let dir = std::path::PathBuf::from(std::env::var("HASHMAP_DIR").unwrap());
        let read = |name: &str| -> Vec<serde_json::Value> {
            std::fs::read_to_string(dir.join(name)).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
        };
        let (rust, java) = (read("hashmap-rust.jsonl"), read("hashmap-java.jsonl"));
        assert_eq!(rust.len(), java.len());
        let differing: Vec<_> = rust.iter().zip(&java).filter(|(r, j)| r != j).map(|(r, _)| r["id"].clone()).collect();
        println!("HashSet iteration order: {} sequences, {} equal, {} different", rust.len(), rust.len() - differing.len(), differing.len());
        assert!(differing.is_empty(), "sequences {differing:?} differ from java.util.HashSet");

        // With $HASHMAP_FIXTURES=N, keep the N smallest sequences that grow tree bins, with Java's
        // answers, for `replays_java_hash_set_fixtures`.
        if let Some(n) = std::env::var("HASHMAP_FIXTURES").ok().and_then(|n| n.parse::<usize>().ok()) {
            let mut picked: Vec<String> = read("hashmap-ops.jsonl")
                .into_iter()
                .zip(&java)
                .filter(|(seq, _)| run_ops(seq).1 > 0)
                .map(|(mut seq, j)| {
                    seq["expected"] = j["orders"].clone();
                    seq.to_string()
                })
                .collect();
            picked.sort_by_key(String::len);
            picked.truncate(n);
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/parity/JavaHashSet.jsonl");
            std::fs::write(&path, picked.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
            println!("{}: {} sequences", path.display(), picked.len());
        }
    }

    /// Operation sequences with `java.util.HashSet`'s iteration orders, recorded by
    /// `compat/java/parity.sh --fixtures N`; every one grows tree bins.
    #[test]
    fn replays_java_hash_set_fixtures() {
        let text = include_str!("../../fixtures/parity/JavaHashSet.jsonl");
        let mut count = 0;
        for line in text.lines().filter(|l| !l.is_empty()) {
            let seq: serde_json::Value = serde_json::from_str(line).unwrap();
            let (orders, trees) = run_ops(&seq);
            assert!(trees > 0);
            assert_eq!(serde_json::json!(orders), seq["expected"], "sequence {}", seq["id"]);
            count += 1;
        }
        assert!(count >= 10, "only {count} recorded sequences");
    }
}
