//! Cooperative interruption of a long computation, for a host with a deadline (the broker's
//! coordinator thread calls the streams assignor with one).
//!
//! The engine reads no clock: the caller gives [`interruptible`] a check, and the flow solver
//! and the assignors' long loops ask it at their checkpoints (at most every few thousand steps
//! of work). Once the check says stop, the computation unwinds from the checkpoint straight
//! back to [`interruptible`], which returns [`Interrupted`]; nothing of it keeps running. The
//! unwinding is `std::panic::resume_unwind`, which runs no panic hook, so nothing is printed. A
//! real panic of the computation is not caught here: it goes on to the caller's own guard.
//!
//! Anything the computation was changing through a `&mut` when it was interrupted may be half
//! done; the caller drops it (the broker assignor forgets the group's memory).
//!
//! Checks are per thread: an interruptible call on one thread never stops another's.
//!
//! ```
//! use std::time::{Duration, Instant};
//! use kstreams_assignor::engine::streams::{StreamsGroupSpec, StreamsMemberSpec, StreamsMemory, StreamsSubtopology, StreamsTopology, assign_optimized};
//! use kstreams_assignor::interrupt::{Interrupted, interruptible};
//!
//! let topology = StreamsTopology::new([StreamsSubtopology::new("0", 4, true)]);
//! let spec = StreamsGroupSpec::new([StreamsMemberSpec::new("m-1", "p-1")]);
//! let mut memory = StreamsMemory::new();
//! // A generous deadline: the assignment completes.
//! let deadline = Instant::now() + Duration::from_secs(60);
//! let done = interruptible(move || Instant::now() >= deadline, || assign_optimized(&spec, &topology, &mut memory, 0));
//! assert!(done.unwrap().is_ok());
//! // A check that always says stop: interrupted at the first checkpoint.
//! let (spec, topology) = (StreamsGroupSpec::new([StreamsMemberSpec::new("m-1", "p-1")]), StreamsTopology::new([StreamsSubtopology::new("0", 4, true)]));
//! let stopped = interruptible(|| true, || assign_optimized(&spec, &topology, &mut StreamsMemory::new(), 0));
//! assert_eq!(stopped.unwrap_err(), Interrupted);
//! ```

use std::cell::{Cell, RefCell};
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

/// The computation was stopped at a checkpoint because its caller's check said so.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("interrupted: the caller's deadline passed or it cancelled the call")]
pub struct Interrupted;

type Check = Box<dyn Fn() -> bool>;

thread_local! {
    /// The checks of the interruptible calls running on this thread, innermost last.
    static CHECKS: RefCell<Vec<Check>> = const { RefCell::new(Vec::new()) };
    /// The [`tick`]s on this thread so far (wrapping).
    static TICKS: Cell<u32> = const { Cell::new(0) };
}

/// Runs `work`, stopping it at its next checkpoint once `should_stop` returns true.
///
/// # Errors
///
/// [`Interrupted`] when `should_stop` said stop at a checkpoint of `work`.
///
/// # Panics
///
/// A panic of `work` goes on unwinding to the caller, as without this function.
pub fn interruptible<T>(should_stop: impl Fn() -> bool + 'static, work: impl FnOnce() -> T) -> Result<T, Interrupted> {
    CHECKS.with(|c| c.borrow_mut().push(Box::new(should_stop)));
    let outcome = catch_unwind(AssertUnwindSafe(work));
    CHECKS.with(|c| c.borrow_mut().pop());
    match outcome {
        Ok(value) => Ok(value),
        Err(payload) if payload.is::<Interrupted>() => Err(Interrupted),
        Err(payload) => resume_unwind(payload),
    }
}

/// A checkpoint: unwinds to the innermost [`interruptible`] of this thread if its check says
/// stop; nothing outside an interruptible call (one thread-local read).
pub(crate) fn checkpoint() {
    let stop = CHECKS.with(|c| c.borrow().last().is_some_and(|check| check()));
    if stop {
        resume_unwind(Box::new(Interrupted));
    }
}

/// A checkpoint in a loop whose steps are short: asks the check once every [`TICKS_PER_CHECK`]
/// calls on this thread, so that a step costs a thread-local counter, not a clock read.
pub(crate) fn tick() {
    let n = TICKS.get().wrapping_add(1);
    TICKS.set(n);
    if n % TICKS_PER_CHECK == 0 {
        checkpoint();
    }
}

/// How many [`tick`]s make one check.
pub(crate) const TICKS_PER_CHECK: u32 = 64;

#[cfg(test)]
mod tests {
    use super::*;
    use std::rc::Rc;

    #[test]
    fn a_check_that_says_stop_ends_the_work_at_its_next_checkpoint() {
        let asked = Rc::new(Cell::new(0));
        let counter = Rc::clone(&asked);
        let mut done = 0;
        let result = interruptible(
            move || {
                counter.set(counter.get() + 1);
                counter.get() >= 3
            },
            || {
                for _ in 0..10 {
                    checkpoint();
                    done += 1;
                }
            },
        );
        assert_eq!(result, Err(Interrupted));
        assert_eq!((asked.get(), done), (3, 2));
        // Outside an interruptible call a checkpoint does nothing.
        checkpoint();
    }

    #[test]
    fn ticks_ask_the_check_once_every_so_many() {
        let asked = Rc::new(Cell::new(0u32));
        let counter = Rc::clone(&asked);
        let ticks = TICKS_PER_CHECK * 5;
        interruptible(move || { counter.set(counter.get() + 1); false }, || (0..ticks).for_each(|_| tick())).unwrap();
        assert_eq!(asked.get(), 5);
    }

    #[test]
    fn a_real_panic_is_not_taken_for_an_interruption() {
        let caught = catch_unwind(|| interruptible(|| false, || panic!("a bug")));
        assert!(caught.is_err());
        // The check was removed on the way out.
        CHECKS.with(|c| assert!(c.borrow().is_empty()));
    }

    #[test]
    fn checks_are_per_thread_and_nest() {
        let other = std::thread::spawn(|| interruptible(|| false, checkpoint));
        let here = interruptible(|| true, || other.join().unwrap());
        // The other thread's call was not stopped by this thread's check; it ran no checkpoint
        // of this thread, so neither was this one.
        assert_eq!(here, Ok(Ok(())));
        let nested = interruptible(|| false, || interruptible(|| true, checkpoint));
        assert_eq!(nested, Ok(Err(Interrupted)));
    }
}
