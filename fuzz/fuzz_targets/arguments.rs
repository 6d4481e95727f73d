//! Any command line either parses or gets a one-line message (exit 125), never a panic; and
//! whatever parses, the run's arithmetic takes without a panic: every accepted value must work.
//!
//! The input is split at NUL bytes into arguments, each as raw bytes (not necessarily UTF-8).
//! Once a command line parses, the target does with its values what a run does with them: it
//! draws waits from the schedule, turns the time limits into instants, takes budget tokens at
//! moments drawn from the first argument's bytes, plans, and sizes a simulation.
#![no_main]

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::time::{Duration, Instant};

use clap::error::ErrorKind;
use clap::Parser;
use libfuzzer_sys::fuzz_target;
use rand::SeedableRng;
use retry::fuzzing::{
    one_line_error, printable, BucketState, Cli, Config, PlanRequest, Rate, Subcommand,
};

fuzz_target!(|data: &[u8]| {
    let words: Vec<OsString> = std::iter::once(OsString::from("retry"))
        .chain(
            data.split(|&byte| byte == 0)
                .map(|word| OsString::from_vec(word.to_vec())),
        )
        .collect();
    match Cli::try_parse_from(&words) {
        Ok(cli) => exercise(cli, data),
        Err(err)
            if matches!(
                err.kind(),
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion
            ) => {}
        Err(err) => assert_one_line(&one_line_error(&err, &words)),
    }
});

fn exercise(mut cli: Cli, data: &[u8]) {
    if let Some(Subcommand::Simulate(args)) = cli.subcommand.take() {
        // What the simulator would allocate: one result per trial of every point.
        let points = args.clients.0.len() * (args.jitter.len() + 1);
        let trials = points.saturating_mul(args.trials as usize);
        assert!(points <= 5 * 1000, "{points} points");
        let _ = trials;
        return;
    }
    let rate = cli.budget_rate;
    let config = match Config::try_from(cli) {
        Ok(config) => config,
        Err(err) => return assert_one_line(&printable(&err.to_string())),
    };
    let now = Instant::now();
    for limit in [config.process.timeout, config.max_time, Some(config.process.kill_after)] {
        let _ = limit.and_then(|limit| now.checked_add(limit));
    }
    let cap = config.backoff.cap();
    let schedule = config
        .backoff
        .schedule(rand::rngs::Xoshiro256PlusPlus::seed_from_u64(7));
    for wait in schedule.take(200) {
        assert!(wait <= cap);
    }
    budget(rate, data, config.max_time);
    let plan = PlanRequest {
        limit: config.limit,
        backoff: config.backoff,
        seed: 7,
        splay: config.splay,
    };
    plan.rows().take(200).for_each(drop);
}

/// Take tokens at moments drawn from `data`, as runs sharing the budget would.
fn budget(rate: Rate, data: &[u8], latest: Option<Duration>) {
    let mut state: Option<BucketState> = None;
    let mut now = Duration::ZERO;
    for &step in data.iter().take(64) {
        now = now.saturating_add(Duration::from_millis(u64::from(step) << (step % 48)));
        if state.is_some_and(|state| !rate.is_plausible(&state, now)) {
            state = None;
        }
        let (_, next) = rate.reserve(state, now, latest);
        if next.is_some() {
            state = next;
        }
    }
}

fn assert_one_line(message: &str) {
    assert!(!message.trim().is_empty(), "an empty message");
    assert!(
        !message.contains(['\n', '\r']),
        "a message of several lines: {message:?}"
    );
}
