//! [`Frontier`]: the right edge of a tree in memory (the roots of its perfect subtrees, at
//! most 64), for the current root after each append without a hash reader.

use super::error::TreeError;
use super::hash::{empty_root, node_hash, Hash};
use super::stored::HashReader;
use super::tree::perfect_subtree_hashes;

/// The roots of the perfect subtrees a tree of [`Frontier::size`] leaves splits into, largest
/// (leftmost) first: one per set bit of the size.
///
/// `push` is O(1) amortised and `root` O(log n); a frontier is rebuilt from stored hashes by
/// [`Frontier::read`].
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct Frontier {
    size: u64,
    roots: Vec<Hash>,
}

impl Frontier {
    /// The empty tree's frontier.
    pub fn new() -> Self {
        Frontier::default()
    }

    /// A frontier from its parts: `roots` must hold one hash per set bit of `size`, largest
    /// subtree first (what [`Frontier::roots`] returns); otherwise `None`.
    pub fn from_roots(size: u64, roots: Vec<Hash>) -> Option<Self> {
        (roots.len() == size.count_ones() as usize).then_some(Frontier { size, roots })
    }

    /// The frontier of the tree of `size` leaves, from its stored hashes (one read of at
    /// most 64).
    pub fn read<R: HashReader + ?Sized>(
        size: u64,
        reader: &R,
    ) -> Result<Self, TreeError<R::Error>> {
        let roots = perfect_subtree_hashes(0, size, reader)?;
        Ok(Frontier { size, roots })
    }

    /// Appends a leaf by its hash ([`super::leaf_hash`] of the entry). A tree of
    /// `u64::MAX` leaves takes no more (a size no log reaches): the frontier stays as it is.
    pub fn push(&mut self, leaf: Hash) {
        let Some(size) = self.size.checked_add(1) else {
            return;
        };
        // Each trailing one bit of the old size is a perfect subtree the new leaf completes.
        let mut h = leaf;
        for _ in 0..self.size.trailing_ones() {
            if let Some(left) = self.roots.pop() {
                h = node_hash(&left, &h);
            }
        }
        self.roots.push(h);
        self.size = size;
    }

    /// How many leaves the tree has.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The roots of the perfect subtrees, largest first.
    pub fn roots(&self) -> &[Hash] {
        &self.roots
    }

    /// The tree's root: the subtree roots folded from the right (the empty tree's hash for
    /// size 0).
    pub fn root(&self) -> Hash {
        let mut rest = self.roots.iter().rev();
        let Some(last) = rest.next() else {
            return empty_root();
        };
        rest.fold(*last, |right, left| node_hash(left, &right))
    }
}
