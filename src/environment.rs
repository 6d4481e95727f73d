//! The variables every attempt finds in its environment: their names, and what they hold, for
//! the runner that sets them and for `--help` and the man page that describe them.

/// One variable of the attempt's environment.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Variable {
    pub(crate) name: &'static str,
    /// What it holds, for the help.
    pub(crate) meaning: &'static str,
}

/// This attempt's number.
pub(crate) const ATTEMPT: Variable = Variable {
    name: "RETRY_ATTEMPT",
    meaning: "this attempt's number, counting from 1",
};

/// This attempt's number since `--reset-after` last started the count over.
pub(crate) const ATTEMPT_SINCE_RESET: Variable = Variable {
    name: "RETRY_ATTEMPT_SINCE_RESET",
    meaning: "its number since --reset-after last started the count over (as RETRY_ATTEMPT before)",
};

/// The `--max-attempts` value.
pub(crate) const MAX_ATTEMPTS: Variable = Variable {
    name: "RETRY_MAX_ATTEMPTS",
    meaning: "the --max-attempts value: a number, or 'unlimited'",
};

/// Every variable, in the order the help lists them.
pub(crate) const ALL: [Variable; 3] = [ATTEMPT, ATTEMPT_SINCE_RESET, MAX_ATTEMPTS];
