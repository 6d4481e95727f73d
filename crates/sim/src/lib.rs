//! `retry-sim`: rerun the experiments behind `retry`'s defaults with its own code, print
//! the table, and write the CSV and the SVG. `contention` is the 2015 "Exponential Backoff And
//! Jitter" experiment (the default, also `retry-sim contention`); `load` is the 2022 retry
//! storm one (`retry-sim load`); `metastable` is the 2022 metastable failure one
//! (`retry-sim metastable`). Their tables and CSV files are in `table`, their pictures in `chart`;
//! all run on `queue`, `slots` and `trials`.

#![forbid(unsafe_code)]

mod chart;
mod contention;
pub mod examples;
mod load;
mod metastable;
mod names;
pub mod options;
mod queue;
pub mod refusal;
mod slots;
mod table;
mod trials;

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;

use retry_policy::duration::format_duration;

/// What to simulate, and where to write the results besides stdout.
#[derive(Clone, Debug)]
pub struct Settings {
    pub(crate) experiment: Experiment,
    pub(crate) csv: Option<PathBuf>,
    pub(crate) svg: Option<PathBuf>,
}

/// One of the experiments.
#[derive(Clone, Debug)]
pub(crate) enum Experiment {
    Contention(contention::Experiment),
    Load(load::Experiment),
    Metastable(metastable::Experiment),
}

/// Run the simulation `settings` describe.
pub fn run(settings: &Settings) -> anyhow::Result<()> {
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let started = Instant::now();
    let (csv, svg) = (settings.csv.is_some(), settings.svg.is_some());
    let results = match &settings.experiment {
        Experiment::Contention(experiment) => {
            let points = experiment.run(threads);
            Results {
                table: table::contention(experiment, &points),
                csv: csv.then(|| table::contention_csv(&points, experiment.trials)),
                svg: svg.then(|| chart::contention(&points, &table::contention_title(experiment))),
                trials: points.len() * experiment.trials as usize,
                seed: experiment.seed,
            }
        }
        Experiment::Load(experiment) => {
            let points = experiment.run(threads);
            Results {
                table: table::load(experiment, &points),
                csv: csv.then(|| table::load_csv(experiment, &points)),
                svg: svg.then(|| chart::load(&points, &table::load_title(experiment))),
                trials: points.len() * experiment.trials as usize,
                seed: experiment.seed,
            }
        }
        Experiment::Metastable(experiment) => {
            let runs = experiment.run(threads);
            let title = table::metastable_title(experiment);
            Results {
                table: table::metastable(experiment, &runs.sweep),
                csv: csv.then(|| table::metastable_csv(&runs.sweep)),
                svg: svg.then(|| chart::metastable(&runs.chart, &title)),
                trials: runs.sweep.len() + runs.chart.len(),
                seed: experiment.seed,
            }
        }
    };
    let took = started.elapsed();
    let mut out = io::BufWriter::new(io::stdout().lock());
    out.write_all(results.table.as_bytes())?;
    writeln!(
        out,
        "{} trials in {} on {threads} threads; repeat with --seed {}",
        results.trials,
        format_duration(took),
        results.seed
    )?;
    out.flush()?;
    for (path, content) in [(&settings.csv, results.csv), (&settings.svg, results.svg)] {
        if let (Some(path), Some(content)) = (path, content) {
            write_file(path, &content)?;
        }
    }
    Ok(())
}

/// What a simulation gives: its table, and its CSV and SVG when asked for.
struct Results {
    table: String,
    csv: Option<String>,
    svg: Option<String>,
    trials: usize,
    seed: u64,
}

fn write_file(path: &Path, content: &str) -> anyhow::Result<()> {
    std::fs::write(path, content).with_context(|| format!("cannot write {}", path.display()))
}
