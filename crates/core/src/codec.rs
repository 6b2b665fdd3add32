//! Fixed-width little-endian encoding of the engine's own derived data (the state
//! snapshot, the graph file), and LEB128 varints (index records, and the runtime's
//! protobuf writer): writers that append to an [`Out`] — a `Vec<u8>`, or [`Chunks`], which
//! hands a large encoding on a bounded chunk at a time instead of holding it — and a
//! reader that never panics and never allocates more than the bytes it was given can hold.

/// Where the `put_*` functions write.
pub trait Out {
    /// Appends `bytes`.
    fn put(&mut self, bytes: &[u8]);

    /// Says that about `additional` more bytes are coming (a vector makes room at once).
    fn reserve(&mut self, _additional: usize) {}
}

impl Out for Vec<u8> {
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }

    fn reserve(&mut self, additional: usize) {
        Vec::reserve(self, additional);
    }
}

/// A bounded buffer for an encoding too large to hold at once: each time it holds `chunk`
/// bytes it hands them to `flush` and starts again, so every chunk handed on but the last
/// is exactly `chunk` bytes (a caller that checksums pages of a size dividing `chunk` sees
/// whole pages). The encoding then costs `chunk` bytes of memory, touched again and again,
/// instead of fresh memory as large as the encoding.
///
/// The first error `flush` returns is kept and returned by [`Chunks::finish`]; nothing is
/// handed on after it.
pub struct Chunks<F, E> {
    buf: Vec<u8>,
    chunk: usize,
    flush: F,
    failed: Option<E>,
    total: u64,
}

impl<F: FnMut(&[u8]) -> Result<(), E>, E> Chunks<F, E> {
    /// A buffer of `chunk` bytes (at least 1) that hands each full one to `flush`.
    pub fn new(chunk: usize, flush: F) -> Self {
        let chunk = chunk.max(1);
        Chunks {
            buf: Vec::with_capacity(chunk),
            chunk,
            flush,
            failed: None,
            total: 0,
        }
    }

    /// Hands on what is left and returns how many bytes were put in all, or the first
    /// error `flush` returned.
    pub fn finish(mut self) -> Result<u64, E> {
        self.hand_on();
        match self.failed {
            Some(e) => Err(e),
            None => Ok(self.total),
        }
    }

    fn hand_on(&mut self) {
        if self.buf.is_empty() {
            return;
        }
        if self.failed.is_none() {
            if let Err(e) = (self.flush)(&self.buf) {
                self.failed = Some(e);
            }
        }
        self.total += self.buf.len() as u64;
        self.buf.clear();
    }
}

impl<F: FnMut(&[u8]) -> Result<(), E>, E> Out for Chunks<F, E> {
    #[inline]
    fn put(&mut self, mut bytes: &[u8]) {
        loop {
            let room = self.chunk.saturating_sub(self.buf.len());
            if bytes.len() < room {
                self.buf.extend_from_slice(bytes);
                return;
            }
            let (now, rest) = bytes.split_at_checked(room).unwrap_or((bytes, &[]));
            self.buf.extend_from_slice(now);
            self.hand_on();
            bytes = rest;
            if bytes.is_empty() {
                return;
            }
        }
    }
}

/// Appends `v` little-endian.
pub fn put_u32(out: &mut (impl Out + ?Sized), v: u32) {
    out.put(&v.to_le_bytes());
}

/// Appends `v` little-endian.
pub fn put_u64(out: &mut (impl Out + ?Sized), v: u64) {
    out.put(&v.to_le_bytes());
}

/// Appends `v` as an unsigned LEB128 varint: seven bits a byte, low bits first, the high
/// bit set on every byte but the last (1 byte below 2^7, at most 10).
pub fn put_varint(out: &mut (impl Out + ?Sized), mut v: u64) {
    let mut bytes = [0u8; 10];
    let mut n = 0;
    for slot in bytes.iter_mut() {
        n += 1;
        if v < 0x80 {
            *slot = v as u8;
            break;
        }
        *slot = (v as u8 & 0x7f) | 0x80;
        v >>= 7;
    }
    out.put(bytes.get(..n).unwrap_or_default());
}

/// Appends the signed `v` as a varint after zigzag mapping (0, -1, 1, -2 … to 0, 1, 2,
/// 3 …), so that small differences of either sign take one byte.
pub fn put_signed_varint(out: &mut (impl Out + ?Sized), v: i64) {
    put_varint(out, ((v << 1) ^ (v >> 63)) as u64);
}

/// Appends a count (`u64`) then every value.
pub fn put_u32s(out: &mut (impl Out + ?Sized), values: impl ExactSizeIterator<Item = u32>) {
    put_u64(out, values.len() as u64);
    out.reserve(values.len() * 4);
    for v in values {
        put_u32(out, v);
    }
}

/// Appends a count (`u64`) then every value.
pub fn put_u64s(out: &mut (impl Out + ?Sized), values: impl ExactSizeIterator<Item = u64>) {
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

    /// Bytes not read yet.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The next byte, left unread.
    pub fn peek(&self) -> Option<u8> {
        self.0.first().copied()
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

    /// The next [`put_varint`]: refused when it runs out, overflows 64 bits, or is not in
    /// its shortest form (a last byte of 0 after the first), so each value has one
    /// encoding.
    pub fn varint(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for i in 0..10u32 {
            let [byte] = self.array::<1>()?;
            let bits = u64::from(byte & 0x7f);
            if i == 9 && byte > 1 {
                return None;
            }
            v |= bits << (7 * i);
            if byte & 0x80 == 0 {
                return (i == 0 || byte != 0).then_some(v);
            }
        }
        None
    }

    /// The next [`put_signed_varint`].
    pub fn signed_varint(&mut self) -> Option<i64> {
        let v = self.varint()?;
        Some((v >> 1) as i64 ^ -((v & 1) as i64))
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
