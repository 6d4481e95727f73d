//! A whole number within a range, as the command lines of `retry` and `retry-sim` take one:
//! refused in words that give the range, as each flag's help does, where clap's own value parser
//! says `1..=99`, or `invalid digit found in string` for a word.

use std::fmt::Display;
use std::ops::RangeInclusive;
use std::str::FromStr;

/// A clap value parser of a whole number in `range`.
pub fn whole_number<T>(
    range: RangeInclusive<T>,
) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static
where
    T: FromStr + PartialOrd + Display + Clone + Send + Sync + 'static,
{
    move |text| match text.parse::<T>() {
        Ok(number) if range.contains(&number) => Ok(number),
        _ => Err(format!(
            "expected a whole number from {} to {}",
            range.start(),
            range.end()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_number_outside_its_range_or_no_number_is_refused_with_the_range() {
        let parse = whole_number(1..=99u32);
        assert_eq!(parse("1"), Ok(1));
        assert_eq!(parse("99"), Ok(99));
        for refused in ["0", "100", "-1", "x", "", "1.5"] {
            assert_eq!(
                parse(refused),
                Err("expected a whole number from 1 to 99".to_string()),
                "{refused}"
            );
        }
    }
}
