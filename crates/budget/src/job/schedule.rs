//! A job's schedule (`retry job set NAME --schedule '*/15 * * * *'`): cron's five fields as
//! Vixie cron reads them (a restricted day of the month and day of the week both count, either
//! matching), or one of its `@` names, optionally after `CRON_TZ=ZONE` as in a crontab. A run of
//! the job takes the schedule's next slot as one more deadline, so that a failed run is retried
//! until the next one is due and never past it. The zone is the schedule's `CRON_TZ`, else the
//! run's `CRON_TZ` (cron passes a crontab's variables to its jobs), else the system's; the slots
//! are found by croner and placed in the zone by jiff, daylight saving included.

use std::time::{Duration, SystemTime};

use croner::Cron;
use croner::parser::{CronParser, Seconds, Year};
use jiff::tz::TimeZone;
use jiff::{Timestamp, Zoned};

/// The longest a schedule may be, as stored with the job's terms.
pub const MOST_SCHEDULE: usize = 200;

/// What a schedule may be, for messages.
const EXPECTED: &str = "expected cron's five fields (minute hour day-of-month month day-of-week) \
                        or an @ name, optionally after CRON_TZ=ZONE, e.g. '*/15 * * * *' or \
                        'CRON_TZ=Europe/Paris 0 3 * * 1-5'";

/// Why a schedule cannot be used: each way with the schedule as given, and the error of the
/// crate that refused it (croner's, jiff's) kept whole.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
#[allow(
    missing_docs,
    reason = "a field is the value its variant's message names"
)]
pub enum NotASchedule {
    /// Nothing but white space, as given.
    #[error("'{0}' is blank; {expected}", expected = EXPECTED)]
    Blank(String),
    /// Longer than any schedule, escaped and shortened.
    #[error("'{text}...' is {length} bytes long, more than a schedule's {MOST_SCHEDULE}")]
    TooLong { text: String, length: usize },
    /// `@reboot`, which cron runs as the system starts: no time a job is due.
    #[error(
        "'{0}' is when the system starts, not a time the job is due; give one, e.g. '0 3 * * *'"
    )]
    AtBoot(String),
    /// `CRON_TZ=ZONE` and nothing after it.
    #[error("'{0}' names a time zone but no fields after it; {expected}", expected = EXPECTED)]
    NoFields(String),
    /// A control character other than a tab (a line break...), which no cron field holds,
    /// escaped.
    #[error("'{0}' holds a control character, which no cron field does; {expected}", expected = EXPECTED)]
    ControlCharacter(String),
    /// A `CRON_TZ` this system's zoneinfo does not hold.
    #[error(
        "'{text}' is read in the time zone '{zone}' (CRON_TZ), which this system does not know: \
         {error}"
    )]
    UnknownZone {
        zone: String,
        text: String,
        error: jiff::Error,
    },
    /// Fewer or more fields than cron's five (a sixth would be seconds, which cron has not).
    #[error(
        "'{text}' has {}; cron has five: minute hour day-of-month month day-of-week, e.g. \
         '*/15 * * * *' or 'CRON_TZ=Europe/Paris 0 3 * * 1-5'",
        fields_in_words(*.fields)
    )]
    FieldCount { text: String, fields: usize },
    /// A field croner refuses alone: which of the five, as given, and croner's words.
    #[error(
        "'{text}' is refused at its {name} field, '{value}' ({error}); the {name} field takes \
         {range}, e.g. '*/15 * * * *'",
        name = FIELDS[*.field].0,
        range = FIELDS[*.field].1
    )]
    BadField {
        text: String,
        field: usize,
        value: String,
        error: croner::errors::CronError,
    },
    /// An `@` name that is none of cron's.
    #[error(
        "'{0}' is not one of cron's @ names: @yearly (or @annually), @monthly, @weekly, @daily \
         (or @midnight) and @hourly; or give five fields, e.g. '*/15 * * * *'"
    )]
    UnknownName(String),
    /// Fields croner refuses together.
    #[error("'{text}' is not a cron schedule ({error}); {expected}", expected = EXPECTED)]
    NotCron {
        text: String,
        error: croner::errors::CronError,
    },
}

/// Cron's five fields in their order, and the values each takes.
const FIELDS: [(&str, &str); 5] = [
    ("minute", "0 to 59"),
    ("hour", "0 to 23"),
    ("day-of-month", "1 to 31"),
    ("month", "1 to 12, or JAN to DEC"),
    ("day-of-week", "0 to 7 (0 and 7 are Sunday), or SUN to SAT"),
];

/// "1 field", "4 fields".
fn fields_in_words(fields: usize) -> String {
    match fields {
        1 => "1 field".to_string(),
        _ => format!("{fields} fields"),
    }
}

/// A parsed schedule, and the zone its slots are in.
#[derive(Clone, Debug)]
pub struct Schedule {
    text: String,
    cron: Cron,
    zone: TimeZone,
}

/// The next slot of a schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slot {
    /// How long until it.
    pub left: Duration,
    /// When it is, in the schedule's zone, as RFC 9557 writes it
    /// (`2026-11-29T03:00:00+01:00[Europe/Paris]`).
    pub at: String,
}

impl Schedule {
    /// The schedule `text` says, its zone read with `env` (`CRON_TZ`) where the text names
    /// none; an error that says what was wrong and what would be accepted.
    pub fn parse(
        text: &str,
        env: &impl Fn(&str) -> Option<String>,
    ) -> Result<Schedule, NotASchedule> {
        let escaped = |text: &str| text.escape_default().to_string();
        if text.trim().is_empty() {
            return Err(NotASchedule::Blank(escaped(text)));
        }
        // Fields are apart by blanks, as in a crontab, tabs included: kept one space apart.
        let words: Vec<&str> = text
            .split([' ', '\t'])
            .filter(|word| !word.is_empty())
            .collect();
        let text = words.join(" ");
        let text = text.as_str();
        if text.len() > MOST_SCHEDULE {
            let shown: String = text.chars().take(40).collect();
            let length = text.len();
            return Err(NotASchedule::TooLong {
                text: escaped(&shown),
                length,
            });
        }
        if text.chars().any(char::is_control) {
            return Err(NotASchedule::ControlCharacter(escaped(text)));
        }
        let (zone, expression) = match text.strip_prefix("CRON_TZ=") {
            Some(rest) => {
                let (zone, expression) = rest.split_once(' ').unwrap_or((rest, ""));
                (Some(zone.to_string()), expression.trim())
            }
            None => (env("CRON_TZ").filter(|zone| !zone.is_empty()), text),
        };
        match expression {
            "" => return Err(NotASchedule::NoFields(text.to_string())),
            "@reboot" => return Err(NotASchedule::AtBoot(text.to_string())),
            _ => {}
        }
        let zone = match zone {
            Some(zone) => TimeZone::get(&zone).map_err(|error| NotASchedule::UnknownZone {
                zone,
                text: text.to_string(),
                error,
            })?,
            None => TimeZone::system(),
        };
        let cron = cron_of(expression, text)?;
        Ok(Schedule {
            text: text.to_string(),
            cron,
            zone,
        })
    }

    /// The schedule as given.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The first slot after `now`; none when the schedule has none within the next years.
    pub fn next_slot(&self, now: SystemTime) -> Option<Slot> {
        let now = Timestamp::try_from(now).ok()?.to_zoned(self.zone.clone());
        let next: Zoned = self.cron.find_next_occurrence(&now, false).ok()?;
        let left = now.duration_until(&next).unsigned_abs();
        Some(Slot {
            left,
            at: next.to_string(),
        })
    }
}

/// The slots `expression` (cron's five fields, or an `@` name) gives, as croner finds them; or,
/// naming `text` (the schedule as given), why it gives none: the number of fields, or which of
/// them croner refuses.
fn cron_of(expression: &str, text: &str) -> Result<Cron, NotASchedule> {
    let parser = CronParser::builder()
        .seconds(Seconds::Disallowed)
        .year(Year::Disallowed)
        .build();
    if expression.starts_with('@') {
        // Vixie cron's @midnight, which croner does not know, is its @daily.
        let name = match expression.eq_ignore_ascii_case("@midnight") {
            true => "@daily",
            false => expression,
        };
        return parser
            .parse(name)
            .map_err(|_| NotASchedule::UnknownName(text.to_string()));
    }
    let fields: Vec<&str> = expression.split(' ').collect();
    if fields.len() != FIELDS.len() {
        return Err(NotASchedule::FieldCount {
            text: text.to_string(),
            fields: fields.len(),
        });
    }
    parser.parse(expression).map_err(|error| {
        // Which field croner refuses, tried alone among four that take every value.
        let alone = |field: usize| {
            let mut every = ["*"; 5];
            every[field] = fields[field];
            parser.parse(&every.join(" ")).err()
        };
        match (0..FIELDS.len()).find_map(|field| alone(field).map(|error| (field, error))) {
            Some((field, error)) => NotASchedule::BadField {
                text: text.to_string(),
                field,
                value: fields[field].to_string(),
                error,
            },
            None => NotASchedule::NotCron {
                text: text.to_string(),
                error,
            },
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(text: &str) -> Schedule {
        Schedule::parse(text, &|_| Some("UTC".to_string())).unwrap()
    }

    fn at(rfc3339: &str) -> SystemTime {
        SystemTime::from(rfc3339.parse::<Timestamp>().unwrap())
    }

    #[test]
    fn the_next_slot_is_the_first_after_now() {
        let every_quarter = utc("*/15 * * * *");
        let slot = every_quarter.next_slot(at("2026-11-28T23:52:30Z")).unwrap();
        assert_eq!(slot.left, Duration::from_secs(7 * 60 + 30));
        assert_eq!(slot.at, "2026-11-29T00:00:00+00:00[UTC]");
        let on_the_slot = every_quarter.next_slot(at("2026-11-29T00:00:00Z")).unwrap();
        assert_eq!(
            on_the_slot.left,
            Duration::from_secs(15 * 60),
            "a run at its slot"
        );
    }

    #[test]
    fn a_day_of_the_month_or_of_the_week_counts_as_vixie_cron_reads_them() {
        // The 13th, or a Friday: 2026-12-04 is a Friday, before the 13th.
        let slot = utc("0 0 13 * 5")
            .next_slot(at("2026-12-01T12:00:00Z"))
            .unwrap();
        assert_eq!(slot.at, "2026-12-04T00:00:00+00:00[UTC]");
    }

    #[test]
    fn cron_tz_places_the_slots_in_its_zone() {
        let paris = Schedule::parse("CRON_TZ=Europe/Paris 0 3 * * *", &|_| None).unwrap();
        let slot = paris.next_slot(at("2026-11-28T12:00:00Z")).unwrap();
        assert_eq!(slot.at, "2026-11-29T03:00:00+01:00[Europe/Paris]");
        assert_eq!(slot.left, Duration::from_secs(14 * 3600));
        let from_the_run = Schedule::parse("0 3 * * *", &|name| {
            (name == "CRON_TZ").then(|| "Asia/Tokyo".to_string())
        })
        .unwrap();
        let slot = from_the_run.next_slot(at("2026-11-28T12:00:00Z")).unwrap();
        assert_eq!(slot.at, "2026-11-29T03:00:00+09:00[Asia/Tokyo]");
    }

    #[test]
    fn what_is_not_a_cron_schedule_is_refused_saying_what_would_be() {
        for bad in [
            "",
            " ",
            "@reboot",
            "CRON_TZ=Europe/Paris",
            "* * * *",
            "0 * * * * *",
            "61 * * * *",
            "@fortnightly",
            "CRON_TZ=Nowhere/Else 0 3 * * *",
            "0\n3 * * *",
        ] {
            let err = Schedule::parse(bad, &|_| None).unwrap_err().to_string();
            // Each refusal follows "--schedule " with the schedule as given, then why.
            let given = format!("'{}' ", bad.escape_default());
            assert!(err.starts_with(&given), "{bad}: {err}");
            let said = [
                "cron has five",
                "is refused at its",
                "not one of cron's @ names",
                "blank",
                "control character",
                "not a cron",
                "does not know",
                "no fields",
                "when the system starts",
            ];
            assert!(said.iter().any(|why| err.contains(why)), "{bad}: {err}");
            assert!(
                err.contains("e.g. '*/15 * * * *'")
                    || err.contains("this system does not know")
                    || err.contains("e.g. '0 3 * * *'"),
                "{bad}: {err}"
            );
        }
        assert_eq!(utc("@daily").text(), "@daily");
    }

    #[test]
    fn a_refusal_counts_the_fields_or_names_the_one_cron_does_not_take() {
        let refused = |text: &str| Schedule::parse(text, &|_| None).unwrap_err().to_string();
        assert!(refused("0 * * * * *").contains("has 6 fields; cron has five"));
        assert!(refused("daily").contains("has 1 field; cron has five"));
        for (text, field, takes) in [
            ("61 * * * *", "its minute field, '61'", "0 to 59"),
            ("0 24 * * *", "its hour field, '24'", "0 to 23"),
            ("0 0 0 * *", "its day-of-month field, '0'", "1 to 31"),
            (
                "0 0 * 13 *",
                "its month field, '13'",
                "1 to 12, or JAN to DEC",
            ),
            ("0 0 * * 8", "its day-of-week field, '8'", "0 to 7"),
        ] {
            let err = refused(text);
            assert!(err.contains(field), "{err}");
            assert!(err.contains(&format!("field takes {takes}")), "{err}");
        }
        assert!(refused("@fortnightly").contains("@hourly"));
    }

    #[test]
    fn midnight_is_vixie_crons_daily() {
        let midnight = utc("@midnight");
        assert_eq!(midnight.text(), "@midnight");
        let slot = midnight.next_slot(at("2026-11-28T12:00:00Z")).unwrap();
        assert_eq!(slot.at, "2026-11-29T00:00:00+00:00[UTC]");
    }

    #[test]
    fn fields_may_be_apart_by_tabs_as_in_a_crontab() {
        assert_eq!(utc(" 0\t3  *\t* 1-5 ").text(), "0 3 * * 1-5");
        assert_eq!(
            utc("CRON_TZ=UTC\t0 3 * * *").text(),
            "CRON_TZ=UTC 0 3 * * *"
        );
    }

    #[test]
    fn a_schedule_too_long_to_keep_says_its_length() {
        let long = format!("0 3 * * * {}", "x".repeat(MOST_SCHEDULE));
        let err = Schedule::parse(&long, &|_| None).unwrap_err().to_string();
        assert!(err.starts_with("'0 3 * * * xxx"), "{err}");
        assert!(err.ends_with("...' is 210 bytes long, more than a schedule's 200"));
    }
}
