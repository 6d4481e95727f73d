//! Durations as people write and read them.
//!
//! Parsing takes one or more numbers, each with its unit (`250ms`, `2s`, `1m30s`, `1m 30s`,
//! `1.5s`, `1e3ms`), and insists on the unit, because a bare `5` is ambiguous between seconds
//! and milliseconds. A value too large to represent (`9223372036854775808d`, `1e4000s`) is the
//! longest duration there is, which every limit takes as "never": no limit in practice, as
//! coreutils `timeout` takes it. A positive value below a nanosecond is one nanosecond, never
//! zero (which means "no limit" to some flags). Formatting rounds to what a person reading a
//! log line needs. This module owns no clock and never sleeps.

use std::time::Duration;

/// The units of time and their length in seconds; the first name of each is the one the
/// messages show.
const UNITS: [(&[&str], f64); 10] = [
    (&["ns", "nsec", "nanos"], 1e-9),
    (&["us", "usec", "µs", "micros"], 1e-6),
    (&["ms", "msec", "millis"], 1e-3),
    (&["s", "sec", "secs", "second", "seconds"], 1.0),
    (&["m", "min", "mins", "minute", "minutes"], 60.0),
    (&["h", "hr", "hrs", "hour", "hours"], 3600.0),
    (&["d", "day", "days"], 86_400.0),
    (&["w", "week", "weeks"], 604_800.0),
    (&["M", "month", "months"], 2_630_016.0),
    (&["y", "year", "years"], 31_557_600.0),
];

/// What a duration may be, for messages.
const EXPECTED: &str = "expected e.g. 250ms, 2s or 1m30s";

/// Parse a DURATION flag value, explaining what is accepted when `text` is not one.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let trimmed = text.trim();
    if trimmed.starts_with('-') {
        return Err(format!("a duration must not be negative; {EXPECTED}"));
    }
    if !trimmed.is_empty() && trimmed.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return Err(format!(
            "a unit is needed; expected e.g. {trimmed}ms or {trimmed}s"
        ));
    }
    let mut seconds = 0.0;
    let mut rest = trimmed;
    while !rest.is_empty() {
        let (number, after) = split_number(rest)
            .ok_or_else(|| format!("'{trimmed}' is not a duration; {EXPECTED}"))?;
        let unit_length = after
            .find(|c: char| !c.is_alphabetic())
            .unwrap_or(after.len());
        let (unit, after) = after.split_at(unit_length);
        if unit.is_empty() {
            return Err(format!(
                "'{number}' has no unit, and each number needs its own; expected e.g. 250ms, \
                 2s, 1m30s or 1m 30s"
            ));
        }
        seconds += number
            .parse::<f64>()
            .map_err(|_| format!("'{number}' is not a number"))?
            * unit_seconds(unit)?;
        rest = after.trim_start();
    }
    if trimmed.is_empty() {
        return Err(format!("an empty duration; {EXPECTED}"));
    }
    Ok(saturating(seconds))
}

/// The number `text` starts with (digits, a fraction, an exponent) and what follows it.
fn split_number(text: &str) -> Option<(&str, &str)> {
    let bytes = text.as_bytes();
    let digits = |from: usize| {
        from + bytes[from..]
            .iter()
            .take_while(|byte| byte.is_ascii_digit())
            .count()
    };
    let mut end = digits(0);
    if bytes.get(end) == Some(&b'.') {
        end = digits(end + 1);
    }
    if end == 0 || text[..end] == *"." {
        return None;
    }
    // An exponent: 'e', a sign maybe, and digits (no unit starts with 'e').
    if matches!(bytes.get(end), Some(b'e' | b'E')) {
        let signed = end + 1 + usize::from(matches!(bytes.get(end + 1), Some(b'+' | b'-')));
        let exponent_end = digits(signed);
        if exponent_end > signed {
            end = exponent_end;
        }
    }
    Some(text.split_at(end))
}

/// The length of `unit` in seconds; the error names the units, and the one meant if only its
/// case is wrong.
fn unit_seconds(unit: &str) -> Result<f64, String> {
    let found = |name: &str| {
        UNITS
            .iter()
            .find(|(names, _)| names.contains(&name))
            .map(|&(_, seconds)| seconds)
    };
    if let Some(seconds) = found(unit) {
        return Ok(seconds);
    }
    let hint = match found(&unit.to_lowercase()) {
        Some(_) => format!(" (did you mean '{}'?)", unit.to_lowercase()),
        None => String::new(),
    };
    let names: Vec<&str> = UNITS.iter().map(|(names, _)| names[0]).collect();
    Err(format!(
        "'{unit}' is not a unit of time{hint}; the units are {} (months and years as M and y), \
         e.g. 250ms, 2s or 1m30s",
        names.join(", ")
    ))
}

/// `seconds` as a duration: too many for one is the longest there is; a positive amount below
/// a nanosecond is one.
fn saturating(seconds: f64) -> Duration {
    match Duration::try_from_secs_f64(seconds) {
        Ok(duration) if duration.is_zero() && seconds > 0.0 => Duration::from_nanos(1),
        Ok(duration) => duration,
        Err(_) => Duration::MAX,
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
            "1e4000s",
            "99999999999999999999s",
            "584942417356y",
        ] {
            assert_eq!(parse_duration(huge), Ok(Duration::MAX), "{huge}");
        }
        assert_eq!(parse_duration("1.5e3ms"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("1e-12s"), Ok(Duration::from_nanos(1)));
        assert_eq!(parse_duration("0e5s"), Ok(Duration::ZERO));
    }

    #[test]
    fn a_unit_that_is_not_one_names_the_units() {
        let err = parse_duration("5S").unwrap_err();
        assert!(
            err.starts_with("'S' is not a unit of time (did you mean 's'?);"),
            "{err}"
        );
        assert!(err.contains("ns, us, ms, s, m, h, d, w, M, y"), "{err}");
        assert!(
            !parse_duration("5 parsecs")
                .unwrap_err()
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
        assert!(parse_duration("5").unwrap_err().contains("unit is needed"));
        assert!(
            parse_duration("1.5")
                .unwrap_err()
                .contains("unit is needed")
        );
        assert!(parse_duration("-1s").unwrap_err().contains("negative"));
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("").is_err());
        assert!(parse_duration("5 parsecs").is_err());
    }

    #[test]
    fn each_number_needs_its_own_unit() {
        assert_eq!(parse_duration("1m 30s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("1h 2m 3s"), Ok(Duration::from_secs(3723)));
        for glued in ["5 10m", "1 30m", "1m 30", "2 s"] {
            let err = parse_duration(glued).unwrap_err();
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
            prop_assert!(parse_duration(&number).unwrap_err().contains("unit is needed"));
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
