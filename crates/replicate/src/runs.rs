//! [`Runs`]: a set of admission positions kept as runs of consecutive ones, without IO.
//!
//! The positions of consumed events, which publishing passes over: a consumed batch takes
//! consecutive positions, so the set is a few runs however many events it holds, one batch
//! is one insertion, and publishing passes a whole run at a time.

use std::collections::BTreeMap;
use std::ops::Range;

/// Positions, as disjoint, non-adjacent runs `start..end` (keyed by `start`).
#[derive(Debug, Default)]
pub(crate) struct Runs {
    runs: BTreeMap<u64, u64>,
    /// Positions held (the runs' lengths summed).
    len: u64,
}

impl Runs {
    /// Positions held.
    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    /// Forgets every position.
    pub(crate) fn clear(&mut self) {
        self.runs.clear();
        self.len = 0;
    }

    /// Adds `at`.
    pub(crate) fn insert(&mut self, at: u64) {
        self.insert_range(at..at.saturating_add(1));
    }

    /// Adds every position of `range`, merging it with the runs it touches.
    pub(crate) fn insert_range(&mut self, range: Range<u64>) {
        let (mut start, mut end) = (range.start, range.end);
        if start >= end {
            return;
        }
        // The run starting at or before `start`, when it reaches `start`.
        if let Some((&s, &e)) = self.runs.range(..=start).next_back() {
            if e >= start {
                start = s;
                end = end.max(e);
            }
        }
        // Every run starting within `start..=end` is taken into the new one.
        let inside: Vec<(u64, u64)> = self
            .runs
            .range(start..=end)
            .map(|(&s, &e)| (s, e))
            .collect();
        for (s, e) in inside {
            self.runs.remove(&s);
            self.len -= e - s;
            end = end.max(e);
        }
        self.runs.insert(start, end);
        self.len += end - start;
    }

    /// When `at` is held: removes it and every position after it in its run, and returns
    /// where that run ended (publishing goes on from there). Positions of the run before
    /// `at` stay.
    pub(crate) fn take_run_from(&mut self, at: u64) -> Option<u64> {
        let (&s, &e) = self.runs.range(..=at).next_back()?;
        if at >= e {
            return None;
        }
        self.runs.remove(&s);
        if s < at {
            self.runs.insert(s, at);
        }
        self.len -= e - at;
        Some(e)
    }

    /// The smallest position held at or after `at`.
    pub(crate) fn next_from(&self, at: u64) -> Option<u64> {
        if let Some((_, &e)) = self.runs.range(..=at).next_back() {
            if at < e {
                return Some(at);
            }
        }
        self.runs
            .range(at.saturating_add(1)..)
            .next()
            .map(|(&s, _)| s)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::Runs;

    /// A small deterministic generator (xorshift), so the test needs no crate.
    fn next(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    #[test]
    fn runs_answer_as_a_plain_set_of_positions_does() {
        for seed in 1..200u64 {
            let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            let (mut runs, mut oracle) = (Runs::default(), BTreeSet::new());
            for _ in 0..200 {
                let at = next(&mut state) % 64;
                match next(&mut state) % 5 {
                    0 => {
                        runs.insert(at);
                        oracle.insert(at);
                    }
                    1 | 2 => {
                        let end = at + next(&mut state) % 12;
                        runs.insert_range(at..end);
                        oracle.extend(at..end);
                    }
                    3 => {
                        let expected = oracle.contains(&at).then(|| {
                            let mut end = at;
                            while oracle.remove(&end) {
                                end += 1;
                            }
                            end
                        });
                        assert_eq!(runs.take_run_from(at), expected, "seed {seed}");
                    }
                    _ => assert_eq!(
                        runs.next_from(at),
                        oracle.range(at..).next().copied(),
                        "seed {seed}"
                    ),
                }
                assert_eq!(runs.len(), oracle.len() as u64, "seed {seed}");
                // Runs stay disjoint and apart: each is as long as the oracle's run there.
                for (&s, &e) in &runs.runs {
                    assert!(s < e && (s..e).all(|p| oracle.contains(&p)), "seed {seed}");
                    assert!(!oracle.contains(&e), "seed {seed}");
                    assert!(s == 0 || !oracle.contains(&(s - 1)), "seed {seed}");
                }
            }
            runs.clear();
            assert_eq!((runs.len(), runs.next_from(0)), (0, None));
        }
    }
}
