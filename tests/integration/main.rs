//! Integration tests: the real `retry` binary against real child processes, shells, terminals and
//! redis-servers. Each module holds the tests of one subject; `support` holds what they share
//! with the presets' target (`tests/presets/`), which tries the tool on the programs it knows.

#![forbid(unsafe_code)]

/// The composite GitHub Action, on a simulated runner.
mod action;
/// The retry budget, in a file and in a Redis store.
mod budget;
/// `--ci`, `--report dotenv:`, `--hold all` and `--report prom:`: CI systems and cron, with
/// a real node_exporter and promtool.
mod ci_and_cron;
/// The bash, zsh and fish completions, tried in the real shells.
mod completions;
/// Every crontab line of the docs, run as cron runs it.
mod crontab;
/// Deadlines passed on to attempts, and taken from an outer run and a CI job.
mod deadlines;
/// Flaky successes recorded, and `--flaky-exit`.
mod flakiness;
/// The committed man pages and completions are what the generator makes today.
mod generated_files;
/// `--on-retry` and `--on-give-up`.
mod hooks;
/// The code holds to the layers the map in docs/development.md draws.
mod layers;
/// Every relative link in the README and `docs/` resolves.
mod links;
/// Heartbeat monitors told of each run (`RETRY_MONITOR`).
mod monitor;
/// Rules on the command's output, and held output (`--hold`).
mod output;
/// `--plan`: the schedule a run would follow, without running it.
mod plan;
/// An attempt's whole process group ends with it.
mod process_groups;
/// Pings and spans through a real proxy, as curl would send them.
mod proxy;
/// The recipes of the README and its guides, run against the real programs they wrap.
mod recipes;
/// `--report`: the run's record, and where it may be written.
mod report;
/// Waits the command requests (`RETRY_AFTER_FILE`, `--retry-after-from`) and nested runs.
mod requested;
/// A `--retry-on` rule's limit, and the rules below it once it is spent.
mod rule_limits;
/// The core run: statuses, decisions, messages and events.
mod run;
/// `RETRY_RUN_ID`: one identity a run, kept by the runs nested in it.
mod run_id;
/// A job's schedule: its next slot ends a run of the job.
mod schedule;
/// `--seed host` and `--splay`.
mod seed_and_splay;
/// What `retry -h` says of each option, held to what it does.
mod short_help;
/// Signals sent to the tool during attempts and waits.
mod signals;
/// Readers that stop reading cannot hold the run.
mod stalled_readers;
/// Starting a process: whose failure a failed start is, and nothing left behind.
mod starts;
/// What each attempt reads on stdin, replayed or not.
mod stdin;
/// What the tests share: the harness, a terminal, a redis-server.
#[path = "../support/mod.rs"]
mod support;
/// The attempt owns the terminal and the keys typed there.
mod terminal;
/// `--kill-after` and `--max-time`.
mod time_limits;
/// Traces through OpenTelemetry's variables: TRACEPARENT per attempt, and OTLP export.
mod traces;
/// Bad input, help, version and extreme values.
mod usage;
/// The tool's words, byte for byte, kept in snapshots under `snapshots/`.
mod words;
