//! Every way retry-budget refuses a value (an address, terms, a name, or a store's directory
//! where the state home is none, `state_dir::NoStateHome` its cause) or fails a request the
//! binary makes of it (`retry budget set`): one type, whose variants a caller can match, with
//! each message written beside its variant; and the two refusals of a file it names
//! (`PasswordFileProblem`, `Unbounded`). A message is one line that says what was
//! wrong, with which value (never a secret: an address is shown rebuilt without its password),
//! and what would be accepted. A variant's fields are the values its message names; one that
//! wraps another error keeps it as its `#[source]`, which `retry_policy::causes` says after a
//! colon, so that a caller can match the cause as well as print it. What a run
//! meets while it goes (a store that stops answering, a file that is not a state) is said as a
//! warning, not returned.

use std::io;
use std::time::Duration;

use retry_net::TlsPartError;
use retry_policy::duration::format_duration;

use crate::state_dir::NoStateHome;
use crate::unread::{FileFailure, Refused, Unread};

/// What a store's address may be.
const ADDRESS: &str = "expected file, file:DIR, redis://[USER@]HOST[:PORT][/DB], rediss://... \
                       (TLS), redis+sentinel://HOST:PORT[,HOST:PORT...]/PRIMARY[/DB] (or \
                       rediss+sentinel://), or redis+unix:///PATH/TO/SOCKET[?db=N]";

/// The keys a query may hold.
const KEYS: &str =
    "db, user, pass (or password), timeout, password_file, ca_file, cert_file, key_file and fail";

/// What a ratio or a share may be.
const SHARE: &str = "expected more than 0 and at most 1";

/// What a rate may be.
const RATE: &str = "expected N/DURATION with N of at least 1";

/// What retry-budget refuses, or could not do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
#[allow(
    missing_docs,
    reason = "a field is the value its variant's message names"
)]
pub enum Error {
    /// `retry budget set` without `--rate`, for a budget with no terms yet.
    #[error(
        "a budget's first terms need --rate N/DURATION (e.g. --rate 10/1m); later ones keep it \
         when it is not given"
    )]
    FirstTermsNeedRate,
    /// A term `retry budget set` was both given (its option) and told to clear (its name).
    #[error("{option} sets the {term} and --clear {term} removes it: give one of them, not both")]
    SetAndCleared {
        option: &'static str,
        term: &'static str,
    },
    /// A breaker's term (the flag named), for a budget with no breaker given or kept.
    #[error("{0} is a term of a breaker, and the budget has none: give --breaker N/DURATION too")]
    NoBreakerFor(&'static str),
    /// A budget store's address in `--budget-store` that holds a password; the variable that
    /// may hold it instead.
    #[error(
        "--budget-store: the address holds a password, which every user of this machine could \
         read in the tool's arguments (ps); give the address with its password in {0}, or the \
         password alone in a file the address's password_file key names (e.g. \
         ?password_file=/run/secrets/redis)"
    )]
    PasswordOnCommandLine(&'static str),
    /// The variable naming the store (`RETRY_BUDGET_STORE`), not UTF-8.
    #[error("{0} is not valid UTF-8; expected file or a redis:// URL")]
    StoreNotUtf8(&'static str),
    /// What was wrong with the store's address, and where it came from (`--budget-store` or
    /// `RETRY_BUDGET_STORE`).
    #[error("{origin}")]
    InStore {
        origin: &'static str,
        #[source]
        why: Box<Error>,
    },
    /// Text that is no budget store.
    #[error("not a budget store; {address}", address = ADDRESS)]
    NotAStore,
    /// An address of a scheme that is no store's, shortened.
    #[error("'{0}' is not a budget store's scheme; {address}", address = ADDRESS)]
    UnknownScheme(String),
    /// A `rediss://` address (without its password) in a build without TLS.
    #[error(
        "'{0}': this retry was built without TLS (--no-default-features); use a release \
         archive, or build it with its default features (cargo install --locked --path .)"
    )]
    NoTls(String),
    /// A file store's query with more than its `fail` key.
    #[error("the file store's query takes only fail=open or fail=closed")]
    FileStoreQuery,
    /// A query part that is not `KEY=VALUE`.
    #[error(
        "its query holds a part that is not KEY=VALUE; the keys are {keys}; {address}",
        keys = KEYS,
        address = ADDRESS
    )]
    QueryPart,
    /// A query key that is not one of the keys.
    #[error("its query has a key that is not one of {keys}", keys = KEYS)]
    UnknownQueryKey,
    /// A `fail` key that is neither `open` nor `closed`.
    #[error("its fail '{0}' is not open or closed")]
    BadFail(String),
    /// A `#` in an address.
    #[error(
        "a '#' has no meaning in a budget store's address; percent-encode it (%23) in a password"
    )]
    Fragment,
    /// A password that is not percent-encoded UTF-8.
    #[error("its password is not valid percent-encoded UTF-8")]
    PasswordNotUtf8,
    /// A part of an address that is not percent-encoded UTF-8.
    #[error("a part of it is not valid percent-encoded UTF-8")]
    NotUtf8,
    /// A Unix socket's path that is not absolute.
    #[error(
        "a Unix socket's path must be absolute (three slashes after the scheme); {address}",
        address = ADDRESS
    )]
    RelativeSocket,
    /// An IPv6 address without its `]`.
    #[error("its IPv6 address lacks its closing ']'")]
    UnclosedIpv6,
    /// An address that names no host.
    #[error("it names no host; {address}", address = ADDRESS)]
    NoHost,
    /// A sentinel address with more sentinels than this.
    #[error("it names more than {0} sentinels")]
    TooManySentinels(usize),
    /// A sentinel address without the primary's name after its sentinels.
    #[error(
        "it names no primary after its sentinels; expected \
         redis+sentinel://HOST:PORT[,HOST:PORT...]/PRIMARY[/DB], e.g. \
         redis+sentinel://10.0.0.1:26379,10.0.0.2:26379/mymaster"
    )]
    NoPrimaryName,
    /// A port that is not 1 to 65535, as given.
    #[error("its port '{0}' is not a number from 1 to 65535")]
    BadPort(String),
    /// A `timeout` that is not a duration from 1ms to 60s.
    #[error("its timeout '{0}' is not a duration from 1ms to 60s, e.g. ?timeout=2s")]
    BadTimeout(String),
    /// A database that is not a number.
    #[error("its database '{0}' is not a number, e.g. /0 or ?db=2")]
    BadDatabase(String),
    /// An address (without its password) with a password and a `password_file` both.
    #[error(
        "'{0}' holds a password already; give it in the address or in its password_file, not \
         both"
    )]
    PasswordTwice(String),
    /// A `ca_file`, `cert_file` or `key_file` in the address of a store not spoken to under TLS.
    #[error(
        "ca_file, cert_file and key_file are for a store spoken to under TLS: use rediss:// or \
         rediss+sentinel://"
    )]
    TlsFilesWithoutTls,
    /// A `cert_file` without a `key_file`, or the other way round.
    #[error("cert_file and key_file go together: give the client certificate and its key")]
    HalfAnIdentity,
    /// A `ca_file`, `cert_file` or `key_file` that cannot be read: its key, its path, and why.
    #[error("cannot use the {key} {path}")]
    TlsFileUnread {
        key: &'static str,
        path: String,
        #[source]
        why: Unbounded,
    },
    /// A `ca_file`, `cert_file` or `key_file` that holds nothing usable: its key, its path, and
    /// why.
    #[error("cannot use the {key} {path}")]
    TlsFileUnusable {
        key: &'static str,
        path: String,
        #[source]
        why: TlsPartError,
    },
    /// A `password_file` that cannot give a password, and why not.
    #[error("cannot read the password_file {path}")]
    PasswordFile {
        path: String,
        #[source]
        why: PasswordFileProblem,
    },
    /// The file store's directory, when there is none: what needs it, and why there is none.
    #[error(
        "{who} needs a directory of this user's (give --budget-store file:DIR, or set \
         XDG_STATE_HOME)"
    )]
    NeedsDirectory {
        who: String,
        #[source]
        why: NoStateHome,
    },
    /// A rate that is not `N/DURATION`; an example of one (`10/1m`).
    #[error("{rate}, e.g. {0}", rate = RATE)]
    NotARate(&'static str),
    /// A rate's `N` that is not a whole number from 1 to `u32::MAX`; an example of a rate.
    #[error(
        "'{count}' is not a whole number from 1 to {most}; {rate}, e.g. {example}",
        most = u32::MAX,
        rate = RATE
    )]
    RateCount {
        count: String,
        example: &'static str,
    },
    /// A rate's period that is not a DURATION.
    #[error("its period, after the /")]
    RatePeriod(#[source] retry_policy::Error),
    /// A rate's period of 0s: what it is the period of (`the window`), and an example.
    #[error("{what} must be more than 0s; {rate}, e.g. {example}", rate = RATE)]
    ZeroPeriod {
        what: &'static str,
        example: &'static str,
    },
    /// A `--rate` whose period is longer than a term may be.
    #[error("--rate {0}: the period may be at most 100y")]
    RateTooSlow(String),
    /// A `--ratio` that is not more than 0 and at most 1, as written.
    #[error("--ratio {0}: {share}", share = SHARE)]
    BadRatio(String),
    /// A ratio that is not a number.
    #[error("expected a number more than 0 and at most 1, e.g. 0.1")]
    RatioNotANumber,
    /// A `--window` of 0s, or longer than a term may be.
    #[error("--window {}: expected more than 0s and at most 100y", format_duration(*.0))]
    BadWindow(Duration),
    /// A breaker's give-ups of 0.
    #[error("--breaker: the give-ups must be at least 1")]
    BreakerGiveUps,
    /// A breaker's window of 0s, or longer than a term may be.
    #[error("--breaker: the window must be more than 0s and at most 100y")]
    BreakerWindow,
    /// A `--breaker-share` that is not more than 0 and at most 1, as written.
    #[error("--breaker-share {0}: {share}", share = SHARE)]
    BreakerShare(String),
    /// A `--breaker-hosts` out of its range, and the most.
    #[error("--breaker-hosts {hosts}: expected 1 to {most}")]
    BreakerHosts { hosts: u32, most: usize },
    /// A `--cool-down` of 0s, or longer than a term may be.
    #[error("--cool-down: expected more than 0s and at most 100y")]
    CoolDown,
    /// A budget's name that is not one.
    #[error(
        "expected 1 to 64 letters, digits, '.', '_' or '-', not starting with '.', e.g. \
         api.example.com"
    )]
    NotAName,
    /// A `--budget` that is neither a name nor `off`.
    #[error(
        "neither a budget's name nor 'off' (for no budget, not even this machine's default one)"
    )]
    NotABudget(#[source] Box<Error>),
    /// A term (its option) `retry budget set` would keep where it cannot act, and why not.
    #[error(
        "{option}: a default budget (this directory holds the default budgets) is opened only \
         when a retry needs a token and {why}; give the runs a named budget (--budget NAME) and \
         set {option} there, or leave it out"
    )]
    InactiveTerm {
        option: &'static str,
        why: &'static str,
    },
    /// A file store's state that cannot be used: the refusal, naming the path and the fix.
    #[error(transparent)]
    Unusable(Refused),
    /// A file store's file (its path) that could not be used, and why.
    #[error("{path}")]
    FileFailed {
        path: String,
        #[source]
        why: FileFailure,
    },
    /// A store (without its password) that failed a call to set terms, whose they are ("retry
    /// budget api", "job nightly"), and what it did.
    #[error("cannot set the terms of {what} in {store}")]
    StoreFailed {
        what: String,
        store: String,
        #[source]
        why: Unread,
    },
    /// A signal (its number) that ended the wait for a store at a place.
    #[error("{place}: interrupted by signal {signal} while waiting for its lock")]
    Interrupted { place: String, signal: i32 },
}

/// Why a `password_file` gives no password.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PasswordFileProblem {
    /// It cannot be read.
    #[error(transparent)]
    Unreadable(io::Error),
    /// Its first line is empty.
    #[error("its first line is empty")]
    Empty,
    /// Its first line is longer than this.
    #[error("its first line is longer than {0} bytes")]
    TooLong(usize),
    /// Its first line holds a control character.
    #[error("its first line holds a control character")]
    ControlCharacter,
    /// Its first line is not UTF-8.
    #[error("its first line is not UTF-8")]
    NotUtf8,
}

/// Why `named_files::read_bounded` did not read a file, in words that follow the file's name.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Unbounded {
    /// It cannot be opened or read, or is not a regular file (the error says what it is).
    #[error(transparent)]
    Unreadable(#[from] io::Error),
    /// Others may read or write it, and it must be its owner's alone: its mode.
    #[error("others may read it (mode {0:04o}): make it its owner's alone (chmod 600)")]
    NotPrivate(u32),
    /// It holds more than this many bytes.
    #[error("it holds more than {0} bytes")]
    TooLarge(u64),
}
