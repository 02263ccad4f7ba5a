//! Cooperative cancellation of a running query. A server that gives up on a query (its
//! deadline passed, its client went away) raises the query's flag; the evaluators notice it
//! and return [`IndexError::Cancelled`], so an abandoned query stops within a millisecond or
//! so instead of running to its end and holding its query thread.
//!
//! Every loop of an evaluator whose length the query or the index decides checks the flag
//! often enough that no stretch between two checks runs long: a term cursor at every block
//! it decodes (every 256 postings) or ORs in as a bitset; the windows of the pruned
//! disjunction and conjunction, the blocks of a single term, the windows of a counted
//! intersection and each clause that filters a window, once each; a phrase at each candidate
//! document; and the loops whose steps cost less than a block (the exhaustive evaluator's
//! matches, the sloppy phrase sweep inside one document) once every [`Countdown::STEPS`]
//! steps through a [`Countdown`]. A search also checks once before it starts, so a query
//! whose flag is already up does no work.
//!
//! The flag is bound to the evaluating thread for the length of a [`CancelScope`], so no
//! evaluator carries it as a parameter and a search outside any scope pays one thread-local
//! load per check.

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

/// A check for a loop whose steps cost less than a decoded block: [`check`] once every
/// [`Countdown::STEPS`] steps, so the check costs a decrement per step.
pub(crate) struct Countdown {
    left: u32,
}

impl Countdown {
    /// Steps between two checks. A step of the loops that count down costs from a few
    /// nanoseconds (a match of a short conjunction) to a few microseconds (a sweep step of a
    /// phrase of a thousand words), so checks come at most a millisecond or so apart.
    pub(crate) const STEPS: u32 = 256;

    /// A countdown whose first check comes after [`Countdown::STEPS`] steps.
    pub(crate) fn new() -> Countdown {
        Countdown { left: Self::STEPS }
    }

    /// Counts a step; `Err(Cancelled)` at a check that finds the flag raised.
    #[inline]
    pub(crate) fn step(&mut self) -> Result<(), IndexError> {
        self.left -= 1;
        if self.left == 0 {
            self.left = Self::STEPS;
            return check();
        }
        Ok(())
    }
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

    #[test]
    fn a_countdown_checks_once_every_steps() {
        let scope = CancelScope::enter(Arc::new(AtomicBool::new(true)));
        let mut countdown = Countdown::new();
        for _ in 1..Countdown::STEPS {
            assert!(countdown.step().is_ok());
        }
        assert!(matches!(countdown.step(), Err(IndexError::Cancelled)));
        scope.flag().store(false, Ordering::Relaxed);
        for _ in 0..Countdown::STEPS {
            assert!(countdown.step().is_ok());
        }
    }
}
