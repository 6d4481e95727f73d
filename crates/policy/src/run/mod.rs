//! The decision-and-wait loop: run an attempt, decide, wait, and again.
//!
//! It owns the order of things (no wait after the last attempt, no attempt after a signal or
//! past the deadline, a command that cannot start is never retried) and the one decision per
//! attempt ([`Next`]), but none of the mechanisms: attempts, time, waits, the budget, held output
//! and reporting all come in through the traits below and their kin, so the loop is tested with
//! fakes that never sleep.

mod ports;

use std::time::{Duration, Instant};

use crate::attempts::{AttemptLimit, Numbering};
use crate::deadline::{GRACE, Limit};
use crate::duration::format_duration;
use crate::events::{Event, EventSink};
use crate::outcome::{
    AttemptOutcome, Ended, Hook, Moment, Next, Reason, RunEnd, Shortfall, WaitCause,
};
use crate::precedence::{self, Obstacle};
use crate::requested::Requested;
use crate::rules::{Decision, RuleList, RuleRef, RuleUses};
use crate::signal::Signal;
use crate::termination::{Termination, TimeLimit};
use crate::verdict::Verdict;

pub use ports::{
    Admission, AttemptOutput, AttemptReport, Attempts, Clock, HookCall, Hooks, JobGate, JobTaken,
    Parts, Release, Released, Reservation, RetryBudget, SpawnError, TokenRequest, Waits,
};

/// The fixed rules of one run.
#[derive(Clone, Debug)]
pub struct Rules {
    /// How many attempts may be made (since the last reset).
    pub limit: AttemptLimit,
    /// What each end and output means: the rules, the first that holds deciding.
    pub decide: RuleList,
    /// When the whole run, attempts and waits together, must end, and where that limit came
    /// from (`--max-time`, an outer run's, a CI job's).
    pub deadline: Option<Limit>,
    /// `--reset-after`: a failed attempt that ran this long starts the backoff and the count over.
    pub reset_after: Option<Duration>,
    /// The wait before the first attempt, drawn from `--splay` (zero: none).
    pub splay: Duration,
    /// `RETRY_MAX_REQUESTED_WAIT`: the longest wait a command's request may set.
    pub max_requested_wait: Duration,
    /// The run's depth among nested retries, which each attempt is told.
    pub depth: u32,
    /// `--flaky-exit`: the status of a run that succeeded only after failed attempts.
    pub flaky_exit: Option<u8>,
}

/// How the attempts ended: which was the last made (none before the first), how it ended, and
/// why the run stops.
type Ending = (Option<Numbering>, Option<Last>, Reason);

/// How the last attempt ended, and why its success status was not a success, if it was not.
type Last = (Termination, Option<RuleRef>);

/// Run attempts until success or giving up, waiting between them as the waits say, taking a
/// budget token for each retry, releasing each attempt's held output as its outcome says, and
/// running the hooks; returns how the run ended, for the caller to report once the report is
/// written.
pub fn run<W, A, C, B, R, H, S, J>(
    rules: &Rules,
    mut parts: Parts<'_, W, A, C, B, R, H, S, J>,
) -> RunEnd
where
    W: Waits,
    A: Attempts,
    C: Clock,
    B: RetryBudget,
    R: Release<A::Held>,
    H: Hooks,
    S: EventSink,
    J: JobGate,
{
    let start = parts.clock.now();
    let deadline = rules.deadline;
    let (admission, (last_attempt, last, mut reason)) =
        match before_the_first(rules, &mut parts, deadline) {
            Ok(Admission::Probe) => {
                // The breaker's probe makes one attempt, whose end decides for every run.
                let probe = Rules {
                    limit: AttemptLimit::AtMost(std::num::NonZeroU64::MIN),
                    ..rules.clone()
                };
                (
                    Admission::Probe,
                    attempt_until_the_end(&probe, &mut parts, start, deadline),
                )
            }
            Ok(admission) => (
                admission,
                attempt_until_the_end(rules, &mut parts, start, deadline),
            ),
            Err(reason) => (Admission::Closed, (None, None, reason)),
        };
    // A probe gives its lease back on every end it sees; any other run tells the breaker its
    // end only if it made an attempt.
    let ended = reason.ended();
    let tells =
        admission == Admission::Probe || (last_attempt.is_some() && ended != Ended::Unjudged);
    if tells {
        let room = deadline.map(|deadline| deadline.left(parts.clock.now()) + GRACE);
        let sink = &mut *parts.sink;
        let warn = &mut |message| sink.emit(&Event::Warning(message));
        if let Some(signal) = parts.budget.finish(ended, admission, room, warn) {
            reason = Reason::Interrupted(signal, Moment::Budget);
        }
    }
    let attempts = last_attempt.map_or(0, |numbering| numbering.attempt);
    if reason.gives_up() {
        let status = match &reason {
            Reason::SpawnFailed(failure, _) => crate::exit::Exit::from(*failure).status(),
            _ => last
                .as_ref()
                .map_or(0, |(termination, _)| termination.status()),
        };
        let call = HookCall {
            hook: Hook::OnGiveUp,
            numbering: last_attempt,
            status,
            next_wait: None,
            reason: Some(reason.name()),
        };
        if let Some(signal) = run_hook(&call, parts.hooks, parts.sink, at(deadline)) {
            reason = Reason::Interrupted(signal, Moment::Hook(Hook::OnGiveUp));
        }
    }
    let flaky = reason == Reason::Success && attempts > 1;
    RunEnd {
        attempts,
        last: last.as_ref().map(|(termination, _)| *termination),
        last_unready: last.and_then(|(_, unready)| unready),
        reason,
        elapsed: parts.clock.now().saturating_duration_since(start),
        report_error: None,
        flaky_exit: rules.flaky_exit.filter(|_| flaky),
    }
}

/// When `deadline` is, if there is one.
fn at(deadline: Option<Limit>) -> Option<Instant> {
    deadline.map(|deadline| deadline.at)
}

/// Run the hook `call` names, if one is given, and report how it ended; returns the signal that
/// ends the run if one arrived while it ran.
fn run_hook(
    call: &HookCall,
    hooks: &mut impl Hooks,
    sink: &mut impl EventSink,
    deadline: Option<Instant>,
) -> Option<Signal> {
    let end = hooks.run(call, deadline)?;
    sink.emit(&Event::HookEnd(end.clone()));
    end.interrupted_by
}

/// What comes before the first attempt: the run's deadline and its job, whichever the
/// precedence table puts first deciding when both would keep it out (a deadline that has
/// passed takes no hold); then `--splay`'s wait, then the budget's word on whether the run may
/// start (its breaker); why the run ends before it, if it does.
fn before_the_first<W, A, C, B, R, H, S, J>(
    rules: &Rules,
    parts: &mut Parts<'_, W, A, C, B, R, H, S, J>,
    deadline: Option<Limit>,
) -> Result<Admission, Reason>
where
    C: Clock,
    B: RetryBudget,
    S: EventSink,
    J: JobGate,
{
    let (clock, budget, sink) = (&mut *parts.clock, &mut *parts.budget, &mut *parts.sink);
    let passed = |clock: &C| {
        deadline
            .filter(|deadline| deadline.left(clock.now()).is_zero())
            .map(|deadline| (Obstacle::Deadline, Reason::Deadline(deadline.source)))
    };
    let mut found: Vec<(Obstacle, Reason)> = passed(clock).into_iter().collect();
    if found.is_empty() {
        let tell = &mut |event: Event| sink.emit(&event);
        match parts.job.take(at(deadline), tell) {
            JobTaken::Go => {}
            JobTaken::Busy(why) => found.push((Obstacle::Job, Reason::Overlap(why))),
            JobTaken::Interrupted(signal) => {
                found.push((Obstacle::Signal, Reason::Interrupted(signal, Moment::Job)))
            }
        }
        // A wait for the job that ran to the deadline ends as the deadline does.
        found.extend(passed(clock));
    }
    if let Some(reason) = precedence::decide(found) {
        return Err(reason);
    }
    if !rules.splay.is_zero() {
        sink.emit(&Event::Splay(rules.splay));
        if let Some(signal) = clock.sleep(rules.splay) {
            return Err(Reason::Interrupted(signal, Moment::Splay));
        }
        if let Some(reason) = woke_late(clock, deadline) {
            return Err(reason);
        }
    }
    let room = deadline.map(|deadline| deadline.left(clock.now()));
    match budget.admit(room, &mut |message| sink.emit(&Event::Warning(message))) {
        Admission::Open(left) => Err(Reason::BreakerOpen {
            breaker: budget.breaker(),
            left,
            probing: false,
        }),
        Admission::Probing(left) => Err(Reason::BreakerOpen {
            breaker: budget.breaker(),
            left,
            probing: true,
        }),
        Admission::Interrupted(signal) => Err(Reason::Interrupted(signal, Moment::Budget)),
        Admission::Probe => {
            sink.emit(&Event::Warning(format!(
                "{} is half open: this run is its probe, and makes one attempt, whose end \
                 closes it or opens it again",
                budget.breaker()
            )));
            Ok(Admission::Probe)
        }
        Admission::Closed => Ok(Admission::Closed),
    }
}

/// The attempts, and the waits and retry hooks between them, from `start` up to the end of the
/// run, which `deadline` bounds.
fn attempt_until_the_end<W, A, C, B, R, H, S, J>(
    rules: &Rules,
    parts: &mut Parts<'_, W, A, C, B, R, H, S, J>,
    start: Instant,
    deadline: Option<Limit>,
) -> Ending
where
    W: Waits,
    A: Attempts,
    C: Clock,
    B: RetryBudget,
    R: Release<A::Held>,
    H: Hooks,
    S: EventSink,
{
    let (waits, attempts, clock) = (&mut *parts.waits, &mut *parts.attempts, &mut *parts.clock);
    let (budget, release) = (&mut *parts.budget, &mut *parts.release);
    let (hooks, sink) = (&mut *parts.hooks, &mut *parts.sink);
    let (mut attempt, mut since_reset) = (0, 0);
    let mut uses = RuleUses::default();
    loop {
        attempt += 1;
        since_reset += 1;
        let numbering = Numbering {
            attempt,
            since_reset,
            limit: rules.limit,
            depth: rules.depth,
        };
        sink.emit(&Event::AttemptStart {
            numbering,
            at: clock.now().saturating_duration_since(start),
        });
        let began = clock.now();
        let mut report = match attempts.run(numbering, at(deadline)) {
            Ok(report) => report,
            Err(err) => {
                return (
                    Some(numbering),
                    None,
                    Reason::SpawnFailed(err.failure, err.message),
                );
            }
        };
        let duration = clock.now().saturating_duration_since(began);
        warn_about_leftovers(sink, attempt, &report);
        let requested = report
            .requested
            .map(|requested| capped(requested, rules.max_requested_wait));
        let problems = std::mem::take(&mut report.request_problems);
        let status = report.termination.status();
        let decision = rules
            .decide
            .decide(status, report.output.matched.matched, &mut uses);
        let reset = decision.verdict == Verdict::Retry
            && rules.reset_after.is_some_and(|after| duration >= after);
        if reset {
            since_reset = 0;
            waits.start_over();
        }
        let next = match stop_reason(rules, since_reset, &mut report, &decision, deadline) {
            Some(reason) => Next::Stop(reason),
            None => match requested_wait(attempt, requested, problems, sink) {
                Ok(least) => {
                    let asked = (least, rules.max_requested_wait);
                    schedule_retry(waits, budget, sink, clock.now(), deadline, asked)
                }
                Err(reason) => Next::Stop(reason),
            },
        };
        let held = std::mem::take(&mut report.output.held);
        let mut outcome = AttemptOutcome {
            numbering,
            termination: report.termination,
            duration,
            matched: report.output.matched,
            rule: decision.rule,
            reset,
            requested: requested.map(|(requested, _)| requested),
            unready: decision.unready,
            next,
        };
        match release.release(held, &outcome, at(deadline)) {
            Released::Done => {}
            Released::Interrupted(signal) => {
                outcome.next = Next::Stop(Reason::Interrupted(signal, Moment::Output));
            }
            Released::Failed(message) => outcome.next = Next::Stop(Reason::OutputLost(message)),
        }
        sink.emit(&Event::AttemptEnd(outcome.clone()));
        let last = Some((outcome.termination, outcome.unready_by().cloned()));
        let (wait, cause) = match outcome.next {
            Next::Stop(reason) => return (Some(numbering), last, reason),
            Next::Retry { wait, cause } => (wait, cause),
        };
        let call = HookCall {
            hook: Hook::OnRetry,
            numbering: Some(numbering),
            status: outcome.termination.status(),
            next_wait: Some(wait),
            reason: None,
        };
        if let Some(signal) = run_hook(&call, hooks, sink, at(deadline)) {
            return (
                Some(numbering),
                last,
                Reason::Interrupted(signal, Moment::Hook(Hook::OnRetry)),
            );
        }
        // The hook's time counts: a wait that now ends at or past the deadline is not waited.
        if let Some(deadline) = deadline
            && wait >= deadline.left(clock.now())
        {
            let reason = past(deadline, clock.now(), wait, cause);
            return (Some(numbering), last, reason);
        }
        if let Some(signal) = clock.sleep(wait) {
            return (
                Some(numbering),
                last,
                Reason::Interrupted(signal, Moment::Wait),
            );
        }
        if let Some(reason) = woke_late(clock, deadline) {
            return (Some(numbering), last, reason);
        }
    }
}

/// Why no attempt may start after a wait that ended at or past `deadline`: every wait (the
/// backoff's, a requested one, `--splay`, the budget's) ends late when the tool was stopped
/// meanwhile (Ctrl-Z, a frozen cgroup) or the machine was too busy to wake it, and an attempt
/// started then would only be cut at once.
fn woke_late(clock: &impl Clock, deadline: Option<Limit>) -> Option<Reason> {
    let now = clock.now();
    deadline
        .filter(|deadline| now >= deadline.at)
        .map(|deadline| Reason::WokeLate(now - deadline.at, deadline.source))
}

/// Say what an attempt left behind: output still held by a process that left its group, or
/// members of its group that outlived SIGKILL.
fn warn_about_leftovers<H>(sink: &mut impl EventSink, attempt: u64, report: &AttemptReport<H>) {
    if report.output.cut_short {
        sink.emit(&Event::Warning(format!(
            "attempt {attempt}: a process that left its process group still holds its output; \
             stopped reading it --kill-after after the command ended, keeping what was read"
        )));
    }
    if let Some(stream) = report.output.stalled {
        sink.emit(&Event::Warning(format!(
            "attempt {attempt}: the reader of retry's {stream} stopped reading, so the rest of the \
             attempt's output was not passed on to it"
        )));
    }
    if report.lingering {
        sink.emit(&Event::Warning(format!(
            "attempt {attempt}: its process group still had members --kill-after after \
             SIGKILL (a zombie whose parent left the group?); no longer waiting for them"
        )));
    }
}

/// What the command's request makes of a retry after attempt `attempt`: the least wait before
/// it, or the reason to stop. Only here, where a request matters, is it said that one could not
/// be read (`problems`) or was cut.
fn requested_wait(
    attempt: u64,
    requested: Option<(Requested, Option<Duration>)>,
    problems: Vec<String>,
    sink: &mut impl EventSink,
) -> Result<Duration, Reason> {
    for problem in problems {
        sink.emit(&Event::Warning(problem));
    }
    match requested {
        None => Ok(Duration::ZERO),
        Some((Requested::Stop, _)) => Err(Reason::StopRequested),
        Some((Requested::Wait(wait), cut_from)) => {
            if let Some(asked) = cut_from {
                sink.emit(&Event::Warning(format!(
                    "attempt {attempt} asked to wait {}, longer than RETRY_MAX_REQUESTED_WAIT; \
                     waiting {} instead",
                    format_duration(asked),
                    format_duration(wait)
                )));
            }
            Ok(wait)
        }
    }
}

/// `requested`, a wait cut to `most`; and the wait asked for when it was cut.
fn capped(requested: Requested, most: Duration) -> (Requested, Option<Duration>) {
    match requested {
        Requested::Wait(wait) if wait > most => (Requested::Wait(most), Some(wait)),
        requested => (requested, None),
    }
}

/// The wait before a retry: the backoff's, or the command's `requested` one when that is
/// longer, or longer still when the budget's token comes later or a wait another run was asked
/// for holds the retry (no longer than `most`, the longest a request may make a wait: what a
/// store holds is not trusted further); or a stop when the wait would end at or past the
/// deadline, which names the wait that would, or when the budget has no token at all. No token
/// is taken for a retry the wait already rules out.
fn schedule_retry(
    waits: &mut impl Waits,
    budget: &mut impl RetryBudget,
    sink: &mut impl EventSink,
    now: Instant,
    deadline: Option<Limit>,
    (requested, most): (Duration, Duration),
) -> Next {
    let backoff = waits.next_wait();
    let (wait, cause) = match requested > backoff {
        true => (requested, WaitCause::Requested),
        false => (backoff, WaitCause::Backoff),
    };
    if let Some(deadline) = deadline
        && wait >= deadline.left(now)
    {
        return Next::Stop(past(deadline, now, wait, cause));
    }
    // A wait the command asked for holds for every run that shares the budget.
    let request = TokenRequest {
        latest: deadline.map(|deadline| deadline.left(now)),
        asked: (!requested.is_zero()).then_some(requested),
        longest_hold: most,
    };
    let warn = &mut |message| sink.emit(&Event::Warning(message));
    match budget.reserve(request, warn) {
        Reservation::PastDeadline(needed, cause) => match deadline {
            Some(deadline) => Next::Stop(past(deadline, now, needed.max(wait), cause)),
            None => Next::Stop(Reason::Budget(budget.refusal())),
        },
        Reservation::Refused => Next::Stop(Reason::Budget(budget.refusal())),
        Reservation::Unavailable => Next::Stop(Reason::BudgetUnavailable),
        Reservation::Interrupted(signal) => Next::Stop(Reason::Interrupted(signal, Moment::Budget)),
        Reservation::Granted(delay) if delay > wait => Next::Retry {
            wait: delay,
            cause: WaitCause::Budget,
        },
        Reservation::Held(delay) if delay.min(most) > wait => Next::Retry {
            wait: delay.min(most),
            cause: WaitCause::Shared,
        },
        Reservation::Granted(_) | Reservation::Held(_) => Next::Retry { wait, cause },
    }
}

/// Why a run whose next `wait`, `cause`'s, would end at or past `deadline` at `now` stops.
fn past(deadline: Limit, now: Instant, wait: Duration, cause: WaitCause) -> Reason {
    Reason::WaitPastDeadline(Shortfall {
        wait,
        cause,
        left: deadline.left(now),
        source: deadline.source,
    })
}

/// Why the run stops after this attempt, if it does, by how the run was stopped, what became of
/// the output, the attempt's time limit, and the rules' decision; `since_reset` attempts count
/// against the limit.
fn stop_reason<H>(
    rules: &Rules,
    since_reset: u64,
    report: &mut AttemptReport<H>,
    decision: &Decision,
    deadline: Option<Limit>,
) -> Option<Reason> {
    if let Some(signal) = report.interrupted_by {
        let moment = match report.from_keyboard {
            true => Moment::Keyboard,
            false => Moment::Attempt,
        };
        return Some(Reason::Interrupted(signal, moment));
    }
    if let Some(failure) = report.output.failure.take() {
        return Some(Reason::OutputLost(failure));
    }
    if let Some(deadline) = deadline
        && report.termination.time_limit() == Some(TimeLimit::Deadline)
    {
        return Some(Reason::Deadline(deadline.source));
    }
    match decision.verdict {
        Verdict::Success => Some(Reason::Success),
        Verdict::Stop => Some(Reason::NotRetryable(decision.rule.clone())),
        Verdict::Retry if !rules.limit.allows_another(since_reset) => Some(Reason::Exhausted),
        Verdict::Retry => None,
    }
}

#[cfg(test)]
mod combinations;
#[cfg(test)]
mod tests;
