//! The decision-and-wait loop: run an attempt, classify its status, wait, and again.
//!
//! It owns the order of things (no wait after the last attempt, no attempt after a signal or
//! past the deadline, a command that cannot start is never retried) and the events that describe
//! them, but none of the mechanisms: attempts, time, waits and reporting all come in through
//! traits, so the loop is tested with fakes that never sleep.

use std::time::Duration;

use crate::attempts::AttemptLimit;
use crate::clock::Clock;
use crate::events::{AttemptEnd, Done, Event, EventSink, Reason, Verdict};
use crate::exit;
use crate::policy::{Classification, Policy};
use crate::runner::{AttemptReport, Attempts};
use crate::termination::TimeLimit;

/// The fixed rules of one run.
#[derive(Clone, Debug)]
pub struct Rules {
    /// How many attempts may be made.
    pub limit: AttemptLimit,
    /// What each exit status means.
    pub policy: Policy,
    /// `--max-time`: how long the whole run may take, attempts and waits together.
    pub max_time: Option<Duration>,
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
    let deadline = rules.max_time.and_then(|max| start.checked_add(max));
    let mut attempt = 0;
    loop {
        attempt += 1;
        sink.emit(Event::AttemptStart {
            attempt,
            limit: rules.limit,
        });
        let began = clock.now();
        let report = match attempts.run(attempt, deadline) {
            Ok(report) => report,
            Err(err) => {
                let reason = Reason::SpawnFailed(err.message);
                return finish(sink, err.status, attempt, reason, clock.now() - start);
            }
        };
        let status = report.termination.status();
        let mut verdict = judge(rules, attempt, &report);
        let wait = (verdict == Judgement::Retry).then(|| waits.next().unwrap_or_default());
        if let (Some(wait), Some(deadline)) = (wait, deadline) {
            if clock.now() + wait >= deadline {
                verdict = Judgement::Stop(Reason::Deadline);
            }
        }
        let end = AttemptEnd {
            attempt,
            limit: rules.limit,
            termination: report.termination,
            duration: clock.now() - began,
            verdict: verdict.verdict(),
        };
        sink.emit(Event::AttemptEnd(end));
        let wait = match verdict {
            Judgement::Stop(reason) => {
                let status = match reason {
                    Reason::Success => exit::SUCCESS,
                    Reason::Interrupted(signal) => exit::signal_status(signal),
                    _ => status,
                };
                return finish(sink, status, attempt, reason, clock.now() - start);
            }
            Judgement::Retry => wait.unwrap_or_default(),
        };
        sink.emit(Event::Wait {
            before_attempt: attempt + 1,
            wait,
        });
        if let Some(signal) = clock.sleep(wait) {
            let reason = Reason::Interrupted(signal);
            let status = exit::signal_status(signal);
            return finish(sink, status, attempt, reason, clock.now() - start);
        }
    }
}

/// What the run makes of one attempt, before the deadline has its say.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Judgement {
    Retry,
    Stop(Reason),
}

impl Judgement {
    fn verdict(&self) -> Verdict {
        match self {
            Judgement::Retry => Verdict::Retry,
            Judgement::Stop(Reason::Success) => Verdict::Success,
            Judgement::Stop(_) => Verdict::Stop,
        }
    }
}

/// Judge attempt number `attempt` by how the run was stopped, its time limit, and its status.
fn judge(rules: &Rules, attempt: u64, report: &AttemptReport) -> Judgement {
    if let Some(signal) = report.interrupted_by {
        return Judgement::Stop(Reason::Interrupted(signal));
    }
    if report.termination.time_limit() == Some(TimeLimit::Deadline) {
        return Judgement::Stop(Reason::Deadline);
    }
    match rules.policy.classify(report.termination.status()) {
        Classification::Success => Judgement::Stop(Reason::Success),
        Classification::NotRetryable(refusal) => Judgement::Stop(Reason::NotRetryable(refusal)),
        Classification::Retryable if !rules.limit.allows_another(attempt) => {
            Judgement::Stop(Reason::Exhausted)
        }
        Classification::Retryable => Judgement::Retry,
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
        interrupt_sleep: Option<i32>,
    }

    impl Clock for FakeClock {
        fn now(&self) -> Instant {
            self.now
        }
        fn sleep(&mut self, duration: Duration) -> Option<i32> {
            self.slept.push(duration);
            match self.interrupt_sleep {
                Some(signal) => Some(signal),
                None => {
                    self.now += duration;
                    None
                }
            }
        }
    }

    /// Attempts that end as scripted, in order; each records the deadline it was given.
    struct Scripted {
        script: Vec<Result<AttemptReport, SpawnError>>,
        deadlines: Vec<Option<Instant>>,
    }

    impl Attempts for Scripted {
        fn run(
            &mut self,
            _attempt: u64,
            deadline: Option<Instant>,
        ) -> Result<AttemptReport, SpawnError> {
            self.deadlines.push(deadline);
            self.script.remove(0)
        }
    }

    fn report(termination: Termination) -> Result<AttemptReport, SpawnError> {
        Ok(AttemptReport {
            termination,
            interrupted_by: None,
        })
    }

    fn rules(limit: &str, retry_on: Option<&str>) -> Rules {
        let set = |text: &str| text.parse::<StatusSet>().unwrap();
        Rules {
            limit: limit.parse().unwrap(),
            policy: Policy::new(set("0"), retry_on.map(set), None).unwrap(),
            max_time: None,
        }
    }

    fn exits(codes: &[u8]) -> Vec<Result<AttemptReport, SpawnError>> {
        codes
            .iter()
            .map(|&code| report(Termination::Exited(code)))
            .collect()
    }

    struct Outcome {
        done: Done,
        slept: Vec<Duration>,
        events: Vec<Event>,
        deadlines: Vec<Option<Instant>>,
        start: Instant,
    }

    fn run_script(rules: &Rules, script: Vec<Result<AttemptReport, SpawnError>>) -> Outcome {
        run_with(rules, script, None)
    }

    fn run_with(
        rules: &Rules,
        script: Vec<Result<AttemptReport, SpawnError>>,
        interrupt_sleep: Option<i32>,
    ) -> Outcome {
        let start = Instant::now();
        let mut clock = FakeClock {
            now: start,
            slept: Vec::new(),
            interrupt_sleep,
        };
        let mut attempts = Scripted {
            script,
            deadlines: Vec::new(),
        };
        let mut waits = (1..).map(Duration::from_secs);
        let mut events = Vec::new();
        let done = run(rules, &mut waits, &mut attempts, &mut clock, &mut events);
        assert!(
            attempts.script.is_empty(),
            "the loop stopped before the script ended"
        );
        Outcome {
            done,
            slept: clock.slept,
            events,
            deadlines: attempts.deadlines,
            start,
        }
    }

    impl EventSink for Vec<Event> {
        fn emit(&mut self, event: Event) {
            self.push(event);
        }
    }

    #[test]
    fn stops_at_the_first_success() {
        let out = run_script(&rules("5", None), exits(&[1, 2, 0]));
        assert_eq!(
            (out.done.status, out.done.attempts, out.done.reason),
            (0, 3, Reason::Success)
        );
        assert_eq!(out.slept, [Duration::from_secs(1), Duration::from_secs(2)]);
    }

    #[test]
    fn gives_up_with_the_last_status_and_no_wait_after_the_last_attempt() {
        let out = run_script(&rules("3", None), exits(&[1, 2, 3]));
        assert_eq!(
            (out.done.status, out.done.attempts, out.done.reason),
            (3, 3, Reason::Exhausted)
        );
        assert_eq!(out.slept.len(), 2);
        assert!(matches!(out.events.last(), Some(Event::Done(_))));
        let waits = out
            .events
            .iter()
            .filter(|e| matches!(e, Event::Wait { .. }))
            .count();
        assert_eq!(waits, 2);
    }

    #[test]
    fn a_status_not_to_retry_stops_at_once() {
        let out = run_script(&rules("5", Some("75")), exits(&[75, 2]));
        assert_eq!(out.done.reason, Reason::NotRetryable(Refusal::NotInRetryOn));
        assert_eq!((out.done.status, out.done.attempts), (2, 2));
        assert_eq!(out.slept.len(), 1);
    }

    #[test]
    fn a_command_that_cannot_start_is_never_retried() {
        let error = SpawnError {
            status: 127,
            message: "command not found: nope".into(),
        };
        let out = run_script(&rules("5", None), vec![Err(error)]);
        assert_eq!(out.done.status, 127);
        assert!(matches!(out.done.reason, Reason::SpawnFailed(_)));
        assert!(out.slept.is_empty());
    }

    #[test]
    fn death_by_signal_is_reported_as_128_plus_n() {
        let out = run_script(&rules("1", None), vec![report(Termination::Signaled(9))]);
        assert_eq!((out.done.status, out.done.reason), (137, Reason::Exhausted));
    }

    #[test]
    fn unlimited_attempts_go_on_until_success() {
        let mut codes = vec![1; 500];
        codes.push(0);
        let out = run_script(&rules("unlimited", None), exits(&codes));
        assert_eq!((out.done.status, out.done.attempts), (0, 501));
        assert_eq!(out.slept.len(), 500);
    }

    #[test]
    fn timeouts_are_retried_as_124() {
        let cut = Termination::TimedOut {
            limit: TimeLimit::Attempt,
            signal: Some(15),
        };
        let out = run_script(&rules("2", None), vec![report(cut), report(cut)]);
        assert_eq!(
            (out.done.status, out.done.attempts, out.done.reason),
            (124, 2, Reason::Exhausted)
        );
    }

    #[test]
    fn the_deadline_cuts_a_wait_that_would_end_past_it() {
        let mut rules = rules("5", None);
        rules.max_time = Some(Duration::from_millis(2_500));
        // Waits are 1s, then 2s: the second would end at 3s, past the 2.5s deadline.
        let out = run_script(&rules, exits(&[1, 1]));
        assert_eq!(
            (out.done.status, out.done.attempts, out.done.reason),
            (1, 2, Reason::Deadline)
        );
        assert_eq!(out.slept, [Duration::from_secs(1)]);
        let deadline = out.start + Duration::from_millis(2_500);
        assert_eq!(out.deadlines, [Some(deadline), Some(deadline)]);
    }

    #[test]
    fn an_attempt_cut_by_the_deadline_ends_the_run_with_124() {
        let cut = Termination::TimedOut {
            limit: TimeLimit::Deadline,
            signal: Some(15),
        };
        let out = run_script(&rules("5", None), vec![report(cut)]);
        assert_eq!((out.done.status, out.done.reason), (124, Reason::Deadline));
    }

    #[test]
    fn a_signal_during_an_attempt_stops_the_run() {
        let stopped = Ok(AttemptReport {
            termination: Termination::Exited(0),
            interrupted_by: Some(15),
        });
        let out = run_script(&rules("5", None), vec![stopped]);
        assert_eq!(
            (out.done.status, out.done.reason.clone()),
            (143, Reason::Interrupted(15))
        );
        assert_eq!(out.done.exit(), exit::Exit::KilledBy(15));
    }

    #[test]
    fn a_signal_during_a_wait_stops_the_run_before_another_attempt() {
        let out = run_with(&rules("5", None), exits(&[1]), Some(2));
        assert_eq!((out.done.status, out.done.attempts), (130, 1));
        assert_eq!(out.done.reason, Reason::Interrupted(2));
    }
}
