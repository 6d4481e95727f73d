//! The text view of a run: one line of prose, prefixed `retry:`, for each event worth a line.
//!
//! By default a line for each failed attempt that will be retried, one for each warning, and one
//! when giving up; `-v` adds each attempt's start and a success.

use retry_policy::deadline::DeadlineSource;
use retry_policy::duration::format_duration;
use retry_policy::events::Event;
use retry_policy::exit::Exit;
use retry_policy::outcome::{
    AttemptOutcome, HookEnd, HookOutcome, Moment, Next, Reason, RunEnd, Shortfall, WaitCause,
};
use retry_policy::rules::RuleRef;
use retry_policy::termination::{Termination, TimeLimit};
use retry_process::signals::Signal;
use retry_process::signals::signal::Platform;

/// How the lines of a failed attempt begin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Told {
    /// Each line says which attempt failed, and how.
    Anew,
    /// The transcript (`--hold all`) has just said which attempt failed and how, above its
    /// output: a retry's line says only the wait.
    AboveItsOutput,
}

/// The lines for `event` (none, one, or for an end with a failed report, two), a failed
/// attempt's `told` as it says.
pub(crate) fn lines(event: &Event, verbose: bool, told: Told) -> Vec<String> {
    let line = match event {
        Event::AttemptStart { numbering, .. } if verbose => {
            format!("retry: attempt {numbering} starting")
        }
        Event::AttemptEnd(outcome) => match &outcome.next {
            Next::Retry { wait, cause } => {
                let when = match cause {
                    WaitCause::Budget => ", when the retry budget has a token",
                    WaitCause::Requested => ", as the command asked",
                    WaitCause::Shared => ", as a run sharing the retry budget was asked",
                    _ => "",
                };
                let wait = format_duration(*wait);
                match told {
                    Told::Anew => format!("retry: {}; retrying in {wait}{when}", describe(outcome)),
                    Told::AboveItsOutput => format!("retry: retrying in {wait}{when}"),
                }
            }
            Next::Stop(Reason::Success) if verbose => format!(
                "retry: attempt {} succeeded after {}",
                outcome.numbering,
                format_duration(outcome.duration)
            ),
            Next::Stop(_) => return Vec::new(),
        },
        Event::Splay(wait) if verbose => format!(
            "retry: waiting {} (--splay) before the first attempt",
            format_duration(*wait)
        ),
        Event::Deadline(_, described) if verbose => format!("retry: deadline: {described}"),
        Event::JobWait { job, holder } if verbose => format!(
            "retry: {} is in progress; waiting for it to end (--overlap wait)",
            another_run(job, holder.as_deref())
        ),
        Event::Warning(message) => format!("retry: warning: {message}"),
        Event::HookEnd(end) => match hook_line(end) {
            Some(line) => line,
            None => return Vec::new(),
        },
        Event::Done(end) => return end_lines(end),
        Event::Failed(message) => format!("retry: {message}"),
        _ => return Vec::new(),
    };
    vec![line]
}

/// The run of `job` that holds it, in words: with its `holder` (the run's id) where the store
/// keeps it.
pub(crate) fn another_run(job: &str, holder: Option<&str>) -> String {
    let holder = holder.map_or(String::new(), |holder| format!(" ({holder})"));
    format!("another run of job {job}{holder}")
}

/// What happened to an attempt, in words: "attempt 2/5 died of SIGKILL (status 137)".
pub(crate) fn describe(outcome: &AttemptOutcome) -> String {
    let attempt = format!("attempt {}", outcome.numbering);
    let what = match outcome.termination {
        Termination::TimedOut {
            limit: TimeLimit::Attempt,
            ..
        } => {
            let took = format_duration(outcome.duration);
            format!("{attempt} timed out after {took} (status 124)")
        }
        termination if outcome.unready => {
            format!("{attempt} {}", unready(termination, outcome.unready_by()))
        }
        termination => format!("{attempt} {}", ended(termination)),
    };
    match outcome.reset {
        true => format!(
            "{what} after running {}, so the backoff starts over",
            format_duration(outcome.duration)
        ),
        false => what,
    }
}

/// The lines for the end of a run: why it gave up (nothing after a success), and a report that
/// could not be written.
fn end_lines(end: &RunEnd) -> Vec<String> {
    let status = Exit::of(end).status();
    let mut lines: Vec<String> = give_up_line(end, status).into_iter().collect();
    if let Some(error) = &end.report_error {
        lines.push(format!("retry: {error}; so retry exits {status}"));
    }
    lines
}

/// The wait a deadline could not hold, and whose: "the next wait, 2s,".
fn needed_wait(shortfall: &Shortfall) -> String {
    let wait = format_duration(shortfall.wait);
    match shortfall.cause {
        WaitCause::Requested => format!("the wait the command asked for, {wait},"),
        WaitCause::Budget => format!("the wait for a budget token, {wait},"),
        WaitCause::Shared => {
            format!("the wait a run sharing the retry budget was asked for, {wait},")
        }
        WaitCause::Backoff | WaitCause::Splay => format!("the next wait, {wait},"),
    }
}

/// An attempt whose success status was not a success (`why`), in words that follow "attempt
/// 2/5" or "the last".
fn unready(termination: Termination, why: Option<&RuleRef>) -> String {
    let why = why.map_or(String::new(), |why| format!(" {}", why.unready()));
    format!("exited {}{why}", termination.status())
}

/// How an attempt ended, in words that follow "attempt 2/5" or "the last".
fn ended(termination: Termination) -> String {
    let status = termination.status();
    match termination {
        Termination::Exited(code) => format!("failed with exit status {code}"),
        Termination::Signaled(signal) => {
            format!("died of {} (status {status})", signal.name())
        }
        Termination::TimedOut {
            limit: TimeLimit::Attempt,
            ..
        } => format!("timed out (status {status})"),
        Termination::TimedOut {
            limit: TimeLimit::Deadline,
            ..
        } => format!("was stopped at the run's deadline (status {status})"),
    }
}

/// A warning for a hook that did not succeed; none for one that did, or that died of the signal
/// that ended the run, passed on to it (the run's last line says so). A hook a signal ended the
/// run during is never said to let the run go on.
fn hook_line(end: &HookEnd) -> Option<String> {
    let what = match &end.outcome {
        HookOutcome::Ended(Termination::Exited(0)) => return None,
        HookOutcome::Ended(Termination::Signaled(signal))
            if end.interrupted_by == Some(*signal) =>
        {
            return None;
        }
        HookOutcome::Ended(termination) => ended(*termination),
        HookOutcome::NotRun { why, .. } => format!("did not run: {why}"),
    };
    let goes_on = match end.interrupted_by {
        Some(_) => "",
        None => "; the run goes on as it would without it",
    };
    Some(format!(
        "retry: warning: {} {what}{goes_on}",
        end.hook.flag()
    ))
}

fn give_up_line(end: &RunEnd, status: u8) -> Option<String> {
    let attempts = match end.attempts {
        1 => "1 attempt".to_string(),
        n => format!("{n} attempts"),
    };
    let last = match (end.last, &end.last_unready) {
        (Some(termination), Some(why)) => unready(termination, Some(why)),
        (last, _) => last.map(ended).unwrap_or_default(),
    };
    let exits = match (end.last.map(Termination::status), &end.report_error) {
        (Some(last), None) if last != status => format!(", so retry exits {status}"),
        _ => String::new(),
    };
    Some(match &end.reason {
        Reason::Success => match end.flaky_exit {
            Some(_) => format!(
                "retry: succeeded only after {attempts}, a flaky success; retry exits {status} \
                 (--flaky-exit)"
            ),
            None => return None,
        },
        Reason::BreakerOpen {
            breaker,
            left,
            probing: true,
        } => format!(
            "retry: no attempt: {breaker} is half open, and another run is its probe (its lease \
             ends in {} at most); try again later (status {status})",
            format_duration(*left)
        ),
        Reason::BreakerOpen { breaker, left, .. } => format!(
            "retry: no attempt: {breaker} is open for another {}, after the runs before gave \
             up; try again later (status {status})",
            format_duration(*left)
        ),
        Reason::Overlap(why) => {
            format!("retry: no attempt: {why}; try again later (status {status})")
        }
        Reason::SpawnFailed(_, error) => format!("retry: {error}"),
        Reason::OutputLost(error) => format!(
            "retry: {error}; stopping after {attempts}, as retry cannot vouch for the output"
        ),
        Reason::Exhausted if end.attempts == 1 => {
            format!("retry: giving up: the only attempt allowed {last}{exits}")
        }
        Reason::Exhausted => {
            format!("retry: giving up after {attempts}, all failed; the last {last}{exits}")
        }
        Reason::NotRetryable(refusal) => {
            let code = end.last.map_or(status, Termination::status);
            format!(
                "retry: giving up after {attempts}: exit status {code} {}{exits}",
                refusal.refusal()
            )
        }
        Reason::Deadline(source) if end.attempts == 0 => format!(
            "retry: giving up before any attempt: {} had passed before the run started \
             (status {status})",
            the_deadline(*source)
        ),
        Reason::Deadline(source) => format!(
            "retry: giving up after {attempts}: {} leaves no time for another; the last \
             {last}{exits}",
            the_deadline(*source)
        ),
        Reason::WaitPastDeadline(shortfall) => format!(
            "retry: giving up after {attempts}: {} would end past {}, {} away; the last \
             {last}{exits}",
            needed_wait(shortfall),
            the_deadline(shortfall.source),
            format_duration(shortfall.left)
        ),
        Reason::WokeLate(late, source) if end.attempts == 0 => format!(
            "retry: giving up before any attempt: --splay ended {} past {} (the tool was \
             stopped meanwhile, or the machine was busy)",
            format_duration(*late),
            the_deadline(*source)
        ),
        Reason::WokeLate(late, source) => format!(
            "retry: giving up after {attempts}: the wait ended {} past {} (the tool was stopped \
             meanwhile, or the machine was busy); the last {last}{exits}",
            format_duration(*late),
            the_deadline(*source)
        ),
        Reason::StopRequested => format!(
            "retry: giving up after {attempts}: the command asked not to be retried; the last \
             {last}{exits}"
        ),
        Reason::Budget(refusal) => {
            format!("retry: giving up after {attempts}: {refusal}; the last {last}{exits}")
        }
        Reason::BudgetUnavailable => format!(
            "retry: giving up after {attempts}: the retry budget cannot be used, and its \
             store's fail=closed allows no retry without it; the last {last}{exits}"
        ),
        Reason::Interrupted(signal, moment) => interrupted_line(*signal, *moment, &attempts),
    })
}

/// The deadline that came from `source`, in words: "the --max-time deadline", "the outer retry's
/// deadline (RETRY_DEADLINE)".
fn the_deadline(source: DeadlineSource) -> String {
    match source {
        DeadlineSource::MaxTime => "the --max-time deadline".into(),
        source => source.to_string(),
    }
}

fn interrupted_line(signal: Signal, moment: Moment, attempts: &str) -> String {
    let signal = signal.name();
    match moment {
        Moment::Splay => format!("retry: stopped by {signal} during --splay, before any attempt"),
        Moment::Attempt => {
            format!("retry: stopped by {signal} after {attempts}; passed it on to the command")
        }
        Moment::Keyboard => format!(
            "retry: stopped after {attempts}: the attempt died of {signal} typed at the \
             terminal, so retry's whole job stops too"
        ),
        Moment::Output => {
            format!("retry: stopped by {signal} after {attempts}, while writing the held output")
        }
        Moment::Wait => {
            format!("retry: stopped by {signal} after {attempts}, while waiting to retry")
        }
        Moment::Hook(hook) => format!(
            "retry: stopped by {signal} after {attempts}, while running {}; passed it on to it",
            hook.flag()
        ),
        Moment::Budget => format!(
            "retry: stopped by {signal} after {attempts}, while consulting the retry budget"
        ),
        Moment::Job => format!(
            "retry: stopped by {signal} after {attempts}, while waiting for its job's turn \
             (another run of the job, or the store that keeps its terms)"
        ),
        Moment::History => {
            format!("retry: stopped by {signal} after {attempts}, while keeping its job's history")
        }
        Moment::Report => {
            format!(
                "retry: stopped by {signal} after {attempts}, while writing the run's report \
                 files"
            )
        }
    }
}
