//! Fixed-width little-endian encoding of the engine's own derived data (index records, the
//! state snapshot): a writer that appends to a `Vec<u8>` and a reader that never panics
//! and never allocates more than the bytes it was given can hold.

/// Appends `v` little-endian.
pub fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// Appends `v` little-endian.
pub fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// Appends a count (`u64`) then every value.
pub fn put_u32s(out: &mut Vec<u8>, values: impl ExactSizeIterator<Item = u32>) {
    put_u64(out, values.len() as u64);
    out.reserve(values.len() * 4);
    for v in values {
        put_u32(out, v);
    }
}

/// Appends a count (`u64`) then every value.
pub fn put_u64s(out: &mut Vec<u8>, values: impl ExactSizeIterator<Item = u64>) {
    put_u64(out, values.len() as u64);
    out.reserve(values.len() * 8);
    for v in values {
        put_u64(out, v);
    }
}

/// Reads what the `put_*` functions wrote.
pub struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    /// A reader over `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        Reader(bytes)
    }

    /// True when every byte was read.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The next `n` bytes.
    pub fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, rest) = self.0.split_at_checked(n)?;
        self.0 = rest;
        Some(head)
    }

    /// The next `N` bytes.
    pub fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.take(N)?.try_into().ok()
    }

    /// The next little-endian `u32`.
    pub fn u32(&mut self) -> Option<u32> {
        self.array().map(u32::from_le_bytes)
    }

    /// The next little-endian `u64`.
    pub fn u64(&mut self) -> Option<u64> {
        self.array().map(u64::from_le_bytes)
    }

    /// A count of items of `width` bytes each, refused when the rest cannot hold them.
    pub fn count(&mut self, width: usize) -> Option<usize> {
        let n = usize::try_from(self.u64()?).ok()?;
        (n.checked_mul(width)? <= self.0.len()).then_some(n)
    }

    /// A `put_u32s` list.
    pub fn u32s(&mut self) -> Option<Vec<u32>> {
        self.list(u32::from_le_bytes)
    }

    /// A `put_u64s` list.
    pub fn u64s(&mut self) -> Option<Vec<u64>> {
        self.list(u64::from_le_bytes)
    }

    /// A `put_u64s` list read in place, without a vector of its own (for lists that are
    /// turned into something smaller: a large temporary's release can leave the allocator
    /// holding memory the process keeps resident).
    pub fn u64s_in_place(&mut self) -> Option<impl ExactSizeIterator<Item = u64> + 'a> {
        self.in_place(u64::from_le_bytes)
    }

    /// A `put_u32s` list read in place (see [`Reader::u64s_in_place`]).
    pub fn u32s_in_place(&mut self) -> Option<impl ExactSizeIterator<Item = u32> + 'a> {
        self.in_place(u32::from_le_bytes)
    }

    /// A count then that many items of `N` bytes, each decoded by `item` as it is taken.
    fn in_place<const N: usize, T: 'a>(
        &mut self,
        item: fn([u8; N]) -> T,
    ) -> Option<impl ExactSizeIterator<Item = T> + 'a> {
        let n = self.count(N)?;
        let bytes = self.take(n * N)?;
        Some(
            bytes
                .chunks_exact(N)
                .map(move |c| item(c.try_into().unwrap_or([0; N]))),
        )
    }

    /// A count then that many items of `N` bytes, each decoded by `item` (collected at
    /// their exact number: no room left over).
    fn list<const N: usize, T: 'a>(&mut self, item: fn([u8; N]) -> T) -> Option<Vec<T>> {
        Some(self.in_place(item)?.collect())
    }
}
