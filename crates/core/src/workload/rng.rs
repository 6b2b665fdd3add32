//! Seeded randomness for workloads: [`SplitMix`] for choices, [`SeededRng`] (a keyed
//! blake3 output stream, a cryptographic generator) where an API wants a `CryptoRngCore`,
//! such as nonces for sealing.

/// SplitMix64: a tiny, seedable, well-mixed generator for choices (not for secrets).
#[derive(Clone, Debug)]
pub struct SplitMix(u64);

impl SplitMix {
    /// A generator from `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`0` when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    /// 32 random bytes.
    pub fn bytes32(&mut self) -> [u8; 32] {
        let mut out = [0u8; 32];
        for chunk in out.chunks_mut(8) {
            for (o, b) in chunk.iter_mut().zip(self.next_u64().to_le_bytes()) {
                *o = b;
            }
        }
        out
    }
}

/// A deterministic cryptographic generator: the output stream of blake3 keyed with a
/// 32-byte seed. Same seed, same stream; without the seed, unpredictable.
pub struct SeededRng(blake3::OutputReader);

impl SeededRng {
    /// The stream for `seed`.
    pub fn new(seed: [u8; 32]) -> Self {
        SeededRng(blake3::Hasher::new_keyed(&seed).finalize_xof())
    }
}

impl rand_core::RngCore for SeededRng {
    fn next_u32(&mut self) -> u32 {
        let mut b = [0u8; 4];
        self.0.fill(&mut b);
        u32::from_le_bytes(b)
    }

    fn next_u64(&mut self) -> u64 {
        let mut b = [0u8; 8];
        self.0.fill(&mut b);
        u64::from_le_bytes(b)
    }

    fn fill_bytes(&mut self, dest: &mut [u8]) {
        self.0.fill(dest);
    }

    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand_core::Error> {
        self.0.fill(dest);
        Ok(())
    }
}

impl rand_core::CryptoRng for SeededRng {}
