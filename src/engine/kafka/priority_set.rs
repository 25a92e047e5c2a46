//! Kafka's `ConstrainedPrioritySet`: clients ordered by a load, then by process id, polled with a
//! constraint.
//!
//! Kafka keeps the clients in a `java.util.PriorityQueue` whose comparator reads the load at
//! comparison time. Where no queued client's load changes before it is re-offered (standby
//! placement, stateless tasks), the queue always returns the minimum of the current loads, and
//! [`PrioritySet`], an ordered set keyed by `(load, client index)`, makes the same choices. Client
//! indices are in Java `ProcessId` order, so the tie-break is Java's. The task movements change
//! queued clients' loads; they use [`JavaPrioritySet`], which replays Java's heap.

use std::cmp::Ordering;
use std::collections::BTreeSet;

use crate::engine::model::Client;
use crate::jdk::cmp::{cmp_loads, cmp_process_ids};
use crate::jdk::hash::{JavaHashCode, spread};
use crate::jdk::hash_map::JavaHashSet;
use crate::wire::ProcessId;

/// A load with Java's `Double.compare` order.
#[derive(Debug, Clone, Copy)]
struct Load(f64);

impl PartialEq for Load {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Load {}
impl PartialOrd for Load {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Load {
    fn cmp(&self, other: &Self) -> Ordering {
        cmp_loads(self.0, other.0)
    }
}

/// Clients by `(load, process id)`.
#[derive(Debug)]
pub(crate) struct PrioritySet {
    queue: BTreeSet<(Load, Client)>,
    /// The key each queued client was offered with.
    key: Vec<Option<Load>>,
}

impl PrioritySet {
    /// An empty set for `n` clients.
    pub(crate) fn new(n: usize) -> Self {
        Self { queue: BTreeSet::new(), key: vec![None; n] }
    }

    /// Kafka's `offer`: (re-)inserts `client` with its current `load`.
    ///
    /// Complexity: O(log n).
    pub(crate) fn offer(&mut self, client: Client, load: f64) {
        if let Some(old) = self.key[client].take() {
            self.queue.remove(&(old, client));
        }
        self.key[client] = Some(Load(load));
        self.queue.insert((Load(load), client));
    }

    /// Kafka's `poll(task, constraint)`: removes and returns the least loaded client accepted by
    /// `accept`; the clients rejected on the way stay queued.
    ///
    /// Complexity: O(r + log n) for r rejected clients.
    pub(crate) fn poll(&mut self, mut accept: impl FnMut(Client) -> bool) -> Option<Client> {
        let entry = *self.queue.iter().find(|e| accept(e.1))?;
        self.queue.remove(&entry);
        self.key[entry.1] = None;
        Some(entry.1)
    }
}

/// A load and a client index as one integer ordered as Java's `(load, ProcessId)`: loads are
/// finite and not negative (tasks / threads), so their IEEE bits order as the values do.
fn sort_key(load: f64, client: Client) -> u128 {
    debug_assert!(load >= 0.0 && load.is_finite() && load.to_bits() >> 63 == 0);
    (u128::from(load.to_bits()) << 64) | client as u128
}

/// The client of a [`sort_key`].
fn client_of(key: u128) -> Client {
    key as u64 as Client
}

/// For each capacity `16 << j` a `HashSet` of at most `n` entries passes through: whether the
/// `hashes` (all the clients) put fewer than 9 entries in every bucket.
fn uncrowded_capacities(hashes: &[i32], n: usize) -> Vec<bool> {
    let mut out = Vec::new();
    let mut counts = Vec::new();
    let mut capacity = 16usize;
    loop {
        counts.clear();
        counts.resize(capacity, 0u32);
        for &h in hashes {
            counts[h as u32 as usize & (capacity - 1)] += 1;
        }
        out.push(counts.iter().all(|&c| c < 9));
        if n <= capacity * 3 / 4 {
            return out;
        }
        capacity *= 2;
    }
}

/// A set of clients that is replaced by the next in time proportional to the new set, with each
/// member's place in it: every client holds a stamp, the current set's stamps are those above a
/// floor, and each new set starts where the last one's stamps end, so old stamps need no
/// clearing (except when the counter would overflow).
#[derive(Debug)]
struct Stamps {
    stamps: Vec<u32>,
    /// The current set's stamps are `floor + 1 ..= end`.
    floor: u32,
    end: u32,
}

impl Stamps {
    /// An empty set over `n` clients.
    fn new(n: usize) -> Self {
        Self { stamps: vec![0; n], floor: 0, end: 0 }
    }

    /// Makes `clients` (distinct) the set, each at its place in `clients`.
    fn set(&mut self, clients: &[Client]) {
        let k = clients.len() as u32;
        if self.end.checked_add(k).is_none() {
            self.stamps.fill(0);
            self.end = 0;
        }
        self.floor = self.end;
        for (i, &c) in clients.iter().enumerate() {
            self.stamps[c] = self.floor + 1 + i as u32;
        }
        self.end = self.floor + k;
    }

    /// Whether `client` is in the current set.
    fn contains(&self, client: Client) -> bool {
        self.stamps[client] > self.floor
    }

    /// A number that orders the current set's members as their places do.
    fn rank(&self, client: Client) -> u32 {
        self.stamps[client]
    }
}

/// Kafka's `ConstrainedPrioritySet` replayed exactly, for callers that change a queued client's
/// load before re-offering it.
///
/// The task movements do that: the destination loses its task while queued, and the source may be
/// queued too. Java's `PriorityQueue` compares with the loads of the moment, so a stale entry can
/// leave the heap out of order, and later polls then return a client that is not the least
/// loaded. Reproducing Kafka's choices needs its exact array: `java.util.PriorityQueue`'s sift-up
/// and sift-down, `remove(Object)` by linear search, rejected clients re-offered in the iteration
/// order of the `HashSet` that collected them.
///
/// The loads are kept here ([`set_load`](Self::set_load)); the caller updates a client's load as
/// soon as its assignment changes, which is when Java's comparator would start to see the new
/// value.
#[derive(Debug)]
pub(crate) struct JavaPrioritySet {
    /// Java's heap array, each client as its current key (see [`sort_key`]): comparisons read the
    /// array alone, and a queued client's load change is written into its entry, which is when
    /// Java's comparator starts to see it.
    heap: Vec<u128>,
    queued: Vec<bool>,
    /// `(load, client)` of each client as one integer (see [`sort_key`]).
    keys: Vec<u128>,
    /// `HashMap.hash` of each client's process id, for the order of rejected clients.
    hashes: Vec<i32>,
    process_ids: Vec<ProcessId>,
    /// Every client's entry of `keys`, queued or not, in ascending order: Java's pop order on an
    /// ordered heap, kept up to date by [`set_load`](Self::set_load) so that a poll that pops
    /// every client needs no sort.
    sorted_keys: Vec<u128>,
    rejected: Vec<Client>,
    counts: Vec<u8>,
    /// Entry `j`: whether all the clients together put fewer than 9 process ids in every bucket
    /// of a table of capacity `16 << j`; then so does any set of them, and
    /// [`hash_set_order`](Self::hash_set_order) need not count that capacity.
    uncrowded_capacities: Vec<bool>,
    starts: Vec<usize>,
    sorted: Vec<Client>,
    /// The candidates of the current poll (see [`poll_among`](Self::poll_among)).
    candidates: Stamps,
    /// Entry `j`, once needed: every client, ordered by bucket in a table of capacity `16 << j`
    /// (then by client), for [`hash_set_order`](Self::hash_set_order) on large sets.
    by_bucket: Vec<Vec<Client>>,
    /// The set being put in `HashSet` order, in insertion order.
    ordering: Stamps,
}

impl JavaPrioritySet {
    /// An empty set over clients with these process ids (in Java order) and loads.
    pub(crate) fn new(process_ids: Vec<ProcessId>, loads: Vec<f64>) -> Self {
        let n = process_ids.len();
        let hashes: Vec<i32> = process_ids.iter().map(|p| spread(p.java_hash_code())).collect();
        let keys: Vec<u128> = loads.iter().enumerate().map(|(c, &load)| sort_key(load, c)).collect();
        let mut sorted_keys = keys.clone();
        sorted_keys.sort_unstable();
        let uncrowded_capacities = uncrowded_capacities(&hashes, n);
        Self {
            heap: Vec::with_capacity(n),
            queued: vec![false; n],
            keys,
            hashes,
            process_ids,
            sorted_keys,
            rejected: Vec::new(),
            counts: Vec::new(),
            uncrowded_capacities,
            starts: Vec::new(),
            sorted: Vec::new(),
            candidates: Stamps::new(n),
            by_bucket: Vec::new(),
            ordering: Stamps::new(n),
        }
    }

    /// Records the current load of `client`.
    ///
    /// Complexity: O(n) in the worst case (one shift of the sorted keys), O(log n) when the
    /// client's rank does not change.
    pub(crate) fn set_load(&mut self, client: Client, load: f64) {
        let (old, new) = (self.keys[client], sort_key(load, client));
        if old == new {
            return;
        }
        self.keys[client] = new;
        if self.queued[client] {
            let at = self.heap.iter().position(|&k| client_of(k) == client).expect("a queued client is in the heap");
            self.heap[at] = new;
        }
        let from = self.sorted_keys.binary_search(&old).expect("every client's key is sorted");
        let to = self.sorted_keys.binary_search(&new).expect_err("keys are distinct (they hold the client)");
        // Moving the entry from `from` to its new place keeps the others in order.
        if to > from {
            self.sorted_keys[from..to].rotate_left(1);
            self.sorted_keys[to - 1] = new;
        } else {
            self.sorted_keys[to..=from].rotate_right(1);
            self.sorted_keys[to] = new;
        }
    }

    /// `PriorityQueue.siftUp` of key `x` from slot `k`; Java's comparator is the keys' order.
    fn sift_up(&mut self, mut k: usize, x: u128) {
        let heap = &mut self.heap[..];
        while k > 0 {
            let parent = (k - 1) >> 1;
            let e = heap[parent];
            if x >= e {
                break;
            }
            heap[k] = e;
            k = parent;
        }
        heap[k] = x;
    }

    /// `PriorityQueue.siftDown` of key `x` from slot `k`.
    ///
    /// Java's loop: walk down the path of smaller children, moving each one up a slot, until
    /// `x` does not exceed the smaller child. The choice of child is a conditional move, not a
    /// branch (it is unpredictable); the stop is a branch that is taken once.
    fn sift_down(&mut self, mut k: usize, x: u128) {
        let heap = &mut self.heap[..];
        let n = heap.len();
        // Slots with two children.
        while 2 * k + 2 < n {
            let left = 2 * k + 1;
            let c = left + usize::from(heap[left] > heap[left + 1]);
            let key = heap[c];
            if x <= key {
                heap[k] = x;
                return;
            }
            heap[k] = key;
            k = c;
        }
        // A last slot with only a left child.
        if 2 * k + 2 == n {
            let c = 2 * k + 1;
            if x > heap[c] {
                heap[k] = heap[c];
                k = c;
            }
        }
        heap[k] = x;
    }

    /// `PriorityQueue.poll`.
    fn queue_poll(&mut self) -> Option<Client> {
        let x = self.heap.pop()?;
        if self.heap.is_empty() {
            return Some(client_of(x));
        }
        let result = self.heap[0];
        self.sift_down(0, x);
        Some(client_of(result))
    }

    /// `PriorityQueue.remove(Object)`: linear search, then `removeAt`.
    fn queue_remove(&mut self, x: Client) {
        let Some(i) = self.heap.iter().position(|&k| client_of(k) == x) else { return };
        let moved = self.heap.pop().expect("non-empty");
        if i == self.heap.len() {
            return;
        }
        self.sift_down(i, moved);
        if self.heap[i] == moved {
            self.sift_up(i, moved);
        }
    }

    /// Kafka's `offer`: a queued client is removed first, then the client is added.
    ///
    /// Complexity: O(n) for a queued client (Java's `remove(Object)` searches the array),
    /// O(log n) otherwise.
    pub(crate) fn offer(&mut self, client: Client) {
        if self.queued[client] {
            self.queue_remove(client);
        } else {
            self.queued[client] = true;
        }
        let key = self.keys[client];
        self.heap.push(key);
        let k = self.heap.len() - 1;
        self.sift_up(k, key);
    }

    /// Kafka's `poll(task, constraint)`: pops clients until `accept` takes one; the rejected ones
    /// are offered back in the iteration order of a `HashSet<ProcessId>` filled in pop order.
    ///
    /// Complexity: O((r + 1) · log n) for r rejected clients, as in Kafka.
    #[cfg(test)]
    pub(crate) fn poll(&mut self, accept: impl FnMut(Client) -> bool) -> Option<Client> {
        self.poll_among(None, accept)
    }

    /// [`poll`](Self::poll) where every client `accept` takes is in `candidates` (when given):
    /// whether any queued client is acceptable is then answered from the candidates alone.
    ///
    /// Complexity: as [`poll`](Self::poll); when no candidate is queued and acceptable and the
    /// heap is in order, O(n) (every client is popped and offered back, and the pop order is the
    /// order of the sorted keys).
    pub(crate) fn poll_among(
        &mut self,
        candidates: Option<&[Client]>,
        mut accept: impl FnMut(Client) -> bool,
    ) -> Option<Client> {
        let mut rejected = std::mem::take(&mut self.rejected);
        rejected.clear();
        let any_acceptable = match candidates {
            Some(candidates) => candidates.iter().any(|&c| self.queued[c] && accept(c)),
            None => self.heap.iter().any(|&k| accept(client_of(k))),
        };
        if !any_acceptable && self.is_ordered() {
            // Java pops every client, in key order since the heap is in order, and offers them
            // all back: only the order of the keys matters, not the pops.
            let queued = &self.queued;
            rejected.extend(self.sorted_keys.iter().map(|&k| client_of(k)).filter(|&c| queued[c]));
            debug_assert_eq!(rejected.len(), self.heap.len());
            self.heap.clear();
            for &c in &rejected {
                self.queued[c] = false;
            }
            self.hash_set_order(&mut rejected);
            for &c in &rejected {
                self.offer(c);
            }
            self.rejected = rejected;
            return None;
        }
        // A popped client that is not a candidate is rejected without asking `accept`.
        if let Some(candidates) = candidates {
            self.candidates.set(candidates);
        }
        let marked = candidates.is_some();
        let mut found = None;
        while let Some(c) = self.queue_poll() {
            self.queued[c] = false;
            if (!marked || self.candidates.contains(c)) && accept(c) {
                found = Some(c);
                break;
            }
            rejected.push(c);
        }
        self.hash_set_order(&mut rejected);
        for &c in &rejected {
            self.offer(c);
        }
        self.rejected = rejected;
        found
    }

    /// Whether every parent is at most its children under the current loads.
    fn is_ordered(&self) -> bool {
        let heap = &self.heap[..];
        (1..heap.len()).all(|i| heap[(i - 1) >> 1] <= heap[i])
    }

    /// Reorders `clients` (distinct, in insertion order) into the iteration order of a
    /// `new HashSet<ProcessId>()` they were added to: by bucket of the final table, insertion
    /// order within a bucket, unless a bucket ever reached 9 entries (then the exact replay).
    fn hash_set_order(&mut self, clients: &mut Vec<Client>) {
        let k = clients.len();
        if k <= 1 {
            return;
        }
        // The table passes through capacities `16 << level`; each holds up to its threshold plus
        // one entry (the one that crosses the threshold is added before the table doubles). It
        // is crowded if any of them ever had 9 entries in a bucket.
        let mut counts = std::mem::take(&mut self.counts);
        let (mut capacity, mut level, mut crowded) = (16usize, 0usize, false);
        loop {
            let threshold = capacity * 3 / 4;
            if k >= 9 && !crowded && !self.uncrowded_capacities.get(level).copied().unwrap_or(false) {
                counts.clear();
                counts.resize(capacity, 0);
                crowded = clients[..(threshold + 1).min(k)].iter().any(|&c| {
                    let n = &mut counts[self.hashes[c] as u32 as usize & (capacity - 1)];
                    *n += 1;
                    *n >= 9
                });
            }
            if k <= threshold {
                break;
            }
            capacity *= 2;
            level += 1;
        }
        self.counts = counts;
        if crowded {
            let mut set: JavaHashSet<ProcessId> = JavaHashSet::new();
            for &c in clients.iter() {
                set.add(self.process_ids[c]);
            }
            *clients = set
                .keys()
                .map(|pid| self.process_ids.binary_search_by(|p| cmp_process_ids(p, pid)).expect("a client"))
                .collect();
            return;
        }
        if self.hashes.len() <= capacity + k {
            self.order_by_bucket_scan(clients, level);
        } else {
            self.order_by_counting_sort(clients, capacity);
        }
    }

    /// Orders `clients` by bucket of a table of capacity `capacity`, stably (a counting sort):
    /// O(capacity + k) for k clients.
    fn order_by_counting_sort(&mut self, clients: &mut Vec<Client>, capacity: usize) {
        let mask = capacity - 1;
        let mut starts = std::mem::take(&mut self.starts);
        starts.clear();
        starts.resize(capacity + 1, 0);
        for &c in clients.iter() {
            starts[(self.hashes[c] as u32 as usize & mask) + 1] += 1;
        }
        for b in 0..capacity {
            starts[b + 1] += starts[b];
        }
        let mut sorted = std::mem::take(&mut self.sorted);
        sorted.clear();
        sorted.resize(clients.len(), 0);
        for &c in clients.iter() {
            let b = self.hashes[c] as u32 as usize & mask;
            sorted[starts[b]] = c;
            starts[b] += 1;
        }
        std::mem::swap(clients, &mut sorted);
        self.sorted = sorted;
        self.starts = starts;
    }

    /// Orders `clients` as [`order_by_counting_sort`](Self::order_by_counting_sort) does, for a
    /// table of capacity `16 << level`, by walking every client in that table's bucket order and
    /// keeping those in the set: O(n) for n clients, no table to clear or sum, for sets that are
    /// a large part of all clients.
    fn order_by_bucket_scan(&mut self, clients: &mut Vec<Client>, level: usize) {
        let mask = (16usize << level) - 1;
        let n = self.hashes.len();
        while self.by_bucket.len() <= level {
            let m = (16usize << self.by_bucket.len()) - 1;
            let mut order: Vec<Client> = (0..n).collect();
            order.sort_unstable_by_key(|&c| (self.hashes[c] as u32 as usize & m, c));
            self.by_bucket.push(order);
        }
        self.ordering.set(clients);
        let set = &self.ordering;
        let hashes = &self.hashes;
        // Kept without a branch (whether a client is in the set is a coin toss for the
        // predictor): every client is written, the count moves past the set's.
        clients.clear();
        clients.resize(n, 0);
        let mut len = 0;
        for &c in &self.by_bucket[level] {
            clients[len] = c;
            len += usize::from(set.contains(c));
        }
        clients.truncate(len);
        // Within a bucket, insertion order (the scan gave client order); buckets of two or more
        // are rare.
        let bucket = |c: Client| hashes[c] as u32 as usize & mask;
        let mut start = 0;
        while start + 1 < len {
            let b = bucket(clients[start]);
            if bucket(clients[start + 1]) != b {
                start += 1;
                continue;
            }
            let end = start + 2 + clients[start + 2..].iter().take_while(|&&c| bucket(c) == b).count();
            clients[start..end].sort_unstable_by_key(|&c| set.rank(c));
            start = end;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replays_java_priority_queue_when_a_queued_load_changes() {
        // Process ids in the order of their indices, hashing to their indices.
        let pids: Vec<ProcessId> = (0..8u128).map(|i| ProcessId(uuid::Uuid::from_u128(i))).collect();
        let mut set = JavaPrioritySet::new(pids, vec![5.0, 0.0, 1.0, 4.0, 1.0, 3.0, 5.0, 5.0]);
        for c in 0..8 {
            set.offer(c);
        }
        assert_eq!(set.poll(|c| c == 1), Some(1));
        // Client 1 takes a task from client 4, which is still queued with its old load.
        set.set_load(1, 1.0);
        set.set_load(4, 0.0);
        set.offer(1);
        set.offer(4);
        // The queue is now out of order: Java's PriorityQueue (checked with JDK 17) polls 4, 2, 1
        // although clients 1 and 2 both have load 1 and 1 sorts first.
        let polls: Vec<Client> = (0..3).map(|_| set.poll(|_| true).unwrap()).collect();
        assert_eq!(polls, [4, 2, 1]);

        let mut sorted = PrioritySet::new(8);
        for (c, load) in [5.0, 1.0, 1.0, 4.0, 0.0, 3.0, 5.0, 5.0].into_iter().enumerate() {
            sorted.offer(c, load);
        }
        let polls: Vec<Client> = (0..3).map(|_| sorted.poll(|_| true).unwrap()).collect();
        assert_eq!(polls, [4, 1, 2]);
    }

    #[test]
    fn stamps_hold_only_the_last_set_and_survive_overflow() {
        let mut stamps = Stamps::new(5);
        stamps.set(&[3, 1]);
        assert!(stamps.contains(3) && stamps.contains(1) && !stamps.contains(0));
        assert!(stamps.rank(3) < stamps.rank(1));
        stamps.set(&[0]);
        assert!(stamps.contains(0) && !stamps.contains(3) && !stamps.contains(1));
        // Near the end of the counter the next set starts over from cleared stamps.
        stamps.set(&[4, 2]);
        stamps.end = u32::MAX - 1;
        stamps.floor = u32::MAX - 3;
        stamps.stamps[4] = u32::MAX - 2;
        stamps.stamps[2] = u32::MAX - 1;
        stamps.set(&[2, 0, 1]);
        assert_eq!(stamps.floor, 0);
        assert!(stamps.contains(2) && stamps.contains(0) && stamps.contains(1) && !stamps.contains(4) && !stamps.contains(3));
        assert!(stamps.rank(2) < stamps.rank(0) && stamps.rank(0) < stamps.rank(1));
    }

    #[test]
    fn rejected_clients_come_back_in_hash_set_order() {
        // Client i hashes to 31 - 2i; a HashSet of the rejected clients iterates by bucket.
        let pids: Vec<ProcessId> = (0..4u128).map(|i| ProcessId(uuid::Uuid::from_u128(31 - 2 * i))).collect();
        let mut order = vec![0, 1, 2, 3];
        let mut set = JavaPrioritySet::new(pids, vec![0.0; 4]);
        set.hash_set_order(&mut order);
        assert_eq!(order, [3, 2, 1, 0]);
    }

    #[test]
    fn both_bucket_orders_are_java_hash_set_order() {
        let mut rng = crate::rng::Rng::new(7);
        for n in [1usize, 5, 20, 100, 250, 700] {
            let mut pids: Vec<ProcessId> = (0..n).map(|_| rng.process_id()).collect();
            pids.sort_by(cmp_process_ids);
            let mut set = JavaPrioritySet::new(pids.clone(), vec![0.0; n]);
            for _ in 0..40 {
                let k = rng.range(0, n as i64) as usize;
                // The first k of a shuffle of every client.
                let mut clients: Vec<Client> = (0..n).collect();
                for i in 0..k {
                    let j = rng.range(i as i64, n as i64 - 1) as usize;
                    clients.swap(i, j);
                }
                clients.truncate(k);
                let mut java: JavaHashSet<ProcessId> = JavaHashSet::new();
                for &c in &clients {
                    java.add(pids[c]);
                }
                let expected: Vec<ProcessId> = java.keys().copied().collect();
                set.hash_set_order(&mut clients);
                let got: Vec<ProcessId> = clients.iter().map(|&c| pids[c]).collect();
                assert_eq!(got, expected, "n = {n}, k = {k}");
            }
        }
    }
}
