//! [`Freeing`]: a thread of the runtime's own that frees what the committing thread is done
//! with. A committed run's events were made on the signing threads, tens of allocations
//! each (payload tree, body, proof, bytes); freeing them took a quarter of the committing
//! thread's time, and every envelope of a step waits on that thread.

use std::sync::mpsc::{channel, Sender};
use std::thread::JoinHandle;

/// Frees what it is handed on a thread of its own; on the caller's thread when that thread
/// could not start.
pub(super) struct Freeing<T: Send + 'static> {
    bin: Option<Sender<T>>,
    thread: Option<JoinHandle<()>>,
}

impl<T: Send + 'static> Freeing<T> {
    /// Starts the freeing thread (it ends when this is dropped, once it freed everything).
    pub fn start() -> Self {
        let (bin, binned) = channel::<T>();
        // When the thread cannot start, the receiver goes with the closure, and `free`'s
        // sends fail: the value comes back in the error and is dropped by the caller.
        let thread = std::thread::Builder::new()
            .name("akledger-free".into())
            .spawn(move || binned.into_iter().for_each(drop))
            .ok();
        Freeing {
            bin: Some(bin),
            thread,
        }
    }

    /// Frees `value` on the freeing thread.
    pub fn free(&self, value: T) {
        if let Some(bin) = &self.bin {
            let _ = bin.send(value);
        }
    }
}

impl<T: Send + 'static> Drop for Freeing<T> {
    /// Waits for the freeing thread to free what it was handed.
    fn drop(&mut self) {
        drop(self.bin.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};
    use std::thread::ThreadId;

    use super::Freeing;

    /// Notes the thread it is dropped on.
    struct Noted(Arc<Mutex<Vec<ThreadId>>>);

    impl Drop for Noted {
        fn drop(&mut self) {
            if let Ok(mut dropped_on) = self.0.lock() {
                dropped_on.push(std::thread::current().id());
            }
        }
    }

    #[test]
    fn what_is_handed_over_is_freed_on_another_thread_before_the_freeing_is_gone() {
        let dropped_on = Arc::new(Mutex::new(Vec::new()));
        let freeing = Freeing::start();
        for _ in 0..3 {
            freeing.free(vec![Noted(dropped_on.clone()), Noted(dropped_on.clone())]);
        }
        drop(freeing);
        let dropped_on = dropped_on.lock().unwrap();
        assert_eq!(dropped_on.len(), 6);
        assert!(dropped_on.iter().all(|&t| t != std::thread::current().id()));
    }
}
