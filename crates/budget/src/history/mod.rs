//! A job's history of runs: how its last [`RECENT_RUNS`] runs ended (clean, flaky or failed)
//! and how long they took, and how many of each there have been in all, kept in the store the
//! budget uses, so that a flaky job shows as one whichever machine ran it. This file is the
//! record, pure: the stores keep [`History::stored`]'s text and, beside it where a version before
//! durations never looks, [`History::stored_durations`]'s, and read them back through
//! [`History::from_stored`] and [`History::with_stored_durations`], which trust nothing they
//! cannot check; [`wilson`] gives the pass rate's interval. `kept` is where a
//! history lives and how a run adds to it; `shown` is what `retry job history` prints.

mod kept;
mod shown;

use std::collections::VecDeque;
use std::fmt::Write;
use std::time::Duration;

pub use kept::{Recorded, Unkept, history_name, place, read, record};
pub use shown::print;

/// How many of its last runs a history keeps in order.
pub const RECENT_RUNS: usize = 100;

/// The most a total may count: fifteen digits, which the Redis script's numbers hold exactly.
const MOST_RUNS: u64 = 999_999_999_999_999;

/// The longest a run's duration is kept as, in milliseconds (about 31 years): twelve digits.
const MOST_MILLIS: u64 = 999_999_999_999;

/// The longest a stored list of durations may be: [`RECENT_RUNS`] words of twelve digits and a
/// space.
pub const MOST_DURATIONS_TEXT: usize = RECENT_RUNS * 13;

/// How a run ended, for its job's history.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunKind {
    /// Its first attempt succeeded.
    Clean,
    /// It succeeded after failed attempts.
    Flaky,
    /// It gave up.
    Failed,
}

impl RunKind {
    /// The letter a stored history writes it as.
    pub fn letter(self) -> char {
        match self {
            RunKind::Clean => 'c',
            RunKind::Flaky => 'f',
            RunKind::Failed => 'x',
        }
    }

    fn of_letter(letter: char) -> Option<RunKind> {
        match letter {
            'c' => Some(RunKind::Clean),
            'f' => Some(RunKind::Flaky),
            'x' => Some(RunKind::Failed),
            _ => None,
        }
    }

    /// Its name, as the history and the metrics say it.
    pub fn name(self) -> &'static str {
        match self {
            RunKind::Clean => "clean",
            RunKind::Flaky => "flaky",
            RunKind::Failed => "failed",
        }
    }
}

/// Runs counted by how they ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Runs whose first attempt succeeded.
    pub clean: u64,
    /// Runs that succeeded after failed attempts.
    pub flaky: u64,
    /// Runs that gave up.
    pub failed: u64,
}

impl Counts {
    fn add(&mut self, kind: RunKind) {
        let count = match kind {
            RunKind::Clean => &mut self.clean,
            RunKind::Flaky => &mut self.flaky,
            RunKind::Failed => &mut self.failed,
        };
        *count = (*count + 1).min(MOST_RUNS);
    }

    /// Every run counted.
    pub fn runs(&self) -> u64 {
        self.clean
            .saturating_add(self.flaky)
            .saturating_add(self.failed)
    }

    /// The count of `kind`.
    pub fn of(&self, kind: RunKind) -> u64 {
        match kind {
            RunKind::Clean => self.clean,
            RunKind::Flaky => self.flaky,
            RunKind::Failed => self.failed,
        }
    }
}

/// How long a job's last runs took.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Took {
    /// How many runs the figures are of.
    pub runs: usize,
    /// The median.
    pub median: Duration,
    /// The 95th percentile (nearest rank).
    pub p95: Duration,
}

/// A job's runs: the last ones in order, and the counts of all.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct History {
    recent: VecDeque<RunKind>,
    /// How long the last runs took, in milliseconds, oldest first (runs recorded before
    /// durations were kept have none).
    durations: VecDeque<u64>,
    /// Every run the history has counted.
    pub totals: Counts,
}

impl History {
    /// Count a run that ended as `kind` after `took`.
    pub fn record(&mut self, kind: RunKind, took: Duration) {
        self.recent.push_back(kind);
        if self.recent.len() > RECENT_RUNS {
            self.recent.pop_front();
        }
        self.durations.push_back(millis(took));
        if self.durations.len() > RECENT_RUNS {
            self.durations.pop_front();
        }
        self.totals.add(kind);
    }

    /// How long the last runs took, oldest first.
    pub fn durations(&self) -> impl Iterator<Item = Duration> + '_ {
        self.durations.iter().map(|&ms| Duration::from_millis(ms))
    }

    /// How long the last runs took; none when no duration is kept.
    pub fn took(&self) -> Option<Took> {
        let mut sorted: Vec<u64> = self.durations.iter().copied().collect();
        sorted.sort_unstable();
        let at = |quantile: f64| {
            let rank = (quantile * sorted.len() as f64).ceil() as usize;
            Duration::from_millis(sorted[rank.clamp(1, sorted.len()) - 1])
        };
        (!sorted.is_empty()).then(|| Took {
            runs: sorted.len(),
            median: at(0.5),
            p95: at(0.95),
        })
    }

    /// The durations as a store keeps them: milliseconds, oldest first (`-` for none).
    pub fn stored_durations(&self) -> String {
        match self.durations.is_empty() {
            true => "-".to_string(),
            false => {
                let words: Vec<String> = self.durations.iter().map(u64::to_string).collect();
                words.join(" ")
            }
        }
    }

    /// This history with the durations `text` holds, when a store could have kept them (at most
    /// [`RECENT_RUNS`] whole numbers); with none otherwise: durations only inform, so a damaged
    /// list is dropped, never the runs' counts.
    pub fn with_stored_durations(mut self, text: &str) -> History {
        let words = text.trim();
        let parsed: Option<VecDeque<u64>> = match words {
            "" | "-" => Some(VecDeque::new()),
            words => words
                .split(' ')
                .map(|word| word.parse().ok().filter(|&ms| ms <= MOST_MILLIS))
                .collect(),
        };
        self.durations = parsed
            .filter(|durations| durations.len() <= RECENT_RUNS)
            .unwrap_or_default();
        self
    }

    /// The last runs, oldest first.
    pub fn recent(&self) -> impl Iterator<Item = RunKind> + '_ {
        self.recent.iter().copied()
    }

    /// How many of the last runs failed in a row, up to the latest (at most [`RECENT_RUNS`]).
    pub fn failed_in_a_row(&self) -> u32 {
        let failed = self
            .recent
            .iter()
            .rev()
            .take_while(|&&kind| kind == RunKind::Failed);
        failed.count() as u32
    }

    /// The last runs, counted.
    pub fn recent_counts(&self) -> Counts {
        let mut counts = Counts::default();
        self.recent().for_each(|kind| counts.add(kind));
        counts
    }

    /// The history as a store keeps it: the three totals, then the last runs' letters (`-` for
    /// none), e.g. `12 3 1 ccfcxcc`.
    pub fn stored(&self) -> String {
        let mut text = format!(
            "{} {} {} ",
            self.totals.clean, self.totals.flaky, self.totals.failed
        );
        match self.recent.is_empty() {
            true => text.push('-'),
            false => self.recent().for_each(|kind| {
                let _ = text.write_char(kind.letter());
            }),
        }
        text
    }

    /// The history `text` holds, if a store could have kept it: three whole totals, at most
    /// [`RECENT_RUNS`] letters, and no more of a kind among them than its total.
    pub fn from_stored(text: &str) -> Option<History> {
        let mut words = text.split(' ');
        let mut total = || {
            words
                .next()?
                .parse::<u64>()
                .ok()
                .filter(|total| *total <= MOST_RUNS)
        };
        let totals = Counts {
            clean: total()?,
            flaky: total()?,
            failed: total()?,
        };
        let letters = words.next()?;
        if words.next().is_some() || letters.len() > RECENT_RUNS {
            return None;
        }
        let recent: VecDeque<RunKind> = match letters {
            "-" => VecDeque::new(),
            letters => letters
                .chars()
                .map(RunKind::of_letter)
                .collect::<Option<_>>()?,
        };
        let history = History {
            recent,
            durations: VecDeque::new(),
            totals,
        };
        let counts = history.recent_counts();
        let plausible = [RunKind::Clean, RunKind::Flaky, RunKind::Failed]
            .iter()
            .all(|&kind| counts.of(kind) <= totals.of(kind));
        plausible.then_some(history)
    }
}

/// `took` in whole milliseconds, at most [`MOST_MILLIS`].
pub(crate) fn millis(took: Duration) -> u64 {
    u64::try_from(took.as_millis()).map_or(MOST_MILLIS, |ms| ms.min(MOST_MILLIS))
}

/// The 95 % Wilson score interval of a rate of `successes` in `runs`, as fractions; none for no
/// runs. Unlike the plain rate, it stays honest for few runs and for rates near 0 or 1.
pub fn wilson(successes: u64, runs: u64) -> Option<(f64, f64)> {
    if runs == 0 {
        return None;
    }
    const Z: f64 = 1.959_963_984_540_054;
    let n = runs as f64;
    let p = successes.min(runs) as f64 / n;
    let z2 = Z * Z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = Z / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    Some(((centre - half).max(0.0), (centre + half).min(1.0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_last_runs_in_order_and_counts_all() {
        let mut history = History::default();
        assert_eq!(history.stored(), "0 0 0 -");
        for _ in 0..RECENT_RUNS {
            history.record(RunKind::Clean, Duration::from_secs(2));
        }
        history.record(RunKind::Flaky, Duration::from_secs(2));
        history.record(RunKind::Failed, Duration::from_secs(2));
        assert_eq!(history.recent().count(), RECENT_RUNS);
        assert_eq!(
            history.totals,
            Counts {
                clean: 100,
                flaky: 1,
                failed: 1
            }
        );
        assert_eq!(history.recent_counts().clean, 98);
        assert!(history.stored().ends_with("ccfx"));
        let read_back = History::from_stored(&history.stored()).unwrap();
        assert_eq!(
            read_back.durations().count(),
            0,
            "the durations are kept apart"
        );
        let durations = history.stored_durations();
        assert_eq!(read_back.with_stored_durations(&durations), history);
    }

    #[test]
    fn durations_keep_the_last_runs_and_a_damaged_list_is_dropped() {
        let mut history = History::default();
        assert_eq!(history.stored_durations(), "-");
        for seconds in 0..(RECENT_RUNS as u64 + 5) {
            history.record(RunKind::Clean, Duration::from_secs(seconds));
        }
        let kept: Vec<u64> = history.durations().map(|took| took.as_secs()).collect();
        assert_eq!(kept, (5..RECENT_RUNS as u64 + 5).collect::<Vec<_>>());
        history.record(RunKind::Failed, Duration::MAX);
        assert_eq!(
            history.durations().last(),
            Some(Duration::from_millis(MOST_MILLIS))
        );
        let text = history.stored_durations();
        assert!(text.len() <= MOST_DURATIONS_TEXT, "{}", text.len());
        let counted = history.totals;
        let many = vec!["1"; RECENT_RUNS + 1].join(" ");
        for damaged in ["1 x 3", "-5", "1  2", "9999999999999", many.as_str()] {
            let dropped = history.clone().with_stored_durations(damaged);
            assert_eq!(dropped.durations().count(), 0, "{damaged}");
            assert_eq!(dropped.totals, counted, "{damaged}: the counts stay");
        }
        let took = History::default()
            .with_stored_durations(
                &(1..=20)
                    .map(|ms| ms.to_string())
                    .collect::<Vec<_>>()
                    .join(" "),
            )
            .took()
            .unwrap();
        let ms = Duration::from_millis;
        assert_eq!((took.runs, took.median, took.p95), (20, ms(10), ms(19)));
        assert_eq!(History::default().took(), None);
        let read = History::default().with_stored_durations(" 1500 20 ");
        assert_eq!(
            read.durations().collect::<Vec<_>>(),
            [Duration::from_millis(1500), Duration::from_millis(20)]
        );
    }

    #[test]
    fn a_stored_history_no_run_could_have_written_is_refused() {
        for bad in [
            "",
            "1 2 3",
            "1 2 3 cx y",
            "0 0 0 c",
            "1 0 0 cc",
            "1 0 0 q",
            "-1 0 0 -",
            "1000000000000000 0 0 -",
            "1 0 0 c ",
            &format!("200 0 0 {}", "c".repeat(RECENT_RUNS + 1)),
        ] {
            assert_eq!(History::from_stored(bad), None, "{bad:?}");
        }
        assert!(History::from_stored("5 1 0 cfc").is_some());
    }

    #[test]
    fn the_wilson_interval_is_wide_for_few_runs_and_narrows_with_more() {
        assert_eq!(wilson(0, 0), None);
        let (low, high) = wilson(9, 10).unwrap();
        assert!(
            (low - 0.5958).abs() < 1e-3 && (high - 0.9821).abs() < 1e-3,
            "{low} {high}"
        );
        let (low, high) = wilson(900, 1000).unwrap();
        assert!(
            (low - 0.8797).abs() < 1e-3 && (high - 0.9170).abs() < 1e-3,
            "{low} {high}"
        );
        let (low, high) = wilson(10, 10).unwrap();
        assert!(low > 0.69 && high > 0.999_999, "{low} {high}");
    }
}
