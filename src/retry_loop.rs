//! The decision-and-wait loop: run an attempt, classify its status, wait, and again.
//!
//! It owns the order of things (no wait after the last attempt, a command that cannot start is
//! never retried) and the events that describe them, but none of the mechanisms: attempts, time,
//! waits and reporting all come in through traits, so the loop is tested with fakes that never
//! sleep.

use std::time::Duration;

use crate::attempts::AttemptLimit;
use crate::clock::Clock;
use crate::events::{AttemptEnd, Done, Event, EventSink, Reason, Verdict};
use crate::exit;
use crate::policy::{Classification, Policy};
use crate::runner::Attempts;

/// The fixed rules of one run.
#[derive(Clone, Debug)]
pub struct Rules {
    /// How many attempts may be made.
    pub limit: AttemptLimit,
    /// What each exit status means.
    pub policy: Policy,
}

/// Run attempts until success or giving up, waiting between them as `waits` says; returns the
/// final [`Done`] (also emitted to `sink`).
pub fn run(
    rules: &Rules,
    waits: &mut impl Iterator<Item = Duration>,
    attempts: &mut impl Attempts,
    clock: &mut impl Clock,
    sink: &mut impl EventSink,
) -> Done {
    let start = clock.now();
    let mut attempt = 0;
    loop {
        attempt += 1;
        sink.emit(Event::AttemptStart {
            attempt,
            limit: rules.limit,
        });
        let began = clock.now();
        let termination = match attempts.run(attempt) {
            Ok(termination) => termination,
            Err(err) => {
                let reason = Reason::SpawnFailed(err.message);
                return finish(sink, err.status, attempt, reason, clock.now() - start);
            }
        };
        let status = termination.status();
        let (verdict, reason) = match rules.policy.classify(status) {
            Classification::Success => (Verdict::Success, Some(Reason::Success)),
            Classification::NotRetryable(refusal) => {
                (Verdict::Stop, Some(Reason::NotRetryable(refusal)))
            }
            Classification::Retryable if !rules.limit.allows_another(attempt) => {
                (Verdict::Stop, Some(Reason::Exhausted))
            }
            Classification::Retryable => (Verdict::Retry, None),
        };
        let duration = clock.now() - began;
        let limit = rules.limit;
        sink.emit(Event::AttemptEnd(AttemptEnd {
            attempt,
            limit,
            termination,
            duration,
            verdict,
        }));
        if let Some(reason) = reason {
            let status = if reason == Reason::Success {
                exit::SUCCESS
            } else {
                status
            };
            return finish(sink, status, attempt, reason, clock.now() - start);
        }
        let wait = waits.next().unwrap_or_default();
        sink.emit(Event::Wait {
            before_attempt: attempt + 1,
            wait,
        });
        clock.sleep(wait);
    }
}

fn finish(
    sink: &mut impl EventSink,
    status: u8,
    attempts: u64,
    reason: Reason,
    elapsed: Duration,
) -> Done {
    let done = Done {
        status,
        attempts,
        reason,
        elapsed,
    };
    sink.emit(Event::Done(done.clone()));
    done
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes::StatusSet;
    use crate::policy::Refusal;
    use crate::runner::SpawnError;
    use crate::termination::Termination;
    use std::time::Instant;

    /// A clock that moves only when slept on or when an attempt "runs".
    struct FakeClock {
        now: Instant,
        slept: Vec<Duration>,
    }

    impl Clock for FakeClock {
        fn now(&self) -> Instant {
            self.now
        }
        fn sleep(&mut self, duration: Duration) {
            self.now += duration;
            self.slept.push(duration);
        }
    }

    /// Attempts that end as scripted, in order, each taking 10 ms of fake time.
    struct Scripted(Vec<Result<Termination, SpawnError>>);

    impl Attempts for Scripted {
        fn run(&mut self, _attempt: u64) -> Result<Termination, SpawnError> {
            self.0.remove(0)
        }
    }

    fn rules(limit: &str, retry_on: Option<&str>) -> Rules {
        let set = |text: &str| text.parse::<StatusSet>().unwrap();
        Rules {
            limit: limit.parse().unwrap(),
            policy: Policy::new(set("0"), retry_on.map(set), None).unwrap(),
        }
    }

    fn exits(codes: &[u8]) -> Scripted {
        Scripted(
            codes
                .iter()
                .map(|&code| Ok(Termination::Exited(code)))
                .collect(),
        )
    }

    fn run_script(rules: &Rules, mut script: Scripted) -> (Done, Vec<Duration>, Vec<Event>) {
        let mut clock = FakeClock {
            now: Instant::now(),
            slept: Vec::new(),
        };
        let mut waits = (1..).map(Duration::from_secs);
        let mut events = Vec::new();
        let done = run(rules, &mut waits, &mut script, &mut clock, &mut events);
        assert!(
            script.0.is_empty(),
            "the loop stopped before the script ended"
        );
        (done, clock.slept, events)
    }

    impl EventSink for Vec<Event> {
        fn emit(&mut self, event: Event) {
            self.push(event);
        }
    }

    #[test]
    fn stops_at_the_first_success() {
        let (done, slept, _) = run_script(&rules("5", None), exits(&[1, 2, 0]));
        assert_eq!(
            (done.status, done.attempts, done.reason),
            (0, 3, Reason::Success)
        );
        assert_eq!(slept, [Duration::from_secs(1), Duration::from_secs(2)]);
    }

    #[test]
    fn gives_up_with_the_last_status_and_no_wait_after_the_last_attempt() {
        let (done, slept, events) = run_script(&rules("3", None), exits(&[1, 2, 3]));
        assert_eq!(
            (done.status, done.attempts, done.reason),
            (3, 3, Reason::Exhausted)
        );
        assert_eq!(slept.len(), 2);
        assert!(matches!(events.last(), Some(Event::Done(_))));
        let waits = events
            .iter()
            .filter(|e| matches!(e, Event::Wait { .. }))
            .count();
        assert_eq!(waits, 2);
    }

    #[test]
    fn a_status_not_to_retry_stops_at_once() {
        let (done, slept, _) = run_script(&rules("5", Some("75")), exits(&[75, 2]));
        assert_eq!(done.reason, Reason::NotRetryable(Refusal::NotInRetryOn));
        assert_eq!((done.status, done.attempts), (2, 2));
        assert_eq!(slept.len(), 1);
    }

    #[test]
    fn a_command_that_cannot_start_is_never_retried() {
        let error = SpawnError {
            status: 127,
            message: "command not found: nope".into(),
        };
        let (done, slept, _) = run_script(&rules("5", None), Scripted(vec![Err(error)]));
        assert_eq!(done.status, 127);
        assert!(matches!(done.reason, Reason::SpawnFailed(_)));
        assert!(slept.is_empty());
    }

    #[test]
    fn death_by_signal_is_reported_as_128_plus_n() {
        let script = Scripted(vec![Ok(Termination::Signaled(9))]);
        let (done, _, _) = run_script(&rules("1", None), script);
        assert_eq!((done.status, done.reason), (137, Reason::Exhausted));
    }

    #[test]
    fn unlimited_attempts_go_on_until_success() {
        let mut codes = vec![1; 500];
        codes.push(0);
        let (done, slept, _) = run_script(&rules("unlimited", None), exits(&codes));
        assert_eq!((done.status, done.attempts), (0, 501));
        assert_eq!(slept.len(), 500);
    }
}
