//! `retry simulate`: rerun the contention experiment with this tool's own backoff, print the
//! table, and write the CSV and the SVG. The model is in `contention`, the picture in `chart`.

mod chart;
pub(crate) mod contention;

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;

use crate::duration::format_duration;
use crate::simulate::contention::{Experiment, Point};

/// What to simulate, and where to write the results besides stdout.
#[derive(Clone, Debug)]
pub(crate) struct Settings {
    pub(crate) experiment: Experiment,
    pub(crate) csv: Option<PathBuf>,
    pub(crate) svg: Option<PathBuf>,
}

/// Run the simulation `settings` describe.
pub(crate) fn run(settings: &Settings) -> anyhow::Result<()> {
    let experiment = &settings.experiment;
    let (backoff, seed) = (experiment.backoff, experiment.seed);
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let started = Instant::now();
    let points = experiment.run(threads);
    let took = started.elapsed();
    let mut out = io::BufWriter::new(io::stdout().lock());
    print_table(&mut out, experiment, &points)?;
    let trials = points.len() * experiment.trials as usize;
    writeln!(
        out,
        "{trials} trials in {} on {threads} threads; repeat with --seed {seed}",
        format_duration(took)
    )?;
    out.flush()?;
    if let Some(path) = &settings.csv {
        write_file(path, &csv(&points, experiment.trials))?;
    }
    if let Some(path) = &settings.svg {
        let title = format!(
            "Contention for one row: base {}, cap {}, multiplier {}, {} trials a point",
            format_duration(backoff.base()),
            format_duration(backoff.cap()),
            backoff.multiplier(),
            experiment.trials
        );
        write_file(path, &chart::render(&points, &title))?;
    }
    Ok(())
}

fn write_file(path: &Path, content: &str) -> anyhow::Result<()> {
    std::fs::write(path, content).with_context(|| format!("cannot write {}", path.display()))
}

fn print_table(out: &mut impl Write, experiment: &Experiment, points: &[Point]) -> io::Result<()> {
    let backoff = experiment.backoff;
    writeln!(
        out,
        "one row under optimistic concurrency; messages take |Normal(10ms, 2ms)|; base {}, cap {}, multiplier {}",
        format_duration(backoff.base()),
        format_duration(backoff.cap()),
        backoff.multiplier()
    )?;
    writeln!(out, "{:>34}{:>41}", "work (writes)", "completion time (ms)")?;
    writeln!(
        out,
        "{:<14}{:>8}{:>10}{:>8}{:>8}{:>8}{:>12}{:>10}{:>10}{:>10}",
        "strategy", "clients", "mean", "p5", "p50", "p95", "mean", "p5", "p50", "p95"
    )?;
    for point in points {
        let [w_mean, w5, w50, w95, t_mean, t5, t50, t95] = statistics(point);
        writeln!(
            out,
            "{:<14}{:>8}{w_mean:>10.1}{w5:>8}{w50:>8}{w95:>8}{t_mean:>12.1}{t5:>10.1}{t50:>10.1}{t95:>10.1}",
            point.strategy.name(),
            point.clients,
        )?;
    }
    Ok(())
}

/// One row per strategy and client count, with every statistic.
fn csv(points: &[Point], trials: u32) -> String {
    let mut text = String::from(
        "strategy,clients,trials,work_mean,work_p5,work_p50,work_p95,\
         completion_ms_mean,completion_ms_p5,completion_ms_p50,completion_ms_p95\n",
    );
    for point in points {
        let numbers =
            statistics(point).map(|value| ((value * 1000.0).round() / 1000.0).to_string());
        text += &format!(
            "{},{},{trials},{}\n",
            point.strategy.name(),
            point.clients,
            numbers.join(",")
        );
    }
    text
}

/// A point's statistics in table and CSV order: work mean, p5, p50, p95, then completion time's.
fn statistics(point: &Point) -> [f64; 8] {
    let (work, time) = (point.work, point.completion_ms);
    [
        work.mean, work.p5, work.p50, work.p95, time.mean, time.p5, time.p50, time.p95,
    ]
}
