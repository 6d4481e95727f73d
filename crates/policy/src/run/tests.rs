//! The loop's tests: scripted attempts, a fake clock that never sleeps, a scripted budget
//! and recorded hooks.

use std::cell::Cell;
use std::rc::Rc;

use super::*;
use crate::deadline::DeadlineSource;
use crate::exit::Exit;
use crate::outcome::{Ended, HookEnd, HookOutcome, SpawnFailure};
use crate::rules::{RuleList, RuleRef, RuleSpec, UserRules};

/// Fake time, shared by the clock and the attempts; it moves only when slept on or when an
/// attempt "runs".
type Time = Rc<Cell<Instant>>;

struct FakeClock {
    time: Time,
    slept: Vec<Duration>,
    sleeps: Sleeps,
}

/// How the fake clock's sleeps end.
#[derive(Clone, Copy)]
enum Sleeps {
    /// When they should.
    OnTime,
    /// At once, by this signal.
    Interrupted(Signal),
    /// This much later than they should, as when the tool was stopped meanwhile.
    Late(Duration),
}

impl Clock for FakeClock {
    fn now(&self) -> Instant {
        self.time.get()
    }
    fn sleep(&mut self, duration: Duration) -> Option<Signal> {
        self.slept.push(duration);
        match self.sleeps {
            Sleeps::OnTime => self.time.set(self.time.get() + duration),
            Sleeps::Late(late) => self.time.set(self.time.get() + duration + late),
            Sleeps::Interrupted(signal) => return Some(signal),
        }
        None
    }
}

/// Attempts that end as scripted, in order, taking the fake time in `took` (none once it
/// runs out); they record the numbering and deadline they were given and how they were
/// concluded.
struct Scripted {
    script: Vec<Result<AttemptReport<()>, SpawnError>>,
    took: Vec<Duration>,
    time: Time,
    numberings: Vec<Numbering>,
    deadlines: Vec<Option<Instant>>,
}

impl Attempts for Scripted {
    type Held = ();

    fn run(
        &mut self,
        numbering: Numbering,
        deadline: Option<Instant>,
    ) -> Result<AttemptReport<()>, SpawnError> {
        self.numberings.push(numbering);
        self.deadlines.push(deadline);
        let took = if self.took.is_empty() {
            Duration::ZERO
        } else {
            self.took.remove(0)
        };
        self.time.set(self.time.get() + took);
        self.script.remove(0)
    }
}

/// Records, for each attempt, whether its output was released as a success's.
#[derive(Default)]
struct Releases(Vec<bool>);

impl Release<()> for Releases {
    fn release(
        &mut self,
        _held: (),
        outcome: &AttemptOutcome,
        _deadline: Option<Instant>,
    ) -> Released {
        self.0.push(outcome.next == Next::Stop(Reason::Success));
        Released::Done
    }
}

/// Waits of 1s, 2s, 3s...; starting over begins again at 1s.
struct Counting(u64);

impl Waits for Counting {
    fn next_wait(&mut self) -> Duration {
        self.0 += 1;
        Duration::from_secs(self.0)
    }
    fn start_over(&mut self) {
        self.0 = 0;
    }
}

fn report(termination: Termination) -> Result<AttemptReport<()>, SpawnError> {
    Ok(AttemptReport {
        termination,
        interrupted_by: None,
        from_keyboard: false,
        lingering: false,
        output: AttemptOutput::default(),
        requested: None,
        request_problems: Vec::new(),
    })
}

fn exits(codes: &[u8]) -> Vec<Result<AttemptReport<()>, SpawnError>> {
    codes
        .iter()
        .map(|&code| report(Termination::Exited(code)))
        .collect()
}

fn rules(limit: &str, retry_on: Option<&str>) -> Rules {
    rules_of(limit, &[], retry_on.as_slice())
}

/// Rules of `limit` attempts, with the user's `--stop-on` and `--retry-on` rules.
fn rules_of(limit: &str, stop: &[&str], retry: &[&str]) -> Rules {
    let specs = |texts: &[&str]| -> Vec<RuleSpec> {
        texts.iter().map(|text| text.parse().unwrap()).collect()
    };
    let user = UserRules {
        stop: specs(stop),
        retry: specs(retry),
        ..UserRules::default()
    };
    Rules {
        limit: limit.parse().unwrap(),
        decide: RuleList::new(&user, None).unwrap(),
        deadline: None,
        reset_after: None,
        splay: Duration::ZERO,
        max_requested_wait: Duration::from_secs(900),
        depth: 1,
        flaky_exit: None,
    }
}

/// A run's end for a `cause`'s wait of `wait` ms that `left` ms before the deadline cannot
/// hold.
fn past(wait: u64, cause: WaitCause, left: u64) -> Reason {
    Reason::WaitPastDeadline(Shortfall {
        wait: Duration::from_millis(wait),
        cause,
        left: Duration::from_millis(left),
        source: DeadlineSource::MaxTime,
    })
}

/// A `--max-time` of `limit`, as the run's deadline.
fn max_time(limit: Duration) -> Option<Limit> {
    deadline_in(limit, DeadlineSource::MaxTime)
}

/// A deadline `left` after the start of every fake run, from `source`.
fn deadline_in(left: Duration, source: DeadlineSource) -> Option<Limit> {
    Some(Limit {
        at: epoch() + left,
        source,
    })
}

/// The instant every fake run starts at, on its fake clock.
fn epoch() -> Instant {
    static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// A budget that answers as scripted (then grants at once, and admits), recording what it was
/// asked.
#[derive(Default)]
struct ScriptedBudget {
    answers: Vec<Reservation>,
    asked: Vec<Option<Duration>>,
    /// The waits the command asked for, as each reservation passed them on.
    waits_asked: Vec<Option<Duration>>,
    /// What `admit` answers; `Closed` when none is scripted.
    admission: Option<Admission>,
    admitted: u64,
    /// The ends the breaker was told of, with the admission before each.
    finished: Vec<(Ended, Admission)>,
}

impl RetryBudget for ScriptedBudget {
    fn admit(&mut self, _latest: Option<Duration>, _warn: &mut dyn FnMut(String)) -> Admission {
        self.admitted += 1;
        self.admission.unwrap_or(Admission::Closed)
    }

    fn reserve(&mut self, request: TokenRequest, _warn: &mut dyn FnMut(String)) -> Reservation {
        self.asked.push(request.latest);
        self.waits_asked.push(request.asked);
        if self.answers.is_empty() {
            Reservation::Granted(Duration::ZERO)
        } else {
            self.answers.remove(0)
        }
    }

    fn finish(
        &mut self,
        ended: Ended,
        admission: Admission,
        _latest: Option<Duration>,
        _warn: &mut dyn FnMut(String),
    ) -> Option<Signal> {
        self.finished.push((ended, admission));
        None
    }
}

/// Hooks that take `took` of the fake clock and end with `status` (or the signal
/// `interrupt`), recording how they were called; only the hooks in `given` exist.
#[derive(Default)]
struct RecordedHooks {
    given: Vec<Hook>,
    took: Duration,
    status: u8,
    interrupt: Option<Signal>,
    calls: Vec<(HookCall, Option<Instant>)>,
    time: Option<Time>,
}

impl Hooks for RecordedHooks {
    fn run(&mut self, call: &HookCall, deadline: Option<Instant>) -> Option<HookEnd> {
        if !self.given.contains(&call.hook) {
            return None;
        }
        self.calls.push((call.clone(), deadline));
        if let Some(time) = &self.time {
            time.set(time.get() + self.took);
        }
        Some(HookEnd {
            hook: call.hook,
            outcome: HookOutcome::Ended(Termination::Exited(self.status)),
            duration: self.took,
            interrupted_by: self.interrupt,
        })
    }
}

struct Outcome {
    budget: ScriptedBudget,
    hooks: RecordedHooks,
    done: RunEnd,
    slept: Vec<Duration>,
    events: Vec<Event>,
    attempts: Scripted,
    releases: Vec<bool>,
    start: Instant,
}

/// Run `script`, the attempts taking `took`, with sleeps cut by `interrupt_sleep`.
fn run_with(
    rules: &Rules,
    script: Vec<Result<AttemptReport<()>, SpawnError>>,
    took: Vec<Duration>,
    interrupt_sleep: Option<Signal>,
) -> Outcome {
    run_budgeted(
        rules,
        script,
        took,
        interrupt_sleep,
        ScriptedBudget::default(),
    )
}

fn run_budgeted(
    rules: &Rules,
    script: Vec<Result<AttemptReport<()>, SpawnError>>,
    took: Vec<Duration>,
    interrupt_sleep: Option<Signal>,
    budget: ScriptedBudget,
) -> Outcome {
    let parts = (budget, RecordedHooks::default());
    let sleeps = interrupt_sleep.map_or(Sleeps::OnTime, Sleeps::Interrupted);
    run_parts(rules, script, took, sleeps, parts)
}

/// Run `script` with these hooks; the attempts take no time and sleeps are not cut.
fn run_hooked(
    rules: &Rules,
    script: Vec<Result<AttemptReport<()>, SpawnError>>,
    hooks: RecordedHooks,
) -> Outcome {
    let parts = (ScriptedBudget::default(), hooks);
    run_parts(rules, script, Vec::new(), Sleeps::OnTime, parts)
}

fn run_parts(
    rules: &Rules,
    script: Vec<Result<AttemptReport<()>, SpawnError>>,
    took: Vec<Duration>,
    sleeps: Sleeps,
    (mut budget, mut hooks): (ScriptedBudget, RecordedHooks),
) -> Outcome {
    let start = epoch();
    let time = Rc::new(Cell::new(start));
    hooks.time = Some(Rc::clone(&time));
    let mut clock = FakeClock {
        time: Rc::clone(&time),
        slept: Vec::new(),
        sleeps,
    };
    let mut attempts = Scripted {
        script,
        took,
        time,
        numberings: Vec::new(),
        deadlines: Vec::new(),
    };
    let mut events = Vec::new();
    let mut releases = Releases::default();
    let parts = Parts {
        job: &mut (),
        waits: &mut Counting(0),
        attempts: &mut attempts,
        clock: &mut clock,
        budget: &mut budget,
        release: &mut releases,
        hooks: &mut hooks,
        sink: &mut events,
    };
    let done = run(rules, parts);
    assert!(
        attempts.script.is_empty(),
        "the loop stopped before the script ended"
    );
    Outcome {
        budget,
        hooks,
        done,
        slept: clock.slept,
        events,
        attempts,
        releases: releases.0,
        start,
    }
}

fn run_script(rules: &Rules, script: Vec<Result<AttemptReport<()>, SpawnError>>) -> Outcome {
    run_with(rules, script, Vec::new(), None)
}

impl Outcome {
    /// Each attempt's number since the last reset, as the attempts were told.
    fn since_reset(&self) -> Vec<u64> {
        self.attempts
            .numberings
            .iter()
            .map(|n| n.since_reset)
            .collect()
    }
}

fn summary(out: &Outcome) -> (u8, u64, Reason) {
    let status = Exit::of(&out.done).status();
    (status, out.done.attempts, out.done.reason.clone())
}

/// The waits the run announced, with their causes.
fn waits_announced(out: &Outcome) -> Vec<(Duration, WaitCause)> {
    let waits = out.events.iter().filter_map(|event| match event {
        Event::AttemptEnd(AttemptOutcome {
            unready: false,
            next: Next::Retry { wait, cause },
            ..
        }) => Some((*wait, *cause)),
        Event::Splay(wait) => Some((*wait, WaitCause::Splay)),
        _ => None,
    });
    waits.collect()
}

#[test]
fn stops_at_the_first_success() {
    let out = run_script(&rules("5", None), exits(&[1, 2, 0]));
    assert_eq!(summary(&out), (0, 3, Reason::Success));
    assert_eq!(out.slept, [Duration::from_secs(1), Duration::from_secs(2)]);
    assert_eq!(out.releases, [false, false, true]);
}

#[test]
fn gives_up_with_the_last_status_and_no_wait_after_the_last_attempt() {
    let out = run_script(&rules("3", None), exits(&[1, 2, 3]));
    assert_eq!(summary(&out), (3, 3, Reason::Exhausted));
    assert_eq!(out.slept.len(), 2);
    assert!(matches!(
        out.events.last(),
        Some(Event::AttemptEnd(AttemptOutcome {
            unready: false,
            next: Next::Stop(Reason::Exhausted),
            ..
        }))
    ));
    assert_eq!(waits_announced(&out).len(), 2);
}

#[test]
fn a_status_not_to_retry_stops_at_once() {
    let out = run_script(&rules("5", Some("75")), exits(&[75, 2]));
    assert_eq!(summary(&out), (2, 2, not_named_by_retry_on()));
    assert_eq!(out.slept.len(), 1);
}

#[test]
fn a_command_that_cannot_start_is_never_retried() {
    let error = SpawnError {
        failure: SpawnFailure::NotFound,
        message: "command not found: nope".into(),
    };
    let out = run_script(&rules("5", None), vec![Err(error)]);
    assert_eq!(summary(&out).0, 127);
    assert!(matches!(
        out.done.reason,
        Reason::SpawnFailed(SpawnFailure::NotFound, _)
    ));
    assert!(out.slept.is_empty());
}

#[test]
fn death_by_signal_is_reported_as_128_plus_n() {
    let out = run_script(
        &rules("1", None),
        vec![report(Termination::Signaled(Signal::KILL))],
    );
    assert_eq!(summary(&out), (137, 1, Reason::Exhausted));
}

#[test]
fn unlimited_attempts_go_on_until_success() {
    let mut codes = vec![1; 500];
    codes.push(0);
    let out = run_script(&rules("unlimited", None), exits(&codes));
    assert_eq!(summary(&out), (0, 501, Reason::Success));
    assert_eq!(out.slept.len(), 500);
}

#[test]
fn timeouts_are_retried_as_124() {
    let cut = Termination::TimedOut {
        limit: TimeLimit::Attempt,
        signal: Some(Signal::TERM),
    };
    let out = run_script(&rules("2", None), vec![report(cut), report(cut)]);
    assert_eq!(summary(&out), (124, 2, Reason::Exhausted));
}

#[test]
fn the_deadline_cuts_a_wait_that_would_end_past_it() {
    let mut rules = rules("5", None);
    rules.deadline = max_time(Duration::from_millis(2_500));
    // Waits are 1s, then 2s: the second would end at 3s, past the 2.5s deadline.
    let out = run_script(&rules, exits(&[1, 1]));
    let shortfall = past(2_000, WaitCause::Backoff, 1_500);
    assert_eq!(summary(&out), (1, 2, shortfall));
    assert_eq!(out.slept, [Duration::from_secs(1)]);
    let deadline = Some(out.start + Duration::from_millis(2_500));
    assert_eq!(out.attempts.deadlines, [deadline, deadline]);
}

#[test]
fn an_attempt_cut_by_the_deadline_ends_the_run_with_124() {
    let cut = Termination::TimedOut {
        limit: TimeLimit::Deadline,
        signal: Some(Signal::TERM),
    };
    let mut rules = rules("5", None);
    rules.deadline = deadline_in(Duration::from_secs(30), DeadlineSource::GitlabJob);
    let out = run_script(&rules, vec![report(cut)]);
    assert_eq!(
        summary(&out),
        (124, 1, Reason::Deadline(DeadlineSource::GitlabJob))
    );
}

#[test]
fn a_deadline_already_past_starts_no_attempt_and_consults_no_budget() {
    let mut rules = rules("5", None);
    rules.deadline = deadline_in(Duration::ZERO, DeadlineSource::OuterRun);
    let out = run_script(&rules, Vec::new());
    assert_eq!(
        summary(&out),
        (124, 0, Reason::Deadline(DeadlineSource::OuterRun)),
        "no attempt ran: the outer run's deadline ended it"
    );
    assert!(out.attempts.deadlines.is_empty());
    assert_eq!(out.budget.admitted, 0, "the breaker was not asked");
}

#[test]
fn a_signal_during_an_attempt_stops_the_run() {
    let stopped = Ok(AttemptReport {
        termination: Termination::Exited(0),
        interrupted_by: Some(Signal::TERM),
        from_keyboard: false,
        lingering: false,
        output: AttemptOutput::default(),
        requested: None,
        request_problems: Vec::new(),
    });
    let out = run_script(&rules("5", None), vec![stopped]);
    assert_eq!(
        summary(&out),
        (143, 1, Reason::Interrupted(Signal::TERM, Moment::Attempt))
    );
    assert_eq!(Exit::of(&out.done), Exit::Stopped(Signal::TERM));
}

#[test]
fn a_signal_during_a_wait_stops_the_run_before_another_attempt() {
    let out = run_with(
        &rules("5", None),
        exits(&[1]),
        Vec::new(),
        Some(Signal::INT),
    );
    assert_eq!(
        summary(&out),
        (130, 1, Reason::Interrupted(Signal::INT, Moment::Wait))
    );
}

#[test]
fn output_matches_decide_with_the_status() {
    let mut stop = report(Termination::Exited(22));
    if let Ok(report) = &mut stop {
        report.output.matched.matched = 0b1;
    }
    let out = run_script(&rules_of("5", &["stderr:404"], &[]), vec![stop]);
    let refused = Reason::NotRetryable(RuleRef {
        described: "--stop-on stderr:404".into(),
        pattern: Some("404".into()),
        default: false,
        spent: None,
    });
    assert_eq!(summary(&out), (22, 1, refused));
}

/// The reason a run stops at a status its `--retry-on` rules do not name.
fn not_named_by_retry_on() -> Reason {
    Reason::NotRetryable(RuleRef {
        described: "--retry-on names what is retried, and not this".into(),
        pattern: None,
        default: true,
        spent: None,
    })
}

#[test]
fn a_long_failure_starts_the_backoff_and_the_count_over() {
    let mut rules = rules("3", None);
    rules.reset_after = Some(Duration::from_secs(10));
    // Every attempt takes 10s, so each failure resets: the run never exhausts 3 attempts.
    let took = vec![Duration::from_secs(10); 5];
    let out = run_with(&rules, exits(&[1, 1, 1, 1, 0]), took, None);
    assert_eq!(summary(&out), (0, 5, Reason::Success));
    assert_eq!(
        out.slept,
        [Duration::from_secs(1); 4],
        "each wait is the first wait again"
    );
    assert_eq!(out.since_reset(), [1, 1, 1, 1, 1]);
}

#[test]
fn quick_failures_after_a_reset_count_from_one() {
    let mut rules = rules("2", None);
    rules.reset_after = Some(Duration::from_secs(10));
    // A long failure resets; then two quick failures exhaust the limit of 2.
    let took = vec![Duration::from_secs(10), Duration::ZERO, Duration::ZERO];
    let out = run_with(&rules, exits(&[1, 1, 1]), took, None);
    assert_eq!(summary(&out), (1, 3, Reason::Exhausted));
    assert_eq!(out.slept, [Duration::from_secs(1), Duration::from_secs(2)]);
    assert_eq!(out.since_reset(), [1, 1, 2]);
    let resets = out
        .events
        .iter()
        .filter(|e| matches!(e, Event::AttemptEnd(end) if end.reset));
    assert_eq!(resets.count(), 1);
}

#[test]
fn the_backoff_schedule_gives_the_loop_its_waits_and_starts_over() {
    use crate::backoff::{Backoff, Jitter};
    use rand::SeedableRng;
    let backoff = Backoff::new(
        Duration::from_secs(1),
        Duration::from_secs(60),
        2.0,
        Jitter::None,
    );
    let mut waits = backoff
        .unwrap()
        .schedule(rand::rngs::Xoshiro256PlusPlus::seed_from_u64(0));
    let second = Duration::from_secs(1);
    assert_eq!([waits.next_wait(), waits.next_wait()], [second, 2 * second]);
    waits.start_over();
    assert_eq!(waits.next_wait(), second);
}

#[test]
fn what_an_attempt_left_behind_is_said() {
    let mut left = report(Termination::Exited(0)).unwrap();
    left.output.cut_short = true;
    left.lingering = true;
    let out = run_script(&rules("1", None), vec![Ok(left)]);
    let warnings: Vec<&Event> = out
        .events
        .iter()
        .filter(|event| matches!(event, Event::Warning(_)))
        .collect();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
}

#[test]
fn a_budget_delay_no_longer_than_the_backoff_is_the_backoffs() {
    let budget = ScriptedBudget {
        answers: vec![Reservation::Granted(Duration::from_secs(1))],
        ..ScriptedBudget::default()
    };
    let out = run_budgeted(&rules("5", None), exits(&[1, 0]), Vec::new(), None, budget);
    assert_eq!(
        waits_announced(&out),
        [(Duration::from_secs(1), WaitCause::Backoff)]
    );
}

/// An attempt that exits `code` after asking for `requested`, with `problems` reading it.
fn asking(
    code: u8,
    requested: Option<Requested>,
    problems: &[&str],
) -> Result<AttemptReport<()>, SpawnError> {
    let mut report = report(Termination::Exited(code));
    if let Ok(report) = &mut report {
        report.requested = requested;
        report.request_problems = problems.iter().map(|p| p.to_string()).collect();
    }
    report
}

fn warnings(out: &Outcome) -> Vec<String> {
    out.events
        .iter()
        .filter_map(|event| match event {
            Event::Warning(message) => Some(message.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn a_requested_wait_longer_than_the_backoff_sets_the_wait() {
    let wait = |seconds| Some(Requested::Wait(Duration::from_secs(seconds)));
    let script = vec![
        asking(1, wait(5), &[]),
        asking(1, wait(1), &[]),
        asking(0, None, &[]),
    ];
    let out = run_script(&rules("5", None), script);
    assert_eq!(summary(&out), (0, 3, Reason::Success));
    assert_eq!(
        waits_announced(&out),
        [
            (Duration::from_secs(5), WaitCause::Requested),
            (Duration::from_secs(2), WaitCause::Backoff)
        ]
    );
}

#[test]
fn a_requested_wait_reaches_the_budget_and_a_shared_one_holds_the_retry() {
    let wait = |seconds| Some(Requested::Wait(Duration::from_secs(seconds)));
    let held = Reservation::Held(Duration::from_secs(40));
    let budget = ScriptedBudget {
        answers: vec![Reservation::Held(Duration::from_secs(3)), held],
        ..ScriptedBudget::default()
    };
    let script = vec![
        asking(1, wait(5), &[]),
        asking(1, None, &[]),
        asking(0, None, &[]),
    ];
    let out = run_budgeted(&rules("5", None), script, Vec::new(), None, budget);
    assert_eq!(summary(&out), (0, 3, Reason::Success));
    assert_eq!(
        out.budget.waits_asked,
        [Some(Duration::from_secs(5)), None],
        "the command's own request goes to the budget, for every run that shares it"
    );
    assert_eq!(
        waits_announced(&out),
        [
            (Duration::from_secs(5), WaitCause::Requested),
            (Duration::from_secs(40), WaitCause::Shared)
        ],
        "a hold shorter than the wait changes nothing; a longer one is the wait"
    );
}

#[test]
fn a_shared_hold_is_no_longer_than_a_request_may_make_a_wait() {
    let budget = ScriptedBudget {
        answers: vec![Reservation::Held(Duration::from_secs(86_400))],
        ..ScriptedBudget::default()
    };
    let script = vec![asking(1, None, &[]), asking(0, None, &[])];
    let out = run_budgeted(&rules("5", None), script, Vec::new(), None, budget);
    assert_eq!(
        waits_announced(&out),
        [(Duration::from_secs(900), WaitCause::Shared)],
        "a day held by the store is cut to RETRY_MAX_REQUESTED_WAIT"
    );
}

#[test]
fn a_requested_stop_ends_the_run_with_the_attempts_status() {
    let out = run_script(
        &rules("5", None),
        vec![asking(7, Some(Requested::Stop), &[])],
    );
    assert_eq!(summary(&out), (7, 1, Reason::StopRequested));
}

#[test]
fn a_requested_wait_is_capped_and_never_past_the_deadline() {
    let mut capped = rules("5", None);
    capped.max_requested_wait = Duration::from_secs(30);
    let long = Some(Requested::Wait(Duration::from_secs(3600)));
    let out = run_script(&capped, vec![asking(1, long, &[]), asking(0, None, &[])]);
    assert_eq!(
        waits_announced(&out),
        [(Duration::from_secs(30), WaitCause::Requested)]
    );
    assert_eq!(
        warnings(&out),
        ["attempt 1 asked to wait 1h, longer than RETRY_MAX_REQUESTED_WAIT; waiting 30s instead"]
    );
    capped.deadline = max_time(Duration::from_secs(20));
    let out = run_script(&capped, vec![asking(1, long, &[])]);
    let shortfall = past(30_000, WaitCause::Requested, 20_000);
    assert_eq!(summary(&out), (1, 1, shortfall));
}

#[test]
fn a_request_that_only_equals_the_backoff_or_the_most_is_not_said_to_change_it() {
    let mut rules = rules("5", None);
    rules.max_requested_wait = Duration::from_secs(2);
    let wait = |seconds| Some(Requested::Wait(Duration::from_secs(seconds)));
    let script = vec![
        asking(1, wait(1), &[]),
        asking(1, wait(2), &[]),
        asking(0, None, &[]),
    ];
    let out = run_script(&rules, script);
    assert_eq!(
        waits_announced(&out),
        [
            (Duration::from_secs(1), WaitCause::Backoff),
            (Duration::from_secs(2), WaitCause::Backoff)
        ]
    );
    assert_eq!(warnings(&out), Vec::<String>::new());
}

#[test]
fn a_request_only_matters_for_a_retry() {
    let stop = Some(Requested::Stop);
    let not_retried = rules("5", Some("2"));
    let out = run_script(&not_retried, vec![asking(1, stop, &["unreadable"])]);
    assert_eq!(out.done.reason, not_named_by_retry_on());
    let out = run_script(&rules("1", None), vec![asking(1, stop, &["unreadable"])]);
    assert_eq!(
        (out.done.reason.clone(), warnings(&out).len()),
        (Reason::Exhausted, 0)
    );
    let out = run_script(&rules("5", None), vec![asking(0, stop, &["unreadable"])]);
    assert_eq!(
        (out.done.reason.clone(), warnings(&out).len()),
        (Reason::Success, 0)
    );
    let out = run_script(
        &rules("5", None),
        vec![asking(1, None, &["unreadable"]), asking(0, None, &[])],
    );
    assert_eq!(warnings(&out), ["unreadable"]);
}

#[test]
fn the_retry_hook_runs_before_each_wait_and_the_give_up_hook_once() {
    let hooks = RecordedHooks {
        given: vec![Hook::OnRetry, Hook::OnGiveUp],
        status: 3,
        ..RecordedHooks::default()
    };
    let out = run_hooked(&rules("3", None), exits(&[4, 5, 6]), hooks);
    assert_eq!(
        summary(&out),
        (6, 3, Reason::Exhausted),
        "a failing hook changes nothing"
    );
    let calls: Vec<HookCall> = out
        .hooks
        .calls
        .iter()
        .map(|(call, _)| call.clone())
        .collect();
    let numbering = |attempt| Numbering {
        attempt,
        since_reset: attempt,
        limit: "3".parse().unwrap(),
        depth: 1,
    };
    let retry = |attempt, status, wait| HookCall {
        hook: Hook::OnRetry,
        numbering: Some(numbering(attempt)),
        status,
        next_wait: Some(Duration::from_secs(wait)),
        reason: None,
    };
    let give_up = HookCall {
        hook: Hook::OnGiveUp,
        numbering: Some(numbering(3)),
        status: 6,
        next_wait: None,
        reason: Some("exhausted"),
    };
    assert_eq!(calls, [retry(1, 4, 1), retry(2, 5, 2), give_up]);
    let ends = out
        .events
        .iter()
        .filter(|event| matches!(event, Event::HookEnd(_)));
    assert_eq!(ends.count(), 3);
}

#[test]
fn no_give_up_hook_after_a_success_or_a_signal() {
    let given = || RecordedHooks {
        given: vec![Hook::OnGiveUp],
        ..RecordedHooks::default()
    };
    let out = run_hooked(&rules("3", None), exits(&[1, 0]), given());
    assert!(out.hooks.calls.is_empty());
    let out = run_with(
        &rules("3", None),
        exits(&[1]),
        Vec::new(),
        Some(Signal::TERM),
    );
    assert_eq!(
        out.done.reason,
        Reason::Interrupted(Signal::TERM, Moment::Wait)
    );
    let spawn_failed = vec![Err(SpawnError {
        failure: SpawnFailure::NotFound,
        message: "command not found: x".into(),
    })];
    let out = run_hooked(&rules("3", None), spawn_failed, given());
    assert_eq!(
        out.hooks.calls[0].0.status, 127,
        "the status the report gives it"
    );
}

#[test]
fn a_signal_during_a_hook_ends_the_run() {
    let hooks = RecordedHooks {
        given: vec![Hook::OnRetry, Hook::OnGiveUp],
        interrupt: Some(Signal::TERM),
        ..RecordedHooks::default()
    };
    let out = run_hooked(&rules("3", None), exits(&[1]), hooks);
    assert_eq!(
        out.done.reason,
        Reason::Interrupted(Signal::TERM, Moment::Hook(Hook::OnRetry))
    );
    assert_eq!(out.hooks.calls.len(), 1, "no give-up hook after a signal");
}

#[test]
fn a_hooks_time_counts_against_the_deadline() {
    let mut bounded = rules("3", None);
    bounded.deadline = max_time(Duration::from_secs(10));
    let hooks = RecordedHooks {
        given: vec![Hook::OnRetry, Hook::OnGiveUp],
        took: Duration::from_secs(9),
        ..RecordedHooks::default()
    };
    let out = run_hooked(&bounded, exits(&[1]), hooks);
    assert_eq!(
        summary(&out),
        (1, 1, past(1_000, WaitCause::Backoff, 1_000)),
        "its 1s wait would end past it"
    );
    let deadline = out.start + Duration::from_secs(10);
    assert!(
        out.hooks
            .calls
            .iter()
            .all(|(_, given)| *given == Some(deadline))
    );
    assert!(out.slept.is_empty());
    assert_eq!(
        out.done.elapsed,
        Duration::from_secs(18),
        "both hooks' time"
    );
}

#[test]
fn a_signal_while_the_run_waits_for_its_jobs_turn_is_said_as_that() {
    struct Interrupted;
    impl JobGate for Interrupted {
        fn take(&mut self, _: Option<Instant>, _: &mut dyn FnMut(Event)) -> JobTaken {
            JobTaken::Interrupted(Signal::TERM)
        }
    }
    let time = Rc::new(Cell::new(epoch()));
    let mut clock = FakeClock {
        time: Rc::clone(&time),
        slept: Vec::new(),
        sleeps: Sleeps::OnTime,
    };
    let parts = Parts {
        job: &mut Interrupted,
        waits: &mut Counting(0),
        attempts: &mut Scripted {
            script: Vec::new(),
            took: Vec::new(),
            time,
            numberings: Vec::new(),
            deadlines: Vec::new(),
        },
        clock: &mut clock,
        budget: &mut ScriptedBudget::default(),
        release: &mut Releases::default(),
        hooks: &mut RecordedHooks::default(),
        sink: &mut Vec::new(),
    };
    let done = run(&rules("5", None), parts);
    assert_eq!(
        (done.attempts, done.reason),
        (0, Reason::Interrupted(Signal::TERM, Moment::Job))
    );
}

#[test]
fn a_signal_while_the_budget_is_asked_ends_the_run_before_the_first_attempt() {
    let budget = ScriptedBudget {
        admission: Some(Admission::Interrupted(Signal::TERM)),
        ..ScriptedBudget::default()
    };
    let out = run_budgeted(&rules("5", None), exits(&[]), Vec::new(), None, budget);
    assert_eq!(
        (out.done.attempts, out.done.reason.clone()),
        (0, Reason::Interrupted(Signal::TERM, Moment::Budget))
    );
    assert!(out.budget.finished.is_empty(), "no end to count");
}

#[test]
fn an_open_breaker_keeps_the_run_from_its_first_attempt() {
    let budget = ScriptedBudget {
        admission: Some(Admission::Open(Duration::from_secs(25))),
        ..ScriptedBudget::default()
    };
    let out = run_budgeted(&rules("5", None), exits(&[]), Vec::new(), None, budget);
    let breaker = "the retry budget's breaker".to_string();
    let left = Duration::from_secs(25);
    assert_eq!(
        summary(&out),
        (
            75,
            0,
            Reason::BreakerOpen {
                breaker: breaker.clone(),
                left,
                probing: false
            }
        )
    );
    assert_eq!(crate::exit::Exit::of(&out.done).status(), 75);
    assert!(
        out.budget.finished.is_empty(),
        "a run that never started is not counted"
    );
    let budget = ScriptedBudget {
        admission: Some(Admission::Probing(left)),
        ..ScriptedBudget::default()
    };
    let out = run_budgeted(&rules("5", None), exits(&[]), Vec::new(), None, budget);
    let probing = Reason::BreakerOpen {
        breaker,
        left,
        probing: true,
    };
    assert_eq!(summary(&out), (75, 0, probing));
}

#[test]
fn a_probe_gives_its_lease_back_on_every_end_it_sees() {
    let probe = || ScriptedBudget {
        admission: Some(Admission::Probe),
        ..ScriptedBudget::default()
    };
    let not_found = Err(SpawnError {
        failure: SpawnFailure::NotFound,
        message: "no such command".into(),
    });
    let out = run_budgeted(
        &rules("5", None),
        vec![not_found],
        Vec::new(),
        None,
        probe(),
    );
    assert_eq!(out.budget.finished, [(Ended::Unjudged, Admission::Probe)]);
    let mut stopped = report(Termination::Signaled(Signal::TERM)).unwrap();
    stopped.interrupted_by = Some(Signal::TERM);
    let out = run_budgeted(
        &rules("5", None),
        vec![Ok(stopped)],
        Vec::new(),
        None,
        probe(),
    );
    assert_eq!(
        (out.done.reason.clone(), out.budget.finished),
        (
            Reason::Interrupted(Signal::TERM, Moment::Attempt),
            vec![(Ended::Unjudged, Admission::Probe)]
        )
    );
}

#[test]
fn the_probe_makes_one_attempt_and_the_breaker_counts_its_end() {
    let budget = ScriptedBudget {
        admission: Some(Admission::Probe),
        ..ScriptedBudget::default()
    };
    let out = run_budgeted(&rules("5", None), exits(&[1]), Vec::new(), None, budget);
    assert_eq!(summary(&out), (1, 1, Reason::Exhausted));
    assert_eq!(out.budget.finished, [(Ended::GaveUp, Admission::Probe)]);
    assert!(out.budget.asked.is_empty(), "no retry, so no token");
}

#[test]
fn the_breaker_counts_successes_and_give_ups_but_not_a_run_a_signal_ended() {
    let out = run_budgeted(
        &rules("5", None),
        exits(&[1, 0]),
        Vec::new(),
        None,
        ScriptedBudget::default(),
    );
    assert_eq!(out.budget.finished, [(Ended::Succeeded, Admission::Closed)]);
    assert_eq!(
        out.budget.admitted, 1,
        "asked once, before the first attempt"
    );
    let out = run_budgeted(
        &rules("2", None),
        exits(&[1, 1]),
        Vec::new(),
        None,
        ScriptedBudget::default(),
    );
    assert_eq!(out.budget.finished, [(Ended::GaveUp, Admission::Closed)]);
    let mut report = report(Termination::Exited(1)).unwrap();
    report.interrupted_by = Some(Signal::INT);
    let out = run_budgeted(
        &rules("5", None),
        vec![Ok(report)],
        Vec::new(),
        None,
        ScriptedBudget::default(),
    );
    assert!(out.budget.finished.is_empty());
}

#[test]
fn the_budget_lengthens_a_wait_or_stops_the_run() {
    let mut rules = rules("5", None);
    rules.deadline = max_time(Duration::from_secs(100));
    let later = Reservation::Granted(Duration::from_secs(30));
    let budget = ScriptedBudget {
        answers: vec![later, Reservation::Refused],
        ..ScriptedBudget::default()
    };
    let out = run_budgeted(&rules, exits(&[1, 1]), Vec::new(), None, budget);
    assert_eq!(
        summary(&out),
        (
            1,
            2,
            Reason::Budget("the retry budget has no token for another in time".into())
        )
    );
    assert_eq!(
        out.budget.admitted, 1,
        "asked once, before the first attempt"
    );
    assert_eq!(
        waits_announced(&out),
        [(Duration::from_secs(30), WaitCause::Budget)]
    );
    // It was asked for a token within what was left of the 100s deadline.
    assert_eq!(
        out.budget.asked,
        [
            Some(Duration::from_secs(100)),
            Some(Duration::from_secs(70))
        ]
    );
}

#[test]
fn no_token_is_taken_for_a_retry_the_deadline_rules_out() {
    let mut rules = rules("5", None);
    rules.deadline = max_time(Duration::from_millis(500));
    let out = run_script(&rules, exits(&[1]));
    let shortfall = past(1_000, WaitCause::Backoff, 500);
    assert_eq!(summary(&out), (1, 1, shortfall));
    assert!(out.budget.asked.is_empty());
}

#[test]
fn the_splay_comes_before_the_first_attempt() {
    let mut rules = rules("2", None);
    rules.splay = Duration::from_millis(700);
    let out = run_script(&rules, exits(&[1, 0]));
    assert_eq!(
        out.slept,
        [Duration::from_millis(700), Duration::from_secs(1)]
    );
    assert_eq!(
        waits_announced(&out)[0],
        (Duration::from_millis(700), WaitCause::Splay)
    );
    assert_eq!(out.events[0], Event::Splay(Duration::from_millis(700)));
}

#[test]
fn a_signal_during_the_splay_ends_the_run_with_no_attempt() {
    let mut rules = rules("2", None);
    rules.splay = Duration::from_millis(700);
    let out = run_with(&rules, Vec::new(), Vec::new(), Some(Signal::TERM));
    assert_eq!(
        summary(&out),
        (143, 0, Reason::Interrupted(Signal::TERM, Moment::Splay))
    );
}

#[test]
fn no_attempt_starts_after_a_wait_that_ended_past_the_deadline() {
    let mut rules = rules("5", None);
    rules.deadline = max_time(Duration::from_secs(3));
    let parts = (ScriptedBudget::default(), RecordedHooks::default());
    let late = Sleeps::Late(Duration::from_secs(4));
    let out = run_parts(&rules, exits(&[3]), Vec::new(), late, parts);
    assert_eq!(
        summary(&out),
        (
            3,
            1,
            Reason::WokeLate(Duration::from_secs(2), DeadlineSource::MaxTime)
        ),
        "the last status, not 124"
    );
    assert_eq!(out.slept, [Duration::from_secs(1)]);
    assert_eq!(out.done.reason.name(), "deadline");
}

#[test]
fn a_splay_that_ended_past_the_deadline_starts_no_attempt() {
    let mut rules = rules("5", None);
    rules.deadline = max_time(Duration::from_secs(3));
    rules.splay = Duration::from_secs(2);
    let parts = (ScriptedBudget::default(), RecordedHooks::default());
    let late = Sleeps::Late(Duration::from_secs(1));
    let out = run_parts(&rules, Vec::new(), Vec::new(), late, parts);
    assert_eq!(
        summary(&out),
        (
            124,
            0,
            Reason::WokeLate(Duration::ZERO, DeadlineSource::MaxTime)
        ),
        "no attempt ran: the run's time limit ended it"
    );
}

#[test]
fn a_rule_limit_ends_the_run_once_spent() {
    let rules = rules_of("5", &[], &["124:max=1", "7"]);
    let out = run_script(&rules, exits(&[124, 124]));
    let (status, attempts, reason) = summary(&out);
    assert_eq!((status, attempts), (124, 2));
    let Reason::NotRetryable(rule) = reason else {
        panic!("{reason:?}")
    };
    assert_eq!(rule.spent.as_deref(), Some("--retry-on 124:max=1"));
    let out = run_script(&rules, exits(&[7, 124, 124]));
    assert_eq!((summary(&out).0, out.done.attempts), (124, 3));
}

mod rule_limits {
    use super::*;
    use proptest::prelude::*;

    /// Attempts that end with each of `ends` in turn, and with 124 once they run out.
    struct Ends(std::vec::IntoIter<u8>);

    impl Attempts for Ends {
        type Held = ();

        fn run(
            &mut self,
            _: Numbering,
            _: Option<Instant>,
        ) -> Result<AttemptReport<()>, SpawnError> {
            report(Termination::Exited(self.0.next().unwrap_or(124)))
        }
    }

    /// How many attempts a run of `rules` makes when its attempts end with `ends`.
    fn attempts_made(rules: &Rules, ends: Vec<u8>) -> u64 {
        let mut clock = FakeClock {
            time: Rc::new(Cell::new(epoch())),
            slept: Vec::new(),
            sleeps: Sleeps::OnTime,
        };
        let parts = Parts {
            job: &mut (),
            waits: &mut Counting(0),
            attempts: &mut Ends(ends.into_iter()),
            clock: &mut clock,
            budget: &mut ScriptedBudget::default(),
            release: &mut Releases::default(),
            hooks: &mut RecordedHooks::default(),
            sink: &mut Vec::new(),
        };
        run(rules, parts).attempts
    }

    proptest! {
        /// Whatever the ends, a run makes no more attempts than `-n` and than one plus the
        /// sum of its rules' limits.
        #[test]
        fn bound_the_attempts(
            ends in proptest::collection::vec(prop_oneof![Just(0u8), Just(1), Just(7), Just(124)], 0..40),
            first in 1u32..4,
            second in 1u32..4,
            limit in 1u64..12,
        ) {
            let retry = [format!("124:max={first}"), format!("1,7:max={second}")];
            let retry: Vec<&str> = retry.iter().map(String::as_str).collect();
            let rules = rules_of(&limit.to_string(), &[], &retry);
            let bound = rules.decide.attempt_bound().unwrap();
            prop_assert_eq!(bound, u64::from(first + second) + 1);
            let made = attempts_made(&rules, ends);
            prop_assert!(made <= limit, "{} attempts, -n {}", made, limit);
            prop_assert!(made <= bound, "{} attempts, bound {}", made, bound);
        }
    }
}
