//! A time of day as another program writes it: RFC 3339, and the ISO 8601 forms beside it that
//! CI systems write (`2026-11-28T10:35:42Z`, `2026-11-28T10:35:42.123+01:00` as GitLab writes it
//! on an instance not on UTC, `2026-11-28 10:35:42+0100`, `-00:00`, a lowercase `t` or `z`).
//!
//! humantime reads the calendar (`YYYY-MM-DDTHH:MM:SS[.frac]Z`), but only in UTC; this module
//! takes the UTC offset off first and applies it after, so that every form a source may write
//! is read and none is misread. A full date-time library (chrono, jiff, time) would add a
//! dependency of its size for these twenty lines.

use std::time::{Duration, SystemTime};

/// The most a UTC offset can be: RFC 3339's hours go to 23, and real zones stay within ±14h.
const LONGEST_OFFSET: Duration = Duration::from_secs(24 * 3600 - 60);

/// The instant `text` names: `DATE` `T`, `t` or a space, `TIME` with a fraction after `.` or `,`
/// if any, then `Z`, `z`, `±hh:mm`, `±hhmm` or `±hh`; none for anything else.
pub fn parse(text: &str) -> Option<SystemTime> {
    let text = text.trim();
    let (local, offset) = split_offset(text)?;
    let (date, time) = match local.as_bytes().get(10) {
        Some(b'T' | b't' | b' ') => (local.get(..10)?, local.get(11..)?),
        _ => return None,
    };
    let utc = humantime::parse_rfc3339(&format!("{date}T{}Z", time.replace(',', "."))).ok()?;
    match offset {
        Offset::East(offset) => utc.checked_sub(offset),
        Offset::West(offset) => utc.checked_add(offset),
    }
}

/// Which way a time's zone is from UTC, and by how much.
enum Offset {
    /// Ahead of UTC (`+01:00`, `Z`): the UTC time is this much earlier.
    East(Duration),
    /// Behind UTC (`-05:00`): the UTC time is this much later.
    West(Duration),
}

/// The date and time of `text`, and its offset from UTC.
fn split_offset(text: &str) -> Option<(&str, Offset)> {
    if let Some(local) = text.strip_suffix(['Z', 'z']) {
        return Some((local, Offset::East(Duration::ZERO)));
    }
    // The offset starts at the last sign, which must come after the time's seconds.
    let at = text.rfind(['+', '-']).filter(|&at| at > 16)?;
    let (local, offset) = text.split_at(at);
    let digits = match offset.len() {
        3 | 5 => offset[1..].to_string(),
        6 if offset.as_bytes()[3] == b':' => offset[1..].replace(':', ""),
        _ => return None,
    };
    if !digits.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    let hours: u64 = digits[..2].parse().ok()?;
    let minutes: u64 = digits
        .get(2..)
        .filter(|m| !m.is_empty())
        .map_or(Some(0), |m| m.parse().ok())?;
    let offset_by = Duration::from_secs(hours * 3600 + minutes * 60);
    if minutes >= 60 || offset_by > LONGEST_OFFSET {
        return None;
    }
    Some(match offset.starts_with('+') {
        true => (local, Offset::East(offset_by)),
        false => (local, Offset::West(offset_by)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::time::UNIX_EPOCH;

    /// 2026-11-28T10:35:42Z.
    const UTC: u64 = 1_795_862_142;

    fn at(seconds: u64) -> Option<SystemTime> {
        Some(UNIX_EPOCH + Duration::from_secs(seconds))
    }

    #[test]
    fn every_form_of_the_same_instant_reads_the_same() {
        for text in [
            "2026-11-28T10:35:42Z",
            "2026-11-28t10:35:42z",
            "2026-11-28 10:35:42Z",
            "2026-11-28T11:35:42+01:00",
            "2026-11-28T11:35:42+0100",
            "2026-11-28T11:35:42+01",
            "2026-11-28T05:35:42-05:00",
            "2026-11-28T10:35:42+00:00",
            "2026-11-28T10:35:42-00:00",
            "2026-11-29T00:20:42+13:45",
            " 2026-11-28T10:35:42Z\n",
        ] {
            assert_eq!(parse(text), at(UTC), "{text}");
        }
        assert_eq!(
            parse("2026-11-28T11:35:42.250+01:00"),
            at(UTC).map(|t| t + Duration::from_millis(250))
        );
        assert_eq!(
            parse("2026-11-28T10:35:42,5Z"),
            at(UTC).map(|t| t + Duration::from_millis(500))
        );
    }

    #[test]
    fn anything_else_is_refused() {
        for text in [
            "",
            "yesterday",
            "2026-11-28",
            "2026-11-28T10:35:42",
            "2026-11-28T10:35Z",
            "2026-11-28T10:35:42+1",
            "2026-11-28T10:35:42+01:0",
            "2026-11-28T10:35:42+01:60",
            "2026-11-28T10:35:42+24:00",
            "2026-11-28T10:35:42+0a:00",
            "2026-11-28T10:35:42 +01:00",
            "2026-11-28X10:35:42Z",
            "2026-13-28T10:35:42Z",
            "1765000000",
        ] {
            assert_eq!(parse(text), None, "{text}");
        }
    }

    proptest! {
        #[test]
        fn any_offset_names_the_instant_humantime_writes_in_utc(
            seconds in 0u64..4_000_000_000,
            minutes in -(23 * 60 + 59)..=(23i64 * 60 + 59),
        ) {
            let instant = UNIX_EPOCH + Duration::from_secs(seconds);
            let local = match minutes >= 0 {
                true => instant.checked_add(Duration::from_secs(minutes.unsigned_abs() * 60)),
                false => instant.checked_sub(Duration::from_secs(minutes.unsigned_abs() * 60)),
            };
            prop_assume!(local.is_some_and(|local| local >= UNIX_EPOCH));
            let written = humantime::format_rfc3339(local.unwrap()).to_string();
            let sign = if minutes < 0 { '-' } else { '+' };
            let (hours, rest) = (minutes.unsigned_abs() / 60, minutes.unsigned_abs() % 60);
            let text = format!("{}{sign}{hours:02}:{rest:02}", written.trim_end_matches('Z'));
            prop_assert_eq!(parse(&text), Some(instant), "{}", text);
        }
    }
}
