//! The simulations' results as text: the table `retry-sim` prints, the CSV file it writes,
//! and the title of its picture, for each experiment.

use retry_policy::choice::Choice;
use std::fmt::Write;

use crate::names::Named;
use crate::{contention, load, metastable};
use retry_policy::duration::format_duration;

/// The title of the contention experiment's picture.
pub(crate) fn contention_title(experiment: &contention::Experiment) -> String {
    let backoff = experiment.backoff;
    format!(
        "Contention for one row: base {}, cap {}, multiplier {}, {} trials a point",
        format_duration(backoff.base()),
        format_duration(backoff.cap()),
        backoff.multiplier(),
        experiment.trials
    )
}

/// The contention experiment's table: work and completion time per strategy and client count.
pub(crate) fn contention(
    experiment: &contention::Experiment,
    points: &[contention::Point],
) -> String {
    let backoff = experiment.backoff;
    let mut text = format!(
        "one row under optimistic concurrency; messages take |Normal(10ms, 2ms)|; base {}, cap \
         {}, multiplier {}\n",
        format_duration(backoff.base()),
        format_duration(backoff.cap()),
        backoff.multiplier()
    );
    let _ = writeln!(
        text,
        "{:>34}{:>41}",
        "work (writes)", "completion time (ms)"
    );
    let _ = writeln!(
        text,
        "{:<14}{:>8}{:>10}{:>8}{:>8}{:>8}{:>12}{:>10}{:>10}{:>10}",
        "strategy", "clients", "mean", "p5", "p50", "p95", "mean", "p5", "p50", "p95"
    );
    for point in points {
        let [w_mean, w5, w50, w95, t_mean, t5, t50, t95] = contention_statistics(point);
        let _ = writeln!(
            text,
            "{:<14}{:>8}{w_mean:>10.1}{w5:>8}{w50:>8}{w95:>8}{t_mean:>12.1}{t5:>10.1}{t50:>10.1}{t95:>10.1}",
            point.strategy, point.clients,
        );
    }
    text
}

/// One row per strategy and client count, with every statistic.
pub(crate) fn contention_csv(points: &[contention::Point], trials: u32) -> String {
    let mut text = String::from(
        "strategy,clients,trials,work_mean,work_p5,work_p50,work_p95,\
         completion_ms_mean,completion_ms_p5,completion_ms_p50,completion_ms_p95\n",
    );
    for point in points {
        let numbers = contention_statistics(point).map(|value| rounded(value, 3));
        let _ = writeln!(
            text,
            "{},{},{trials},{}",
            point.strategy,
            point.clients,
            numbers.join(",")
        );
    }
    text
}

/// A point's statistics in table and CSV order: work mean, p5, p50, p95, then completion time's.
fn contention_statistics(point: &contention::Point) -> [f64; 8] {
    let (work, time) = (point.work, point.completion_ms);
    [
        work.mean, work.p5, work.p50, work.p95, time.mean, time.p5, time.p50, time.p95,
    ]
}

/// What the load experiment's clients do, in a few words.
fn load_setting(experiment: &load::Experiment) -> String {
    let kind = if experiment.serial {
        "serial"
    } else {
        "open-loop"
    };
    let backoff = match experiment.backoff {
        Some(backoff) => format!(
            ", {} jitter backoff from {}",
            backoff.jitter().name(),
            format_duration(backoff.base())
        ),
        None => String::new(),
    };
    format!(
        "{} {kind} clients at {}/s for {}, {} retries at most{backoff}",
        experiment.clients,
        experiment.rate,
        format_duration(std::time::Duration::from_secs_f64(experiment.duration)),
        experiment.retries
    )
}

/// The title of the load experiment's picture.
pub(crate) fn load_title(experiment: &load::Experiment) -> String {
    format!("Retries and load: {}", load_setting(experiment))
}

/// The load experiment's table: success and load per policy and failure rate, with the bound
/// the budget's terms set.
pub(crate) fn load(experiment: &load::Experiment, points: &[load::Point]) -> String {
    let budget = &experiment.budget;
    let mut text = format!(
        "{}; hops take Exp(10ms); budget {} plus {} per first try over {}, {}\n",
        load_setting(experiment),
        budget.terms.rate,
        budget.terms.ratio.unwrap_or(0.0),
        format_duration(budget.terms.window),
        if budget.shared {
            "shared"
        } else {
            "per client"
        }
    );
    let _ = writeln!(
        text,
        "{:<9}{:>8}{:>13}{:>10}{:>8}{:>9}{:>8}{:>12}",
        "policy", "failure", "first tries", "success", "sd", "load", "sd", "load bound"
    );
    for point in points {
        let bound = point
            .bound
            .map_or(String::new(), |bound| format!("<= {bound:.3}"));
        let _ = writeln!(
            text,
            "{:<9}{:>8}{:>13.1}{:>10.3}{:>8.3}{:>9.3}{:>8.3}{bound:>12}",
            Named(point.policy),
            point.failure_rate,
            point.first_tries,
            point.success.0,
            point.success.1,
            point.load.0,
            point.load.1,
        );
    }
    text
}

/// One row per policy and failure rate.
pub(crate) fn load_csv(experiment: &load::Experiment, points: &[load::Point]) -> String {
    let mut text = String::from(
        "policy,failure_rate,clients,first_tries_mean,success_mean,success_sd,load_mean,load_sd\n",
    );
    for point in points {
        let numbers = [
            point.first_tries,
            point.success.0,
            point.success.1,
            point.load.0,
            point.load.1,
        ]
        .map(|value| rounded(value, 4));
        let _ = writeln!(
            text,
            "{},{},{},{}",
            Named(point.policy),
            point.failure_rate,
            experiment.clients,
            numbers.join(",")
        );
    }
    text
}

/// The title of the metastable experiment's picture: the trigger it draws, at the first load.
pub(crate) fn metastable_title(experiment: &metastable::Experiment) -> String {
    let chart = experiment.chart;
    format!(
        "Through {}s at {} of capacity, from {}s, at load {}",
        chart.seconds,
        chart.capacity,
        metastable::BEFORE,
        rounded(experiment.loads[0], 3)
    )
}

/// The metastable experiment's table: for each policy and load, a row per trigger capacity and
/// a column per trigger length, each cell the seconds the service took to recover, or `down`.
pub(crate) fn metastable(
    experiment: &metastable::Experiment,
    outcomes: &[metastable::Outcome],
) -> String {
    let clients = &experiment.clients;
    let terms = &clients.terms;
    let mut text = format!(
        "open-loop requests, {}s time limit, trigger from {}s, observed {}s after it; resend: {} \
         at once; defaults: {} attempts, {} jitter from {}, a budget of {} on each host; ratio: \
         {} per request, {} over {}; {} hosts\n",
        clients.timeout,
        metastable::BEFORE,
        experiment.observe,
        clients.resends,
        clients.max_attempts,
        clients.backoff.jitter().name(),
        format_duration(clients.backoff.base()),
        clients.default_terms.rate,
        terms.ratio.unwrap_or(0.0),
        terms.rate,
        format_duration(terms.window),
        clients.hosts,
    );
    text +=
        "each cell: seconds from the trigger's end until goodput stayed at 90% or more, or down\n";
    let mut seconds: Vec<f64> = Vec::new();
    for trigger in &experiment.triggers {
        if !seconds.contains(&trigger.seconds) {
            seconds.push(trigger.seconds);
        }
    }
    let _ = write!(text, "{:<16}{:>7}{:>10}", "policy", "load", "capacity");
    for length in &seconds {
        let _ = write!(text, "{:>8}", format!("{length}s"));
    }
    text.push('\n');
    let mut previous = None;
    for row in outcomes.chunk_by(|a, b| {
        (a.policy, a.load, a.trigger_capacity) == (b.policy, b.load, b.trigger_capacity)
    }) {
        let first = &row[0];
        let key = (first.policy, first.load.to_bits());
        let (policy, load) = match previous == Some(key) {
            true => (String::new(), String::new()),
            false => (Named(first.policy).to_string(), rounded(first.load, 3)),
        };
        previous = Some(key);
        let _ = write!(text, "{policy:<16}{load:>7}{:>10}", first.trigger_capacity);
        for outcome in row {
            let cell = match outcome.recovery {
                Some(after) => format!("{}s", after.round()),
                None => "down".to_string(),
            };
            let _ = write!(text, "{cell:>8}");
        }
        text.push('\n');
    }
    text
}

/// One row per run.
pub(crate) fn metastable_csv(outcomes: &[metastable::Outcome]) -> String {
    let mut text = String::from(
        "policy,trigger_capacity,trigger_seconds,load,recovered,recovery_seconds,\
         attempts_per_request,failed\n",
    );
    for outcome in outcomes {
        let _ = writeln!(
            text,
            "{},{},{},{},{},{},{},{}",
            Named(outcome.policy),
            outcome.trigger_capacity,
            outcome.trigger_seconds,
            rounded(outcome.load, 4),
            outcome.recovered(),
            outcome
                .recovery
                .map_or(String::new(), |after| rounded(after, 3)),
            rounded(outcome.attempts_per_request, 4),
            rounded(outcome.failed, 4),
        );
    }
    text
}

/// `value` with at most `decimals` decimals.
fn rounded(value: f64, decimals: i32) -> String {
    let scale = 10f64.powi(decimals);
    ((value * scale).round() / scale).to_string()
}
