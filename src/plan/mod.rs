//! `--plan`: the schedule of waits the options give, and the rules that decide what each
//! attempt's end means, printed instead of running anything.
//!
//! One row per attempt (its number, the wait before it, the total waited by its start, and the
//! interval the wait was drawn from), then what the total wait is likely to be, from many sampled
//! schedules. An unlimited run shows its rows until the waits reach the cap, then says how it goes
//! on. Then how long the whole run can take (`bounds`), and the rules, in the order they are
//! tried. Nothing here sleeps or runs a command; output goes to the writer given.

mod bounds;

use retry_policy::choice::Choice;
use std::io::{self, Write};
use std::time::Duration;

use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use serde::Serialize;

use crate::report::verbosity::LogFormat;
pub(crate) use bounds::PastRuns;
use bounds::{PastRunsJson, WorstCaseJson};
use retry_policy::attempts::AttemptLimit;
use retry_policy::backoff::{self, Backoff, Draw, Jitter};
use retry_policy::duration::{format_duration, to_millis};
use retry_policy::matching::OutputStream;
use retry_policy::presets::Preset;
use retry_policy::rules::{Origin, RuleList, RuleRow};

/// Rows shown for an unlimited run at the least and at the most.
const UNLIMITED_ROWS: (u64, u64) = (10, 100);
/// The most attempts a plan covers: a larger `--max-attempts` is planned this far, and said so.
const PLANNED_ATTEMPTS: u64 = 100_000;
/// Rows shown at the start of a long finite text plan, before the rest is elided.
const TEXT_HEAD_ROWS: u64 = 50;
/// Random draws spent on sampling the total wait.
const SAMPLING_DRAWS: u64 = 4_000_000;
/// Bounds on the number of sampled schedules.
const SAMPLES: (u64, u64) = (200, 10_000);

/// What to plan.
#[derive(Clone, Debug)]
pub(crate) struct PlanRequest<'a> {
    pub(crate) limit: AttemptLimit,
    pub(crate) backoff: Backoff,
    pub(crate) seed: u64,
    /// The `--splay` bound (zero: none).
    pub(crate) splay: Duration,
    /// `--max-time`, or a sooner deadline: no attempt starts at or after it.
    pub(crate) max_time: Option<Duration>,
    /// Which deadline applies and where it came from, when it is not `--max-time`'s.
    pub(crate) deadline: Option<String>,
    /// The budget the run spends from, and what it may do to the waits, in words.
    pub(crate) budget: String,
    /// `RETRY_MAX_REQUESTED_WAIT`: how long a command's requested wait may make a wait.
    pub(crate) max_requested_wait: Duration,
    /// The rules that decide what each attempt's end means.
    pub(crate) rules: &'a RuleList,
    /// `--preset`, as it resolved, whose sources the plan names.
    pub(crate) preset: Option<&'static Preset>,
    /// The longest one attempt runs: `--timeout` and `--kill-after`; none without `--timeout`.
    pub(crate) attempt_time: Option<Duration>,
    /// `--kill-after`: how long an attempt the deadline cuts may still run.
    pub(crate) kill_after: Duration,
    /// The job, and how long its past runs took, when its history has any.
    pub(crate) past: Option<(&'a str, PastRuns)>,
}

/// One attempt of the plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Row {
    /// The attempt's number, from 1.
    pub(crate) attempt: u64,
    /// The wait before it, with the interval it was drawn from; `None` for the first attempt.
    pub(crate) draw: Option<Draw>,
    /// The total waited by the time it starts.
    pub(crate) elapsed: Duration,
}

/// The spread of the total wait over sampled schedules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TotalWait {
    pub(crate) min: Duration,
    pub(crate) median: Duration,
    pub(crate) p99: Duration,
    pub(crate) max: Duration,
    /// How many schedules were sampled.
    pub(crate) samples: u64,
}

impl PlanRequest<'_> {
    /// The rows of the plan: every attempt of a finite run, or enough of an unlimited one to see
    /// the waits reach the cap; none that `--max-time` rules out.
    pub(crate) fn rows(&self) -> impl Iterator<Item = Row> + use<> {
        let max_time = self.max_time;
        self.rows_regardless_of_max_time()
            .take_while(move |row| max_time.is_none_or(|max| row.elapsed < max))
    }

    /// The first attempt `--max-time` rules out, if the plan would otherwise show it: the wait
    /// before it would end at or past the deadline (with attempts taking no time at all).
    pub(crate) fn cut_by_max_time(&self) -> Option<u64> {
        let max = self.max_time?;
        self.rows_regardless_of_max_time()
            .find(|row| row.elapsed >= max)
            .map(|row| row.attempt)
    }

    /// What the plan calls the time limit it is cut by: `--max-time`, or the deadline when a
    /// sooner one (an outer run's, a CI job's, the job's next slot) is in force, whose source
    /// the plan says on a line of its own.
    fn time_limit_name(&self) -> &'static str {
        match self.deadline {
            Some(_) => "the deadline",
            None => "--max-time",
        }
    }

    fn rows_regardless_of_max_time(&self) -> impl Iterator<Item = Row> + use<> {
        let mut schedule = self
            .backoff
            .schedule(Xoshiro256PlusPlus::seed_from_u64(self.seed));
        let mut elapsed = Duration::ZERO;
        let splay = self.splay_draw();
        (1..=self.shown_attempts()).map(move |attempt| {
            let draw = match attempt {
                1 => splay,
                _ => Some(schedule.draw()),
            };
            elapsed = elapsed.saturating_add(draw.map_or(Duration::ZERO, |d| d.wait));
            Row {
                attempt,
                draw,
                elapsed,
            }
        })
    }

    /// The splay before the first attempt, as drawn for this seed, if there is one.
    fn splay_draw(&self) -> Option<Draw> {
        (!self.splay.is_zero()).then(|| Draw {
            wait: backoff::splay(self.seed, self.splay),
            low: Duration::ZERO,
            high: self.splay,
        })
    }

    /// How many attempts the rows cover.
    fn shown_attempts(&self) -> u64 {
        match self.limit.count() {
            Some(count) => count.min(PLANNED_ATTEMPTS),
            None => (self.retries_to_cap() + 2).clamp(UNLIMITED_ROWS.0, UNLIMITED_ROWS.1),
        }
    }

    /// How many retries it takes the exponential ceiling to reach the cap (bounded).
    fn retries_to_cap(&self) -> u64 {
        let cap = self.backoff.cap();
        self.backoff
            .with_jitter(Jitter::None)
            .schedule(Xoshiro256PlusPlus::seed_from_u64(0))
            .take(UNLIMITED_ROWS.1 as usize)
            .position(|wait| wait >= cap)
            .map_or(UNLIMITED_ROWS.1, |index| index as u64 + 1)
    }

    /// The spread of the total wait, for a finite run with random jitter.
    pub(crate) fn total_wait(&self) -> Option<TotalWait> {
        let retries = self
            .limit
            .count()
            .filter(|&n| n <= PLANNED_ATTEMPTS)?
            .saturating_sub(1);
        if (self.backoff.jitter() == Jitter::None || retries == 0) && self.splay.is_zero() {
            return None;
        }
        let samples = (SAMPLING_DRAWS / retries.max(1)).clamp(SAMPLES.0, SAMPLES.1);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(self.seed ^ 0x9e37_79b9_7f4a_7c15);
        let mut totals: Vec<Duration> = (0..samples)
            .map(|_| {
                let splay = match self.splay.is_zero() {
                    true => Duration::ZERO,
                    false => self.splay.mul_f64(rng.random::<f64>()),
                };
                let schedule = self.backoff.schedule(&mut rng);
                let deadline = self.max_time.unwrap_or(Duration::MAX);
                schedule
                    .take(retries as usize)
                    .scan(splay, |total, wait| {
                        *total = total.saturating_add(wait);
                        (*total < deadline).then_some(*total)
                    })
                    .last()
                    .unwrap_or(splay)
            })
            .collect();
        totals.sort_unstable();
        let at = |quantile: f64| totals[((quantile * samples as f64).ceil() as usize).max(1) - 1];
        Some(TotalWait {
            min: totals[0],
            median: at(0.5),
            p99: at(0.99),
            max: totals[totals.len() - 1],
            samples,
        })
    }
}

/// Print the plan for `request` in `format`.
pub(crate) fn print(
    out: &mut impl Write,
    request: &PlanRequest,
    format: LogFormat,
) -> io::Result<()> {
    match format {
        LogFormat::Text => print_text(out, request),
        LogFormat::Json => print_json(out, request),
    }
}

fn print_text(out: &mut impl Write, request: &PlanRequest) -> io::Result<()> {
    let random = request.backoff.jitter() != Jitter::None || !request.splay.is_zero();
    writeln!(out, "{}", describe(request))?;
    write!(
        out,
        "{:>8}  {:>12}  {:>14}",
        "attempt", "wait before", "waited so far"
    )?;
    writeln!(out, "{}", if random { "  wait drawn from" } else { "" })?;
    let count = request.limit.count();
    let cut = request.cut_by_max_time();
    let last = cut.map_or(request.shown_attempts(), |cut| cut - 1);
    let mut last_row = None;
    for row in request.rows() {
        let elided = count.is_some() && row.attempt > TEXT_HEAD_ROWS && row.attempt < last;
        if elided {
            if row.attempt == TEXT_HEAD_ROWS + 1 {
                writeln!(
                    out,
                    "{:>8}  (attempts {} to {} not shown)",
                    "...",
                    row.attempt,
                    last - 1
                )?;
            }
            continue;
        }
        write_text_row(out, &row, random)?;
        last_row = Some(row);
    }
    if let (Some(cut), Some(max_time)) = (cut, request.max_time) {
        writeln!(
            out,
            "no attempt {cut} or later: the wait before it would end past {} ({})",
            request.time_limit_name(),
            format_duration(max_time)
        )?;
    }
    match (count, request.total_wait(), last_row) {
        (Some(count), _, _) if count > last && cut.is_none() => writeln!(
            out,
            "the plan stops at attempt {last} of {count}; every later wait is at most {}",
            format_duration(request.backoff.cap())
        )?,
        (None, _, _) if cut.is_none() => writeln!(
            out,
            "and so on without end (--max-attempts unlimited), each wait at most {}",
            format_duration(request.backoff.cap())
        )?,
        (Some(_), Some(total), _) => writeln!(
            out,
            "total wait over {} sampled schedules: min {}, median {}, p99 {}, max {}",
            total.samples,
            format_duration(total.min),
            format_duration(total.median),
            format_duration(total.p99),
            format_duration(total.max)
        )?,
        (Some(_), None, Some(row)) => {
            writeln!(out, "total wait: {}", format_duration(row.elapsed))?
        }
        _ => {}
    }
    if let Some(deadline) = &request.deadline {
        writeln!(out, "deadline: {deadline}")?;
    }
    if request.max_time.is_some() {
        writeln!(
            out,
            "the attempts' own run time counts toward {} too, so the run may stop sooner",
            request.time_limit_name()
        )?;
    }
    writeln!(out, "{}", bounds::describe(request, &request.worst_case()))?;
    if let Some((job, past)) = &request.past {
        writeln!(out, "{}", bounds::describe_past(job, past))?;
    }
    writeln!(out, "retry budget: {}", request.budget)?;
    writeln!(
        out,
        "waits the command asks for (RETRY_AFTER_FILE, --retry-after-output) may be longer, up \
         to {} each",
        format_duration(request.max_requested_wait)
    )?;
    if random {
        writeln!(
            out,
            "seed {0}: repeat these waits with --seed {0}",
            request.seed
        )?;
    }
    write_rules(out, request.rules)?;
    write_attempt_bound(out, request)?;
    match request.preset {
        Some(preset) => writeln!(
            out,
            "the --preset {} rules come from {}",
            preset.name, preset.sources
        ),
        None => Ok(()),
    }
}

/// The rules, in the order they are tried.
fn write_rules(out: &mut impl Write, rules: &RuleList) -> io::Result<()> {
    writeln!(
        out,
        "what an attempt's end means, the first rule that holds deciding:"
    )?;
    for row in rules.rows() {
        let output = row.output.as_ref().map_or(String::new(), |output| {
            format!(
                ", a line of {} matching '{}'",
                output.stream.described(),
                output.regex
            )
        });
        let statuses = match row.statuses.as_str() {
            "any" | "any failure" => row.statuses.clone(),
            statuses => format!("status {statuses}"),
        };
        let limit = row.limit.map_or(String::new(), |limit| {
            format!(" at most {limit} {}", plural(limit.into(), "time", "times"))
        });
        writeln!(
            out,
            "  {statuses}{output}: {}{limit}: {}",
            row.verdict.name(),
            described(&row.origin)
        )?;
    }
    Ok(())
}

/// What the rules' limits make of `-n`, when every rule that retries has a limit.
fn write_attempt_bound(out: &mut impl Write, request: &PlanRequest) -> io::Result<()> {
    let Some(bound) = request.rules.attempt_bound() else {
        return Ok(());
    };
    let against = match request.limit.count() {
        Some(count) if count <= bound => format!("; --max-attempts {count} comes first"),
        Some(count) => format!(", fewer than --max-attempts {count}"),
        None => ", though --max-attempts is unlimited".to_string(),
    };
    writeln!(
        out,
        "every rule that retries has a limit: at most {bound} attempts (the first, and {} \
         retries){against}",
        bound - 1
    )
}

/// `one` for 1, `many` otherwise.
fn plural(count: u64, one: &'static str, many: &'static str) -> &'static str {
    match count {
        1 => one,
        _ => many,
    }
}

/// Where a rule comes from, in the plan's words.
fn described(origin: &Origin) -> String {
    match origin {
        Origin::Given { flag, text } => format!("{flag} {text}"),
        Origin::Preset { preset, meaning } => format!("--preset {preset}: {meaning}"),
        Origin::Guard(meaning) => format!("the tool's: {meaning}"),
        Origin::Default(meaning) => format!("the default: {meaning}"),
    }
}

/// One rule of the JSON plan.
#[derive(Serialize)]
struct PlanRule {
    statuses: String,
    stream: Option<OutputStream>,
    output: Option<String>,
    verdict: &'static str,
    /// `user`, `tool`, `preset` or `default`.
    origin: &'static str,
    /// The user's rule as given, or what the end is.
    meaning: String,
    /// `:max=N`: the most retries the rule gives in a run.
    limit: Option<u32>,
}

impl PlanRule {
    fn of(row: RuleRow) -> Self {
        let (origin, meaning) = match row.origin {
            Origin::Given { flag, text } => ("user", format!("{flag} {text}")),
            Origin::Preset { meaning, .. } => ("preset", meaning.to_string()),
            Origin::Guard(meaning) => ("tool", meaning.to_string()),
            Origin::Default(meaning) => ("default", meaning.to_string()),
        };
        PlanRule {
            statuses: row.statuses,
            stream: row.output.as_ref().map(|output| output.stream),
            output: row.output.map(|output| output.regex),
            verdict: row.verdict.name(),
            origin,
            meaning,
            limit: row.limit,
        }
    }
}

/// The rules line of the JSON plan.
#[derive(Serialize)]
struct PlanRules {
    event: &'static str,
    rules: Vec<PlanRule>,
    /// The most attempts the rules' limits allow, when every rule that retries has one.
    attempt_bound: Option<u64>,
    preset: Option<PlanPreset>,
}

/// The preset in force, in the JSON plan.
#[derive(Serialize)]
struct PlanPreset {
    name: &'static str,
    sources: &'static str,
    /// The stream its patterns read.
    stream: OutputStream,
}

/// The header line: the options that shape the plan.
fn describe(request: &PlanRequest) -> String {
    let backoff = &request.backoff;
    let mut text = format!(
        "plan for {} attempts: jitter {}, base {}, cap {}",
        request.limit,
        backoff.jitter().name(),
        format_duration(backoff.base()),
        format_duration(backoff.cap()),
    );
    // Decorrelated waits grow from the previous wait, never by the multiplier.
    if backoff.jitter() != Jitter::Decorrelated {
        text += &format!(", multiplier {}", backoff.multiplier());
    }
    // A sooner deadline is no option of the run's: its own line says it.
    if let (Some(max_time), None) = (request.max_time, &request.deadline) {
        text += &format!(", max-time {}", format_duration(max_time));
    }
    text
}

fn write_text_row(out: &mut impl Write, row: &Row, random: bool) -> io::Result<()> {
    let wait = row
        .draw
        .map_or("-".into(), |draw| format_duration(draw.wait));
    write!(
        out,
        "{:>8}  {:>12}  {:>14}",
        row.attempt,
        wait,
        format_duration(row.elapsed)
    )?;
    match row.draw {
        Some(draw) if random && draw.low != draw.high => writeln!(
            out,
            "  {} to {}",
            format_duration(draw.low),
            format_duration(draw.high)
        ),
        _ => writeln!(out),
    }
}

/// One attempt of the JSON plan.
#[derive(Serialize)]
struct PlanAttempt {
    event: &'static str,
    attempt: u64,
    wait_ms: f64,
    elapsed_ms: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    min_wait_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_wait_ms: Option<f64>,
}

/// The last line of the JSON plan.
#[derive(Serialize)]
struct PlanTotal {
    event: &'static str,
    seed: u64,
    max_attempts: AttemptLimit,
    jitter: Jitter,
    planned_attempts: u64,
    max_time_ms: Option<f64>,
    cut_by_max_time: bool,
    total_wait: Option<TotalWaitJson>,
    budget: String,
    max_requested_wait_ms: f64,
    worst_case: Option<WorstCaseJson>,
    past_runs: Option<PastRunsJson>,
}

/// The spread of the total wait, in JSON.
#[derive(Serialize)]
struct TotalWaitJson {
    min_ms: f64,
    p50_ms: f64,
    p99_ms: f64,
    max_ms: f64,
    samples: u64,
}

fn print_json(out: &mut impl Write, request: &PlanRequest) -> io::Result<()> {
    let mut planned = 0;
    for row in request.rows() {
        // The interval a wait was drawn from, only where the wait is random.
        let interval = row.draw.filter(|draw| draw.low != draw.high);
        let attempt = PlanAttempt {
            event: "plan_attempt",
            attempt: row.attempt,
            wait_ms: to_millis(row.draw.map_or(Duration::ZERO, |d| d.wait)),
            elapsed_ms: to_millis(row.elapsed),
            min_wait_ms: interval.map(|draw| to_millis(draw.low)),
            max_wait_ms: interval.map(|draw| to_millis(draw.high)),
        };
        planned = row.attempt;
        writeln!(out, "{}", serde_json::to_string(&attempt)?)?;
    }
    let total = PlanTotal {
        event: "plan_total",
        seed: request.seed,
        max_attempts: request.limit,
        jitter: request.backoff.jitter(),
        planned_attempts: planned,
        max_time_ms: request.max_time.map(to_millis),
        cut_by_max_time: request.cut_by_max_time().is_some(),
        total_wait: request.total_wait().map(|total| TotalWaitJson {
            min_ms: to_millis(total.min),
            p50_ms: to_millis(total.median),
            p99_ms: to_millis(total.p99),
            max_ms: to_millis(total.max),
            samples: total.samples,
        }),
        budget: request.budget.clone(),
        max_requested_wait_ms: to_millis(request.max_requested_wait),
        worst_case: WorstCaseJson::of(&request.worst_case()),
        past_runs: request
            .past
            .as_ref()
            .and_then(|(_, past)| PastRunsJson::of(past)),
    };
    writeln!(out, "{}", serde_json::to_string(&total)?)?;
    let rules = PlanRules {
        event: "plan_rules",
        rules: request.rules.rows().into_iter().map(PlanRule::of).collect(),
        attempt_bound: request.rules.attempt_bound(),
        preset: request.preset.map(|preset| PlanPreset {
            name: preset.name,
            sources: preset.sources,
            stream: preset.stream,
        }),
    };
    writeln!(out, "{}", serde_json::to_string(&rules)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use retry_budget::history::Took;
    use retry_policy::rules::UserRules;

    /// The rules of a run given no rule.
    fn defaults() -> &'static RuleList {
        static RULES: std::sync::OnceLock<RuleList> = std::sync::OnceLock::new();
        RULES.get_or_init(|| RuleList::new(&Default::default(), None).unwrap())
    }

    fn request(limit: &str, base_ms: u64, cap_ms: u64, jitter: Jitter) -> PlanRequest<'static> {
        let ms = Duration::from_millis;
        PlanRequest {
            limit: limit.parse().unwrap(),
            backoff: Backoff::new(ms(base_ms), ms(cap_ms), 2.0, jitter).unwrap(),
            seed: 11,
            splay: Duration::ZERO,
            max_time: None,
            deadline: None,
            budget: "none (--budget off)".into(),
            max_requested_wait: Duration::from_secs(900),
            rules: defaults(),
            preset: None,
            attempt_time: None,
            kill_after: Duration::from_secs(10),
            past: None,
        }
    }

    fn text(request: &PlanRequest) -> String {
        let mut out = Vec::new();
        print(&mut out, request, LogFormat::Text).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn the_header_names_what_shapes_the_plan() {
        let mut planned = request("3", 100, 1000, Jitter::None);
        planned.budget = "api at 10/1m".into();
        let shown = text(&planned);
        assert_eq!(
            shown.lines().next().unwrap(),
            "plan for 3 attempts: jitter none, base 100ms, cap 1s, multiplier 2"
        );
        assert!(shown.contains("retry budget: api at 10/1m\n"), "{shown}");
        let decorrelated = text(&request("3", 100, 1000, Jitter::Decorrelated));
        assert!(!decorrelated.lines().next().unwrap().contains("multiplier"));
    }

    #[test]
    fn rows_accumulate_the_waits() {
        let rows: Vec<Row> = request("4", 100, 1_000, Jitter::None).rows().collect();
        let elapsed: Vec<u128> = rows.iter().map(|row| row.elapsed.as_millis()).collect();
        assert_eq!(elapsed, [0, 100, 300, 700]);
        assert_eq!(rows[0].draw, None);
    }

    #[test]
    fn unlimited_plans_stop_once_the_cap_is_reached() {
        let rows = request("unlimited", 100, 10_000, Jitter::None)
            .rows()
            .count();
        assert_eq!(
            rows, 10,
            "100ms doubling reaches 10s on the 8th retry, and at least 10 show"
        );
        let rows = request("unlimited", 1, 60_000_000, Jitter::Full)
            .rows()
            .count();
        assert_eq!(rows, 29, "1ms doubling passes 1000m on the 27th retry");
        let plan = text(&request("unlimited", 100, 1_000, Jitter::Full));
        assert!(plan.contains("without end"), "{plan}");
    }

    #[test]
    fn constant_waits_never_reaching_the_cap_still_end() {
        let ms = Duration::from_millis;
        let flat = PlanRequest {
            limit: AttemptLimit::Unlimited,
            backoff: Backoff::new(ms(10), ms(1_000), 1.0, Jitter::None).unwrap(),
            seed: 0,
            ..request("1", 10, 1_000, Jitter::None)
        };
        assert_eq!(flat.rows().count(), 100);
    }

    #[test]
    fn total_wait_is_sampled_for_random_jitter_only() {
        assert_eq!(request("5", 100, 1_000, Jitter::None).total_wait(), None);
        let total = request("5", 100, 1_000, Jitter::Full).total_wait().unwrap();
        assert!(total.min <= total.median && total.median <= total.p99 && total.p99 <= total.max);
        assert!(total.max <= Duration::from_millis(100 + 200 + 400 + 800));
        assert_eq!(total.samples, SAMPLES.1);
    }

    #[test]
    fn long_text_plans_elide_the_middle_and_keep_the_last_row() {
        let plan = text(&request("1000", 1, 10, Jitter::None));
        assert!(plan.contains("(attempts 51 to 999 not shown)"), "{plan}");
        assert!(plan.contains("\n    1000 "), "{plan}");
        assert!(plan.lines().count() < 70);
    }

    #[test]
    fn a_single_attempt_with_a_splay_has_a_total() {
        let mut plan = request("1", 100, 1_000, Jitter::Full);
        plan.splay = Duration::from_secs(1);
        assert!(plan.total_wait().unwrap().max < Duration::from_secs(1));
    }

    #[test]
    fn the_splay_is_the_wait_before_the_first_attempt() {
        let mut plan = request("3", 100, 1_000, Jitter::None);
        plan.splay = Duration::from_secs(60);
        let rows: Vec<Row> = plan.rows().collect();
        let splay = rows[0].draw.unwrap();
        assert_eq!(splay.wait, backoff::splay(11, Duration::from_secs(60)));
        assert_eq!(rows[2].elapsed, splay.wait + Duration::from_millis(300));
        assert!(
            plan.total_wait().is_some(),
            "a random splay makes the total random"
        );
    }

    #[test]
    fn huge_attempt_counts_are_planned_as_far_as_is_useful() {
        let plan = request("1000000000000", 1, 10, Jitter::Full);
        assert_eq!(plan.rows().count() as u64, PLANNED_ATTEMPTS);
        assert_eq!(plan.total_wait(), None);
        let text = text(&plan);
        assert!(
            text.contains("stops at attempt 100000 of 1000000000000"),
            "{text}"
        );
    }

    /// The JSON plan of `request`, one value a line.
    fn json_lines(request: &PlanRequest) -> Vec<serde_json::Value> {
        let mut out = Vec::new();
        print(&mut out, request, LogFormat::Json).unwrap();
        let text = String::from_utf8(out).unwrap();
        text.lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }

    #[test]
    fn the_reference_lists_every_key_of_the_json_plan() {
        let mut bounded = request("3", 100, 1_000, Jitter::Equal);
        bounded.attempt_time = Some(Duration::from_secs(1));
        let took = Took {
            runs: 1,
            median: Duration::from_secs(1),
            p95: Duration::from_secs(1),
        };
        bounded.past = Some(("nightly", Ok(Some(took))));
        let lines = json_lines(&bounded);
        use crate::reference::{object_keys, row_keys};
        assert_eq!(object_keys(&lines[1], &[]), row_keys("plan_attempt"));
        let mut keys = object_keys(&lines[3], &["total_wait", "worst_case", "past_runs"]);
        keys.dedup();
        assert_eq!(keys, row_keys("plan_total"));
        let mut preset = request("3", 100, 1_000, Jitter::Equal);
        preset.preset = retry_policy::presets::PRESETS.first();
        let lines = json_lines(&preset);
        let mut keys = object_keys(&lines[4], &["preset"]);
        keys.extend(object_keys(&lines[4]["rules"][0], &[]));
        keys.sort();
        keys.dedup();
        assert_eq!(keys, row_keys("plan_rules"));
    }

    #[test]
    fn the_deadline_cuts_the_plan_where_the_run_would_stop() {
        let mut plan = request("10", 1_000, 60_000, Jitter::None);
        plan.max_time = Some(Duration::from_secs(10));
        let starts: Vec<u64> = plan.rows().map(|row| row.elapsed.as_secs()).collect();
        assert_eq!(starts, [0, 1, 3, 7], "the next would start at 15s");
        assert_eq!(plan.cut_by_max_time(), Some(5));
        let text = text(&plan);
        assert!(text.contains("no attempt 5 or later"), "{text}");
        assert!(text.contains("max-time 10s"), "{text}");
        assert!(!text.contains("total wait: 4m3s"), "{text}");
        plan.backoff = Backoff::new(
            Duration::from_secs(1),
            Duration::from_secs(60),
            2.0,
            Jitter::Full,
        )
        .unwrap();
        let total = plan.total_wait().unwrap();
        assert!(total.max < Duration::from_secs(10), "{total:?}");
    }

    #[test]
    fn a_deadline_that_is_not_max_time_is_never_called_max_time() {
        let mut plan = request("10", 1_000, 60_000, Jitter::None);
        plan.max_time = Some(Duration::from_secs(10));
        plan.deadline = Some("10s, from the next slot of the job's schedule".into());
        let text = text(&plan);
        assert!(!text.contains("max-time"), "{text}");
        assert!(text.contains("would end past the deadline (10s)"), "{text}");
        assert!(text.contains("counts toward the deadline too"), "{text}");
    }

    #[test]
    fn fixed_waits_show_no_interval_in_json() {
        let lines = json_lines(&request("3", 100, 1_000, Jitter::None));
        assert!(lines[1].get("min_wait_ms").is_none(), "{}", lines[1]);
        let lines = json_lines(&request("3", 100, 1_000, Jitter::Full));
        assert_eq!(lines[1]["max_wait_ms"], 100.0);
    }

    #[test]
    fn json_rows_then_a_total() {
        let lines = json_lines(&request("3", 100, 1_000, Jitter::Equal));
        assert_eq!(lines.len(), 5);
        assert_eq!(lines[4]["event"], "plan_rules");
        assert_eq!(lines[0]["wait_ms"], 0.0);
        assert_eq!(lines[2]["attempt"], 3);
        assert_eq!(lines[3]["event"], "plan_total");
        assert_eq!(lines[3]["seed"], 11);
    }

    /// A request of `limit` attempts, each at most `each` seconds, with waits of 1s, 2s, 4s...
    /// up to a cap of 8s (jitter none).
    fn bounded(limit: &str, each: u64) -> PlanRequest<'static> {
        PlanRequest {
            attempt_time: Some(Duration::from_secs(each)),
            ..request(limit, 1_000, 8_000, Jitter::None)
        }
    }

    #[test]
    fn the_worst_case_is_every_attempt_at_its_limit_and_every_wait_at_its_longest() {
        let worst = bounded("4", 40).worst_case();
        let secs = Duration::from_secs;
        assert_eq!(worst.total, Some(secs(4 * 40 + 1 + 2 + 4)));
        assert_eq!((worst.attempts, worst.cut_by_deadline), (Some(4), false));
        let mut splayed = bounded("2", 10);
        splayed.splay = secs(30);
        assert_eq!(splayed.worst_case().total, Some(secs(30 + 20 + 1)));
        let full = PlanRequest {
            backoff: Backoff::new(secs(1), secs(8), 2.0, Jitter::Full).unwrap(),
            ..bounded("4", 40)
        };
        assert_eq!(
            full.worst_case().total,
            Some(secs(167)),
            "full jitter's longest"
        );
        let decorrelated = PlanRequest {
            backoff: Backoff::new(secs(1), secs(8), 2.0, Jitter::Decorrelated).unwrap(),
            ..bounded("4", 0)
        };
        assert_eq!(decorrelated.worst_case().total, Some(secs(3 + 8 + 8)));
    }

    #[test]
    fn the_deadline_cuts_the_worst_case_and_bounds_a_run_nothing_else_does() {
        let secs = Duration::from_secs;
        let mut cut = bounded("4", 40);
        cut.max_time = Some(secs(60));
        let worst = cut.worst_case();
        assert_eq!((worst.total, worst.cut_by_deadline), (Some(secs(70)), true));
        let mut unlimited = request("unlimited", 1_000, 8_000, Jitter::None);
        assert_eq!(unlimited.worst_case().total, None);
        assert!(text(&unlimited).contains("worst case: none; attempts are unlimited"));
        unlimited.max_time = Some(secs(60));
        assert_eq!(unlimited.worst_case().total, Some(secs(70)));
        let untimed = request("3", 1_000, 8_000, Jitter::None);
        assert_eq!(untimed.worst_case().total, None);
        assert!(text(&untimed).contains("an attempt has no time limit"));
    }

    #[test]
    fn the_rules_limits_bound_the_attempts_of_the_worst_case() {
        let user = UserRules {
            retry: vec!["124:max=1".parse().unwrap(), "7:max=2".parse().unwrap()],
            ..UserRules::default()
        };
        let rules: &'static RuleList = Box::leak(Box::new(RuleList::new(&user, None).unwrap()));
        let limited = PlanRequest {
            rules,
            ..bounded("unlimited", 10)
        };
        let worst = limited.worst_case();
        assert_eq!(worst.attempts, Some(4));
        assert_eq!(worst.total, Some(Duration::from_secs(40 + 1 + 2 + 4)));
    }

    #[test]
    fn a_huge_attempt_limit_is_bounded_at_once_without_summing_every_wait() {
        let worst = bounded("1000000000000", 1).worst_case();
        let total = worst.total.unwrap();
        // 10^12 attempts of 1s; waits of 1s, 2s, 4s, then 8s each.
        assert_eq!(
            total,
            Duration::from_secs(10u64.pow(12) + 7 + 8 * (10u64.pow(12) - 4))
        );
    }

    #[test]
    fn the_past_runs_are_said_with_how_many_they_are() {
        let ms = Duration::from_millis;
        let took = Took {
            runs: 12,
            median: ms(1_500),
            p95: ms(4_000),
        };
        let mut planned = bounded("2", 1);
        planned.past = Some(("nightly", Ok(Some(took))));
        assert!(
            text(&planned)
                .contains("job nightly's last 12 runs took 1.5s (median), 4s (95th percentile)"),
            "{}",
            text(&planned)
        );
        planned.past = Some(("nightly", Err("cannot read its history: refused".into())));
        assert!(text(&planned).contains("job nightly's past runs: cannot read its history"));
        let json = json_lines(&planned);
        assert_eq!(json[2]["past_runs"], serde_json::Value::Null);
    }
}
