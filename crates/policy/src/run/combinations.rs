//! Every combination of what can keep a run from starting or going on, through the real loop:
//! its deadline (none, ahead, passed) × its job (free, held by another run, held by the run it
//! is inside) × its budget's breaker (closed, open) × its budget (a token now, none within
//! `--cap` on a named budget, one later on the default budget) × its monitor (none, tolerant,
//! intolerant). Each cell's status, reason, attempts and what the monitor hears are worked out
//! from the precedence table and the rules of a job's end, apart from the loop, and held to
//! what the loop does.

use std::cell::Cell;
use std::rc::Rc;

use super::*;
use crate::deadline::DeadlineSource;
use crate::exit::Exit;
use crate::job_end::{self, Counted, Told};
use crate::outcome::HookEnd;
use crate::precedence::{self, Obstacle};
use crate::rules::{RuleList, UserRules};

#[derive(Clone, Copy, Debug, PartialEq)]
enum Deadline {
    None,
    Ahead,
    Passed,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Job {
    Free,
    HeldByAnother,
    HeldByItsOwnHolder,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Token {
    Now,
    NoneWithinCap,
    LaterOnTheDefault,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Monitor {
    None,
    Tolerant,
    Intolerant,
}

/// The deadline of a run that has one ahead of it.
const AHEAD: Duration = Duration::from_secs(10);

/// `--cap`: a named budget waits no longer for a token.
const CAP: Duration = Duration::from_secs(5);

/// How far ahead the default budget's next token is: past [`AHEAD`].
const LATER: Duration = Duration::from_secs(30);

/// A failed run's place in a tolerant job's failures in a row: the first of three.
const TOLERANCE: u32 = 3;

/// A clock that moves only when slept on.
struct StillClock(Rc<Cell<Instant>>);

impl Clock for StillClock {
    fn now(&self) -> Instant {
        self.0.get()
    }
    fn sleep(&mut self, duration: Duration) -> Option<Signal> {
        self.0.set(self.0.get() + duration);
        None
    }
}

/// A command that fails once, then succeeds.
struct FailsOnce(u64);

impl Attempts for FailsOnce {
    type Held = ();

    fn run(&mut self, _: Numbering, _: Option<Instant>) -> Result<AttemptReport<()>, SpawnError> {
        self.0 += 1;
        Ok(AttemptReport {
            termination: Termination::Exited(if self.0 == 1 { 1 } else { 0 }),
            interrupted_by: None,
            from_keyboard: false,
            lingering: false,
            output: AttemptOutput::default(),
            requested: None,
            request_problems: Vec::new(),
        })
    }
}

struct Gate(Job);

impl JobGate for Gate {
    fn take(&mut self, _: Option<Instant>, _: &mut dyn FnMut(Event)) -> JobTaken {
        match self.0 {
            Job::HeldByAnother => JobTaken::Busy("another run of job nightly".into()),
            Job::Free | Job::HeldByItsOwnHolder => JobTaken::Go,
        }
    }
}

/// A budget with its breaker `open` or not, whose next token is as `token` says; a named one
/// answers as `retry_budget` bounds it by `--cap`.
struct Budget {
    open: bool,
    token: Token,
}

impl RetryBudget for Budget {
    fn admit(&mut self, _: Option<Duration>, _: &mut dyn FnMut(String)) -> Admission {
        match self.open {
            true => Admission::Open(Duration::from_secs(60)),
            false => Admission::Closed,
        }
    }

    fn reserve(&mut self, request: TokenRequest, _: &mut dyn FnMut(String)) -> Reservation {
        let past = |needed: Duration| request.latest.is_some_and(|latest| needed >= latest);
        match self.token {
            Token::Now => Reservation::Granted(Duration::ZERO),
            Token::NoneWithinCap if request.latest.is_some_and(|latest| latest <= CAP) => {
                Reservation::PastDeadline(Duration::from_secs(3600), WaitCause::Budget)
            }
            Token::NoneWithinCap => Reservation::Refused,
            Token::LaterOnTheDefault if past(LATER) => {
                Reservation::PastDeadline(LATER, WaitCause::Budget)
            }
            Token::LaterOnTheDefault => Reservation::Granted(LATER),
        }
    }
}

struct NoWaits;

impl Waits for NoWaits {
    fn next_wait(&mut self) -> Duration {
        Duration::from_millis(1)
    }
    fn start_over(&mut self) {}
}

struct NoRelease;

impl Release<()> for NoRelease {
    fn release(&mut self, _: (), _: &AttemptOutcome, _: Option<Instant>) -> Released {
        Released::Done
    }
}

struct NoHooks;

impl Hooks for NoHooks {
    fn run(&mut self, _: &HookCall, _: Option<Instant>) -> Option<HookEnd> {
        None
    }
}

/// What a cell comes to: the exit status, the `done` reason, the attempts, what the monitor
/// hears (none without one).
type Ending = (u8, &'static str, u64, Option<Told>);

/// The cell, worked out from the precedence table and the rules of a job's end.
fn expected(deadline: Deadline, job: Job, open: bool, token: Token, monitor: Monitor) -> Ending {
    let kept_out = [
        (deadline == Deadline::Passed).then_some(Obstacle::Deadline),
        (job == Job::HeldByAnother).then_some(Obstacle::Job),
        open.then_some(Obstacle::Breaker),
    ];
    let found = kept_out
        .into_iter()
        .flatten()
        .map(|obstacle| (obstacle, obstacle));
    let (status, obstacle, attempts) = match precedence::decide(found) {
        Some(obstacle) => {
            let status = match obstacle {
                Obstacle::Deadline => 124,
                _ => 75,
            };
            (status, Some(obstacle), 0)
        }
        // The first attempt fails; the retry needs a token.
        None => match (token, deadline) {
            (Token::Now, _) | (Token::LaterOnTheDefault, Deadline::None) => (0, None, 2),
            (Token::NoneWithinCap, _) => (1, Some(Obstacle::Budget), 1),
            (Token::LaterOnTheDefault, _) => (1, Some(Obstacle::Deadline), 1),
        },
    };
    let reason = obstacle.map_or("success", |obstacle| obstacle.row().reason);
    let heard = match (monitor, obstacle) {
        (Monitor::None, _) => None,
        (_, Some(Obstacle::Job)) => Some(Told::KeptOut(status)),
        (_, _) if status == 0 => Some(Told::Success),
        (Monitor::Tolerant, _) if attempts > 0 => Some(Told::Tolerated(status)),
        (_, _) => Some(Told::Failure(status)),
    };
    (status, reason, attempts, heard)
}

/// The cell, as the loop runs it.
fn actual(deadline: Deadline, job: Job, open: bool, token: Token, monitor: Monitor) -> Ending {
    let start = Instant::now();
    let time = Rc::new(Cell::new(start));
    let limit = |left| {
        Some(crate::deadline::Limit {
            at: start + left,
            source: DeadlineSource::MaxTime,
        })
    };
    let rules = Rules {
        limit: "3".parse().unwrap(),
        decide: RuleList::new(&UserRules::default(), None).unwrap(),
        deadline: match deadline {
            Deadline::None => None,
            Deadline::Ahead => limit(AHEAD),
            Deadline::Passed => limit(Duration::ZERO),
        },
        reset_after: None,
        splay: Duration::ZERO,
        max_requested_wait: Duration::from_secs(900),
        depth: 1,
        flaky_exit: None,
    };
    let mut events: Vec<Event> = Vec::new();
    let mut attempts = FailsOnce(0);
    let end = run(
        &rules,
        Parts {
            job: &mut Gate(job),
            waits: &mut NoWaits,
            attempts: &mut attempts,
            clock: &mut StillClock(time),
            budget: &mut Budget { open, token },
            release: &mut NoRelease,
            hooks: &mut NoHooks,
            sink: &mut events,
        },
    );
    let status = Exit::of(&end).status();
    let alert_after = match monitor {
        Monitor::Tolerant => TOLERANCE,
        _ => 1,
    };
    let failed_in_a_row = (job_end::counted(&end) == Some(Counted::Failed)).then_some(1);
    let heard = (monitor != Monitor::None)
        .then(|| job_end::told(&end, status, alert_after, failed_in_a_row));
    assert_eq!(end.attempts, attempts.0, "attempts made and counted");
    (status, end.reason.name(), end.attempts, heard)
}

#[test]
fn every_combination_ends_as_the_precedence_table_says() {
    let mut cells = 0;
    for deadline in [Deadline::None, Deadline::Ahead, Deadline::Passed] {
        for job in [Job::Free, Job::HeldByAnother, Job::HeldByItsOwnHolder] {
            for open in [false, true] {
                for token in [Token::Now, Token::NoneWithinCap, Token::LaterOnTheDefault] {
                    for monitor in [Monitor::None, Monitor::Tolerant, Monitor::Intolerant] {
                        let cell = (deadline, job, open, token, monitor);
                        assert_eq!(
                            actual(deadline, job, open, token, monitor),
                            expected(deadline, job, open, token, monitor),
                            "{cell:?}"
                        );
                        cells += 1;
                    }
                }
            }
        }
    }
    assert_eq!(cells, 3 * 3 * 2 * 3 * 3);
}
