//! When the prober looks again, and whether it asks: a probe that moved nothing (the group's
//! target is the one it had when the prober asked, and an assignment would still move a task)
//! doubles the wait before the next look, up to [`MAX_BACKOFF`] intervals, so that a prober whose
//! view of the group differs from the assignor's never makes the coordinator assign every
//! interval. A new target or a verdict without moves brings the wait back to one interval.

use std::time::Duration;

use super::Verdict;

/// The most intervals a look waits after probes that moved nothing.
pub(crate) const MAX_BACKOFF: u32 = 32;

/// What the pacing says after a look.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Step {
    /// Whether to ask the coordinator to assign again.
    pub(crate) probe: bool,
    /// How long until the next look.
    pub(crate) wait: Duration,
    /// Whether this look found that the last probe moved nothing.
    pub(crate) unanswered: bool,
}

/// The prober's pacing between looks.
#[derive(Debug, Clone)]
pub(crate) struct Pacing {
    interval: Duration,
    backoff: u32,
    /// The target's fingerprint when the prober last asked, until a look sees another.
    asked_at: Option<u64>,
}

impl Pacing {
    pub(crate) fn new(interval: Duration) -> Self {
        Self { interval, backoff: 1, asked_at: None }
    }

    /// The step after a look with `verdict` at a group whose target has fingerprint `target`.
    pub(crate) fn after(&mut self, verdict: Verdict, target: u64) -> Step {
        let mut unanswered = false;
        match verdict {
            Verdict::Reconciling => {}
            Verdict::NothingWaiting => {
                self.backoff = 1;
                self.asked_at = None;
            }
            Verdict::MovesWaiting => {
                if self.asked_at == Some(target) {
                    unanswered = true;
                    self.backoff = (self.backoff * 2).min(MAX_BACKOFF);
                } else {
                    self.backoff = 1;
                }
                self.asked_at = Some(target);
            }
        }
        if verdict != Verdict::MovesWaiting && self.asked_at.is_some_and(|asked| asked != target) {
            // The coordinator answered with another target: start afresh.
            self.backoff = 1;
            self.asked_at = None;
        }
        Step { probe: verdict == Verdict::MovesWaiting, wait: self.interval * self.backoff, unanswered }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: Duration = Duration::from_secs(1);

    #[test]
    fn a_probe_that_moves_nothing_doubles_the_wait_up_to_the_bound() {
        let mut pacing = Pacing::new(SECOND);
        let first = pacing.after(Verdict::MovesWaiting, 7);
        assert_eq!(first, Step { probe: true, wait: SECOND, unanswered: false });
        let mut waits = Vec::new();
        for _ in 0..8 {
            let step = pacing.after(Verdict::MovesWaiting, 7);
            assert!(step.probe && step.unanswered);
            waits.push(step.wait.as_secs());
        }
        assert_eq!(waits, [2, 4, 8, 16, 32, 32, 32, 32]);
    }

    #[test]
    fn a_new_target_or_nothing_waiting_brings_the_wait_back_to_one_interval() {
        let mut pacing = Pacing::new(SECOND);
        pacing.after(Verdict::MovesWaiting, 7);
        assert_eq!(pacing.after(Verdict::MovesWaiting, 7).wait, 2 * SECOND);
        // The coordinator moved something, and more is waiting: ask at once, wait one interval.
        assert_eq!(pacing.after(Verdict::MovesWaiting, 8), Step { probe: true, wait: SECOND, unanswered: false });
        assert_eq!(pacing.after(Verdict::MovesWaiting, 8).wait, 2 * SECOND);
        assert_eq!(pacing.after(Verdict::NothingWaiting, 8), Step { probe: false, wait: SECOND, unanswered: false });
        assert_eq!(pacing.after(Verdict::MovesWaiting, 8), Step { probe: true, wait: SECOND, unanswered: false });
    }

    #[test]
    fn reconciling_keeps_the_wait_until_the_target_changes() {
        let mut pacing = Pacing::new(SECOND);
        pacing.after(Verdict::MovesWaiting, 7);
        pacing.after(Verdict::MovesWaiting, 7);
        assert_eq!(pacing.after(Verdict::Reconciling, 7), Step { probe: false, wait: 2 * SECOND, unanswered: false });
        assert_eq!(pacing.after(Verdict::Reconciling, 9), Step { probe: false, wait: SECOND, unanswered: false });
        assert_eq!(pacing.after(Verdict::MovesWaiting, 9).wait, SECOND);
    }
}
