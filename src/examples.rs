//! Examples of use, each a word on what it does and a command line: for `--help`, the man pages
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
        "retry --retry-on 6,7,22,28,35,52,55,56 --stop-on-output 'error: 4(0[0-8]|1[0-7])' -- curl -fsS https://example.com/api",
    ),
    (
        "Capture the one answer of the attempt that succeeds:",
        "token=$(retry --hold-output -- vault read -field=token secret/ci)",
    ),
    (
        "Spread a fleet's hourly job and share a budget of retries on each host:",
        "retry --seed host --splay 10m --budget inventory-api -- curl -fsS https://inventory.example.com/sync",
    ),
];

/// How wide an example's command line may be in `--help`, its continuation marks included: it
/// is indented by 4, and so pastes as it is shown on a terminal of 80 columns.
const HELP_WIDTH: usize = 72;

/// An "Examples:" block of help text.
pub(crate) fn examples_text(examples: &[(&str, &str)]) -> String {
    let mut text = String::from("Examples:\n");
    for (what, command) in examples {
        text += &format!("  {what}\n");
        for line in continued_lines(command, HELP_WIDTH) {
            text += &format!("    {line}\n");
        }
    }
    text
}

/// `command` in lines of at most `width` columns where it can be, broken where a shell goes on
/// with the next line: at a space outside single quotes (inside them a backslash and a line
/// break would become part of the word), each line but the last ending in ` \` and the next
/// indented by two spaces. A word longer than a line stays whole.
pub(crate) fn continued_lines(command: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in shell_words(command) {
        if line.is_empty() {
            line = word.to_string();
        } else if line.len() + 1 + word.len() + 2 > width {
            lines.push(format!("{line} \\"));
            line = format!("  {word}");
        } else {
            line = format!("{line} {word}");
        }
    }
    lines.push(line);
    lines
}

/// The words of `command` as a shell splits them at spaces: none is split inside quotes.
fn shell_words(command: &str) -> Vec<&str> {
    let (mut words, mut start) = (Vec::new(), 0);
    let (mut single, mut double) = (false, false);
    for (at, c) in command.char_indices() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            ' ' if !single && !double => {
                if at > start {
                    words.push(&command[start..at]);
                }
                start = at + 1;
            }
            _ => {}
        }
    }
    if start < command.len() {
        words.push(&command[start..]);
    }
    words
}

/// Examples of `retry simulate` (contention).
pub(crate) const CONTENTION: [(&str, &str); 2] = [
    (
        "Reproduce the original's figures for exponential backoff:",
        "retry simulate --jitter none,full,equal --base 10ms --cap 2s --seed 1 --svg exponential.svg",
    ),
    (
        "and for decorrelated jitter:",
        "retry simulate --jitter decorrelated --base 5ms --cap 2s --seed 1 --svg decorrelated.svg",
    ),
];

/// Examples of `retry simulate load`.
pub(crate) const LOAD: [(&str, &str); 2] = [
    (
        "Compare the policies on open-loop clients, and draw the picture:",
        "retry simulate load --seed 1 --svg load.svg",
    ),
    (
        "Serial clients with the tool's backoff between retries, as Brooker's did:",
        "retry simulate load --serial --backoff --jitter none --policies none,retries --seed 1",
    ),
];

pub(crate) const METASTABLE: [(&str, &str); 2] = [
    (
        "Which triggers each policy recovers from, with the picture of the paper's run (b):",
        "retry simulate metastable --seed 1 --csv metastable.csv --svg metastable.svg",
    ),
    (
        "The paper's four runs with its client alone:",
        "retry simulate metastable --policies resend --trigger-capacities 0.225,0.2 --trigger-seconds 9s,10s",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_command_goes_on_where_a_shell_goes_on() {
        let command = "retry --retry-on 6,7,22 --stop-on-output 'error: 4(0[0-8]|1[0-7])' -- curl -fsS https://example.com/api";
        let lines = continued_lines(command, 40);
        assert!(lines.iter().all(|line| line.len() <= 40), "{lines:#?}");
        assert!(
            lines
                .iter()
                .any(|line| line.contains("'error: 4(0[0-8]|1[0-7])'"))
        );
        let joined = lines.join("\n").replace(" \\\n  ", " ");
        assert_eq!(joined, command);
    }

    #[test]
    fn every_example_fits_the_help_at_80_columns() {
        for (_, command) in RUN.iter().chain(&CONTENTION).chain(&LOAD) {
            for line in continued_lines(command, HELP_WIDTH) {
                assert!(4 + line.len() <= 80, "{line}");
            }
        }
    }
}
