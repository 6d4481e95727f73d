//! What an attempt's end means for the run: one ordered list of rules, the first that holds
//! deciding. A rule names exit statuses, a pattern a line of output must match, or both, and
//! says success, retry or stop.
//!
//! The list is the user's rules (`--success-on`, then `--stop-on`, then `--retry-on`, each in
//! the order given), then the tool's guards (130, Ctrl-C, and 141, SIGPIPE, are not retried
//! unless a rule above names them), then the preset's rules (first, for a request that is not
//! safe to repeat, `requests`' rules that stop it once the server may have it; then an attempt
//! cut by `--timeout`), then the defaults: the success statuses succeed, and any other end is retried (or
//! stopped, when the user's own `--retry-on` rules name what is retried, or as the preset says).
//! `--plan` prints the list as it stands.
//!
//! A `--retry-on` rule may carry a limit after its statuses (`124:max=1`): it retries at most
//! that many times in a run, and once spent the end falls through to the rules below it, as if
//! it were not there. The limit follows the statuses, before any pattern, so that it can never
//! be read as part of a regular expression. Each run counts its rules' retries in [`RuleUses`].
//!
//! A rule without statuses in `--stop-on` and `--retry-on` concerns the failures only, so that
//! a successful attempt whose output happens to match is not failed for it; to fail a success
//! status by its output, name the status (`--retry-on 0,stdout:pending`). A `--success-on` rule
//! with a pattern makes success need the match: the success statuses alone no longer succeed.

use std::str::FromStr;
use std::sync::Arc;

use crate::codes::StatusSet;
use crate::error::Error;
use crate::matching::{MAX_PATTERNS, OutputPattern, OutputStream, check_pattern};
use crate::presets::{Preset, Rule as PresetRule};
use crate::requests::Request;
use crate::signal::Signal;
use crate::termination::TIMED_OUT;
use crate::verdict::Verdict;

/// A rule as the user writes it: `CODES`, `STREAM:REGEX`, or `CODES,STREAM:REGEX`, where
/// STREAM is `stdout`, `stderr` or `output` (both), and CODES may end with `:max=N`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleSpec {
    /// The statuses it names, if it names any.
    pub statuses: Option<StatusSet>,
    /// `:max=N`: how many retries it may give in a run, if it is limited.
    pub limit: Option<u32>,
    /// The pattern a line must match, if it reads the output.
    pub output: Option<OutputPattern>,
    /// As given.
    pub text: String,
}

/// What comes between a rule's statuses and its limit.
const LIMIT: &str = ":max=";

/// The most a rule's limit may be: more would be no limit a run could reach.
pub const MAX_LIMIT: u32 = 10_000;

/// The streams a rule's pattern may read, by the word before its colon.
const STREAMS: [(&str, OutputStream); 3] = [
    ("stdout:", OutputStream::Stdout),
    ("stderr:", OutputStream::Stderr),
    ("output:", OutputStream::Both),
];

impl FromStr for RuleSpec {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self, Error> {
        let pattern_at = |at: usize| {
            STREAMS
                .iter()
                .find(|(word, _)| text[at..].starts_with(word))
                .map(|&(word, stream)| OutputPattern {
                    stream,
                    regex: text[at + word.len()..].to_string(),
                })
        };
        let (codes, output) = match pattern_at(0) {
            Some(output) => (None, Some(output)),
            None => match text
                .match_indices(',')
                .find_map(|(at, _)| pattern_at(at + 1).map(|output| (&text[..at], output)))
            {
                Some((codes, output)) => (Some(codes), Some(output)),
                None => (Some(text), None),
            },
        };
        let (codes, limit) = match codes.and_then(|codes| codes.split_once(LIMIT)) {
            Some((codes, limit)) => (Some(codes), Some(parse_limit(limit)?)),
            None => (codes, None),
        };
        let statuses = codes
            .map(|codes| {
                codes
                    .parse::<StatusSet>()
                    .map_err(|err| Error::RuleStatuses(Box::new(err)))
            })
            .transpose()?;
        if let Some(output) = &output
            && output.regex.is_empty()
        {
            return Err(Error::EmptyPattern);
        }
        if let Some(output) = &output
            && ends_with_a_limit(&output.regex)
        {
            return Err(Error::LimitAfterPattern {
                rule: text.to_string(),
            });
        }
        Ok(RuleSpec {
            statuses,
            limit,
            output,
            text: text.to_string(),
        })
    }
}

/// Whether a pattern ends with what a person would mean as a limit: `:max=` and digits.
fn ends_with_a_limit(regex: &str) -> bool {
    regex
        .rsplit_once(LIMIT)
        .is_some_and(|(_, tail)| !tail.is_empty() && tail.bytes().all(|byte| byte.is_ascii_digit()))
}

/// The `N` of `:max=N`: a whole number from 1 to [`MAX_LIMIT`].
fn parse_limit(text: &str) -> Result<u32, Error> {
    text.parse()
        .ok()
        .filter(|limit| (1..=MAX_LIMIT).contains(limit))
        .ok_or_else(|| Error::BadRuleLimit(text.to_string()))
}

/// The user's rules, by the option that gave them, each in the order given.
#[derive(Clone, Debug, Default)]
pub struct UserRules {
    /// `--success-on`.
    pub success: Vec<RuleSpec>,
    /// `--stop-on`.
    pub stop: Vec<RuleSpec>,
    /// `--retry-on`.
    pub retry: Vec<RuleSpec>,
}

/// Which exit statuses a rule concerns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Statuses {
    /// These.
    Named(StatusSet),
    /// Every status but the success statuses.
    Failures,
    /// Every status.
    Any,
}

/// Where a rule comes from, and what it is in words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The user's `flag RULE`.
    Given {
        /// `--success-on`, `--stop-on` or `--retry-on`.
        flag: &'static str,
        /// The rule as given.
        text: String,
    },
    /// A rule of the preset's, and what such an end is.
    Preset {
        /// The preset's name.
        preset: &'static str,
        /// What the end is, in words.
        meaning: &'static str,
    },
    /// The tool's own: what the end is, and how to have it retried.
    Guard(&'static str),
    /// What an end no rule above names means.
    Default(&'static str),
}

/// One rule of the list.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Rule {
    statuses: Statuses,
    /// The index of its pattern in the list's patterns.
    pattern: Option<usize>,
    verdict: Verdict,
    origin: Origin,
    /// How many retries it may give in a run, if it is limited.
    limit: Option<u32>,
    /// The rule in words, shared by every attempt it decides.
    described: Arc<str>,
}

/// The rule that decided, as messages, events and reports name it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RuleRef {
    /// The rule in words: `--stop-on 2`, `--preset curl: ...`.
    pub described: Arc<str>,
    /// Its output pattern, when it reads the output.
    pub pattern: Option<Arc<str>>,
    /// Whether it is a default (no rule of the user's, the preset's or the tool's held).
    pub default: bool,
    /// A limited rule that named the end but had given all its retries, so that this rule,
    /// below it, decided: the spent rule in words.
    pub spent: Option<Arc<str>>,
}

impl RuleRef {
    /// Why a failure is not retried, in words that follow "exit status N".
    pub fn refusal(&self) -> String {
        match &self.spent {
            Some(spent) => format!(
                "is not retried: {spent} has given all its retries; below it, {}",
                self.described
            ),
            None => format!("is not retried: {}", self.described),
        }
    }

    /// Why a success status is not a success, in words that follow "exited 0".
    pub fn unready(&self) -> String {
        match self.default {
            true => "without the --success-on match it needs".into(),
            false => format!("but {} calls it a failure", self.described),
        }
    }
}

/// What the list makes of one attempt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    /// Success, retry or stop.
    pub verdict: Verdict,
    /// The rule that decided.
    pub rule: RuleRef,
    /// The status was a success status, but the rule that decided calls it a failure.
    pub unready: bool,
}

/// A rule a row of `--plan` shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleRow {
    /// The statuses it concerns, in words: `22`, `any failure`, `any`.
    pub statuses: String,
    /// The pattern a line must match, if any.
    pub output: Option<OutputPattern>,
    /// What it makes of an attempt.
    pub verdict: Verdict,
    /// Where it comes from, and what it is.
    pub origin: Origin,
    /// How many retries it may give in a run, if it is limited.
    pub limit: Option<u32>,
}

/// How many retries each limited rule of a run's list has given: the run's own count, which
/// [`RuleList::decide`] keeps.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RuleUses(Vec<u32>);

impl RuleUses {
    /// How many retries the rule at `index` has given.
    fn given(&self, index: usize) -> u32 {
        self.0.get(index).copied().unwrap_or(0)
    }

    /// Count a retry the rule at `index` gives.
    fn count(&mut self, index: usize) {
        if self.0.len() <= index {
            self.0.resize(index + 1, 0);
        }
        self.0[index] += 1;
    }
}

/// The ordered rules of a run, and the patterns they read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleList {
    rules: Vec<Rule>,
    patterns: Vec<OutputPattern>,
    /// The success statuses: the user's statuses-only `--success-on` rules, or 0.
    success: StatusSet,
}

/// 128+SIGINT: the user asked the command to stop.
const INTERRUPTED: u8 = 128 + Signal::INT.number() as u8;
/// 128+SIGPIPE: the command's reader is gone, and would be gone for another attempt too.
const BROKEN_PIPE: u8 = 128 + Signal::PIPE.number() as u8;

/// The tool's guards: ends not retried unless a rule above them names them.
const GUARDS: [(u8, &str); 2] = [
    (
        INTERRUPTED,
        "the command was interrupted (Ctrl-C); --retry-on 130 retries it",
    ),
    (
        BROKEN_PIPE,
        "the command's reader went away (SIGPIPE); --retry-on 141 retries it",
    ),
];

impl RuleList {
    /// The list of the user's rules, the guards, `preset`'s rules and the defaults.
    pub fn new(user: &UserRules, preset: Option<&'static Preset>) -> Result<Self, Error> {
        Self::for_request(user, preset, None)
    }

    /// The list for a command that sends `request` (curl's, wget's): when the request is unsafe
    /// to repeat, the preset's rules start with those that stop it at a failure that may have
    /// come after it was sent.
    pub fn for_request(
        user: &UserRules,
        preset: Option<&'static Preset>,
        request: Option<&Request>,
    ) -> Result<Self, Error> {
        let success = success_statuses(&user.success);
        check_overlaps(user, success)?;
        let mut list = RuleList {
            rules: Vec::new(),
            patterns: Vec::new(),
            success,
        };
        let success_needs_match = user.success.iter().any(|spec| spec.output.is_some());
        for spec in &user.success {
            if success_needs_match && spec.output.is_none() {
                continue;
            }
            list.push_given(
                "--success-on",
                spec,
                Verdict::Success,
                Statuses::Named(success),
            )?;
        }
        for spec in &user.stop {
            list.push_given("--stop-on", spec, Verdict::Stop, Statuses::Failures)?;
        }
        for spec in &user.retry {
            list.push_given("--retry-on", spec, Verdict::Retry, Statuses::Failures)?;
        }
        for (status, meaning) in GUARDS {
            list.push(
                Statuses::Named(single(status)),
                None,
                Verdict::Stop,
                Origin::Guard(meaning),
            );
        }
        if let Some(preset) = preset {
            let unsafe_request =
                request.map_or(Vec::new(), |request| request.stop_rules(preset.name));
            list.push_preset(preset, &unsafe_request)?;
        }
        if user.success.is_empty() {
            let origin = Origin::Default("a success status");
            list.push(Statuses::Named(success), None, Verdict::Success, origin);
        }
        let (verdict, meaning) = match (preset, user.retry.is_empty()) {
            (Some(preset), _) => (preset.otherwise, preset.otherwise_meaning()),
            (None, true) => (Verdict::Retry, "any other end"),
            (None, false) => (
                Verdict::Stop,
                "--retry-on names what is retried, and not this",
            ),
        };
        list.push(Statuses::Any, None, verdict, Origin::Default(meaning));
        Ok(list)
    }

    /// What the first rule that holds makes of an attempt that ended with `status`, its output
    /// having matched the patterns whose bits `matched` sets. A limited rule that has given all
    /// its retries (`uses` counts them, and this counts the retry it gives) holds no longer.
    pub fn decide(&self, status: u8, matched: u64, uses: &mut RuleUses) -> Decision {
        let names = |rule: &Rule| {
            self.names(rule.statuses, status)
                && rule.pattern.is_none_or(|index| matched & (1 << index) != 0)
        };
        let mut passed_over = None;
        // The last rule names any status, reads nothing and has no limit: one always holds.
        let index = (0..self.rules.len())
            .find(|&index| {
                let rule = &self.rules[index];
                let spent = rule.limit.is_some_and(|limit| uses.given(index) >= limit);
                if spent && names(rule) {
                    passed_over.get_or_insert(index);
                }
                !spent && names(rule)
            })
            .unwrap_or(self.rules.len() - 1);
        let rule = &self.rules[index];
        if rule.limit.is_some() {
            uses.count(index);
        }
        Decision {
            verdict: rule.verdict,
            rule: RuleRef {
                described: Arc::clone(&rule.described),
                pattern: rule
                    .pattern
                    .map(|index| Arc::from(self.patterns[index].regex.as_str())),
                default: matches!(rule.origin, Origin::Default(_)),
                spent: passed_over.map(|index: usize| Arc::clone(&self.rules[index].described)),
            },
            unready: self.success.contains(status) && rule.verdict != Verdict::Success,
        }
    }

    /// The most attempts the rules' limits allow a run, when every rule that retries is limited:
    /// one, and each limit's retries.
    pub fn attempt_bound(&self) -> Option<u64> {
        let retrying = self
            .rules
            .iter()
            .filter(|rule| rule.verdict == Verdict::Retry);
        retrying
            .map(|rule| rule.limit.map(u64::from))
            .sum::<Option<u64>>()
            .map(|retries| retries + 1)
    }

    /// The output patterns the rules read, in order: the i-th sets bit i of a match.
    pub fn patterns(&self) -> &[OutputPattern] {
        &self.patterns
    }

    /// The rules in order, as `--plan` shows them.
    pub fn rows(&self) -> Vec<RuleRow> {
        self.rules
            .iter()
            .map(|rule| RuleRow {
                statuses: match rule.statuses {
                    Statuses::Named(set) => set.to_string(),
                    Statuses::Failures => "any failure".into(),
                    Statuses::Any => "any".into(),
                },
                output: rule.pattern.map(|index| self.patterns[index].clone()),
                verdict: rule.verdict,
                origin: rule.origin.clone(),
                limit: rule.limit,
            })
            .collect()
    }

    /// Whether `statuses` names `status`.
    fn names(&self, statuses: Statuses, status: u8) -> bool {
        match statuses {
            Statuses::Named(set) => set.contains(status),
            Statuses::Failures => !self.success.contains(status),
            Statuses::Any => true,
        }
    }

    fn push_given(
        &mut self,
        flag: &'static str,
        spec: &RuleSpec,
        verdict: Verdict,
        unnamed: Statuses,
    ) -> Result<(), Error> {
        let pattern = match &spec.output {
            Some(output) => {
                Some(self.pattern(output.clone(), || format!("{flag} '{}'", spec.text))?)
            }
            None => None,
        };
        let statuses = spec.statuses.map_or(unnamed, Statuses::Named);
        let origin = Origin::Given {
            flag,
            text: spec.text.clone(),
        };
        if spec.limit.is_some() && verdict != Verdict::Retry {
            return Err(Error::LimitNotRetried {
                flag,
                rule: spec.text.clone(),
            });
        }
        self.push(statuses, pattern, verdict, origin);
        if let Some(rule) = self.rules.last_mut() {
            rule.limit = spec.limit;
        }
        Ok(())
    }

    /// Push `preset`'s rules, `first` (a request's that is unsafe to repeat) before them.
    fn push_preset(&mut self, preset: &'static Preset, first: &[PresetRule]) -> Result<(), Error> {
        let origin = |meaning| Origin::Preset {
            preset: preset.name,
            meaning,
        };
        for rule in first {
            self.push_preset_rule(preset, rule)?;
        }
        self.push(
            Statuses::Named(single(TIMED_OUT)),
            None,
            Verdict::Retry,
            origin("an attempt cut by --timeout"),
        );
        for rule in preset.rules {
            self.push_preset_rule(preset, rule)?;
        }
        Ok(())
    }

    /// Push one of `preset`'s rules.
    fn push_preset_rule(
        &mut self,
        preset: &'static Preset,
        rule: &PresetRule,
    ) -> Result<(), Error> {
        let pattern = match rule.output {
            Some(regex) => {
                let output = OutputPattern {
                    stream: preset.stream,
                    regex: regex.to_string(),
                };
                Some(self.pattern(output, || format!("--preset {}", preset.name))?)
            }
            None => None,
        };
        let statuses = Statuses::Named(rule.statuses.parse().unwrap_or_default());
        let origin = Origin::Preset {
            preset: preset.name,
            meaning: rule.meaning,
        };
        self.push(statuses, pattern, rule.verdict, origin);
        Ok(())
    }

    /// Add `output` to the patterns; `whose` names the rule, for the error when there are too
    /// many.
    fn pattern(
        &mut self,
        output: OutputPattern,
        whose: impl Fn() -> String,
    ) -> Result<usize, Error> {
        if self.patterns.len() == MAX_PATTERNS {
            return Err(Error::TooManyPatterns {
                rule: whose(),
                most: MAX_PATTERNS,
            });
        }
        check_pattern(&output.regex, &whose())?;
        self.patterns.push(output);
        Ok(self.patterns.len() - 1)
    }

    fn push(
        &mut self,
        statuses: Statuses,
        pattern: Option<usize>,
        verdict: Verdict,
        origin: Origin,
    ) {
        let described = Arc::from(describe(&origin).as_str());
        self.rules.push(Rule {
            statuses,
            pattern,
            verdict,
            origin,
            limit: None,
            described,
        });
    }
}

/// A rule's origin in words, as messages name the rule.
fn describe(origin: &Origin) -> String {
    match origin {
        Origin::Given { flag, text } => format!("{flag} {text}"),
        Origin::Preset { preset, meaning } => format!("--preset {preset}: {meaning}"),
        Origin::Guard(meaning) | Origin::Default(meaning) => meaning.to_string(),
    }
}

/// The set of `status` alone.
fn single(status: u8) -> StatusSet {
    StatusSet::from_iter([status])
}

/// The success statuses: those of the statuses-only `--success-on` rules, or 0.
fn success_statuses(specs: &[RuleSpec]) -> StatusSet {
    let named: Vec<StatusSet> = specs
        .iter()
        .filter(|spec| spec.output.is_none())
        .filter_map(|spec| spec.statuses)
        .collect();
    match named.is_empty() {
        true => single(0),
        false => named
            .iter()
            .fold(StatusSet::default(), |all, set| all.union(set)),
    }
}

/// Refuse a statuses-only `--stop-on` or `--retry-on` rule that names a success status: a status
/// cannot be success and failure (with a pattern, a success status may fail by its output).
fn check_overlaps(user: &UserRules, success: StatusSet) -> Result<(), Error> {
    let failures = [("--stop-on", &user.stop), ("--retry-on", &user.retry)];
    for (flag, specs) in failures {
        for spec in specs.iter().filter(|spec| spec.output.is_none()) {
            let Some(statuses) = spec.statuses else {
                continue;
            };
            if let Some(status) = success.first_shared(&statuses) {
                return Err(Error::SuccessStatusAsFailure {
                    flag,
                    rule: spec.text.clone(),
                    status,
                    success: success.to_string(),
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
