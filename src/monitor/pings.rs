//! A run's two pings: the start, sent on a thread of its own when the first attempt starts (after
//! `--splay`, the breaker and the job's overlap), so that it never holds the attempt back; and
//! the outcome, once the run's exit status is final, after its end files. The start is one try
//! of at most [`START_LIMIT`]; the outcome at most [`TRIES`] tries within [`OUTCOME_LIMIT`] and
//! the run's deadline (with the grace the end files get; only the grace when a signal ended
//! the run). A monitor that is down, slow or refusing is said in a warning, and changes neither
//! the exit status nor the output; only a signal that ends the run ends the wait for it. Both
//! are `POST`s, and both carry an identity of the run's own (a nested run's check-in is its
//! own, never its outer run's): the start's answer tells the body's limit before any body is
//! sent.
//!
//! Every run of a job that starts an attempt sends its start, tolerant or not. How a failure
//! the job tolerates (`retry job set NAME --alert-after N`) is told depends on the monitor
//! (`dialect`): as the success that keeps it from alerting, its body saying it failed, where
//! the monitor keeps no tolerance; as a failure where it keeps its own, the run then saying
//! once which setting of the monitor's to use instead. A run that another run of its own job
//! kept out is a note where the monitor keeps notes (healthchecks' `/log`), else nothing.

use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use super::Monitor;
use super::body::{self, DEFAULT_LIMIT};
use super::dialect::Ping;
use crate::held_job::SharedJob;
use crate::http::{self, Answer, NotTaken, Url};
use crate::lifecycle::{Ending, Observer, Stage};
use crate::output::tail::KeptTails;
use retry_policy::deadline::telling_limit;
use retry_policy::events::Event;
use retry_policy::exit::Exit;
use retry_policy::job_end::{self, Told};
use retry_policy::outcome::{Reason, RunEnd};
use retry_policy::run_id::RunId;
use retry_policy::signal::Signal;
use retry_process::signals::{SignalWatch, Waited, Waiter};

/// The longest the start ping may take.
const START_LIMIT: Duration = Duration::from_secs(2);

/// The longest the outcome's tries may take together.
const OUTCOME_LIMIT: Duration = Duration::from_secs(10);

/// The most tries of the outcome.
const TRIES: u32 = 3;

/// The pause before the outcome's second try, doubled before the third.
const PAUSE: Duration = Duration::from_millis(500);

/// The content type of a ping's body.
const TEXT: &str = "text/plain; charset=utf-8";

/// The run's pings to its monitor.
pub(crate) struct Pings<'m> {
    monitor: &'m Monitor,
    /// The run's check-in: its own, for this monitor.
    check_in: String,
    /// The last attempt's output, for the outcome's body.
    tails: KeptTails,
    /// The job's terms, as its hold read them: from which failed run in a row its failures
    /// alert.
    job: SharedJob,
    /// The start's answer, once it is under way.
    start: Option<Receiver<Result<Answer, http::Failure>>>,
    /// Whether the start was sent, or could not be.
    started: bool,
    /// What went wrong with the start.
    start_problem: Option<String>,
    /// What the run warned of, each once (the first few): the outcome's body says it.
    warnings: Vec<String>,
}

/// The most warnings an outcome's body says.
const MOST_WARNINGS: usize = 5;

impl<'m> Pings<'m> {
    /// The pings of the run whose check-in is `check_in` (an identity of its own: never the
    /// `RETRY_RUN_ID` it shares with its nest) to `monitor`, whose `job`'s terms (read as the
    /// run takes its hold on the job) say from which failed run in a row its failures alert,
    /// with the last attempt's output in `tails`.
    pub(crate) fn new(
        monitor: &'m Monitor,
        check_in: RunId,
        job: SharedJob,
        tails: KeptTails,
    ) -> Pings<'m> {
        Pings {
            monitor,
            check_in: check_in.to_string(),
            tails,
            job,
            start: None,
            started: false,
            start_problem: None,
            warnings: Vec::new(),
        }
    }

    /// The failed runs in a row from which the job's failures alert.
    fn alert_after(&self) -> u32 {
        self.job.terms().alert_after
    }

    /// Send the start on a thread of its own, where the monitor has one.
    fn send_start(&mut self) {
        self.started = true;
        let dialect = self.monitor.dialect;
        let machine = dialect.message_limit().map(|_| this_host());
        let words = ("", machine.as_deref().unwrap_or_default());
        let Some(request) = dialect.request(&self.monitor.url, Ping::Start, &self.check_in, words)
        else {
            return;
        };
        let (answer, answered) = mpsc::channel();
        let sent = std::thread::Builder::new()
            .name("retry-ping".into())
            .spawn(move || {
                let until = Instant::now() + START_LIMIT;
                let _ = answer.send(http::send(&post(&request.url, None), until));
            });
        match sent {
            Ok(_) => self.start = Some(answered),
            Err(err) => self.start_problem = Some(format!("cannot start a thread: {err}")),
        }
    }

    /// Send the outcome of the run that ended as `end`, when its job's failed runs in a row
    /// (this one among them) number `failed_in_a_row`, if its history counted it; within the
    /// run's `deadline` (and its grace), awake to `watch`'s signals. `warn` is told what the
    /// monitor was not told; a signal that ends the run is returned.
    fn tell_outcome(
        mut self,
        end: &RunEnd,
        failed_in_a_row: Option<u32>,
        watch: &SignalWatch,
        deadline: Option<Instant>,
        warn: &mut dyn FnMut(String),
    ) -> Result<(), Signal> {
        let host = self.monitor.host().to_string();
        let interrupted = matches!(end.reason, Reason::Interrupted(..));
        let until = telling_limit(Instant::now(), OUTCOME_LIMIT, deadline, interrupted);
        let limit = self.body_limit(watch, until)?;
        if let Some(why) = self.start_problem.take() {
            warn(format!(
                "the monitor ({host}) was not told the run started: {why}"
            ));
        }
        let status = Exit::of(end).status();
        let (dialect, alert_after) = (self.monitor.dialect, self.alert_after());
        let ping = match job_end::told(end, status, alert_after, failed_in_a_row) {
            Told::Success => Ping::Success,
            Told::Failure(status) => Ping::Failure(status),
            Told::Tolerated(status) => Ping::Tolerated(status),
            Told::KeptOut(status) => Ping::KeptOut(status),
        };
        let mut summary = body::summary(end, status);
        if let Ping::Tolerated(_) = ping {
            let line = match dialect.own_tolerance(alert_after) {
                None => body::tolerated(failed_in_a_row.unwrap_or(1), alert_after),
                Some(setting) => {
                    let line = body::own_tolerance(&setting, alert_after);
                    warn(format!(
                        "the monitor ({host}): {}",
                        line.trim_start_matches("retry: ")
                    ));
                    line
                }
            };
            summary = format!("{line}\n{summary}");
        }
        for warning in &self.warnings {
            summary = format!("{summary}\nretry: warning: {warning}");
        }
        let tails = self.tails.latest();
        let message = dialect.message_limit().map(|limit| {
            String::from_utf8_lossy(&body::body(&summary, tails.as_ref(), limit)).into_owned()
        });
        let machine = dialect
            .message_limit()
            .map(|_| this_host())
            .unwrap_or_default();
        let words = (message.as_deref().unwrap_or(&summary), machine.as_str());
        let Some(request) = dialect.request(&self.monitor.url, ping, &self.check_in, words) else {
            return Ok(());
        };
        let body = request
            .with_body
            .then(|| body::body(&summary, tails.as_ref(), limit));
        let url = request.url;
        let sent = watch.run_job(Some(until), move || send_outcome(&url, body, until));
        let why = match sent {
            Ok(Waited::Done(Ok(()))) => return Ok(()),
            Ok(Waited::Done(Err(why))) => why.to_string(),
            Ok(Waited::Stopped(signal)) => return Err(signal),
            Ok(Waited::TimedOut) => "it did not answer in time".to_string(),
            Err(err) => format!("cannot start a thread: {err}"),
        };
        warn(format!(
            "the monitor ({host}) was not told how the run ended: {why}"
        ));
        Ok(())
    }

    /// The most bytes the monitor takes in a body, as the start's answer announced it; waits
    /// for that answer (within the start's limit, and `until`), awake to the signals that end a
    /// run.
    fn body_limit(&mut self, watch: &SignalWatch, until: Instant) -> Result<usize, Signal> {
        let Some(answered) = self.start.take() else {
            return Ok(DEFAULT_LIMIT);
        };
        let until = until.min(Instant::now() + START_LIMIT);
        let answer = match watch.run_job(Some(until), move || answered.recv()) {
            Ok(Waited::Done(Ok(answer))) => answer.map_err(|why| why.to_string()),
            Ok(Waited::Stopped(signal)) => return Err(signal),
            Ok(Waited::Done(Err(_)) | Waited::TimedOut) => Err("it did not answer".to_string()),
            Err(err) => Err(format!("cannot start a thread: {err}")),
        };
        match answer {
            Ok(answer) if is_success(answer.status) => Ok(announced_limit(&answer)),
            Ok(answer) => {
                self.start_problem = Some(format!("it answered {}", answer.status));
                Ok(DEFAULT_LIMIT)
            }
            Err(why) => {
                self.start_problem = Some(why);
                Ok(DEFAULT_LIMIT)
            }
        }
    }
}

impl Observer for Pings<'_> {
    fn stage(&self) -> Stage {
        Stage::Tell
    }

    fn emit(&mut self, event: &Event) {
        match event {
            Event::AttemptStart { .. } if !self.started => self.send_start(),
            Event::Warning(message)
                if self.warnings.len() < MOST_WARNINGS && !self.warnings.contains(message) =>
            {
                self.warnings.push(message.clone());
            }
            _ => {}
        }
    }

    fn finish(self: Box<Self>, ending: &mut Ending<'_>) {
        let failed_in_a_row = ending.counted.map(|(in_a_row, _)| in_a_row);
        ending.telling(|end, watch, deadline, warn| {
            self.tell_outcome(end, failed_in_a_row, watch, deadline, warn)
                .err()
        });
    }
}

/// The body limit `answer` announces (`Ping-Body-Limit`), or [`DEFAULT_LIMIT`].
fn announced_limit(answer: &Answer) -> usize {
    answer
        .header("Ping-Body-Limit")
        .and_then(|limit| limit.parse().ok())
        .filter(|&limit| limit > 0)
        .unwrap_or(DEFAULT_LIMIT)
}

/// A `POST` of `body` (none: an empty one) to `url`.
fn post<'b>(url: &'b Url, body: Option<&'b [u8]>) -> http::Request<'b> {
    http::Request {
        method: "POST",
        url,
        headers: &[],
        body: Some((TEXT, body.unwrap_or_default())),
    }
}

/// This machine's name, as the monitors that show it take it.
fn this_host() -> String {
    nix::unistd::gethostname()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Send the outcome to `url` (with `body`, if any), trying again after a failure that another
/// try could mend, within `until`.
fn send_outcome(url: &Url, body: Option<Vec<u8>>, until: Instant) -> Result<(), http::Undelivered> {
    let request = post(url, body.as_deref());
    let mut pause = PAUSE;
    let mut tries = 0;
    loop {
        tries += 1;
        let left = until.saturating_duration_since(Instant::now());
        // Each try gets its share of the time left.
        let share = left / (TRIES + 1 - tries);
        let why = match http::send(&request, Instant::now() + share) {
            Ok(answer) if is_success(answer.status) => return Ok(()),
            Ok(answer) if !may_mend(answer.status) => {
                return Err(NotTaken::Answered(answer.status).at_once());
            }
            Ok(answer) => NotTaken::Answered(answer.status),
            Err(failure) => NotTaken::Failed(failure),
        };
        if tries == TRIES || Instant::now() + pause >= until {
            return Err(why.after(tries));
        }
        std::thread::sleep(pause);
        pause *= 2;
    }
}

fn is_success(status: u16) -> bool {
    (200..300).contains(&status)
}

/// Whether another try could get a different answer than `status`.
fn may_mend(status: u16) -> bool {
    matches!(status, 408 | 429 | 500..=599)
}
