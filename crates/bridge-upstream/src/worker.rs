//! Which data-path worker the current thread is.
//!
//! The binary runs the data path on one single-threaded runtime per core; each such thread
//! calls [`enter`] once with its index, and the clients built with several pools
//! ([`crate::ClientSettings::pools`]) hand each request the pool of the worker it runs on, so a
//! request and the connection that carries it are driven by the same thread. Any other thread
//! (tests, the operations and gRPC listeners, background tasks such as card refreshes) is no
//! worker, and such clients give those threads a pool of their own: a connection a background
//! task opened is driven by the runtime that task ran on, and a worker that reused it would
//! hand each request across threads.

use std::cell::Cell;

thread_local! {
    static INDEX: Cell<Option<usize>> = const { Cell::new(None) };
}

/// Marks the current thread as data-path worker `index`.
pub fn enter(index: usize) {
    INDEX.with(|cell| cell.set(Some(index)));
}

/// The current thread's worker index; `None` on a thread that is no worker.
#[must_use]
pub fn current() -> Option<usize> {
    INDEX.with(Cell::get)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_is_no_worker_until_it_enters_one() {
        let other = std::thread::spawn(|| {
            let before = current();
            enter(3);
            (before, current())
        })
        .join();
        assert!(matches!(other, Ok((None, Some(3)))), "{other:?}");
        assert_eq!(current(), None, "another thread's index is its own");
    }
}
