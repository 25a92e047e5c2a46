//! Work spread over a few threads besides the caller's, with the results in order.

use std::sync::atomic::{AtomicUsize, Ordering};

/// `work(i)` for every `i` in `0..n`, on up to `threads` threads (the calling one among them)
/// that take the indices in turn, so that a thread slowed down takes fewer of them; the results
/// in index order, as one thread gives them. A panic on a spawned thread is raised again on the
/// calling one.
pub(crate) fn in_turn<R: Send>(threads: usize, n: usize, work: impl Fn(usize) -> R + Sync) -> Vec<R> {
    if threads <= 1 || n <= 1 {
        return (0..n).map(work).collect();
    }
    let next = AtomicUsize::new(0);
    let take = || {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= n {
                return done;
            }
            done.push((i, work(i)));
        }
    };
    let mut done = std::thread::scope(|scope| {
        let take = &take;
        let handles: Vec<_> = (1..threads.min(n)).map(|_| scope.spawn(take)).collect();
        let mut done = take();
        for handle in handles {
            done.extend(handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)));
        }
        done
    });
    done.sort_unstable_by_key(|&(i, _)| i);
    done.into_iter().map(|(_, r)| r).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_in_index_order_on_any_number_of_threads() {
        for threads in [1, 2, 3, 8] {
            for n in [0, 1, 2, 5, 40] {
                assert_eq!(in_turn(threads, n, |i| i * i), (0..n).map(|i| i * i).collect::<Vec<_>>(), "{threads} threads, {n}");
            }
        }
    }

    #[test]
    fn a_panic_on_a_spawned_thread_reaches_the_caller() {
        let caller = std::thread::current().id();
        let caught = std::panic::catch_unwind(|| {
            in_turn(2, 8, |_| {
                // Slow enough for the spawned thread to take some of the indices.
                std::thread::sleep(std::time::Duration::from_millis(5));
                assert_eq!(std::thread::current().id(), caller, "a spawned thread");
            })
        });
        assert!(caught.is_err());
    }
}
