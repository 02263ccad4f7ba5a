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

use std::cell::{Cell, RefCell};
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::IndexError;

thread_local! {
    /// The flag of the innermost scope open on this thread, or null: what [`check`] reads, one
    /// load. It always points into an `Arc` that `SCOPES` holds.
    static FLAG: Cell<*const AtomicBool> = const { Cell::new(std::ptr::null()) };
    /// The scopes open on this thread, innermost last: their ids and the flags they keep
    /// alive. Scopes may be dropped in any order; each removes its own entry.
    static SCOPES: RefCell<Vec<(u64, Arc<AtomicBool>)>> = const { RefCell::new(Vec::new()) };
    /// The id the next scope opened on this thread takes.
    static NEXT_ID: Cell<u64> = const { Cell::new(0) };
}

/// Binds a cancellation flag to the current thread until dropped. Scopes nest; dropped in any
/// order, the flag checked is always the innermost open scope's, and never a freed one.
pub struct CancelScope {
    /// This scope's entry in the thread's list of open scopes.
    id: u64,
    flag: Arc<AtomicBool>,
    /// The scope belongs to the thread it was opened on (its entry is in that thread's list).
    _not_send: PhantomData<*const ()>,
}

impl CancelScope {
    /// Queries run on this thread while the scope lives stop with [`IndexError::Cancelled`]
    /// once `flag` is set.
    pub fn enter(flag: Arc<AtomicBool>) -> CancelScope {
        let id = NEXT_ID.with(|next| {
            let id = next.get();
            next.set(id + 1);
            id
        });
        SCOPES.with(|scopes| scopes.borrow_mut().push((id, flag.clone())));
        FLAG.with(|f| f.set(Arc::as_ptr(&flag)));
        CancelScope {
            id,
            flag,
            _not_send: PhantomData,
        }
    }

    /// The flag this scope watches.
    pub fn flag(&self) -> &AtomicBool {
        &self.flag
    }
}

impl Drop for CancelScope {
    fn drop(&mut self) {
        // The thread's list may already be gone when a scope is dropped during thread exit.
        let _ = SCOPES.try_with(|scopes| {
            let mut scopes = scopes.borrow_mut();
            if let Some(at) = scopes.iter().rposition(|(id, _)| *id == self.id) {
                scopes.remove(at);
            }
            let innermost = scopes
                .last()
                .map_or(std::ptr::null(), |(_, flag)| Arc::as_ptr(flag));
            let _ = FLAG.try_with(|f| f.set(innermost));
        });
    }
}

/// `Err(Cancelled)` if the current thread's query has been cancelled.
#[inline]
pub(crate) fn check() -> Result<(), IndexError> {
    let flag = FLAG.with(Cell::get);
    if flag.is_null() {
        return Ok(());
    }
    // SAFETY: a non-null pointer is the flag of a scope in this thread's `SCOPES`, which holds
    // an `Arc` to it; a scope's drop removes its entry and points `FLAG` at a flag still held
    // there (or at null) before that `Arc` can go, so the flag is alive here.
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
    fn scopes_dropped_out_of_order_leave_no_freed_flag_behind() {
        let outer = CancelScope::enter(Arc::new(AtomicBool::new(true)));
        let inner = CancelScope::enter(Arc::new(AtomicBool::new(false)));
        assert!(check().is_ok());
        // The outer scope goes first: the inner one's flag is still the one checked.
        drop(outer);
        assert!(check().is_ok());
        inner.flag().store(true, Ordering::Relaxed);
        assert!(matches!(check(), Err(IndexError::Cancelled)));
        drop(inner);
        // Both gone (and the outer flag freed): nothing is checked.
        assert!(check().is_ok());
        // Three scopes, the middle one dropped first.
        let a = CancelScope::enter(Arc::new(AtomicBool::new(false)));
        let b = CancelScope::enter(Arc::new(AtomicBool::new(true)));
        let c = CancelScope::enter(Arc::new(AtomicBool::new(false)));
        drop(b);
        assert!(check().is_ok());
        drop(c);
        assert!(check().is_ok());
        a.flag().store(true, Ordering::Relaxed);
        assert!(matches!(check(), Err(IndexError::Cancelled)));
        drop(a);
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
