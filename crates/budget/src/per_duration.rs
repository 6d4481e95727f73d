//! `N/DURATION`, as a budget's rate (`--rate 10/1m`) and its breaker (`--breaker 5/1m`) are
//! written.

use std::time::Duration;

use retry_policy::duration::parse_duration;

use crate::error::Error;

/// `N/DURATION`, with `N` of at least 1 and a DURATION of more than 0s (`what` names it, and
/// `example` is one), as a rate or a breaker gives it.
pub(crate) fn count_per_duration(
    text: &str,
    what: &'static str,
    example: &'static str,
) -> Result<(u32, Duration), Error> {
    let (count, period) = text.split_once('/').ok_or(Error::NotARate(example))?;
    let count = match count.trim().parse::<u32>() {
        Ok(count) if count > 0 => count,
        _ => {
            return Err(Error::RateCount {
                count: count.to_string(),
                example,
            });
        }
    };
    let period = parse_duration(period).map_err(Error::RatePeriod)?;
    if period.is_zero() {
        return Err(Error::ZeroPeriod { what, example });
    }
    Ok((count, period))
}
