//! The fuzz targets' bodies, inside the crate so that they reach what a run does without making
//! it public: any command line either parses or gets a one-line message (exit 125), never a
//! panic, and whatever parses, the run's arithmetic takes without a panic; any bytes an HTTP
//! server answers are read in bounded memory, and what is read is taken without a panic.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::time::{Duration, Instant};

use clap::error::ErrorKind;

use retry_budget::model::{BucketState, Terms};
use retry_budget::terms_change::TermsChange;
use retry_policy::printable::printable;
use retry_policy::run::{TokenRequest, Waits};

use crate::options::Config;
use crate::options::{BudgetCommand, Cli, Deferred, ToolCommand, one_line_error};

/// Parse `data`, split at NUL bytes into arguments (raw bytes, not necessarily UTF-8), as the
/// binary would; then do with the values what a run does with them: draw waits, turn the time
/// limits into instants, and plan; or, for `retry budget set`, take budget tokens on its terms
/// at moments drawn from `data`.
pub fn arguments(data: &[u8]) {
    let words: Vec<OsString> = std::iter::once(OsString::from("retry"))
        .chain(
            data.split(|&byte| byte == 0)
                .map(|word| OsString::from_vec(word.to_vec())),
        )
        .collect();
    let mut cli = match Cli::parse_args(&words) {
        Ok(cli) => cli,
        Err(err)
            if matches!(
                err.kind(),
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion
            ) =>
        {
            return;
        }
        Err(err) => return assert_one_line(&one_line_error(&err, &words)),
    };
    if let Some(ToolCommand::Budget(Deferred(budget_args))) = cli.tool.take() {
        if let BudgetCommand::Set(set) = budget_args.command {
            let change = TermsChange {
                rate: set.rate,
                ratio: set.ratio.map(|ratio| ratio.0),
                window: set.window,
                ..TermsChange::default()
            };
            match change
                .applied(None)
                .and_then(|terms| terms.check().map(|()| terms))
            {
                Ok(terms) => budget(&terms, data, None),
                Err(why) => assert_one_line(&printable(&why.to_string())),
            }
        }
        return;
    }
    let config = match Config::try_from(cli) {
        Ok(config) => config,
        Err(err) => return assert_one_line(&printable(&err.to_string())),
    };
    let rules = config.rules();
    let now = Instant::now();
    let _ = rules.deadline.map(|deadline| deadline.left(now));
    let mut waits = config.waits();
    let cap = config.plan().backoff.cap();
    for _ in 0..200 {
        assert!(waits.next_wait() <= cap);
    }
    config.plan().rows().take(200).for_each(drop);
}

/// Count first attempts and take tokens at moments drawn from `data`, as runs sharing the
/// budget would; every state stored must be one the store would trust again.
fn budget(terms: &Terms, data: &[u8], latest: Option<Duration>) {
    let mut state: Option<BucketState> = None;
    let mut now: u64 = 0;
    for &step in data.iter().take(64) {
        now = now.saturating_add(u64::from(step) << (step % 48));
        if state.is_some_and(|state| !terms.is_plausible(&state, now)) {
            state = None;
        }
        let request = TokenRequest {
            latest,
            asked: (step % 5 == 0).then(|| Duration::from_secs(u64::from(step))),
            longest_hold: Duration::from_secs(900),
        };
        let next = match step % 3 {
            0 => terms.first_attempt(state, now),
            _ => terms.reserve(state, now, &request).1,
        };
        assert!(terms.is_plausible(&next, now), "{next:?} on {terms:?}");
        state = Some(next);
    }
}

fn assert_one_line(message: &str) {
    assert!(!message.trim().is_empty(), "an empty message");
    assert!(
        !message.contains(['\n', '\r']),
        "a message of several lines: {message:?}"
    );
}

/// Read `data` as an HTTP server's answer is read, then take from it what a run takes: the
/// status, the body limit a monitor announces, the collector's `Retry-After`, and the spans a
/// collector's body says it rejected.
pub fn answers(data: &[u8]) {
    let Ok(answer) = crate::http::read_answer(&mut &data[..], || Duration::MAX) else {
        return;
    };
    assert!((100..600).contains(&answer.status));
    assert!(answer.body().len() <= data.len());
    let _ = answer.header("Ping-Body-Limit").map(str::parse::<usize>);
    let _ = answer.header("Retry-After").map(str::parse::<u64>);
    if let Some((_, message)) = crate::trace::rejected(answer.body()) {
        assert!(message.len() <= answer.body().len() * 3);
    }
}
