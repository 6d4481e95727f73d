//! The retry budget on a Redis (or Valkey) server, shared by a whole fleet.
//!
//! Two hashes per budget (the braces keep them on one Cluster slot): `retry:budget:{NAME}` holds
//! the rate tokens, the earned tokens, the time of the last update, the counters of first
//! attempts, retries and refusals, and the breaker's state, and expires once the bucket is idle
//! and full and the breaker has nothing to remember; `retry:budget:{NAME}:terms` holds the terms
//! `retry budget set` gave (its breaker's among them), which every run uses, and never expires
//! (without it, the default terms hold). Each decision is one call of `budget.lua`
//! (`EVALSHA`, loading the script on `NOSCRIPT`): one round trip, atomic, on the server's clock,
//! so that the hosts' clocks do not matter.
//!
//! Every call, the connection included, is bounded by the address's `timeout` (500ms unless it
//! says) and by what is left before `--max-time`, and runs on a helper thread so that a server that never answers, or a signal,
//! cannot hold the run. The connection is kept between calls; one the server (or a proxy, or a
//! NAT) closed while it was idle is opened again once, before the store counts as failing. A
//! reply is read in bounded memory (`resp`), and each value in it is checked: one no run of
//! the script could give makes the store count as failing. The server needs Redis 5.0 or later
//! (or Valkey), and an ACL user needs only `~retry:budget:* -@all +evalsha +script|load +hmget
//! +hset +hdel +pexpire +time`.

use std::time::{Duration, Instant};

use super::breaker::{BreakerState, LONGEST_COOL_DOWN, MAX_HOSTS};
use super::model::{
    BucketState, DEFAULT_TERMS, LONGEST_HOLD, LONGEST_TERM, MAX_DEBT_PERIODS, Terms, asked_micros,
    delay_of, micros,
};
use super::{BudgetName, Reservation};
use crate::script::{self, SCRIPT};
use crate::unread::{StoreFailure, Unread};
use crate::waiter::{Waited, Waiter};
use retry_policy::outcome::{Ended, WaitCause};
use retry_policy::run::{Admission, TokenRequest};
use retry_policy::signal::Signal;
use retry_redis::{Node, RedisAddress, Reply, ScriptCall, Trouble, describe, first_words};

/// A budget on a Redis server.
pub(crate) struct RedisStore<'a, W> {
    address: RedisAddress,
    key: String,
    /// The hash of the budget's terms.
    terms_key: String,
    /// The open connection, between calls, and the node it is to.
    connection: Option<Node>,
    /// Waits for each call, with the signals that end a run in view.
    watch: &'a W,
}

/// What a call's thread hands back: the answer, and the connection to keep.
pub(crate) type CallDone = (Result<Reply, Trouble>, Option<Node>);

/// What a call of the script does.
#[derive(Clone, Copy)]
enum Operation<'t> {
    /// Count a first attempt, earning what the ratio gives, and ask the breaker whether it may
    /// go, a probe holding it for this long.
    Admit(Duration),
    /// Take a token for a retry, as the request says (its `latest` goes with every call).
    Reserve(TokenRequest),
    /// Count a run's end on this host (by a hash of its name) for the breaker, as its probe or
    /// not.
    Record {
        host: u64,
        ended: Ended,
        probe: bool,
    },
    /// Return the stored fields and the server's time.
    Show,
    /// Count a run of a job's history that ended with this letter after these milliseconds, or
    /// (none) only read the history; keep at most `recent` runs' letters and durations.
    History {
        run: Option<(char, u64)>,
        recent: usize,
    },
    /// Keep these terms for every run.
    Set(&'t Terms),
    /// One of a job's operations (`job_hold`, ...), with its argument (the overlap to keep, or
    /// the run's identity) and the lease.
    Job {
        name: &'static str,
        argument: &'t str,
        lease: Duration,
    },
}

/// Why a call to the store did not answer.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Failure {
    /// The store could not be used for the call: how, its password hidden.
    Failed(StoreFailure),
    /// A signal that ends the run arrived while the call waited.
    Interrupted(Signal),
}

impl From<Failure> for Unread {
    fn from(failure: Failure) -> Self {
        match failure {
            Failure::Failed(failure) => Unread::Store(failure),
            Failure::Interrupted(signal) => Unread::Interrupted(signal),
        }
    }
}

/// Terms a store keeps that no `retry budget set` could have stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TermsDamaged;

/// The stored state of a budget, as `retry budget show` tells it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Stored {
    /// The state; none when there is none (a full bucket).
    pub(crate) written: Option<BucketState>,
    /// The terms `retry budget set` kept: none for the defaults, and an error for terms no
    /// `set` could have stored.
    pub(crate) terms: Result<Option<Terms>, TermsDamaged>,
    /// The breaker's state; none when there is none (or it is damaged).
    pub(crate) breaker: Option<BreakerState>,
    /// The server's time, in microseconds since the Unix epoch.
    pub(crate) now: u64,
}

impl<'a, W: Waiter> RedisStore<'a, W> {
    /// The history of the job `name` on the server at `address`, in a hash of its own that no
    /// budget's name can make (`retry:budget:history:{NAME}`).
    pub(crate) fn for_history(address: RedisAddress, job: &BudgetName, watch: &'a W) -> Self {
        let key = history_key(job);
        RedisStore {
            terms_key: key.clone(),
            key,
            ..RedisStore::new(address, job, watch)
        }
    }

    /// The terms of the job `job` and the lease of its run in progress, on the server at
    /// `address`, in two hashes no budget's name can make (`retry:budget:job:{JOB}` and
    /// `...:lease`).
    pub(crate) fn for_job(address: RedisAddress, job: &BudgetName, watch: &'a W) -> Self {
        let key = format!("retry:budget:job:{{{}}}", job.as_str());
        RedisStore {
            terms_key: format!("{key}:lease"),
            key,
            ..RedisStore::new(address, job, watch)
        }
    }

    /// The job operation `name` with `argument` and `lease`, within `latest`; its answer: the
    /// overlap, the lease's holder, what became of the lease, the failed runs in a row that
    /// alert, and the schedule.
    pub(crate) fn job(
        &mut self,
        name: &'static str,
        argument: &str,
        lease: Duration,
        latest: Option<Duration>,
    ) -> Result<[String; 5], Failure> {
        let operation = Operation::Job {
            name,
            argument,
            lease,
        };
        let answer = self.call(operation, latest, None)?;
        strings(&answer)
            .and_then(|fields| <[String; 5]>::try_from(fields).ok())
            .ok_or_else(|| unusable(&answer))
    }

    /// Count a run that ended with a letter after a number of milliseconds in the job's history
    /// (none: only read it), keeping the letters and durations of the `recent` latest runs;
    /// returns the history's stored text (empty when there is none), whether the stored one was
    /// damaged and started over, and the stored durations. The history module reads the texts,
    /// so that the store knows nothing of what a history means.
    pub(crate) fn history(
        &mut self,
        run: Option<(char, u64)>,
        recent: usize,
        latest: Option<Duration>,
    ) -> Result<(String, bool, String), Failure> {
        let answer = self.call(Operation::History { run, recent }, latest, None)?;
        history_reply(&answer).ok_or_else(|| unusable(&answer))
    }

    /// The budget `name` on the server at `address`; calls wait with `watch`'s signals in view.
    pub(crate) fn new(address: RedisAddress, name: &BudgetName, watch: &'a W) -> Self {
        RedisStore {
            address,
            key: format!("retry:budget:{{{}}}", name.as_str()),
            terms_key: format!("retry:budget:{{{}}}:terms", name.as_str()),
            connection: None,
            watch,
        }
    }

    /// The hash the budget lives in.
    pub(crate) fn key(&self) -> &str {
        &self.key
    }

    /// The store's address, its password hidden when shown.
    pub(crate) fn address(&self) -> &RedisAddress {
        &self.address
    }

    /// Count a first attempt and ask the breaker whether the run may make it, within `latest`,
    /// a probe holding the breaker for `lease`; says too whether the budget has a breaker, and
    /// whether the stored state or terms were damaged.
    pub(crate) fn admit(
        &mut self,
        latest: Option<Duration>,
        lease: Duration,
    ) -> Result<(Admission, bool, bool), Failure> {
        let answer = self.call(Operation::Admit(lease), latest, None)?;
        strings(&answer)
            .and_then(|fields| admitted(&fields))
            .ok_or_else(|| unusable(&answer))
    }

    /// Count, for the breaker, a run that ended as `ended` on `host`, as the probe or not.
    pub(crate) fn record(
        &mut self,
        latest: Option<Duration>,
        host: u64,
        ended: Ended,
        probe: bool,
    ) -> Result<(), Failure> {
        let operation = Operation::Record { host, ended, probe };
        let answer = self.call(operation, latest, None)?;
        match strings(&answer).as_deref() {
            Some([recorded, _, _, _]) if recorded == "recorded" => Ok(()),
            _ => Err(unusable(&answer)),
        }
    }

    /// Take a token for a retry as `request` says, holding every run's retries for the wait its
    /// command asked for; says too whether the stored state or terms were not what a run stores,
    /// and were started over from.
    pub(crate) fn reserve(
        &mut self,
        request: TokenRequest,
    ) -> Result<(Reservation, bool), Failure> {
        let answer = self.call(Operation::Reserve(request), request.latest, None)?;
        strings(&answer)
            .and_then(|fields| decide(&fields))
            .ok_or_else(|| unusable(&answer))
    }

    /// Keep `terms` as the budget's, for every run that shares it.
    pub(crate) fn set_terms(&mut self, terms: &Terms) -> Result<(), Failure> {
        let answer = self.call(Operation::Set(terms), None, None)?;
        match strings(&answer).as_deref() {
            Some([set, ..]) if set == "set" => Ok(()),
            _ => Err(unusable(&answer)),
        }
    }

    /// The state now, changing nothing.
    pub(crate) fn show(&mut self) -> Result<Stored, Failure> {
        let answer = self.call(Operation::Show, None, None)?;
        strings(&answer)
            .and_then(|fields| stored(&fields))
            .ok_or_else(|| unusable(&answer))
    }

    /// One call of the script, at the server's time unless `now` (in tests), within `latest`
    /// and the address's call limit, on the kept connection or a new one.
    fn call(
        &mut self,
        operation: Operation<'_>,
        latest: Option<Duration>,
        now: Option<u64>,
    ) -> Result<Reply, Failure> {
        let (limit, job) = self.call_job(operation, latest, now);
        let done = self.bounded(limit, job)?;
        self.answer(done, limit)
    }

    /// The work of one call, to run on a thread of its own, and how long it may take: it hands
    /// the connection back with the answer.
    fn call_job(
        &mut self,
        operation: Operation<'_>,
        latest: Option<Duration>,
        now: Option<u64>,
    ) -> (Duration, impl FnOnce() -> CallDone + Send + 'static) {
        let most = self.address.call_limit();
        let limit = latest.map_or(most, |latest| latest.min(most));
        let call = ScriptCall {
            script: &SCRIPT,
            keys: vec![
                self.key.clone().into_bytes(),
                self.terms_key.clone().into_bytes(),
            ],
            args: self.arguments(operation, latest, now),
        };
        let (address, kept) = (self.address.clone(), self.connection.take());
        let job = move || -> CallDone { retry_redis::call(&address, kept, &call, limit) };
        (limit, job)
    }

    /// The reply of a finished call, keeping its connection for the next. A call the socket's
    /// own time limit ended (which can end it a moment before the wait for it does) did not
    /// answer within `limit`, whichever ended it.
    fn answer(
        &mut self,
        (answer, connection): CallDone,
        limit: Duration,
    ) -> Result<Reply, Failure> {
        self.connection = connection;
        match answer {
            Err(trouble) if trouble.is_time_limit() => Err(no_answer_within(limit)),
            Ok(Reply::Error(error)) => {
                let mut why = self.address.scrub(&first_words(&error));
                let denied = ["NOPERM", "no permissions", "can't run this command"];
                if denied.iter().any(|words| error.contains(words)) {
                    let command = script::command_at(&error)
                        .map_or(String::new(), |command| format!(" ({command})"));
                    why += &format!(
                        "; the store's user may not run a command the budget's script runs\
                         {command}: give it the ACL rule of docs/budget.md (~retry:budget:* \
                         -@all +evalsha +script|load +hmget +hset +hdel +pexpire +time)"
                    );
                }
                why += password_advice(&error, &self.address);
                Err(Failure::Failed(StoreFailure::Refused(why)))
            }
            Ok(reply) => Ok(reply),
            Err(trouble) => {
                let mut why = self.address.scrub(&trouble.to_string());
                // A TLS server closes a connection that speaks plain RESP to it, or answers
                // bytes that are not RESP.
                let plain_to_tls = matches!(trouble, Trouble::Dropped | Trouble::Malformed(_));
                if plain_to_tls && !self.address.is_tls() {
                    why += "; the server may speak TLS: use rediss://";
                }
                why += tls_advice(&why, &self.address);
                why += password_advice(&why, &self.address);
                Err(Failure::Failed(match trouble {
                    Trouble::Malformed(_) => StoreFailure::Unreadable(why),
                    Trouble::Refused(_) => StoreFailure::Refused(why),
                    _ => StoreFailure::Unreachable(why),
                }))
            }
        }
    }

    /// The script's arguments, after its two keys (this budget's state and terms, or a job's
    /// hash twice): the operation's name, then the default terms (the terms to keep, to set
    /// them), the bounds, and what the breaker needs.
    fn arguments(
        &self,
        operation: Operation<'_>,
        latest: Option<Duration>,
        now: Option<u64>,
    ) -> Vec<Vec<u8>> {
        let text = |value: Option<String>| value.unwrap_or_default().into_bytes();
        let (name, terms) = match operation {
            Operation::Admit(_) => ("admit", &DEFAULT_TERMS),
            Operation::Reserve(_) => ("reserve", &DEFAULT_TERMS),
            Operation::Record { .. } => ("record", &DEFAULT_TERMS),
            Operation::Show => ("show", &DEFAULT_TERMS),
            Operation::Set(terms) => ("set", terms),
            Operation::Job {
                name,
                argument,
                lease,
            } => {
                return vec![
                    name.as_bytes().to_vec(),
                    argument.as_bytes().to_vec(),
                    lease.as_millis().to_string().into_bytes(),
                ];
            }
            // A history's hash is both keys; its operation takes the run's letter, the length
            // and the run's duration in milliseconds.
            Operation::History { run, recent } => {
                let name = run.map_or("history_show", |_| "history");
                return vec![
                    name.as_bytes().to_vec(),
                    text(run.map(|(letter, _)| String::from(letter))),
                    recent.to_string().into_bytes(),
                    text(run.map(|(_, millis)| millis.to_string())),
                ];
            }
        };
        let lease = match operation {
            Operation::Admit(lease) => Some(micros(lease).to_string()),
            _ => None,
        };
        let (host, ended, probe) = match operation {
            Operation::Record { host, ended, probe } => (
                Some(format!("{host:x}")),
                Some(match ended {
                    Ended::Succeeded => "succeeded",
                    Ended::GaveUp => "gave_up",
                    Ended::Unjudged => "unjudged",
                }),
                Some(if probe { "1" } else { "0" }),
            ),
            _ => (None, None, None),
        };
        let (asked, longest_hold) = match operation {
            Operation::Reserve(request) => (
                request.asked.map(|asked| asked_micros(asked).to_string()),
                Some(asked_micros(request.longest_hold).to_string()),
            ),
            _ => (None, None),
        };
        vec![
            name.as_bytes().to_vec(),
            terms.rate.tokens.to_string().into_bytes(),
            micros(terms.rate.period).to_string().into_bytes(),
            text(terms.ratio.map(|ratio| ratio.to_string())),
            micros(terms.window).to_string().into_bytes(),
            text(latest.map(|latest| micros(latest).to_string())),
            MAX_DEBT_PERIODS.to_string().into_bytes(),
            micros(LONGEST_TERM).to_string().into_bytes(),
            text(now.map(|now| now.to_string())),
            text(terms.breaker.map(|breaker| breaker.stored())),
            text(lease),
            text(host),
            text(ended.map(str::to_string)),
            text(probe.map(str::to_string)),
            MAX_HOSTS.to_string().into_bytes(),
            LONGEST_COOL_DOWN.to_string().into_bytes(),
            text(asked),
            (micros(LONGEST_HOLD) as u64).to_string().into_bytes(),
            text(longest_hold),
        ]
    }

    /// Run `job` on a thread of its own for `limit` at most, awake to the run's signals.
    fn bounded<T: Send + 'static>(
        &self,
        limit: Duration,
        job: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, Failure> {
        let timed_out = || no_answer_within(limit);
        let cannot = |err: std::io::Error| {
            Failure::Failed(StoreFailure::Unreachable(format!(
                "cannot start a thread: {err}"
            )))
        };
        let until = Instant::now().checked_add(limit);
        match self.watch.run_job(until, job).map_err(cannot)? {
            Waited::Done(result) => Ok(result),
            Waited::Stopped(signal) => Err(Failure::Interrupted(signal)),
            Waited::TimedOut => Err(timed_out()),
        }
    }
}

/// Make of `reply` everything the store makes of a script's answer: a reservation, an
/// admission, a budget's stored state, a history's text. For the fuzz target of the store's
/// replies, which reads that text as a history too.
#[cfg(fuzzing)]
pub(crate) fn read_every_way(reply: &Reply) {
    if let Some(fields) = strings(reply) {
        let _ = decide(&fields);
        let _ = admitted(&fields);
        let _ = stored(&fields);
    }
    let _ = unusable(reply);
}

/// The answer to a history's operation: its stored text, and whether it was damaged.
pub(crate) fn history_reply(answer: &Reply) -> Option<(String, bool, String)> {
    let fields = strings(answer)?;
    let [text, damaged, durations] = <[String; 3]>::try_from(fields).ok()?;
    Some((text, flag(&damaged)?, durations))
}

/// The Redis key of the history of the job `job`: one no budget's name can make.
pub(crate) fn history_key(job: &BudgetName) -> String {
    format!("retry:budget:history:{{{}}}", job.as_str())
}

/// The answer to an admission: the breaker's word, whether the budget has a breaker, and
/// whether the state or terms were damaged; none when a value is not one the script gives.
fn admitted(answer: &[String]) -> Option<(Admission, bool, bool)> {
    let [counted, _, damaged, _, admission, left, breaker] = answer else {
        return None;
    };
    (counted == "counted").then_some(())?;
    let left: f64 = left.parse().ok().filter(|left: &f64| *left >= 0.0)?;
    let admission = match admission.as_str() {
        "closed" => Admission::Closed,
        "probe" => Admission::Probe,
        "open" => Admission::Open(delay_of(left)),
        "probing" => Admission::Probing(delay_of(left)),
        _ => return None,
    };
    Some((admission, flag(breaker)?, flag(damaged)?))
}

/// A `'1'` or `'0'` of the script's.
fn flag(text: &str) -> Option<bool> {
    match text {
        "1" => Some(true),
        "0" => Some(false),
        _ => None,
    }
}

/// A call that took longer than `limit`.
fn no_answer_within(limit: Duration) -> Failure {
    Failure::Failed(StoreFailure::TimedOut(limit))
}

/// An answer no run of the script could give, as the failure it makes of the store.
fn unusable(answer: &Reply) -> Failure {
    Failure::Failed(StoreFailure::Unreadable(format!(
        "its answer ({}) is not one the budget's script gives",
        describe(answer)
    )))
}

/// The items of an array of strings, as text.
fn strings(reply: &Reply) -> Option<Vec<String>> {
    let Reply::Array(Some(items)) = reply else {
        return None;
    };
    items
        .iter()
        .map(|item| match item {
            Reply::Bulk(Some(bytes)) => String::from_utf8(bytes.clone()).ok(),
            _ => None,
        })
        .collect()
}

/// The answer of a reservation: the verdict, the delay, and whether the state or the terms were
/// damaged; none when a value is not one the script could give.
fn decide(answer: &[String]) -> Option<(Reservation, bool)> {
    let [verdict, delay, damaged, period] = answer else {
        return None;
    };
    let period = period
        .parse::<f64>()
        .ok()
        .filter(|period| *period > 0.0 && *period <= micros(LONGEST_TERM))?;
    // The longest delay the arithmetic grants: its debt bound, in periods, or a held wait.
    let most = period * f64::from(MAX_DEBT_PERIODS + 1) + micros(LONGEST_HOLD);
    let delay: f64 = delay
        .parse()
        .ok()
        .filter(|delay: &f64| (0.0..=most).contains(delay))?;
    let reservation = match verdict.as_str() {
        "granted" => Reservation::Granted(delay_of(delay)),
        "held" => Reservation::Held(delay_of(delay)),
        "refused" => Reservation::Refused,
        "late" => Reservation::PastDeadline(delay_of(delay), WaitCause::Budget),
        "late_held" => Reservation::PastDeadline(delay_of(delay), WaitCause::Shared),
        _ => return None,
    };
    Some((reservation, flag(damaged)?))
}

/// The stored fields, the kept terms and the server's time, as the script's `show` returns them
/// (empty where there are none); none when a state's value is not one a run could store.
fn stored(fields: &[String]) -> Option<Stored> {
    let (state, rest) = fields.split_at_checked(7)?;
    let (terms, [breaker, now]) = rest.split_at_checked(5)? else {
        return None;
    };
    let terms = match terms[..4].iter().all(String::is_empty) {
        true => Ok(None),
        false => Terms::from_stored(terms).map(Some).ok_or(TermsDamaged),
    };
    let written = match state[0].is_empty() {
        true => None,
        false => Some(BucketState::from_stored(state)?),
    };
    Some(Stored {
        written,
        terms,
        breaker: BreakerState::from_stored(breaker),
        now: now.parse().ok()?,
    })
}

/// What to give when the store turned a call away as `why` says, for want of a password the
/// address does not give: a call's reply, or the database's selection as the connection opens.
fn password_advice(why: &str, address: &RedisAddress) -> &'static str {
    // An unauthenticated client is told NOAUTH, or, for a call as long as the script's, that
    // its request is too long for one (Redis 7).
    let unauthenticated = why.contains("NOAUTH") || why.contains("unauthenticated");
    match unauthenticated && address.password().is_none() {
        true => {
            "; the store asks for a password, and its address gives none: give it with \
             ?password_file=FILE (a password given inline stays with the run it was given to, \
             and is not passed on to the runs inside its attempts)"
        }
        false => "",
    }
}

/// What to give when a TLS connection failed as `why` says (rustls's words): the authority that
/// signed the server's certificate, or the certificate the server asks for; or nothing.
fn tls_advice(why: &str, address: &RedisAddress) -> &'static str {
    let signer_unknown = why.contains("UnknownIssuer");
    let certificate_asked = why.contains("CertificateRequired");
    let certificate_refused = ["UnknownCA", "BadCertificate", "CertificateUnknown"]
        .iter()
        .any(|alert| why.contains(alert));
    match () {
        _ if signer_unknown => {
            "; no authority this machine trusts signed the server's certificate: name the one \
             that did with ?ca_file=PATH in the store's address (or SSL_CERT_FILE)"
        }
        _ if certificate_asked && !address.presents_certificate() => {
            "; the server asks for a client certificate: give it and its key with \
             ?cert_file=PATH&key_file=PATH in the store's address"
        }
        _ if certificate_refused && address.presents_certificate() => {
            "; the server refused the client certificate of cert_file: give one signed by an \
             authority the server trusts (its tls-ca-cert-file)"
        }
        _ => "",
    }
}

#[cfg(test)]
#[path = "../../../tests/support/redis_server.rs"]
#[allow(dead_code)] // Shared with the integration tests, which use all of it.
pub(crate) mod redis_server;

#[cfg(test)]
#[path = "../../../tests/support/redis_fleet.rs"]
#[allow(dead_code)] // Shared with the integration tests, which use all of it.
pub(crate) mod redis_fleet;

#[cfg(test)]
mod tests {
    use super::redis_server::RedisServer;
    use super::*;
    use crate::breaker::BreakerTerms;
    use crate::model::Rate;
    use crate::waiter::Threads;
    use rand::rngs::Xoshiro256PlusPlus;
    use rand::{RngExt, SeedableRng};
    use retry_redis::Connection;

    /// A retry's request within `latest`, asking for no wait.
    fn within(latest: Option<Duration>) -> TokenRequest {
        TokenRequest {
            latest,
            asked: None,
            longest_hold: LONGEST_HOLD,
        }
    }

    #[test]
    fn a_call_its_socket_timed_out_says_the_bound_as_the_wait_would() {
        let server = RedisServer::on_socket();
        let mut store = store(&server, "api");
        for kind in [std::io::ErrorKind::WouldBlock, std::io::ErrorKind::TimedOut] {
            let done: CallDone = (Err(Trouble::Io(kind.into())), None);
            let Err(Failure::Failed(failure)) = store.answer(done, Duration::from_millis(300))
            else {
                panic!("a time-out is a failure")
            };
            assert_eq!(failure, StoreFailure::TimedOut(Duration::from_millis(300)));
            assert_eq!(failure.to_string(), "no answer within 300ms");
        }
    }

    #[test]
    fn a_store_that_cannot_be_reached_answers_with_an_error_or_cannot_be_read_says_which() {
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = closed.local_addr().unwrap().port();
        drop(closed);
        let address = crate::store::redis_address(&format!("redis://127.0.0.1:{port}"));
        let mut nowhere = RedisStore::new(address, &"api".parse().unwrap(), &Threads);
        let failure = nowhere.reserve(within(None)).map(|_| ());
        assert!(
            matches!(failure, Err(Failure::Failed(StoreFailure::Unreachable(_)))),
            "{failure:?}"
        );
        let server = RedisServer::on_socket();
        let mut store = store(&server, "api");
        let refused: CallDone = (Ok(Reply::Error("ERR nope".into())), None);
        let failure = store.answer(refused, Duration::from_secs(1));
        assert_eq!(
            failure,
            Err(Failure::Failed(StoreFailure::Refused("ERR nope".into())))
        );
        let unreadable: CallDone = (Err(Trouble::Malformed("a bad length".into())), None);
        let failure = store.answer(unreadable, Duration::from_secs(1));
        assert!(
            matches!(failure, Err(Failure::Failed(StoreFailure::Unreadable(_)))),
            "{failure:?}"
        );
    }

    fn store(server: &RedisServer, name: &str) -> RedisStore<'static, Threads> {
        let address = crate::store::redis_address(server.url());
        RedisStore::new(address, &name.parse().unwrap(), &Threads)
    }

    /// A connection of the test's own to `server`.
    fn direct(server: &RedisServer) -> Connection {
        let address = crate::store::redis_address(server.url());
        Connection::open(&address, Duration::from_secs(5)).unwrap()
    }

    #[test]
    fn the_script_is_named_by_the_sha1_the_server_gives_it() {
        let server = RedisServer::on_socket();
        let loaded = direct(&server)
            .call(&[b"SCRIPT", b"LOAD", SCRIPT.text.as_bytes()])
            .unwrap();
        let Reply::Bulk(Some(digest)) = loaded else {
            panic!("{loaded:?}")
        };
        assert!(
            digest == SCRIPT.sha1,
            "budget.lua changed: write its SHA-1, {}, in script.rs",
            String::from_utf8_lossy(&digest)
        );
    }

    fn close(a: f64, b: f64) -> bool {
        a == b || (a - b).abs() <= 1e-12 * a.abs().max(b.abs())
    }

    fn same_state(model: &BucketState, stored: &BucketState) -> bool {
        close(model.tokens, stored.tokens)
            && close(model.earned, stored.earned)
            && (
                model.at,
                model.first_attempts,
                model.retries,
                model.refusals,
                model.not_before,
            ) == (
                stored.at,
                stored.first_attempts,
                stored.retries,
                stored.refusals,
                stored.not_before,
            )
    }

    fn random_terms(rng: &mut Xoshiro256PlusPlus) -> Terms {
        Terms {
            rate: Rate {
                tokens: rng.random_range(1..=20),
                period: Duration::from_micros(rng.random_range(1_000..600_000_000)),
            },
            ratio: rng.random_bool(0.7).then(|| rng.random_range(0.01..=1.0)),
            window: Duration::from_micros(rng.random_range(1_000..600_000_000)),
            breaker: rng.random_bool(0.8).then(|| BreakerTerms {
                give_ups: rng.random_range(1..=6),
                window: Duration::from_micros(rng.random_range(1_000..100_000_000)),
                share: rng.random_range(0.05..=1.0),
                hosts: rng.random_range(1..=3),
                cool_down: Duration::from_micros(rng.random_range(1_000..100_000_000)),
            }),
        }
    }

    /// The same random first attempts, retries and clock steps (backwards too) go to the model
    /// and to the script on a real server; every answer and every stored state must agree.
    #[test]
    fn the_script_is_the_model() {
        let server = RedisServer::on_socket();
        for seed in 0..6 {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
            let terms = random_terms(&mut rng);
            let mut store = store(&server, &format!("model-{seed}"));
            store.set_terms(&terms).unwrap();
            let mut model: Option<BucketState> = None;
            let mut breaker = BreakerState::default();
            // Whether the last admission made a probe, whose end comes next.
            let mut probing = false;
            let mut now: u64 = 1_800_000_000_000_000;
            let period = micros(terms.rate.period) as u64;
            for step in 0..400 {
                now = match rng.random_range(0..10) {
                    0 => now.saturating_sub(rng.random_range(0..period)),
                    1..=3 => now,
                    4..=7 => now + rng.random_range(0..period / 4 + 1),
                    _ => now + rng.random_range(0..3 * period),
                };
                let context = format!("seed {seed}, step {step}, {terms:?}, {model:?}");
                // A clock that went back by more than a period makes the state implausible to
                // both, which start over from a full bucket.
                let damaged = model.is_some_and(|state| !terms.is_plausible(&state, now));
                if damaged {
                    model = None;
                }
                let flag = if damaged { "1" } else { "0" };
                match rng.random_range(0..10) {
                    0..=2 => {
                        let lease = Duration::from_micros(rng.random_range(1..3 * period));
                        let expected = match terms.breaker {
                            Some(breaker_terms) => {
                                let (admission, next) =
                                    breaker_terms.admit(breaker.clone(), now, lease);
                                breaker = next;
                                admission
                            }
                            None => Admission::Closed,
                        };
                        probing = expected == Admission::Probe;
                        model = Some(match expected {
                            Admission::Open(_) | Admission::Probing(_) => terms.advance(model, now),
                            _ => terms.first_attempt(model, now),
                        });
                        let answer = store
                            .call(Operation::Admit(lease), None, Some(now))
                            .unwrap();
                        let (admission, has, damaged_flag) =
                            admitted(&strings(&answer).unwrap()).unwrap();
                        assert_eq!(damaged_flag, damaged, "{context}");
                        assert_eq!(has, terms.breaker.is_some(), "{context}");
                        match (expected, admission) {
                            (Admission::Open(a), Admission::Open(b))
                            | (Admission::Probing(a), Admission::Probing(b)) => {
                                assert!(a.abs_diff(b) <= Duration::from_micros(1), "{context}")
                            }
                            (a, b) => assert_eq!(a, b, "{context}"),
                        }
                    }
                    3..=5 => {
                        let host = rng.random_range(1..=4u64) * 0x9e37_79b9;
                        let ended = match rng.random_range(0..10) {
                            0..=5 => Ended::GaveUp,
                            6..=8 => Ended::Succeeded,
                            _ => Ended::Unjudged,
                        };
                        let probe = probing || rng.random_bool(0.2);
                        if let Some(breaker_terms) = terms.breaker {
                            breaker = breaker_terms.record(
                                breaker.clone(),
                                now,
                                host,
                                ended,
                                probe,
                                true,
                            );
                        }
                        model = Some(terms.advance(model, now));
                        let operation = Operation::Record { host, ended, probe };
                        let answer = store.call(operation, None, Some(now)).unwrap();
                        let answer = strings(&answer).unwrap();
                        assert_eq!(answer[..3], ["recorded", "0", flag], "{context}");
                    }
                    _ => {
                        let latest = rng
                            .random_bool(0.5)
                            .then(|| Duration::from_micros(rng.random_range(0..3 * period)));
                        let asked = rng
                            .random_bool(0.2)
                            .then(|| Duration::from_micros(rng.random_range(0..3 * period)));
                        let longest_hold = Duration::from_micros(rng.random_range(0..3 * period));
                        let request = TokenRequest {
                            latest,
                            asked,
                            longest_hold,
                        };
                        let (expected, next) = terms.reserve(model, now, &request);
                        model = Some(next);
                        let operation = Operation::Reserve(request);
                        let answer = store.call(operation, latest, Some(now)).unwrap();
                        let (reservation, script_damaged) =
                            decide(&strings(&answer).unwrap()).unwrap();
                        assert_eq!(script_damaged, damaged, "{context}");
                        match (expected, reservation) {
                            (Reservation::Granted(a), Reservation::Granted(b))
                            | (Reservation::Held(a), Reservation::Held(b))
                            | (
                                Reservation::PastDeadline(a, WaitCause::Budget),
                                Reservation::PastDeadline(b, WaitCause::Budget),
                            )
                            | (
                                Reservation::PastDeadline(a, WaitCause::Shared),
                                Reservation::PastDeadline(b, WaitCause::Shared),
                            ) => {
                                assert!(
                                    a.abs_diff(b) <= Duration::from_micros(1),
                                    "{context}: {a:?} {b:?}"
                                )
                            }
                            (a, b) => assert_eq!(a, b, "{context}"),
                        }
                    }
                }
                let shown = store.show().unwrap();
                let stored = shown.written.unwrap();
                assert!(
                    same_state(&model.unwrap(), &stored),
                    "{context}: {stored:?}"
                );
                assert_eq!(shown.terms.unwrap().unwrap().rate, terms.rate, "{context}");
                if terms.breaker.is_some() {
                    assert_eq!(shown.breaker.as_ref(), Some(&breaker), "{context}");
                }
            }
        }
    }

    #[test]
    fn a_jobs_history_counts_its_runs_and_a_damaged_one_starts_over() {
        let server = RedisServer::on_socket();
        let address = crate::store::redis_address(server.url());
        let job = "nightly".parse().unwrap();
        let mut store = RedisStore::for_history(address, &job, &Threads);
        let recent = 100;
        let mut count = |run| store.history(run, recent, None).unwrap();
        assert_eq!(count(None), (String::new(), false, String::new()));
        for ms in 0..recent as u64 {
            count(Some(('c', ms)));
        }
        count(Some(('f', 1_000)));
        let (history, damaged, durations) = count(Some(('x', 2_500)));
        assert!(!damaged);
        assert_eq!(history, format!("100 1 1 {}fx", "c".repeat(recent - 2)));
        let expected: Vec<String> = (2..recent as u64)
            .chain([1_000, 2_500])
            .map(|ms| ms.to_string())
            .collect();
        assert_eq!(
            durations,
            expected.join(" "),
            "the last {recent}, oldest first"
        );
        assert_eq!(count(None), (history, false, durations));
        let mut direct = direct(&server);
        let key = b"retry:budget:history:{nightly}";
        for damage in [&b"1 0 0 cc"[..], b"x", b"1 2 3 c-c"] {
            direct.call(&[b"HSET", key, b"runs", damage]).unwrap();
            let (history, damaged, _) = store.history(Some(('c', 5)), recent, None).unwrap();
            assert!(damaged, "{}", String::from_utf8_lossy(damage));
            assert_eq!(history, "1 0 0 c");
        }
        for damage in [&b"12 x 3"[..], b"-1", &[b'9'; 2000]] {
            direct.call(&[b"HSET", key, b"durations", damage]).unwrap();
            let (_, damaged, durations) = store.history(Some(('c', 7)), recent, None).unwrap();
            assert!(!damaged, "durations only inform; the runs' counts stay");
            assert_eq!(durations, "7", "{}", String::from_utf8_lossy(damage));
        }
    }

    #[test]
    fn a_budget_nobody_used_is_a_full_bucket_and_a_used_one_expires() {
        let server = RedisServer::on_socket();
        let mut store = store(&server, "api");
        let shown = store.show().unwrap();
        assert_eq!((shown.written, shown.terms), (None, Ok(None)));
        let terms = Terms {
            rate: "2/1s".parse().unwrap(),
            ratio: None,
            window: Duration::from_secs(1),
            breaker: None,
        };
        store.set_terms(&terms).unwrap();
        store.reserve(within(None)).unwrap();
        let Reply::Integer(ttl) = direct(&server)
            .call(&[b"PTTL", store.key().as_bytes()])
            .unwrap()
        else {
            panic!("PTTL answers an integer")
        };
        // Full again in half a second, and the earned tokens gone in ten windows, plus a second.
        assert!((10_000..=11_000).contains(&ttl), "{ttl}");
        assert_eq!(store.key(), "retry:budget:{api}");
        // The terms stay, whatever becomes of the state.
        let Reply::Integer(ttl) = direct(&server)
            .call(&[b"PTTL", b"retry:budget:{api}:terms"])
            .unwrap()
        else {
            panic!("PTTL answers an integer")
        };
        assert_eq!(ttl, -1);
    }

    #[test]
    fn every_run_uses_the_terms_the_store_keeps() {
        let server = RedisServer::on_socket();
        let mut first = store(&server, "api");
        let mut second = store(&server, "api");
        // The defaults: ten tokens at once.
        for _ in 0..10 {
            assert_eq!(
                first.reserve(within(None)).unwrap().0,
                Reservation::Granted(Duration::ZERO)
            );
        }
        let one_a_minute = Terms {
            rate: "1/1m".parse().unwrap(),
            ..DEFAULT_TERMS
        };
        second.set_terms(&one_a_minute).unwrap();
        // Carried over: the bucket was empty, and stays so, on the new capacity.
        let (granted, _) = first
            .reserve(within(Some(Duration::from_secs(3600))))
            .unwrap();
        assert!(
            matches!(granted, Reservation::Granted(wait) if wait > Duration::from_secs(50)),
            "{granted:?}"
        );
        assert_eq!(second.show().unwrap().terms, Ok(Some(one_a_minute)));
    }

    #[test]
    fn terms_no_set_could_store_are_damage() {
        let server = RedisServer::on_socket();
        let mut store = store(&server, "api");
        direct(&server)
            .call(&[
                b"HSET",
                b"retry:budget:{api}:terms",
                b"capacity",
                b"0",
                b"period",
                b"1",
            ])
            .unwrap();
        let (granted, damaged) = store.reserve(within(None)).unwrap();
        assert_eq!(
            (granted, damaged),
            (Reservation::Granted(Duration::ZERO), true)
        );
        assert!(store.show().unwrap().terms.is_err());
    }

    #[test]
    fn a_damaged_state_starts_over_and_says_so() {
        let server = RedisServer::on_socket();
        let mut store = store(&server, "api");
        let mut connection = direct(&server);
        let terms = Terms {
            rate: "5/1m".parse().unwrap(),
            ratio: None,
            window: Duration::from_secs(60),
            breaker: None,
        };
        store.set_terms(&terms).unwrap();
        for (field, value) in [
            ("tokens", "garbage"),
            ("tokens", "-1e308"),
            ("at", "-5"),
            ("earned", "inf"),
        ] {
            store.reserve(within(None)).unwrap();
            connection
                .call(&[
                    b"HSET",
                    store.key().as_bytes(),
                    field.as_bytes(),
                    value.as_bytes(),
                ])
                .unwrap();
            let (reservation, damaged) = store.reserve(within(None)).unwrap();
            assert_eq!(
                (reservation, damaged),
                (Reservation::Granted(Duration::ZERO), true),
                "{field}={value}"
            );
            let state = store.show().unwrap().written.unwrap();
            assert_eq!((state.tokens, state.retries), (4.0, 1), "{field}={value}");
        }
    }
}
