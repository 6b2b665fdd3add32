//! [`MemoryBudget`]: the bytes of received frames that the sessions of one server may hold
//! at once, shared by all of them.
//!
//! A session reserves room before it reads a large frame's payload (twice the payload while
//! it is read and decoded, then the payload's own size) and keeps the room of a batch of
//! events until that batch is committed. When the budget is spent, a session first commits
//! the batch it holds, so that it holds nothing while it waits: sessions that wait never
//! keep each other waiting. A session that cannot get room within its wait is told the
//! server is busy.

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::limits::MAX_SYNC_FRAME_BYTES;

/// Room for received frames, shared by the sessions of one server (clone it to share).
#[derive(Clone, Debug)]
pub struct MemoryBudget {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    total: u64,
    free: Mutex<u64>,
    freed: Condvar,
}

impl MemoryBudget {
    /// A budget of `bytes`, raised to twice [`MAX_SYNC_FRAME_BYTES`] so that one session can
    /// always read the largest frame.
    pub fn new(bytes: u64) -> Self {
        let total = bytes.max(2 * MAX_SYNC_FRAME_BYTES as u64);
        MemoryBudget {
            shared: Arc::new(Shared {
                total,
                free: Mutex::new(total),
                freed: Condvar::new(),
            }),
        }
    }

    /// The budget's size.
    pub fn total(&self) -> u64 {
        self.shared.total
    }

    /// The room not reserved now.
    pub fn available(&self) -> u64 {
        self.shared.free.lock().map(|free| *free).unwrap_or(0)
    }

    /// Reserves `bytes` if they are free now.
    pub(crate) fn try_reserve(&self, bytes: u64) -> Option<Room> {
        self.reserve_within(bytes, Duration::ZERO)
    }

    /// Reserves `bytes`, waiting up to `wait` for other sessions to give room back; `None`
    /// if they did not (or never can: more than the whole budget).
    pub(crate) fn reserve_within(&self, bytes: u64, wait: Duration) -> Option<Room> {
        if bytes > self.shared.total {
            return None;
        }
        let deadline = Instant::now() + wait;
        let mut free = self.shared.free.lock().ok()?;
        while *free < bytes {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return None;
            }
            free = self.shared.freed.wait_timeout(free, left).ok()?.0;
        }
        *free -= bytes;
        Some(Room {
            budget: self.clone(),
            bytes,
        })
    }

    fn give_back(&self, bytes: u64) {
        if let Ok(mut free) = self.shared.free.lock() {
            *free = (*free + bytes).min(self.shared.total);
        }
        self.shared.freed.notify_all();
    }
}

/// Room reserved in a [`MemoryBudget`]; given back when dropped.
#[derive(Debug)]
pub struct Room {
    budget: MemoryBudget,
    bytes: u64,
}

impl Room {
    /// Gives back all but `bytes` of this room.
    pub fn shrink_to(&mut self, bytes: u64) {
        if bytes < self.bytes {
            self.budget.give_back(self.bytes - bytes);
            self.bytes = bytes;
        }
    }
}

impl Drop for Room {
    fn drop(&mut self) {
        self.budget.give_back(self.bytes);
    }
}
