//! Retrying at one layer: where a run sits among nested retries, and what `RETRY_NESTED` makes of
//! it.
//!
//! "Consider a system where a customer's call causes a five-deep stack of service calls, each
//! layer retrying three times: the database's load grows 243-fold" (Amazon Builders' Library).
//! A script run by `retry` that runs `retry` itself multiplies attempts the same way. Every
//! attempt gets `RETRY_DEPTH` (1 under the outermost run), so a run that finds it set knows it
//! is nested, and `RETRY_TOTAL_ATTEMPTS`, the product of every layer's `--max-attempts` so far,
//! says by how much its attempts multiply: a run's warning counts every layer around it.

use std::ffi::OsStr;

use crate::attempts::AttemptLimit;
use crate::choice::Choice;

/// `RETRY_NESTED`: what a run inside another retry's attempt does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Nested {
    /// One attempt: the outer layer does the retrying.
    Once,
    /// Retry as usual, warning of the attempts the layers multiply to.
    #[default]
    Retry,
    /// Retry as usual, without the warning.
    Quiet,
}

impl Choice for Nested {
    const ALL: &'static [Nested] = &[Nested::Once, Nested::Retry, Nested::Quiet];

    fn name(self) -> &'static str {
        match self {
            Nested::Once => "once",
            Nested::Retry => "retry",
            Nested::Quiet => "quiet",
        }
    }

    fn about(self) -> &'static str {
        match self {
            Nested::Once => "One attempt: the outer layer does the retrying",
            Nested::Retry => "Retry as usual, warning of the attempts the layers multiply to",
            Nested::Quiet => "Retry as usual, without the warning",
        }
    }
}

/// Where a run sits: its depth, and the outer runs' attempts when it is nested.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layer {
    /// 0 for a run that is not inside another; else the outer run's depth.
    outer_depth: u32,
    /// The most attempts all the outer runs together make, as they gave it in
    /// `RETRY_TOTAL_ATTEMPTS`.
    outer_total: Option<AttemptLimit>,
}

impl Layer {
    /// The layer the environment tells of: `RETRY_DEPTH` and `RETRY_TOTAL_ATTEMPTS` as the outer
    /// run set them (a value that is not one it could have set is taken as not given).
    pub fn of(depth: Option<&OsStr>, outer_total: Option<&OsStr>) -> Layer {
        let outer_depth = depth
            .and_then(OsStr::to_str)
            .and_then(|depth| depth.parse::<u32>().ok())
            .unwrap_or(0);
        Layer {
            outer_depth,
            outer_total: outer_total
                .and_then(OsStr::to_str)
                .and_then(|limit| limit.parse::<AttemptLimit>().ok()),
        }
    }

    /// The most attempts of the command all layers together may make with this run's `limit`,
    /// which its attempts get in `RETRY_TOTAL_ATTEMPTS`.
    pub fn total(&self, limit: AttemptLimit) -> AttemptLimit {
        match (self.is_nested(), self.outer_total) {
            (true, Some(outer)) => limit.times(outer),
            (true, None) => AttemptLimit::Unlimited,
            (false, _) => limit,
        }
    }

    /// This run's depth, which its attempts get in `RETRY_DEPTH`: 1 for the outermost run.
    pub fn depth(&self) -> u32 {
        self.outer_depth.saturating_add(1)
    }

    fn is_nested(&self) -> bool {
        self.outer_depth > 0
    }

    /// The attempt limit in force: one attempt when nested with `RETRY_NESTED=once`.
    pub fn limit(&self, nested: Nested, limit: AttemptLimit) -> AttemptLimit {
        match (self.is_nested(), nested) {
            (true, Nested::Once) => AttemptLimit::AtMost(std::num::NonZeroU64::MIN),
            _ => limit,
        }
    }

    /// The warning a nested run gives with `RETRY_NESTED=retry`: how the layers' attempts multiply.
    pub fn warning(&self, nested: Nested, limit: AttemptLimit) -> Option<String> {
        if !self.is_nested() || nested != Nested::Retry {
            return None;
        }
        let attempts = match (self.outer_total, self.total(limit)) {
            (Some(outer), AttemptLimit::AtMost(total)) => {
                format!("up to {outer} × {limit} = {total} attempts of this command")
            }
            (Some(outer), AttemptLimit::Unlimited) => {
                format!("attempts of this command without end ({outer} × {limit})")
            }
            (None, _) => {
                format!("up to {limit} attempts of this command for each of the outer runs'")
            }
        };
        let around = match self.outer_depth {
            1 => "another retry".to_string(),
            depth => format!("{depth} other retries, whose attempts multiply"),
        };
        Some(format!(
            "running inside {around} (depth {}): {attempts}; \
             retry at one layer (RETRY_NESTED=once leaves the retrying to the outer one)",
            self.depth()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layer(depth: Option<&str>, outer_total: Option<&str>) -> Layer {
        Layer::of(depth.map(OsStr::new), outer_total.map(OsStr::new))
    }

    fn limit(text: &str) -> AttemptLimit {
        text.parse().unwrap()
    }

    #[test]
    fn the_outermost_run_is_depth_one_and_warns_of_nothing() {
        for outermost in [
            layer(None, None),
            layer(Some("x"), Some("3")),
            layer(Some("0"), None),
        ] {
            assert_eq!(outermost.depth(), 1);
            assert_eq!(outermost.warning(Nested::Retry, limit("4")), None);
            assert_eq!(outermost.limit(Nested::Once, limit("4")), limit("4"));
            assert_eq!(outermost.total(limit("4")), limit("4"));
        }
    }

    #[test]
    fn a_nested_run_warns_of_the_product_or_makes_one_attempt() {
        let nested = layer(Some("1"), Some("3"));
        assert_eq!(nested.depth(), 2);
        assert_eq!(nested.total(limit("4")), limit("12"));
        let warning = nested.warning(Nested::Retry, limit("4")).unwrap();
        assert!(
            warning
                .starts_with("running inside another retry (depth 2): up to 3 × 4 = 12 attempts"),
            "{warning}"
        );
        assert_eq!(nested.warning(Nested::Quiet, limit("4")), None);
        assert_eq!(nested.warning(Nested::Once, limit("4")), None);
        assert_eq!(nested.limit(Nested::Once, limit("4")), limit("1"));
        assert_eq!(nested.limit(Nested::Retry, limit("4")), limit("4"));
        let endless = layer(Some("2"), Some("unlimited"));
        assert_eq!(endless.total(limit("4")), AttemptLimit::Unlimited);
        let warning = endless.warning(Nested::Retry, limit("4")).unwrap();
        assert!(
            warning.contains(
                "2 other retries, whose attempts multiply (depth 3): attempts of this command \
                 without end (unlimited × 4);"
            ),
            "{warning}"
        );
        let unknown = layer(Some("1"), None)
            .warning(Nested::Retry, limit("4"))
            .unwrap();
        assert!(
            unknown.contains("up to 4 attempts of this command for each of the outer runs';"),
            "{unknown}"
        );
    }

    #[test]
    fn every_layer_counts() {
        let third = layer(Some("2"), Some("6"));
        let warning = third.warning(Nested::Retry, limit("4")).unwrap();
        assert!(warning.contains("up to 6 × 4 = 24 attempts"), "{warning}");
        let huge = layer(Some("1"), Some(&u64::MAX.to_string()));
        assert_eq!(huge.total(limit("2")), AttemptLimit::Unlimited);
    }
}
