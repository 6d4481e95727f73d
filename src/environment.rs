//! The environment variables of the interface: those every attempt finds in its environment, and
//! those the tool reads; their names, and what they hold, for the code that sets or reads them
//! and for `--help` and the man page that describe them.

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

/// The budget store, read when `--budget-store` is not given, so that a password can stay out
/// of argv (which every user of the machine can read); removed from the command's environment.
pub(crate) const BUDGET_STORE: Variable = Variable {
    name: "RETRY_BUDGET_STORE",
    meaning: "the --budget-store when none is given; COMMAND never sees it",
};

/// Every variable the tool reads, in the order the help lists them.
pub(crate) const READ: [Variable; 1] = [BUDGET_STORE];
