//! The tree bins of `java.util.HashMap` (JDK 17): a bucket that grew long in a large table is
//! also a red-black tree ordered by (hash, `compareTo`), whose root leads the bucket's list.

use std::cmp::Ordering;

use super::{JavaHashMap, Link, MIN_TREEIFY_CAPACITY, Node};
use crate::jdk::cmp::JavaComparable;
use crate::jdk::hash::JavaHashCode;

impl<K: JavaHashCode + JavaComparable + Eq, V> JavaHashMap<K, V> {
    /// `treeifyBin`: a small table grows instead.
    pub(super) fn treeify_bin(&mut self, b: usize) {
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
    pub(super) fn treeify(&mut self, head: usize) {
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
    pub(super) fn untreeify(&mut self, head: usize) {
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
    pub(super) fn put_tree_val(&mut self, first: usize, node: Node<K, V>) {
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
    pub(super) fn remove_tree_node(&mut self, this: usize, index: usize, movable: bool) {
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
