//! Time as the budget's arithmetic and its breaker's count it: microseconds, as `f64`s, and the
//! longest term either may be given. Its own module so that the two arithmetics, which know
//! each other's terms, share it without depending on each other for it.

use std::time::Duration;

/// The longest period or window a budget's terms may give: a century. Longer is damage in a
/// store, and refused by `retry budget set`.
pub const LONGEST_TERM: Duration = Duration::from_secs(100 * 31_557_600);

/// A delay of `micros` microseconds; one longer than a Duration holds (a period of centuries
/// times a debt) is never.
pub fn delay_of(micros: f64) -> Duration {
    Duration::try_from_secs_f64(micros / 1e6).unwrap_or(Duration::MAX)
}

/// `duration` in microseconds, as a float, as the arithmetic uses it.
pub fn micros(duration: Duration) -> f64 {
    duration.as_nanos() as f64 / 1000.0
}
