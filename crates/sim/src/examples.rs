//! Examples of `retry-sim`, each a word on what it does and a command line: for its help, its man
//! page and the simulators' guide.

/// Examples of `retry-sim` (contention).
pub const CONTENTION: [(&str, &str); 2] = [
    (
        "Reproduce the original's figures for exponential backoff:",
        "retry-sim --jitter none,full,equal --base 10ms --cap 2s --seed 1 --svg exponential.svg",
    ),
    (
        "and for decorrelated jitter:",
        "retry-sim --jitter decorrelated --base 5ms --cap 2s --seed 1 --svg decorrelated.svg",
    ),
];

/// Examples of `retry-sim load`.
pub const LOAD: [(&str, &str); 2] = [
    (
        "Compare the policies on open-loop clients, and draw the picture:",
        "retry-sim load --seed 1 --svg load.svg",
    ),
    (
        "Serial clients with the tool's backoff between retries, as Brooker's did:",
        "retry-sim load --serial --backoff --jitter none --policies none,retries --seed 1",
    ),
];

/// Examples of `retry-sim metastable`.
pub const METASTABLE: [(&str, &str); 2] = [
    (
        "Which triggers each policy recovers from, with the picture of the paper's run (b):",
        "retry-sim metastable --seed 1 --csv metastable.csv --svg metastable.svg",
    ),
    (
        "The paper's four runs with its client alone:",
        "retry-sim metastable --policies resend --trigger-capacities 0.225,0.2 --trigger-seconds 9s,10s",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;
    use retry_policy::examples::{HELP_WIDTH, continued_lines};

    #[test]
    fn every_example_fits_the_help_at_80_columns() {
        for (_, command) in CONTENTION.iter().chain(&LOAD).chain(&METASTABLE) {
            for line in continued_lines(command, HELP_WIDTH) {
                assert!(4 + line.len() <= 80, "{line}");
            }
        }
    }
}
