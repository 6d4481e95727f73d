//! The JSON view of a run: one object per line, with an `event` key. These types are the stable
//! schema the reference documents (a test holds the two together); keys that do not apply are
//! left out.

use serde::Serialize;

use retry_policy::attempts::AttemptLimit;
use retry_policy::deadline::DeadlineSource;
use retry_policy::duration::to_millis;
use retry_policy::events::Event;
use retry_policy::exit::Exit;
use retry_policy::outcome::{AttemptOutcome, Hook, Next, Reason, WaitCause};
use retry_policy::run_id::RunId;
use retry_process::signals::Signal;
use retry_process::signals::signal::{Name, Platform};

/// One line of the JSON event stream.
#[derive(Debug, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub(crate) enum JsonEvent<'a> {
    AttemptStart {
        attempt: u64,
        attempt_since_reset: u64,
        max_attempts: AttemptLimit,
        offset_ms: f64,
        depth: u32,
        #[serde(skip_serializing_if = "Option::is_none")]
        run_id: Option<RunId>,
    },
    AttemptEnd {
        attempt: u64,
        status: u8,
        duration_ms: f64,
        verdict: &'static str,
        timed_out: bool,
        rule: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        pattern: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        rule_spent: Option<&'a str>,
        #[serde(skip_serializing_if = "is_false")]
        reset: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        signal: Option<Name>,
        #[serde(skip_serializing_if = "Option::is_none")]
        requested_wait_ms: Option<f64>,
        #[serde(skip_serializing_if = "is_false")]
        requested_stop: bool,
    },
    Wait {
        before_attempt: u64,
        wait_ms: f64,
        cause: WaitCause,
    },
    Deadline {
        deadline_ms: f64,
        source: DeadlineSource,
    },
    JobWait {
        job: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        holder: Option<&'a str>,
    },
    Warning {
        message: &'a str,
    },
    Error {
        message: &'a str,
    },
    HookEnd {
        hook: Hook,
        status: u8,
        duration_ms: f64,
    },
    Done {
        status: u8,
        attempts: u64,
        reason: &'static str,
        elapsed_ms: f64,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        signal: Option<Name>,
        #[serde(skip_serializing_if = "Option::is_none")]
        open_for_ms: Option<f64>,
        /// With `deadline`: where the deadline that ended the run came from.
        #[serde(skip_serializing_if = "Option::is_none")]
        deadline: Option<DeadlineSource>,
        /// With `deadline`, when a wait would have passed it: whose wait it was.
        #[serde(skip_serializing_if = "Option::is_none")]
        wait_cause: Option<WaitCause>,
        #[serde(skip_serializing_if = "Option::is_none")]
        report_error: Option<&'a str>,
        /// Succeeded only after failed attempts.
        #[serde(skip_serializing_if = "is_false")]
        flaky: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        run_id: Option<RunId>,
    },
}

/// The reference's table of events (docs/reference.md, which `cargo xtask generate` writes from
/// this): each event's name, and its keys in words. A test holds the keys to what the types
/// above write.
pub(crate) const EVENTS: [(&str, &str); 9] = [
    (
        "attempt_start",
        "`attempt` (from 1), `attempt_since_reset`, `max_attempts` (a number or \
         `\"unlimited\"`), `offset_ms` (from the start of the run), `depth` (1 for the \
         outermost run, one more inside each retry's attempt), `run_id` (the run's \
         `RETRY_RUN_ID`)",
    ),
    (
        "attempt_end",
        "`attempt`, `status` (0-255; 128+N for signal N, 124 for a time limit), \
         `duration_ms`, `verdict` (`\"success\"`, `\"retry\"` or `\"stop\"`), `timed_out` \
         (true when `--timeout` or `--max-time` ended it), `rule` (the rule that decided, as \
         `--plan` names it: `\"--stop-on 2\"`, `\"--preset curl: ...\"`, or a default's \
         words); `pattern` (its output pattern) when that rule reads the output; `rule_spent` \
         (a limited rule that named the end but had given all its retries, so that `rule`, \
         below it, decided); `signal` (a \
         name such as `\"SIGTERM\"`) when it died of a signal; `reset` (true) when it started \
         the backoff over; `requested_wait_ms` when the command asked for a wait (cut to \
         `RETRY_MAX_REQUESTED_WAIT`), or `requested_stop` (true) when it asked to stop",
    ),
    (
        "wait",
        "`before_attempt`, `wait_ms`, `cause` (`\"splay\"` before the first attempt, \
         `\"backoff\"`, `\"requested\"` when the command asked for a longer wait, \
         `\"shared\"` when a run sharing the budget was asked for one that lasts longer, or \
         `\"budget\"` when the budget had no token sooner)",
    ),
    (
        "deadline",
        "before the first attempt, when the run's deadline came from outside its command \
         line: `deadline_ms` (the time the run has), `source` (`\"outer_run\"`, \
         `\"gitlab_job\"`, `\"buildkite_job\"` or `\"schedule\"` (the next slot of the \
         job's schedule); `\"max_time\"` is never said, as \
         `--max-time` is on the command line)",
    ),
    (
        "job_wait",
        "before the first attempt, when another run of the job holds it and the job's terms \
         say to wait (`--overlap wait`), as the wait begins: `job` (as `--job` gave it), \
         `holder` (on a shared store, the `RETRY_RUN_ID` of the run that holds it)",
    ),
    (
        "hook_end",
        "`hook` (`\"on_retry\"` or `\"on_give_up\"`), `status` (as for an attempt: 124 when \
         it timed out; 127 or 126 when the shell could not run; 124 when `--max-time` left it \
         no time), `duration_ms`",
    ),
    (
        "warning",
        "`message`: something the user should know (a budget or budget store that could not \
         be used, which with the store's `?fail=closed` means no more retries; output still \
         held by a process that left the attempt's group; a group that outlived SIGKILL)",
    ),
    (
        "error",
        "`message`: what the tool itself found wrong before any attempt (bad usage, a \
         `--report` it cannot use, stdin it could not read); the done event follows, with \
         reason `\"error\"` and status 125",
    ),
    (
        "done",
        "`status` (the tool's exit code; 128+N when stopped by signal N), `attempts`, \
         `reason` (`\"success\"`, `\"exhausted\"`, `\"not_retryable\"`, `\"spawn_failed\"`, \
         `\"deadline\"`, `\"interrupted\"`, `\"budget\"`, `\"output_lost\"`, \
         `\"stop_requested\"`, `\"breaker_open\"` (no attempt: the budget's breaker was \
         open), `\"overlap\"` (no attempt: another run of the job was in progress), \
         `\"error\"`), `elapsed_ms`, `run_id` (the run's `RETRY_RUN_ID`; none with \
         `\"error\"`); `error` (text) with `\"spawn_failed\"`, \
         `\"output_lost\"` and `\"error\"`; `signal` (a name) with `\"interrupted\"`; \
         `open_for_ms` with `\"breaker_open\"`, how long it stays open yet; `deadline` with \
         `\"deadline\"`, where the limit came from (`\"max_time\"`, `\"outer_run\"`, \
         `\"gitlab_job\"`, `\"buildkite_job\"`, `\"schedule\"`), and `wait_cause` when a \
         wait would have \
         passed it, whose wait (`\"backoff\"`, `\"requested\"`, `\"budget\"`, `\"shared\"`); \
         `report_error` (text) when `--report` could not be written, which makes `status` \
         125; `flaky` (true) when a `\"success\"` came only after failed attempts (`status` \
         is then `--flaky-exit`'s, if given)",
    ),
];

fn is_false(value: &bool) -> bool {
    !value
}

/// The objects for `event` of the run `run_id`: an attempt that will be retried gives its
/// `attempt_end`, then the `wait` before the next attempt.
pub(crate) fn objects(event: &Event, run_id: Option<RunId>) -> Vec<JsonEvent<'_>> {
    match event {
        Event::AttemptStart { numbering, at } => vec![JsonEvent::AttemptStart {
            attempt: numbering.attempt,
            attempt_since_reset: numbering.since_reset,
            max_attempts: numbering.limit,
            offset_ms: to_millis(*at),
            depth: numbering.depth,
            run_id,
        }],
        Event::AttemptEnd(outcome) => {
            let mut objects = vec![attempt_end(outcome)];
            if let Next::Retry { wait, cause } = outcome.next {
                objects.push(JsonEvent::Wait {
                    before_attempt: outcome.numbering.attempt + 1,
                    wait_ms: to_millis(wait),
                    cause,
                });
            }
            objects
        }
        Event::Splay(wait) => vec![JsonEvent::Wait {
            before_attempt: 1,
            wait_ms: to_millis(*wait),
            cause: WaitCause::Splay,
        }],
        Event::Deadline(deadline, _) => vec![JsonEvent::Deadline {
            deadline_ms: to_millis(deadline.left),
            source: deadline.source,
        }],
        Event::JobWait { job, holder } => vec![JsonEvent::JobWait {
            job,
            holder: holder.as_deref(),
        }],
        Event::Warning(message) => vec![JsonEvent::Warning { message }],
        Event::HookEnd(end) => vec![JsonEvent::HookEnd {
            hook: end.hook,
            status: end.status(),
            duration_ms: to_millis(end.duration),
        }],
        Event::Done(end) => vec![JsonEvent::Done {
            status: Exit::of(end).status(),
            attempts: end.attempts,
            reason: end.reason.name(),
            elapsed_ms: to_millis(end.elapsed),
            error: end.reason.error(),
            signal: match end.reason {
                Reason::Interrupted(signal, _) => Some(signal.name()),
                _ => None,
            },
            open_for_ms: match end.reason {
                Reason::BreakerOpen { left, .. } => Some(to_millis(left)),
                _ => None,
            },
            deadline: end.reason.deadline(),
            wait_cause: match end.reason {
                Reason::WaitPastDeadline(shortfall) => Some(shortfall.cause),
                _ => None,
            },
            report_error: end.report_error.as_deref(),
            flaky: end.flaky(),
            run_id,
        }],
        Event::Failed(message) => vec![
            JsonEvent::Error { message },
            JsonEvent::Done {
                status: Exit::ToolFailed.status(),
                attempts: 0,
                reason: "error",
                elapsed_ms: 0.0,
                error: Some(message),
                signal: None,
                open_for_ms: None,
                deadline: None,
                wait_cause: None,
                report_error: None,
                flaky: false,
                run_id,
            },
        ],
    }
}

fn attempt_end(outcome: &AttemptOutcome) -> JsonEvent<'_> {
    JsonEvent::AttemptEnd {
        attempt: outcome.numbering.attempt,
        status: outcome.termination.status(),
        duration_ms: to_millis(outcome.duration),
        verdict: outcome.next.verdict(),
        timed_out: outcome.termination.time_limit().is_some(),
        rule: &outcome.rule.described,
        pattern: outcome.rule.pattern.as_deref(),
        rule_spent: outcome.rule.spent.as_deref(),
        reset: outcome.reset,
        signal: outcome.termination.signal().map(Signal::name),
        requested_wait_ms: outcome.requested_wait().map(to_millis),
        requested_stop: outcome.requested_stop(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::{object_keys, row_keys};
    use retry_policy::attempts::Numbering;
    use retry_policy::deadline::Deadline;
    use retry_policy::matching::OutputMatch;
    use retry_policy::outcome::{Hook, HookEnd, HookOutcome, Moment, RunEnd, WaitCause};
    use retry_policy::requested::Requested;
    use retry_policy::termination::{Termination, TimeLimit};
    use std::time::Duration;

    /// Every event, with every key it can have.
    fn every_event() -> Vec<Event> {
        let numbering = Numbering {
            attempt: 1,
            since_reset: 1,
            limit: AttemptLimit::Unlimited,
            depth: 2,
        };
        let outcome = AttemptOutcome {
            numbering,
            termination: Termination::TimedOut {
                limit: TimeLimit::Attempt,
                signal: Some(Signal::KILL),
            },
            duration: Duration::from_millis(3),
            matched: OutputMatch::default(),
            rule: retry_policy::rules::RuleRef {
                described: "--retry-on stderr:503".into(),
                pattern: Some("503".into()),
                default: false,
                spent: Some("--retry-on 503:max=2".into()),
            },
            reset: true,
            requested: Some(Requested::Wait(Duration::from_secs(2))),
            unready: false,
            next: Next::Retry {
                wait: Duration::from_secs(1),
                cause: WaitCause::Backoff,
            },
        };
        let end = RunEnd {
            attempts: 1,
            last: Some(Termination::Exited(0)),
            last_unready: None,
            reason: Reason::Interrupted(Signal::TERM, Moment::Attempt),
            elapsed: Duration::ZERO,
            report_error: Some("disk full".into()),
            flaky_exit: None,
        };
        let lost = RunEnd {
            reason: Reason::OutputLost("no room".into()),
            ..end.clone()
        };
        let kept_out = RunEnd {
            attempts: 0,
            reason: Reason::BreakerOpen {
                breaker: "the breaker".into(),
                left: Duration::from_secs(30),
                probing: false,
            },
            ..end.clone()
        };
        let flaky = RunEnd {
            attempts: 2,
            reason: Reason::Success,
            ..end.clone()
        };
        let past = RunEnd {
            reason: Reason::WaitPastDeadline(retry_policy::outcome::Shortfall {
                wait: Duration::from_secs(15),
                cause: WaitCause::Budget,
                left: Duration::from_secs(9),
                source: retry_policy::deadline::DeadlineSource::OuterRun,
            }),
            ..end.clone()
        };
        let stopped = AttemptOutcome {
            requested: Some(Requested::Stop),
            next: Next::Stop(Reason::StopRequested),
            ..outcome.clone()
        };
        vec![
            Event::AttemptStart {
                numbering,
                at: Duration::ZERO,
            },
            Event::AttemptEnd(outcome),
            Event::AttemptEnd(stopped),
            Event::Warning("careful".into()),
            Event::JobWait {
                job: "nightly".into(),
                holder: Some("the other run".into()),
            },
            Event::Deadline(
                Deadline {
                    left: Duration::from_secs(5),
                    source: DeadlineSource::GitlabJob,
                },
                "5s, from the GitLab job's time limit".into(),
            ),
            Event::HookEnd(HookEnd {
                hook: Hook::OnRetry,
                outcome: HookOutcome::Ended(Termination::Exited(3)),
                duration: Duration::from_millis(5),
                interrupted_by: None,
            }),
            Event::Done(end),
            Event::Done(lost),
            Event::Done(kept_out),
            Event::Done(flaky),
            Event::Done(past),
            Event::Failed("no such flag".into()),
        ]
    }

    #[test]
    fn the_reference_lists_every_key_of_every_event() {
        let mut seen: std::collections::BTreeMap<String, Vec<String>> = Default::default();
        for event in every_event() {
            for object in objects(&event, Some(RunId::from_random([7; 16]))) {
                let value = serde_json::to_value(&object).unwrap();
                let name = value["event"].as_str().unwrap().to_string();
                let keys = seen.entry(name).or_default();
                keys.extend(object_keys(&value, &[]));
                keys.sort();
                keys.dedup();
            }
        }
        assert_eq!(seen.len(), EVENTS.len(), "{seen:?}");
        for (event, keys) in seen {
            assert_eq!(
                keys,
                row_keys(&event),
                "docs/reference.md's row for {event}"
            );
        }
    }
}
