//! Every way retry-budget refuses a value (an address, terms, a name, the state home) or fails a
//! request the binary makes of it (`retry budget set`): one type, whose variants a caller can
//! match, with each message written here once. A message is one line that says what was wrong,
//! with which value (never a secret: an address is shown rebuilt without its password), and what
//! would be accepted. What a run meets while it goes (a store that stops answering, a file that
//! is not a state) is said as a warning, not returned.

use std::fmt;
use std::time::Duration;

use retry_policy::duration::format_duration;

/// What retry-budget refuses, or could not do.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A budget store's address in `--budget-store` that holds a password; the variable that
    /// may hold it instead.
    PasswordOnCommandLine(&'static str),
    /// The variable naming the store (`RETRY_BUDGET_STORE`), not UTF-8.
    StoreNotUtf8(&'static str),
    /// What was wrong with the store's address, and where it came from.
    InStore {
        /// `--budget-store` or `RETRY_BUDGET_STORE`.
        source: &'static str,
        /// What was wrong.
        why: Box<Error>,
    },
    /// Text that is no budget store.
    NotAStore,
    /// An address of a scheme that is no store's.
    UnknownScheme {
        /// The scheme, shortened.
        scheme: String,
    },
    /// A `rediss://` address in a build without TLS.
    NoTls {
        /// The address, without its password.
        address: String,
    },
    /// A file store's query with more than its `fail` key.
    FileStoreQuery,
    /// A query part that is not `KEY=VALUE`.
    QueryPart,
    /// A query key that is not one of the keys.
    UnknownQueryKey,
    /// A `fail` key that is neither `open` nor `closed`.
    BadFail {
        /// The value.
        value: String,
    },
    /// A `#` in an address.
    Fragment,
    /// A password that is not percent-encoded UTF-8.
    PasswordNotUtf8,
    /// A part of an address that is not percent-encoded UTF-8.
    NotUtf8,
    /// A Unix socket's path that is not absolute.
    RelativeSocket,
    /// An IPv6 address without its `]`.
    UnclosedIpv6,
    /// An address that names no host.
    NoHost,
    /// A port that is not 1 to 65535.
    BadPort {
        /// The port as given.
        port: String,
    },
    /// A `timeout` that is not a duration from 1ms to 60s.
    BadTimeout {
        /// The value.
        value: String,
    },
    /// A database that is not a number.
    BadDatabase {
        /// The value.
        value: String,
    },
    /// An address with a password and a `password_file` both.
    PasswordTwice {
        /// The address, without its password.
        address: String,
    },
    /// A `password_file` that cannot give a password.
    PasswordFile {
        /// The file.
        path: String,
        /// Why not.
        why: PasswordFileProblem,
    },
    /// The file store's directory, when there is none.
    NeedsDirectory {
        /// What needs it.
        who: String,
        /// Why there is none.
        why: Box<Error>,
    },
    /// Neither `XDG_STATE_HOME` nor `HOME` is set.
    NoStateHome,
    /// A `HOME` that is not an absolute path.
    HomeNotAbsolute {
        /// The value.
        home: String,
    },
    /// A `HOME` that does not exist.
    HomeMissing {
        /// The value.
        home: String,
    },
    /// A `HOME` that cannot be looked at.
    HomeUnreadable {
        /// The value.
        home: String,
        /// The system's words.
        why: String,
    },
    /// A `HOME` that is not a directory.
    HomeNotADirectory {
        /// The value.
        home: String,
    },
    /// A `HOME` of another user's.
    HomeNotOurs {
        /// The value.
        home: String,
        /// Its owner.
        owner: u32,
        /// The effective user.
        user: u32,
    },
    /// A rate that is not `N/DURATION`.
    NotARate {
        /// What the value should have been: `e.g. 10/1m`.
        example: &'static str,
    },
    /// A rate's `N` that is not a whole number of at least 1.
    RateCount {
        /// The `N`.
        count: String,
        /// `e.g. 10/1m`.
        example: &'static str,
    },
    /// A rate's period that is not a DURATION.
    RatePeriod(retry_policy::Error),
    /// A rate's period of 0s.
    ZeroPeriod {
        /// What it is the period of: `the period`, `the window`.
        what: &'static str,
        /// `e.g. 10/1m`.
        example: &'static str,
    },
    /// A `--rate` whose period is longer than a term may be.
    RateTooSlow {
        /// The rate.
        rate: String,
    },
    /// A `--ratio` that is not more than 0 and at most 1.
    BadRatio {
        /// The ratio, when it is a number, as written.
        ratio: Option<String>,
    },
    /// A `--window` of 0s, or longer than a term may be.
    BadWindow(Duration),
    /// A breaker's give-ups of 0.
    BreakerGiveUps,
    /// A breaker's window of 0s, or longer than a term may be.
    BreakerWindow,
    /// A `--breaker-share` that is not more than 0 and at most 1, as written.
    BreakerShare(String),
    /// A `--breaker-hosts` out of its range.
    BreakerHosts {
        /// The value.
        hosts: u32,
        /// The most.
        most: usize,
    },
    /// A `--cool-down` of 0s, or longer than a term may be.
    CoolDown,
    /// A budget's name that is not one.
    NotAName,
    /// A `--budget` that is neither a name nor `off`.
    NotABudget(Box<Error>),
    /// A term `retry budget set` would keep where it cannot act.
    InactiveTerm {
        /// The option.
        option: &'static str,
        /// Why it cannot act.
        why: &'static str,
    },
    /// A file store's state that cannot be used.
    Unusable {
        /// The refusal, naming the path and the fix.
        why: String,
    },
    /// A store that failed a call.
    StoreFailed {
        /// The budget.
        budget: String,
        /// The store, without its password.
        store: String,
        /// What it did.
        why: String,
    },
    /// A signal that ended the wait for a store.
    Interrupted {
        /// Where it was waited for.
        place: String,
        /// The signal's number.
        signal: i32,
    },
}

/// Why a `password_file` gives no password.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PasswordFileProblem {
    /// It cannot be read: the system's words.
    Unreadable(String),
    /// Its first line is empty.
    Empty,
    /// Its first line is longer than this.
    TooLong(usize),
    /// Its first line holds a control character.
    ControlCharacter,
    /// Its first line is not UTF-8.
    NotUtf8,
}

/// What a store's address may be.
const ADDRESS: &str = "expected file, file:DIR, redis://[USER@]HOST[:PORT][/DB], rediss://... \
                       (TLS), or redis+unix:///PATH/TO/SOCKET[?db=N]";

/// The keys a query may hold.
const KEYS: &str = "db, user, pass (or password), timeout, password_file and fail";

/// What a ratio or a share may be.
const SHARE: &str = "expected more than 0 and at most 1";

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::PasswordOnCommandLine(variable) => write!(
                f,
                "--budget-store: the address holds a password, which every user of this \
                 machine could read in the tool's arguments (ps); give the address with its \
                 password in {variable}, or the password alone in a file the address's \
                 password_file key names (e.g. ?password_file=/run/secrets/redis)"
            ),
            Error::StoreNotUtf8(variable) => write!(
                f,
                "{variable} is not valid UTF-8; expected file or a redis:// URL"
            ),
            Error::InStore { source, why } => write!(f, "{source}: {why}"),
            Error::NotAStore => write!(f, "not a budget store; {ADDRESS}"),
            Error::UnknownScheme { scheme } => {
                write!(f, "'{scheme}' is not a budget store's scheme; {ADDRESS}")
            }
            Error::NoTls { address } => write!(
                f,
                "'{address}': this retry was built without TLS; use a release archive, or build \
                 it with --features tls (cargo install --locked --features tls ...)"
            ),
            Error::FileStoreQuery => {
                f.write_str("the file store's query takes only fail=open or fail=closed")
            }
            Error::QueryPart => write!(
                f,
                "its query holds a part that is not KEY=VALUE; the keys are {KEYS}; {ADDRESS}"
            ),
            Error::UnknownQueryKey => write!(f, "its query has a key that is not one of {KEYS}"),
            Error::BadFail { value } => write!(f, "its fail '{value}' is not open or closed"),
            Error::Fragment => f.write_str(
                "a '#' has no meaning in a budget store's address; percent-encode it (%23) in a \
                 password",
            ),
            Error::PasswordNotUtf8 => {
                f.write_str("its password is not valid percent-encoded UTF-8")
            }
            Error::NotUtf8 => f.write_str("a part of it is not valid percent-encoded UTF-8"),
            Error::RelativeSocket => write!(
                f,
                "a Unix socket's path must be absolute (three slashes after the scheme); \
                 {ADDRESS}"
            ),
            Error::UnclosedIpv6 => f.write_str("its IPv6 address lacks its closing ']'"),
            Error::NoHost => write!(f, "it names no host; {ADDRESS}"),
            Error::BadPort { port } => {
                write!(f, "its port '{port}' is not a number from 1 to 65535")
            }
            Error::BadTimeout { value } => write!(
                f,
                "its timeout '{value}' is not a duration from 1ms to 60s, e.g. ?timeout=2s"
            ),
            Error::BadDatabase { value } => {
                write!(
                    f,
                    "its database '{value}' is not a number, e.g. /0 or ?db=2"
                )
            }
            Error::PasswordTwice { address } => write!(
                f,
                "'{address}' holds a password already; give it in the address or in its \
                 password_file, not both"
            ),
            Error::PasswordFile { path, why } => {
                write!(f, "cannot read the password_file {path}: ")?;
                match why {
                    PasswordFileProblem::Unreadable(why) => f.write_str(why),
                    PasswordFileProblem::Empty => {
                        f.write_str("its first line is empty; write the password there")
                    }
                    PasswordFileProblem::TooLong(most) => {
                        write!(f, "its first line is longer than {most} bytes")
                    }
                    PasswordFileProblem::ControlCharacter => {
                        f.write_str("its first line holds a control character")
                    }
                    PasswordFileProblem::NotUtf8 => f.write_str("its first line is not UTF-8"),
                }
            }
            Error::NeedsDirectory { who, why } => write!(
                f,
                "{who} needs a directory of this user's: {why}; give --budget-store file:DIR, \
                 or set XDG_STATE_HOME"
            ),
            Error::NoStateHome => f.write_str("neither XDG_STATE_HOME nor HOME is set"),
            Error::HomeNotAbsolute { home } => write!(
                f,
                "HOME ('{home}') is not an absolute path, so it names no home of this user's"
            ),
            Error::HomeMissing { home } => write!(
                f,
                "HOME ({home}) does not exist, and a home is not retry's to make"
            ),
            Error::HomeUnreadable { home, why } => write!(f, "HOME ({home}): {why}"),
            Error::HomeNotADirectory { home } => write!(f, "HOME ({home}) is not a directory"),
            Error::HomeNotOurs { home, owner, user } => write!(
                f,
                "HOME ({home}) belongs to uid {owner}, not to this user (uid {user}), as after \
                 sudo -E; set XDG_STATE_HOME to a directory of this user's"
            ),
            Error::NotARate { example } => {
                write!(
                    f,
                    "expected N/DURATION with N of at least 1, e.g. {example}"
                )
            }
            Error::RateCount { count, example } => write!(
                f,
                "'{count}' is not a whole number of at least 1; expected N/DURATION with N of \
                 at least 1, e.g. {example}"
            ),
            Error::RatePeriod(why) => write!(f, "{why} (after the /)"),
            Error::ZeroPeriod { what, example } => write!(
                f,
                "{what} must be more than 0s; expected N/DURATION with N of at least 1, e.g. \
                 {example}"
            ),
            Error::RateTooSlow { rate } => {
                write!(f, "--rate {rate}: the period may be at most 100y")
            }
            Error::BadRatio { ratio: Some(ratio) } => write!(f, "--ratio {ratio}: {SHARE}"),
            Error::BadRatio { ratio: None } => {
                write!(f, "expected a number more than 0 and at most 1, e.g. 0.1")
            }
            Error::BadWindow(window) => write!(
                f,
                "--window {}: expected more than 0s and at most 100y",
                format_duration(*window)
            ),
            Error::BreakerGiveUps => f.write_str("--breaker: the give-ups must be at least 1"),
            Error::BreakerWindow => {
                f.write_str("--breaker: the window must be more than 0s and at most 100y")
            }
            Error::BreakerShare(share) => write!(f, "--breaker-share {share}: {SHARE}"),
            Error::BreakerHosts { hosts, most } => {
                write!(f, "--breaker-hosts {hosts}: expected 1 to {most}")
            }
            Error::CoolDown => f.write_str("--cool-down: expected more than 0s and at most 100y"),
            Error::NotAName => f.write_str(
                "expected 1 to 64 letters, digits, '.', '_' or '-', not starting with '.', e.g. \
                 api.example.com",
            ),
            Error::NotABudget(why) => write!(
                f,
                "{why}; or 'off' for no budget, not even this machine's default one"
            ),
            Error::InactiveTerm { option, why } => write!(
                f,
                "{option}: a default budget (this directory holds the default budgets) is \
                 opened only when a retry needs a token and {why}; give the runs a named budget \
                 (--budget NAME) and set {option} there, or leave it out"
            ),
            Error::Unusable { why } => f.write_str(why),
            Error::StoreFailed { budget, store, why } => write!(
                f,
                "cannot set the terms of retry budget {budget} in {store}: {why}"
            ),
            Error::Interrupted { place, signal } => write!(
                f,
                "{place}: interrupted by signal {signal} while waiting for its lock"
            ),
        }
    }
}

impl std::error::Error for Error {}
