//! What a command asks of the run after its attempt, through `RETRY_AFTER_FILE` or a
//! `--retry-after-output` match: wait at least this long before the next attempt, or stop.
//!
//! A request is read from text, as a server or a CLI writes it: a DURATION (`37s`), a number of
//! seconds (`37`, `1.5`), an HTTP date (`Wed, 21 Oct 2026 07:28:00 GMT`, as in `Retry-After`),
//! or the word `stop`. A request only ever lengthens a wait or stops a run that would retry; the
//! run loop decides that, and caps a wait at `RETRY_MAX_REQUESTED_WAIT`.

use std::time::{Duration, SystemTime};

use crate::duration::parse_duration;

/// The most of a request that is read: a file's first 4 KiB, a match's first 4 KiB.
pub const MAX_REQUEST: usize = 4096;

/// A command's request for the next attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Requested {
    /// Wait at least this long.
    Wait(Duration),
    /// Do not retry: the run ends after this attempt.
    Stop,
}

/// Text that is not a request; holds its first line, shortened, for the warning.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unreadable(pub String);

impl Requested {
    /// The request in `text`, read at `now` (an HTTP date in the past asks for no wait); none
    /// for text that is only white space.
    pub fn parse(text: &str, now: SystemTime) -> Result<Option<Requested>, Unreadable> {
        let text = text.trim();
        if text.is_empty() {
            return Ok(None);
        }
        if text.eq_ignore_ascii_case("stop") {
            return Ok(Some(Requested::Stop));
        }
        if let Ok(seconds) = text.parse::<f64>() {
            return match seconds.is_finite() && seconds >= 0.0 {
                true => Ok(Some(Requested::Wait(
                    Duration::try_from_secs_f64(seconds).unwrap_or(Duration::MAX),
                ))),
                false => Err(Unreadable::of(text)),
            };
        }
        if let Ok(wait) = parse_duration(text) {
            return Ok(Some(Requested::Wait(wait)));
        }
        match httpdate::parse_http_date(text) {
            Ok(date) => Ok(Some(Requested::Wait(
                date.duration_since(now).unwrap_or_default(),
            ))),
            Err(_) => Err(Unreadable::of(text)),
        }
    }

    /// The more demanding of two requests: a stop, else the longer wait.
    pub fn or(self, other: Option<Requested>) -> Requested {
        match (self, other) {
            (Requested::Stop, _) | (_, Some(Requested::Stop)) => Requested::Stop,
            (Requested::Wait(one), Some(Requested::Wait(two))) => Requested::Wait(one.max(two)),
            (wait, None) => wait,
        }
    }
}

/// What an attempt asked for, from what its `RETRY_AFTER_FILE` held (or why it could not be
/// read) and what `--retry-after-output` captured, read at `now`; and the problems, in words,
/// for warnings. Of two requests, the more demanding counts.
pub fn read<E: std::fmt::Display>(
    file: Option<Result<String, E>>,
    capture: Option<&str>,
    attempt: u64,
    now: SystemTime,
) -> (Option<Requested>, Vec<String>) {
    const EXPECTED: &str = "not a wait (such as 37s, 37 or an HTTP date) or 'stop'; ignored";
    let mut problems = Vec::new();
    let from_file = match file {
        None => None,
        Some(Err(why)) => {
            problems.push(format!(
                "cannot read attempt {attempt}'s RETRY_AFTER_FILE ({why}); ignored"
            ));
            None
        }
        Some(Ok(text)) => Requested::parse(&text, now).unwrap_or_else(|Unreadable(line)| {
            problems.push(format!(
                "attempt {attempt} wrote '{line}' to RETRY_AFTER_FILE: {EXPECTED}"
            ));
            None
        }),
    };
    let from_output = capture.and_then(|text| {
        Requested::parse(text, now).unwrap_or_else(|Unreadable(line)| {
            problems.push(format!(
                "--retry-after-output read '{line}' in attempt {attempt}'s output: {EXPECTED}"
            ));
            None
        })
    });
    let requested = match (from_file, from_output) {
        (Some(one), two) => Some(one.or(two)),
        (None, two) => two,
    };
    (requested, problems)
}

impl Unreadable {
    /// The first line of `text`, at most 80 characters of it.
    fn of(text: &str) -> Unreadable {
        let line = text.lines().next().unwrap_or_default();
        match line.char_indices().nth(80) {
            Some((end, _)) => Unreadable(format!("{}...", &line[..end])),
            None => Unreadable(line.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Result<Option<Requested>, Unreadable> {
        // Wed, 21 Oct 2026 07:28:00 GMT, less two seconds.
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_792_567_678);
        Requested::parse(text, now)
    }

    fn wait(seconds: f64) -> Result<Option<Requested>, Unreadable> {
        Ok(Some(Requested::Wait(Duration::from_secs_f64(seconds))))
    }

    #[test]
    fn reads_durations_seconds_dates_and_stop() {
        assert_eq!(at("37s"), wait(37.0));
        assert_eq!(at("1m 30s\n"), wait(90.0));
        assert_eq!(at("37"), wait(37.0));
        assert_eq!(at(" 1.5 "), wait(1.5));
        assert_eq!(at("0"), wait(0.0));
        assert_eq!(at("Wed, 21 Oct 2026 07:28:00 GMT"), wait(2.0));
        assert_eq!(
            at("Wednesday, 21-Oct-26 07:28:00 GMT"),
            wait(2.0),
            "RFC 850"
        );
        assert_eq!(
            at("Wed, 21 Oct 2026 07:27:00 GMT"),
            wait(0.0),
            "in the past"
        );
        assert_eq!(at("stop"), Ok(Some(Requested::Stop)));
        assert_eq!(at("STOP\n"), Ok(Some(Requested::Stop)));
        assert_eq!(at(" \n\t"), Ok(None));
        assert_eq!(at("1e30"), Ok(Some(Requested::Wait(Duration::MAX))));
    }

    #[test]
    fn anything_else_is_unreadable_and_named_by_its_first_line() {
        for text in ["-1", "soon", "NaN", "37 s s", "stop now", "inf"] {
            assert!(at(text).is_err(), "{text}");
        }
        assert_eq!(at("later\nplease"), Err(Unreadable("later".into())));
        let long = "x".repeat(200);
        assert_eq!(at(&long), Err(Unreadable(format!("{}...", "x".repeat(80)))));
    }

    #[test]
    fn an_attempts_request_is_read_from_its_file_and_its_output() {
        let now = SystemTime::UNIX_EPOCH;
        let read = |file: Option<Result<&str, &str>>, capture: Option<&str>| {
            let file = file.map(|read| read.map(String::from).map_err(String::from));
            super::read(file, capture, 2, now)
        };
        let two = Some(Requested::Wait(Duration::from_secs(2)));
        assert_eq!(read(None, None), (None, vec![]));
        assert_eq!(read(Some(Ok("")), None), (None, vec![]));
        assert_eq!(read(Some(Ok("2s")), Some("1")), (two, vec![]));
        assert_eq!(read(Some(Ok("1")), Some("2")), (two, vec![]));
        assert_eq!(read(None, Some("2")), (two, vec![]));
        assert_eq!(read(Some(Ok("stop")), Some("2")).0, Some(Requested::Stop));
        let (requested, problems) = read(Some(Ok("soon")), Some("later"));
        assert_eq!(requested, None);
        assert_eq!(
            problems,
            [
                "attempt 2 wrote 'soon' to RETRY_AFTER_FILE: not a wait (such as 37s, 37 or an \
                 HTTP date) or 'stop'; ignored",
                "--retry-after-output read 'later' in attempt 2's output: not a wait (such as \
                 37s, 37 or an HTTP date) or 'stop'; ignored"
            ]
        );
        let (requested, problems) = read(Some(Err("gone")), Some("2"));
        assert_eq!(requested, two);
        assert_eq!(
            problems,
            ["cannot read attempt 2's RETRY_AFTER_FILE (gone); ignored"]
        );
    }

    #[test]
    fn the_more_demanding_request_wins() {
        let [one, two] = [1, 2].map(|s| Requested::Wait(Duration::from_secs(s)));
        assert_eq!(one.or(Some(two)), two);
        assert_eq!(two.or(Some(one)), two);
        assert_eq!(one.or(Some(Requested::Stop)), Requested::Stop);
        assert_eq!(Requested::Stop.or(Some(one)), Requested::Stop);
        assert_eq!(one.or(None), one);
    }
}
