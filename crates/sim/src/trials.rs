//! Running a simulation's trials: spread over threads, each trial on a seed of its own, so that
//! the results never depend on the number of threads.

use std::sync::atomic::{AtomicUsize, Ordering};

use retry_policy::seed::split_mix;

/// Run `job(0..jobs)` on `threads` threads, each taking the next job as it finishes one (trials
/// differ widely in cost); results come back in job order.
pub(crate) fn run_parallel<T: Default + Clone + Send>(
    jobs: usize,
    threads: usize,
    job: impl Fn(usize) -> T + Sync,
) -> Vec<T> {
    let next = AtomicUsize::new(0);
    let mut results = vec![T::default(); jobs];
    let done: Vec<Vec<(usize, T)>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads.max(1))
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let index = next.fetch_add(1, Ordering::Relaxed);
                        if index >= jobs {
                            return mine;
                        }
                        mine.push((index, job(index)));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|worker| worker.join().expect("a simulation thread panicked"))
            .collect()
    });
    for (index, result) in done.into_iter().flatten() {
        results[index] = result;
    }
    results
}

/// The seed of one trial, from the run's seed and the trial's coordinates.
pub(crate) fn trial_seed(seed: u64, coordinates: &[u64]) -> u64 {
    coordinates
        .iter()
        .fold(split_mix(seed), |acc, &part| split_mix(acc ^ part))
}

/// The mean and the sample standard deviation of `values` (0 for fewer than two).
pub(crate) fn mean_and_sd(values: &[f64]) -> (f64, f64) {
    let count = values.len() as f64;
    let mean = values.iter().sum::<f64>() / count.max(1.0);
    if values.len() < 2 {
        return (mean, 0.0);
    }
    let squares = values
        .iter()
        .map(|value| (value - mean).powi(2))
        .sum::<f64>();
    (mean, (squares / (count - 1.0)).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_job_order_whatever_the_threads() {
        let squares = |threads| run_parallel(50, threads, |job| job * job);
        assert_eq!(squares(1), squares(4));
        assert_eq!(squares(3)[7], 49);
    }

    #[test]
    fn means_and_spreads() {
        assert_eq!(mean_and_sd(&[2.0, 4.0]), (3.0, 2f64.sqrt()));
        assert_eq!(mean_and_sd(&[5.0]), (5.0, 0.0));
        assert_ne!(trial_seed(1, &[2, 3]), trial_seed(1, &[3, 2]));
    }
}
