//! Examples of a run, each a word on what it does and a command line: for `--help`, the man page
//! and the README, which has every one of them (a test checks).

/// Examples of a run.
pub(crate) const RUN: [(&str, &str); 7] = [
    (
        "Try a flaky health check up to 5 times, with jittered waits between:",
        "retry -- curl -fsS https://example.com/health",
    ),
    (
        "Retry only the curl statuses that mean \"try later\":",
        "retry --retry-on 6,7,28,35,52,55,56 -- curl -fsS https://example.com/health",
    ),
    (
        "See the waits before trusting them in cron; nothing is run:",
        "retry --plan --base 500ms --cap 1m -n 8",
    ),
    (
        "Bound a CI step by time, each attempt too, and keep a report:",
        "retry --max-time 10m --timeout 4m --report retry-report.json -- npm ci",
    ),
    (
        "Retry curl's HTTP errors too, but not a 4xx other than 429:",
        "retry --retry-on 6,7,22,28,35,52,55,56 --stop-on 'stderr:error: 4(0[0-8]|1[0-7])' -- curl -fsS https://example.com/api",
    ),
    (
        "Capture the one answer of the attempt that succeeds:",
        "token=$(retry --hold stdout -- vault read -field=token secret/ci)",
    ),
    (
        "Spread a fleet's hourly job and share a budget of retries on each host:",
        "retry --seed host --splay 10m --budget inventory-api -- curl -fsS https://inventory.example.com/sync",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;
    use retry_policy::examples::{HELP_WIDTH, continued_lines};

    #[test]
    fn every_example_fits_the_help_at_80_columns() {
        for (_, command) in RUN {
            for line in continued_lines(command, HELP_WIDTH) {
                assert!(4 + line.len() <= 80, "{line}");
            }
        }
    }
}
