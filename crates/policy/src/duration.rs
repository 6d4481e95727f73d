//! Durations as people write and read them.
//!
//! humantime parses them: one or more numbers, each with its unit (`250ms`, `2s`, `1m30s`,
//! `1m 30s`, `1.5s`, `2 hours`). The tool's own rules wrap it. The unit is insisted on, because
//! a bare `5` is ambiguous between seconds and milliseconds; so is each number's own unit (to
//! humantime alone `5 10m` is 510 minutes). A value too large for the clock (`300000000000y`,
//! `99999999999999999999s`) is the longest duration there is, which every limit takes as
//! "never": no limit in practice, as coreutils `timeout` takes it. A positive value below a
//! nanosecond is one nanosecond, never zero (which means "no limit" to some flags).
//!
//! Formatting is this module's own: humantime writes every unit exactly (`1h 5m 12s 345ms`),
//! and a log line wants the two that matter, rounded (`1h5m`). This module owns no clock and
//! never sleeps.

use std::time::Duration;

use humantime::DurationError;

use crate::error::Error;

/// Parse a DURATION flag value, explaining what is accepted when `text` is not one.
pub fn parse_duration(text: &str) -> Result<Duration, Error> {
    let trimmed = text.trim();
    check_units(trimmed)?;
    match humantime::parse_duration(trimmed) {
        Ok(duration) => Ok(at_least_a_nanosecond(duration, trimmed)),
        Err(DurationError::NumberOverflow) => Ok(beyond_precision(trimmed)),
        Err(DurationError::UnknownUnit { unit, .. }) => Err(unknown_unit(&unit)),
        Err(_) => Err(Error::NotADuration(trimmed.to_string())),
    }
}

/// The tool's rules before humantime's: not empty, not negative, and a unit after every number.
fn check_units(trimmed: &str) -> Result<(), Error> {
    let is_number = |c: char| c.is_ascii_digit() || c == '.';
    if trimmed.is_empty() {
        return Err(Error::EmptyDuration);
    }
    if trimmed.starts_with('-') {
        return Err(Error::NegativeDuration);
    }
    if trimmed.chars().all(is_number) {
        return Err(Error::DurationUnitMissing(trimmed.to_string()));
    }
    let words: Vec<&str> = trimmed.split_whitespace().collect();
    for (index, word) in words.iter().enumerate() {
        let unitless = word.len() - word.trim_end_matches(is_number).len();
        let unit_follows = words
            .get(index + 1)
            .is_some_and(|next| next.starts_with(|c: char| c.is_alphabetic()));
        if unitless > 0 && !unit_follows {
            return Err(Error::DurationPartUnitMissing(
                word[word.len() - unitless..].to_string(),
            ));
        }
    }
    Ok(())
}

/// What humantime made of `text`, but a positive value it rounded to zero is one nanosecond.
fn at_least_a_nanosecond(duration: Duration, text: &str) -> Duration {
    let positive = text.chars().any(|c| c.is_ascii_digit() && c != '0');
    match duration.is_zero() && positive {
        true => Duration::from_nanos(1),
        false => duration,
    }
}

/// A value humantime could not hold: finer than a nanosecond (`0.5ns`, a fraction of 20
/// digits), which is that value rounded down, at least a nanosecond; or too large for the
/// clock, which is never.
fn beyond_precision(text: &str) -> Duration {
    [9, 0]
        .into_iter()
        .find_map(|digits| humantime::parse_duration(&with_fractions_cut(text, digits)).ok())
        .map_or(Duration::MAX, |duration| {
            at_least_a_nanosecond(duration, text)
        })
}

/// `text` with each number's fraction cut to `digits` digits (and its point, for none).
fn with_fractions_cut(text: &str, digits: usize) -> String {
    let mut cut = String::with_capacity(text.len());
    let mut kept = None;
    for c in text.chars() {
        match (c, kept) {
            ('.', _) => {
                kept = Some(0);
                if digits > 0 {
                    cut.push(c);
                }
            }
            ('0'..='9', Some(count)) => {
                if count < digits {
                    cut.push(c);
                }
                kept = Some(count + 1);
            }
            _ => {
                kept = None;
                cut.push(c);
            }
        }
    }
    cut
}

/// Why `unit` is not one; with the unit meant, if only its case is wrong.
fn unknown_unit(unit: &str) -> Error {
    let lower = unit.to_lowercase();
    let hint = match humantime::parse_duration(&format!("1{lower}")) {
        Ok(_) => format!(" (did you mean '{lower}'?)"),
        Err(_) => String::new(),
    };
    Error::UnknownDurationUnit {
        unit: unit.to_string(),
        hint,
    }
}

/// Format `duration` for a log line: `0s`, `850us`, `250ms`, `1.5s`, `2m30s`, `1h5m`, `3d2h`.
pub fn format_duration(duration: Duration) -> String {
    let nanos = duration.as_nanos();
    const MICRO: u128 = 1_000;
    const MILLI: u128 = 1_000_000;
    const SECOND: u128 = 1_000_000_000;
    const MINUTE: u128 = 60 * SECOND;
    const HOUR: u128 = 60 * MINUTE;
    const DAY: u128 = 24 * HOUR;
    const TEN_MILLIS: u128 = 10 * MILLI;
    const TWO_DAYS: u128 = 2 * DAY;
    match nanos {
        0 => "0s".into(),
        n @ 1..MILLI => format!("{}us", n.div_ceil(MICRO)),
        n @ MILLI..TEN_MILLIS => trim_decimal(n as f64 / MILLI as f64, "ms"),
        n @ TEN_MILLIS..SECOND => format!("{}ms", (n + MILLI / 2) / MILLI),
        n @ SECOND..MINUTE => trim_decimal(n as f64 / SECOND as f64, "s"),
        n @ MINUTE..HOUR => {
            let seconds = (n + SECOND / 2) / SECOND;
            with_remainder(seconds / 60, "m", seconds % 60, "s")
        }
        n @ HOUR..TWO_DAYS => {
            let minutes = (n + MINUTE / 2) / MINUTE;
            with_remainder(minutes / 60, "h", minutes % 60, "m")
        }
        n => {
            let hours = (n + HOUR / 2) / HOUR;
            with_remainder(hours / 24, "d", hours % 24, "h")
        }
    }
}

/// `value` with at most three decimals and no trailing zeros, followed by `unit`.
fn trim_decimal(value: f64, unit: &str) -> String {
    let text = format!("{value:.3}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text}{unit}")
}

/// `2m30s`, or `2m` when the remainder is zero.
fn with_remainder(major: u128, major_unit: &str, minor: u128, minor_unit: &str) -> String {
    if minor == 0 {
        format!("{major}{major_unit}")
    } else {
        format!("{major}{major_unit}{minor}{minor_unit}")
    }
}

/// `duration` in milliseconds with microsecond precision, as the JSON events write it.
pub fn to_millis(duration: Duration) -> f64 {
    (duration.as_nanos() as f64 / 1_000.0).round() / 1_000.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn too_large_to_represent_is_never_and_below_a_nanosecond_is_one() {
        for huge in [
            "9223372036854775808d",
            "99999999999999999999s",
            "584942417356y",
            "600000000000y 5s",
        ] {
            assert_eq!(parse_duration(huge), Ok(Duration::MAX), "{huge}");
        }
        for tiny in ["0.5ns", "0.0000000001s", "0.000000000000000000001h"] {
            assert_eq!(parse_duration(tiny), Ok(Duration::from_nanos(1)), "{tiny}");
        }
        assert_eq!(parse_duration("1.5ns"), Ok(Duration::from_nanos(1)));
        assert_eq!(
            parse_duration("1.000000000000000000001s"),
            Ok(Duration::from_secs(1))
        );
        assert_eq!(parse_duration("0.000s"), Ok(Duration::ZERO));
    }

    #[test]
    fn fractions_are_cut_to_what_a_nanosecond_holds() {
        assert_eq!(
            with_fractions_cut("1.123456789012s 2.5ms", 9),
            "1.123456789s 2.5ms"
        );
        assert_eq!(with_fractions_cut("1.5ns 3m", 0), "1ns 3m");
    }

    #[test]
    fn a_unit_that_is_not_one_names_the_units() {
        let err = parse_duration("5S").unwrap_err().to_string();
        assert!(
            err.starts_with("'S' is not a unit of time (did you mean 's'?);"),
            "{err}"
        );
        assert!(err.contains("ns, us, ms, s, m, h, d, w, M, y"), "{err}");
        assert!(
            !parse_duration("5 parsecs")
                .unwrap_err()
                .to_string()
                .contains("did you mean")
        );
    }

    #[test]
    fn parses_humantime_units() {
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("0s"), Ok(Duration::ZERO));
    }

    #[test]
    fn rejects_bare_numbers_negatives_and_garbage() {
        assert!(
            parse_duration("5")
                .unwrap_err()
                .to_string()
                .contains("unit is needed")
        );
        assert!(
            parse_duration("1.5")
                .unwrap_err()
                .to_string()
                .contains("unit is needed")
        );
        assert!(
            parse_duration("-1s")
                .unwrap_err()
                .to_string()
                .contains("negative")
        );
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("").is_err());
        assert!(parse_duration("5 parsecs").is_err());
        assert!(
            parse_duration("1e3ms")
                .unwrap_err()
                .to_string()
                .contains("'e' is not a unit")
        );
    }

    #[test]
    fn each_number_needs_its_own_unit() {
        assert_eq!(parse_duration("1m 30s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("1h 2m 3s"), Ok(Duration::from_secs(3723)));
        assert_eq!(parse_duration("2 hours"), Ok(Duration::from_secs(7200)));
        assert_eq!(parse_duration("1m30 s"), Ok(Duration::from_secs(90)));
        for glued in ["5 10m", "1 30m", "1m 30", "2 5s"] {
            let err = parse_duration(glued).unwrap_err().to_string();
            assert!(err.contains("has no unit"), "{glued}: {err}");
        }
    }

    #[test]
    fn formats_for_people() {
        let cases = [
            (Duration::ZERO, "0s"),
            (Duration::from_nanos(1), "1us"),
            (Duration::from_millis(1), "1ms"),
            (Duration::from_millis(10), "10ms"),
            (Duration::from_secs(1), "1s"),
            (Duration::from_secs(60), "1m"),
            (Duration::from_secs(3600), "1h"),
            (Duration::from_secs(48 * 3600), "2d"),
            (Duration::from_millis(89_600), "1m30s"),
            (Duration::from_secs(3600 + 29 * 60 + 40), "1h30m"),
            (Duration::from_secs(59 * 3600 + 40 * 60), "2d12h"),
            (Duration::from_micros(850), "850us"),
            (Duration::from_micros(2_500), "2.5ms"),
            (Duration::from_millis(250), "250ms"),
            (Duration::from_millis(1_500), "1.5s"),
            (Duration::from_secs(2), "2s"),
            (Duration::from_secs(150), "2m30s"),
            (Duration::from_secs(120), "2m"),
            (Duration::from_secs(3_900), "1h5m"),
            (Duration::from_secs(90_000), "25h"),
            (Duration::from_secs(3 * 86_400 + 7_200), "3d2h"),
        ];
        for (duration, text) in cases {
            assert_eq!(format_duration(duration), text, "{duration:?}");
        }
    }

    #[test]
    fn millis_keep_microseconds() {
        assert_eq!(to_millis(Duration::from_micros(1_234_567)), 1_234.567);
        assert_eq!(to_millis(Duration::from_nanos(400)), 0.0);
    }

    proptest! {
        #[test]
        fn never_panics_on_any_text(text in ".*") {
            let _ = parse_duration(&text);
        }

        #[test]
        fn whole_units_parse_exactly(
            count in 0u64..10_000_000,
            (unit, seconds) in prop::sample::select(vec![("ms", 0.001), ("s", 1.0), ("m", 60.0), ("h", 3600.0)]),
        ) {
            let text = format!("{count}{unit}");
            let parsed = parse_duration(&text).unwrap();
            prop_assert_eq!(parsed, Duration::from_secs_f64(count as f64 * seconds));
        }

        #[test]
        fn bare_numbers_are_refused_for_want_of_a_unit(number in "[0-9]{1,12}(\\.[0-9]{1,3})?") {
            prop_assert!(parse_duration(&number).unwrap_err().to_string().contains("unit is needed"));
        }

        #[test]
        fn negatives_are_refused(rest in "[0-9a-z.]{0,12}") {
            let negative = format!("-{rest}");
            prop_assert!(parse_duration(&negative).is_err());
        }

        #[test]
        fn what_is_printed_parses_back_to_about_the_same(nanos in 0u64..(400 * 86_400_000_000_000)) {
            let duration = Duration::from_nanos(nanos);
            let back = parse_duration(&format_duration(duration)).unwrap();
            let error = back.abs_diff(duration);
            prop_assert!(error <= duration / 100 + Duration::from_micros(500), "{:?} -> {:?}", duration, back);
        }
    }
}
