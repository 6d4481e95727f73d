//! The loop's ports: everything it does besides deciding comes in through these traits (the
//! attempts, the hooks, the release of held output, the clock, the waits, the budget), with the
//! values they hand back, so that the binary plugs in processes, signals and stores, and the
//! tests plug in fakes that never sleep.

use std::time::{Duration, Instant};

use crate::attempts::Numbering;
use crate::backoff::Schedule;
use crate::events::Event;
use crate::matching::OutputMatch;
use crate::outcome::{AttemptOutcome, Ended, Hook, HookEnd, SpawnFailure, WaitCause};
use crate::requested::Requested;
use crate::signal::Signal;
use crate::termination::Termination;

/// Runs numbered attempts; the loop's only way to start the command.
pub trait Attempts {
    /// The output an attempt holds back until it is judged (none in the tests).
    type Held: Default;

    /// Run the attempt `numbering` names to its end, cutting it at `deadline` if given.
    fn run(
        &mut self,
        numbering: Numbering,
        deadline: Option<Instant>,
    ) -> Result<AttemptReport<Self::Held>, SpawnError>;
}

/// Runs the hooks (`--on-retry`, `--on-give-up`).
pub trait Hooks {
    /// Run the hook `call` names, if one is given, cutting it at `deadline`; how it ended, or
    /// none when no such hook is given.
    fn run(&mut self, call: &HookCall, deadline: Option<Instant>) -> Option<HookEnd>;
}

/// A hook to run, with what it is told.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HookCall {
    /// Which hook.
    pub hook: Hook,
    /// The last attempt, whose variables the hook gets too.
    pub numbering: Option<Numbering>,
    /// The failed attempt's status (`RETRY_STATUS`).
    pub status: u8,
    /// `--on-retry`: the wait before the next attempt (`RETRY_NEXT_WAIT_MS`).
    pub next_wait: Option<Duration>,
    /// `--on-give-up`: why the run gave up, as the `done` event says (`RETRY_REASON`).
    pub reason: Option<&'static str>,
}

/// How an attempt went, its held output of type `H`.
#[derive(Debug)]
pub struct AttemptReport<H> {
    /// How the attempt ended.
    pub termination: Termination,
    /// The signal that ends the run, if one arrived during the attempt (and was passed on).
    pub interrupted_by: Option<Signal>,
    /// That signal was typed at the terminal the attempt held, and killed it.
    pub from_keyboard: bool,
    /// Processes in the attempt's group outlived SIGKILL by `--kill-after` and were left.
    pub lingering: bool,
    /// What its piped output came to.
    pub output: AttemptOutput<H>,
    /// What the command asked for (in `RETRY_AFTER_FILE`, or with `--retry-after-output`).
    pub requested: Option<Requested>,
    /// Requests that could not be read, in words, for warnings.
    pub request_problems: Vec<String>,
}

/// What reading one attempt's piped output came to, its held output of type `H`.
#[derive(Debug, Default)]
pub struct AttemptOutput<H> {
    /// What the rules' patterns found.
    pub matched: OutputMatch,
    /// The output held back until the attempt is judged.
    pub held: H,
    /// Output the tool could neither keep nor pass on, and why: the run cannot vouch for it.
    pub failure: Option<String>,
    /// A stream was still open when the tool stopped reading it: a process that left the
    /// attempt's group holds it.
    pub cut_short: bool,
    /// The tool's stream (`stdout` or `stderr`) whose reader was not reading when the tool
    /// stopped waiting to pass output on to it.
    pub stalled: Option<&'static str>,
}

/// The command could not be started: how, and why in words, naming the command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpawnError {
    /// What kind of failure it was.
    pub failure: SpawnFailure,
    /// Why, in words, naming the command.
    pub message: String,
}

/// Where held output of type `H` goes once its attempt is judged.
pub trait Release<H> {
    /// Send `held` where the attempt's `outcome` sends it (to stdout after a success, to stderr
    /// otherwise, or into the run's transcript); a reader that does not take it by `deadline`
    /// fails the release.
    fn release(&mut self, held: H, outcome: &AttemptOutcome, deadline: Option<Instant>)
    -> Released;
}

/// A release lent for the run.
impl<H, R: Release<H> + ?Sized> Release<H> for Box<R> {
    fn release(
        &mut self,
        held: H,
        outcome: &AttemptOutcome,
        deadline: Option<Instant>,
    ) -> Released {
        (**self).release(held, outcome, deadline)
    }
}

/// How a release went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Released {
    /// Written, or nothing to write, or its reader had gone (the reader's business).
    Done,
    /// A signal that ends the run arrived while a slow reader held the release up.
    Interrupted(Signal),
    /// The output could not be written; the message says why.
    Failed(String),
}

/// A monotonic clock that can also wait.
pub trait Clock {
    /// Now.
    fn now(&self) -> Instant;
    /// Wait for `duration`, unless a signal that ends the run arrives first: then return it at
    /// once.
    fn sleep(&mut self, duration: Duration) -> Option<Signal>;
}

/// The waits between attempts.
pub trait Waits {
    /// The wait before the next attempt.
    fn next_wait(&mut self) -> Duration;
    /// Start over: the next wait is the first wait again.
    fn start_over(&mut self);
}

impl<R: rand::Rng> Waits for Schedule<R> {
    fn next_wait(&mut self) -> Duration {
        self.draw().wait
    }

    fn start_over(&mut self) {
        self.restart();
    }
}

/// Holds the run's job (`--job`) before its first attempt, as the job's terms say: the hold
/// itself, and giving it back, are the caller's.
pub trait JobGate {
    /// Take the job for the run, waiting no later than `until` where its terms say to wait for
    /// another run to end; what kept the run out, if anything. That it waits, and what the run
    /// goes on without (a store that could not say), go to `tell` as events.
    fn take(&mut self, until: Option<Instant>, tell: &mut dyn FnMut(Event)) -> JobTaken;
}

/// What a run found when it went to take its job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobTaken {
    /// The run may start: it holds the job, or the job needs no hold (or its store could not
    /// say, which the gate warned of).
    Go,
    /// Another run of the job holds it; which, in words.
    Busy(String),
    /// A signal that ends the run arrived while the gate waited.
    Interrupted(Signal),
}

/// A run with no job: nothing keeps it out.
impl JobGate for () {
    fn take(&mut self, _until: Option<Instant>, _tell: &mut dyn FnMut(Event)) -> JobTaken {
        JobTaken::Go
    }
}

/// The loop's collaborators, lent for one run.
pub struct Parts<'a, W, A, C, B, R, H, S, J = ()> {
    /// The run's job, taken before the first attempt.
    pub job: &'a mut J,
    /// The waits between attempts.
    pub waits: &'a mut W,
    /// The command's attempts.
    pub attempts: &'a mut A,
    /// The clock.
    pub clock: &'a mut C,
    /// The retry budget.
    pub budget: &'a mut B,
    /// Where each attempt's held output goes.
    pub release: &'a mut R,
    /// The hooks.
    pub hooks: &'a mut H,
    /// Where the run says what happens.
    pub sink: &'a mut S,
}

/// What a retry asks of its budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TokenRequest {
    /// The time left before the run's deadline, which no wait may reach (none: no deadline).
    pub latest: Option<Duration>,
    /// The wait the command asked for, if it did: it holds every run sharing the budget.
    pub asked: Option<Duration>,
    /// The longest a requested wait may make this run wait (`RETRY_MAX_REQUESTED_WAIT`): a
    /// wait another run stored is trusted no further than this run's own request would be.
    pub longest_hold: Duration,
}

/// The answer to a request for a token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reservation {
    /// The retry may go after this delay (zero when a token is there).
    Granted(Duration),
    /// The retry may go, but not for this long: a run sharing the budget was asked to wait
    /// (a `Retry-After`), and its wait holds for every run.
    Held(Duration),
    /// The budget has no token for it: retries already wait for every token it may promise
    /// (its debt bound).
    Refused,
    /// A token is there, but the wait for it (`Budget`), or for the end of a wait a run
    /// sharing the budget was asked for (`Shared`), would end at or past the run's deadline;
    /// no token was taken.
    PastDeadline(Duration, WaitCause),
    /// The budget cannot be used (its store fails, its file cannot be trusted), and its terms
    /// make that no token.
    Unavailable,
    /// A signal that ends the run arrived while the budget was being consulted.
    Interrupted(Signal),
}

/// Whether a run may make its first attempt, as its budget's breaker says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// It may: the breaker is closed, or the budget has none.
    Closed,
    /// It may make one attempt, as the breaker's probe: its end closes the breaker or opens it
    /// again.
    Probe,
    /// It may not: the breaker is open for this long yet.
    Open(Duration),
    /// It may not: the breaker is half open, and another run is its probe, whose lease ends in
    /// this long at most.
    Probing(Duration),
    /// A signal that ends the run arrived while the budget was being consulted.
    Interrupted(Signal),
}

/// Where retry tokens come from. `latest` bounds every call: the time left before the run's
/// deadline (no limit when `None`); what the user should know about the budget goes to `warn`.
pub trait RetryBudget {
    /// Before the first attempt: count it (where the budget earns from first attempts) and ask
    /// its breaker whether the run may make it. One call at most, bounded by `latest` and the
    /// store's own time limit; a budget that cannot answer lets the run go.
    fn admit(&mut self, _latest: Option<Duration>, _warn: &mut dyn FnMut(String)) -> Admission {
        Admission::Closed
    }
    /// Take a token for a retry that must start within the request's `latest`, waiting for it
    /// as long as that allows; when the command `asked` for a wait, every run sharing the
    /// budget holds its retries until it is over.
    fn reserve(&mut self, request: TokenRequest, warn: &mut dyn FnMut(String)) -> Reservation;
    /// The run ended as `ended`, after `admit` answered `admission`: the breaker counts it, and
    /// a probe gives its lease back, whatever the end. Called on every end of a probe, and on
    /// every end of a run that made an attempt. Returns the signal that ends the run if one
    /// arrived meanwhile.
    fn finish(
        &mut self,
        _ended: Ended,
        _admission: Admission,
        _latest: Option<Duration>,
        _warn: &mut dyn FnMut(String),
    ) -> Option<Signal> {
        None
    }
    /// Why a refused retry was refused, in words that follow "giving up after N attempts: ".
    fn refusal(&self) -> String {
        "the retry budget has no token for another in time".into()
    }
    /// The breaker in words, for a run it keeps from starting: "the breaker of ...".
    fn breaker(&self) -> String {
        "the retry budget's breaker".into()
    }
}

/// No budget: every retry may go at once.
impl<B: RetryBudget> RetryBudget for Option<B> {
    fn admit(&mut self, latest: Option<Duration>, warn: &mut dyn FnMut(String)) -> Admission {
        match self {
            Some(budget) => budget.admit(latest, warn),
            None => Admission::Closed,
        }
    }

    fn reserve(&mut self, request: TokenRequest, warn: &mut dyn FnMut(String)) -> Reservation {
        match self {
            Some(budget) => budget.reserve(request, warn),
            None => Reservation::Granted(Duration::ZERO),
        }
    }

    fn finish(
        &mut self,
        ended: Ended,
        admission: Admission,
        latest: Option<Duration>,
        warn: &mut dyn FnMut(String),
    ) -> Option<Signal> {
        self.as_mut()
            .and_then(|budget| budget.finish(ended, admission, latest, warn))
    }

    fn refusal(&self) -> String {
        match self {
            Some(budget) => budget.refusal(),
            None => String::new(),
        }
    }

    fn breaker(&self) -> String {
        match self {
            Some(budget) => budget.breaker(),
            None => String::new(),
        }
    }
}
