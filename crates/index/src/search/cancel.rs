//! Cooperative cancellation of a running query. A server that gives up on a query (its
//! deadline passed, its client went away) raises the query's flag; the evaluators notice it
//! the next time a term cursor decodes a block (every 256 postings) and return
//! [`IndexError::Cancelled`], so an abandoned query stops within microseconds instead of
//! running to its end.
//!
//! The flag is bound to the evaluating thread for the length of a [`CancelScope`], so no
//! evaluator carries it as a parameter and a search outside any scope pays one thread-local
//! load per decoded block.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::IndexError;

thread_local! {
    /// The flag of the scope open on this thread, or null.
    static FLAG: Cell<*const AtomicBool> = const { Cell::new(std::ptr::null()) };
}

/// Binds a cancellation flag to the current thread until dropped.
pub struct CancelScope {
    /// Keeps the flag alive while the thread-local pointer refers to it.
    flag: Arc<AtomicBool>,
    previous: *const AtomicBool,
}

impl CancelScope {
    /// Queries run on this thread while the scope lives stop with [`IndexError::Cancelled`]
    /// once `flag` is set.
    pub fn enter(flag: Arc<AtomicBool>) -> CancelScope {
        let previous = FLAG.with(|f| f.replace(Arc::as_ptr(&flag)));
        CancelScope { flag, previous }
    }

    /// The flag this scope watches.
    pub fn flag(&self) -> &AtomicBool {
        &self.flag
    }
}

impl Drop for CancelScope {
    fn drop(&mut self) {
        FLAG.with(|f| f.set(self.previous));
    }
}

/// `Err(Cancelled)` if the current thread's query has been cancelled.
#[inline]
pub(crate) fn check() -> Result<(), IndexError> {
    let flag = FLAG.with(Cell::get);
    if flag.is_null() {
        return Ok(());
    }
    // SAFETY: a non-null pointer was set by a `CancelScope` on this thread, which holds an
    // `Arc` to the flag and resets the pointer when dropped, so the flag is alive here.
    if unsafe { &*flag }.load(Ordering::Relaxed) {
        return Err(IndexError::Cancelled);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_raised_flag_cancels_only_inside_its_scope() {
        assert!(check().is_ok());
        let flag = Arc::new(AtomicBool::new(false));
        {
            let scope = CancelScope::enter(flag.clone());
            assert!(check().is_ok());
            scope.flag().store(true, Ordering::Relaxed);
            assert!(matches!(check(), Err(IndexError::Cancelled)));
            {
                let _inner = CancelScope::enter(Arc::new(AtomicBool::new(false)));
                assert!(check().is_ok());
            }
            assert!(matches!(check(), Err(IndexError::Cancelled)));
        }
        assert!(check().is_ok());
    }
}
