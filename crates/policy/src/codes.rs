//! Sets of exit statuses, as the CODES flag values write them: `1,75-78,255`.
//!
//! A set is 256 bits, one per status; an attempt that died of signal N is matched as 128+N (see
//! `exit`). This module only parses, prints and looks up; what a match means is `rules`'s job.

use std::fmt;
use std::str::FromStr;

use crate::error::Error;

/// A set of exit statuses in 0-255.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct StatusSet {
    bits: [u64; 4],
}

impl StatusSet {
    /// Whether `status` is in the set.
    pub fn contains(&self, status: u8) -> bool {
        self.bits[usize::from(status / 64)] & (1 << (status % 64)) != 0
    }

    /// The smallest status in both sets, if any.
    pub fn first_shared(&self, other: &StatusSet) -> Option<u8> {
        (0..=u8::MAX).find(|&status| self.contains(status) && other.contains(status))
    }

    /// The statuses in either set.
    pub fn union(&self, other: &StatusSet) -> StatusSet {
        let mut bits = self.bits;
        for (mine, theirs) in bits.iter_mut().zip(other.bits) {
            *mine |= theirs;
        }
        StatusSet { bits }
    }

    fn insert(&mut self, status: u8) {
        self.bits[usize::from(status / 64)] |= 1 << (status % 64);
    }

    /// The set as maximal inclusive ranges, in ascending order.
    fn ranges(&self) -> Vec<(u8, u8)> {
        let mut ranges: Vec<(u8, u8)> = Vec::new();
        for status in (0..=u8::MAX).filter(|&s| self.contains(s)) {
            match ranges.last_mut() {
                Some((_, end)) if u16::from(*end) + 1 == u16::from(status) => *end = status,
                _ => ranges.push((status, status)),
            }
        }
        ranges
    }
}

impl FromIterator<u8> for StatusSet {
    fn from_iter<I: IntoIterator<Item = u8>>(statuses: I) -> Self {
        let mut set = StatusSet::default();
        statuses.into_iter().for_each(|status| set.insert(status));
        set
    }
}

impl FromStr for StatusSet {
    type Err = Error;

    /// Parse a comma-separated list of statuses and inclusive ranges, each in 0-255.
    fn from_str(text: &str) -> Result<Self, Error> {
        let mut set = StatusSet::default();
        for item in text.split(',').map(str::trim) {
            let (start, end) = parse_item(item)?;
            (start..=end).for_each(|status| set.insert(status));
        }
        Ok(set)
    }
}

/// One list item: `7` or `75-78`.
fn parse_item(item: &str) -> Result<(u8, u8), Error> {
    if item.is_empty() {
        return Err(Error::EmptyStatusEntry);
    }
    let (start, end) = match item.split_once('-') {
        Some((start, end)) => (parse_status(start.trim())?, parse_status(end.trim())?),
        None => (parse_status(item)?, parse_status(item)?),
    };
    if start > end {
        return Err(Error::BackwardsRange {
            range: item.to_string(),
            start,
            end,
        });
    }
    Ok((start, end))
}

/// One status: a decimal number in 0-255.
fn parse_status(text: &str) -> Result<u8, Error> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Error::NotAStatus(text.to_string()));
    }
    text.parse::<u8>()
        .map_err(|_| Error::StatusTooLarge(text.to_string()))
}

impl fmt::Display for StatusSet {
    /// The canonical list: sorted, merged ranges, e.g. `1,75-78,255`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let items: Vec<String> = self
            .ranges()
            .into_iter()
            .map(|(start, end)| match end - start {
                0 => start.to_string(),
                _ => format!("{start}-{end}"),
            })
            .collect();
        f.write_str(&items.join(","))
    }
}

impl fmt::Debug for StatusSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "StatusSet({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_debug_print_shows_the_codes() {
        let set: StatusSet = "1,75-78".parse().unwrap();
        assert_eq!(format!("{set:?}"), "StatusSet(1,75-78)");
    }

    fn set(text: &str) -> StatusSet {
        text.parse().unwrap()
    }

    #[test]
    fn parses_lists_and_ranges() {
        let codes = set("1,75-78,255");
        for status in [1, 75, 76, 77, 78, 255] {
            assert!(codes.contains(status), "{status}");
        }
        for status in [0, 2, 74, 79, 254] {
            assert!(!codes.contains(status), "{status}");
        }
        assert_eq!(set(" 3 , 0-1 ").to_string(), "0-1,3");
        assert_eq!(set("0-255").to_string(), "0-255");
    }

    #[test]
    fn rejects_what_is_outside_the_grammar() {
        let cases = [
            ("", "empty entry"),
            ("1,,2", "empty entry"),
            ("256", "above 255"),
            ("5-3", "runs backwards"),
            ("x", "not an exit status"),
            ("-1", "not an exit status"),
            ("1-", "not an exit status"),
            ("+1", "not an exit status"),
        ];
        for (text, message) in cases {
            let err = text.parse::<StatusSet>().unwrap_err().to_string();
            assert!(err.contains(message), "{text}: {err}");
        }
    }

    #[test]
    fn finds_shared_statuses() {
        assert_eq!(set("0,3-5").first_shared(&set("4-9")), Some(4));
        assert_eq!(set("0").first_shared(&set("1-255")), None);
    }

    proptest! {
        #[test]
        fn display_round_trips(statuses in proptest::collection::vec(any::<u8>(), 1..40)) {
            let text = statuses.iter().map(u8::to_string).collect::<Vec<_>>().join(",");
            let parsed = set(&text);
            prop_assert_eq!(set(&parsed.to_string()), parsed);
            for status in 0..=u8::MAX {
                prop_assert_eq!(parsed.contains(status), statuses.contains(&status));
            }
        }

        #[test]
        fn never_panics_on_any_text(text in ".*") {
            let _ = text.parse::<StatusSet>();
        }

        #[test]
        fn any_character_outside_the_grammar_is_refused(
            before in "[0-9,-]{0,6}",
            stranger in "[^0-9,\\s-]",
            after in "[0-9,-]{0,6}",
        ) {
            let text = format!("{before}{stranger}{after}");
            prop_assert!(text.parse::<StatusSet>().is_err());
        }

        #[test]
        fn statuses_above_255_are_refused(status in 256u32..100_000) {
            prop_assert!(status.to_string().parse::<StatusSet>().is_err());
            let range = format!("1-{status}");
            prop_assert!(range.parse::<StatusSet>().is_err());
        }
    }
}
