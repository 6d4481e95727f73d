//! Where a budget lives (`--budget-store`, or `RETRY_BUDGET_STORE`), and what to do when that
//! place cannot be reached (its `fail` query key): `file` or `file:DIR` for a file on this
//! machine, or a Redis URL for a store a fleet shares; `?fail=closed` (or `open`, the default)
//! after either, and `?timeout=2s` and `?password_file=FILE` after a URL; after a `rediss://`
//! one, `ca_file`, `cert_file` and `key_file` too, for a server whose certificate a private
//! authority signed, or that asks its clients for one (a stock TLS `redis-server` does).
//!
//! A shared store's address is parsed here, by this tool's own grammar, into its parts; it is
//! shown everywhere (messages, events, the report, the plan, `budget show`) rebuilt from those
//! parts, never from the text, so that its password cannot show whatever way it was spelt. An
//! error in an address names the part that is wrong and never quotes the user information or a
//! query value.
//!
//! A password is never taken on the command line, where every user's `ps` shows it: an address
//! in `--budget-store` that holds one (in its user information, or a `pass` or `password` query
//! key, whatever its case or escapes) is refused, and the message names the two places it may
//! come from instead, `RETRY_BUDGET_STORE` and a file its `password_file` key names, which only
//! the user's own processes can read.

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::Reservation;
use crate::error::Error;
use crate::named_files;
use crate::state_dir::{NoStateHome, StateHome};
use retry_net::{TlsClient, TlsPart};
use retry_policy::choice::Choice;
use retry_policy::encoding::{Stray, percent_decoded};
use retry_policy::printable::printable;
pub use retry_redis::{DEFAULT_CALL_LIMIT, DEFAULT_PORT, Endpoint, RedisAddress, Secret};

/// The variable that names the store where `--budget-store` does not.
pub const BUDGET_STORE: &str = "RETRY_BUDGET_STORE";

/// The port of a sentinel when the address names none.
const SENTINEL_PORT: u16 = 26379;

/// The most sentinels an address may name.
const MAX_SENTINELS: usize = 16;

/// The longest `timeout` an address may give: a budget that keeps a run waiting longer than
/// this has stopped being worth its wait.
const LONGEST_CALL_LIMIT: Duration = Duration::from_secs(60);

/// Where the budget lives.
#[derive(Clone, PartialEq, Eq)]
pub enum Store {
    /// A file on this machine, in this directory (the default one when none is given).
    File(Option<PathBuf>),
    /// A Redis (or Valkey) server shared by a fleet, at this address.
    Redis(RedisAddress),
}

/// Where a budget lives, and what a retry does when it cannot be used there.
#[derive(Clone, Debug)]
pub struct StoreSettings {
    /// Where it lives.
    pub location: Location,
    /// `?fail=`: what a retry does when the store cannot be used.
    pub on_failure: OnFailure,
}

/// Where a budget lives, with everything needed to reach it.
#[derive(Clone, Debug)]
pub enum Location {
    /// A file in this directory, on this machine.
    File(PathBuf),
    /// A shared store, and the directory of the file store to fall back on, or why there is
    /// none.
    Shared {
        /// Where the store listens.
        address: RedisAddress,
        /// The file store's directory, for when the shared store cannot be reached.
        fallback: Result<PathBuf, NoStateHome>,
    },
}

impl Location {
    /// How a message that something could not be read names a shared store: " from ADDRESS"
    /// (without its password); nothing for a file store, whose refusals name their path.
    pub fn named_if_shared(&self) -> String {
        match self {
            Location::File(_) => String::new(),
            Location::Shared { address, .. } => format!(" from {address}"),
        }
    }
}

impl StoreSettings {
    /// Where a budget lives: the store `store` (`--budget-store`) names, or else
    /// `RETRY_BUDGET_STORE` (an empty one is none), or else the file store in the default
    /// directory. `env` reads the environment; the error names where a value came from, never
    /// quoting a secret, and `who` is what needs the directory when there is none.
    pub fn resolve(
        store: Option<&str>,
        env: &impl Fn(&str) -> Option<OsString>,
        who: &str,
    ) -> Result<StoreSettings, Error> {
        let (store, on_failure) = Store::from_flag_or_environment(store, env)?;
        let default = || StateHome::of(env).dir(NAMED_BUDGETS);
        let location = match store {
            Store::File(Some(dir)) => Location::File(dir),
            Store::File(None) => {
                Location::File(default().map_err(|why| Error::NeedsDirectory {
                    who: who.to_string(),
                    why,
                })?)
            }
            Store::Redis(address) => Location::Shared {
                address,
                fallback: default(),
            },
        };
        Ok(StoreSettings {
            location,
            on_failure,
        })
    }
}

/// The default directory of the file store, in the state home (`state_dir`).
const NAMED_BUDGETS: &str = "retry/budgets";

/// Where this machine's default budgets are kept in the state home, apart from the named ones.
pub const DEFAULT_BUDGETS: &str = "retry/default-budgets";

/// `file`, or the shared store's address with its password hidden.
impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::File(_) => f.write_str("file"),
            Location::Shared { address, .. } => address.fmt(f),
        }
    }
}

/// A store's `fail` key: what a store that cannot be used means.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OnFailure {
    /// Warn once, and use the file store on this machine for the rest of the run.
    Open,
    /// Count it as no token: the run gives up with reason `budget`.
    Closed,
}

impl Choice for OnFailure {
    const ALL: &'static [OnFailure] = &[OnFailure::Open, OnFailure::Closed];

    fn name(self) -> &'static str {
        match self {
            OnFailure::Open => "open",
            OnFailure::Closed => "closed",
        }
    }

    fn about(self) -> &'static str {
        match self {
            OnFailure::Open => {
                "Warn once, and use the file store on this machine for the rest of the run"
            }
            OnFailure::Closed => "Count it as no token: the run gives up with reason `budget`",
        }
    }
}

impl OnFailure {
    /// What a budget that cannot be used means for the run, in words that follow a reason.
    pub fn consequence(self) -> &'static str {
        match self {
            OnFailure::Open => "going on without the budget",
            OnFailure::Closed => {
                "counting that as no token for the rest of the run (the store's fail=closed)"
            }
        }
    }

    /// The answer to a retry while the budget cannot be used.
    pub fn reservation(self) -> Reservation {
        match self {
            OnFailure::Open => Reservation::Granted(Duration::ZERO),
            OnFailure::Closed => Reservation::Unavailable,
        }
    }
}

impl Store {
    /// The store `flag` (`--budget-store`) names, or else `RETRY_BUDGET_STORE` (an empty one is
    /// none), or else the file store, with its `fail` key; the error names where the address
    /// came from.
    fn from_flag_or_environment(
        flag: Option<&str>,
        env: &impl Fn(&str) -> Option<OsString>,
    ) -> Result<(Store, OnFailure), Error> {
        let variable = BUDGET_STORE;
        let (source, text) = match (flag, env(variable).filter(|value| !value.is_empty())) {
            (Some(text), _) if holds_password(text) => {
                return Err(Error::PasswordOnCommandLine(variable));
            }
            (Some(text), _) => ("--budget-store", text.to_string()),
            (None, Some(value)) => match value.into_string() {
                Ok(text) => (variable, text),
                Err(_) => return Err(Error::StoreNotUtf8(variable)),
            },
            (None, None) => return Ok((Store::File(None), OnFailure::Open)),
        };
        Store::parse_with_failure(&text).map_err(|why| Error::InStore {
            origin: source,
            why: Box::new(why),
        })
    }

    /// Parse a store's address (nothing is connected; a `password_file` is read); the error
    /// names what is wrong without quoting a secret.
    pub fn parse(text: &str) -> Result<Store, Error> {
        Store::parse_with_failure(text).map(|(store, _)| store)
    }

    /// Parse a store's address, and its `fail` key.
    fn parse_with_failure(text: &str) -> Result<(Store, OnFailure), Error> {
        if let Some(rest) = text.strip_prefix("file") {
            return parse_file(rest);
        }
        let Some((scheme, rest)) = text.split_once("://") else {
            return Err(Error::NotAStore);
        };
        let (address, on_failure) = match scheme {
            "redis" | "rediss" => parse_tcp(rest, scheme == "rediss", false)?,
            "redis+sentinel" | "rediss+sentinel" => {
                parse_tcp(rest, scheme == "rediss+sentinel", true)?
            }
            "redis+unix" | "unix" => parse_unix(rest)?,
            _ => {
                return Err(Error::UnknownScheme(shown_scheme(scheme)));
            }
        };
        if cfg!(not(feature = "tls")) && address.is_tls() {
            return Err(Error::NoTls(address.to_string()));
        }
        Ok((Store::Redis(address), on_failure))
    }
}

/// `file`, `file:DIR` and either with `?fail=...`, after the word `file`.
fn parse_file(rest: &str) -> Result<(Store, OnFailure), Error> {
    let (before_query, query) = match rest.rsplit_once('?') {
        Some((before, query)) => (before, Some(query)),
        None => (rest, None),
    };
    let query = parse_query(query.unwrap_or_default())?;
    if query.db.is_some()
        || query.user.is_some()
        || query.timeout.is_some()
        || query.password_file.is_some()
        || query.tls_files.named()
    {
        return Err(Error::FileStoreQuery);
    }
    let on_failure = query.fail.unwrap_or(OnFailure::Open);
    match before_query {
        "" => Ok((Store::File(None), on_failure)),
        dir => match dir.strip_prefix(':').filter(|dir| !dir.is_empty()) {
            Some(dir) => Ok((Store::File(Some(PathBuf::from(dir))), on_failure)),
            None => Err(Error::NotAStore),
        },
    }
}

/// A scheme as an error may show it: it holds no secret, but may hold anything else.
fn shown_scheme(scheme: &str) -> String {
    scheme.chars().take(20).collect()
}

/// Whether the address `text` holds a password, in its user information or its query, however
/// spelt; a part that does not parse counts as one, so that nothing slips through a typo.
fn holds_password(text: &str) -> bool {
    let Some((_, rest)) = text.split_once("://") else {
        return false;
    };
    let (before_query, query) = rest.split_once('?').unwrap_or((rest, ""));
    let in_user_info = before_query
        .rsplit_once('@')
        .is_some_and(|(info, _)| info.contains(':'));
    in_user_info
        || query.split('&').any(|pair| {
            let key = pair.split('=').next().unwrap_or(pair);
            decode(key).map_or(true, |key| is_password_key(&key))
        })
}

/// The address `text` as a run passes it on to the runs inside its attempts: as given, but
/// without any password (its user information's, a `pass` or `password` query key's), which
/// stays the run's own; a `password_file` is a path, and goes along.
pub fn without_password(text: &str) -> String {
    let Some((scheme, rest)) = text.split_once("://") else {
        return text.to_string();
    };
    let (before_query, query) = rest.split_once('?').unwrap_or((rest, ""));
    let before_query = match before_query.rsplit_once('@') {
        Some((info, host)) => match info.split_once(':').map_or(info, |(user, _)| user) {
            "" => host.to_string(),
            user => format!("{user}@{host}"),
        },
        None => before_query.to_string(),
    };
    let kept: Vec<&str> = query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .filter(|pair| {
            let key = pair.split('=').next().unwrap_or(pair);
            decode(key).is_ok_and(|key| !is_password_key(&key))
        })
        .collect();
    match kept.is_empty() {
        true => format!("{scheme}://{before_query}"),
        false => format!("{scheme}://{before_query}?{}", kept.join("&")),
    }
}

/// Whether a query's `key` (decoded) names the password: `pass` or `password`, in any case.
fn is_password_key(key: &str) -> bool {
    key.eq_ignore_ascii_case("pass") || key.eq_ignore_ascii_case("password")
}

/// The parts of an address's query: `db`, `user`, `pass` (or `password`), `timeout`,
/// `password_file`, `ca_file`, `cert_file`, `key_file` and `fail`, percent-decoded; the keys in
/// any case.
#[derive(Default)]
struct Query {
    db: Option<u32>,
    user: Option<String>,
    password: Option<String>,
    timeout: Option<Duration>,
    password_file: Option<PathBuf>,
    tls_files: TlsFiles,
    fail: Option<OnFailure>,
}

/// The files a query's `ca_file`, `cert_file` and `key_file` name.
#[derive(Default)]
struct TlsFiles {
    authorities: Option<PathBuf>,
    certificate: Option<PathBuf>,
    key: Option<PathBuf>,
}

/// Parse an address's `query`.
fn parse_query(query: &str) -> Result<Query, Error> {
    let mut parsed = Query::default();
    for pair in query.split('&') {
        if pair.is_empty() {
            continue;
        }
        let Some((key, value)) = pair.split_once('=') else {
            return Err(Error::QueryPart);
        };
        let key = decode(key)?.to_ascii_lowercase();
        match key.as_str() {
            "db" => parsed.db = Some(parse_db(&decode(value)?)?),
            "user" | "username" => parsed.user = Some(decode(value)?),
            key if is_password_key(key) => parsed.password = Some(decode(value)?),
            "timeout" => parsed.timeout = Some(parse_call_limit(&decode(value)?)?),
            "password_file" => parsed.password_file = Some(PathBuf::from(decode(value)?)),
            "ca_file" => parsed.tls_files.authorities = Some(PathBuf::from(decode(value)?)),
            "cert_file" => parsed.tls_files.certificate = Some(PathBuf::from(decode(value)?)),
            "key_file" => parsed.tls_files.key = Some(PathBuf::from(decode(value)?)),
            "fail" => {
                let value = decode(value)?;
                parsed.fail = Some(
                    OnFailure::named(&value).ok_or_else(|| Error::BadFail(printable(&value)))?,
                );
            }
            _ => return Err(Error::UnknownQueryKey),
        }
    }
    Ok(parsed)
}

/// `redis://[USER[:PASSWORD]@]HOST[:PORT][/DB][?QUERY]`, after the scheme; for `sentinel`,
/// `[USER[:PASSWORD]@]HOST[:PORT][,HOST[:PORT]...]/PRIMARY[/DB][?QUERY]`.
fn parse_tcp(rest: &str, tls: bool, sentinel: bool) -> Result<(RedisAddress, OnFailure), Error> {
    if rest.contains('#') {
        return Err(Error::Fragment);
    }
    let (before_query, query) = rest.split_once('?').unwrap_or((rest, ""));
    let query = parse_query(query)?;
    // The user information ends at the last '@', so that a password with an '@' in it (which
    // should have been percent-encoded) still counts as a password.
    let (user_info, host_part) = match before_query.rsplit_once('@') {
        Some((info, host)) => (Some(info), host),
        None => (None, before_query),
    };
    let (authority, path) = host_part.split_once('/').unwrap_or((host_part, ""));
    let (mut user, mut password) = (None, None);
    if let Some(info) = user_info {
        match info.split_once(':') {
            Some((name, secret)) => {
                password = Some(Secret::new(
                    decode(secret).map_err(|_| Error::PasswordNotUtf8)?,
                ));
                user = Some(decode(name)?).filter(|name| !name.is_empty());
            }
            None => user = Some(decode(info)?).filter(|name| !name.is_empty()),
        }
    }
    let (endpoint, port_given, path) = match sentinel {
        true => {
            let (primary, path) = path.split_once('/').unwrap_or((path, ""));
            (sentinels(authority, primary, tls)?, true, path)
        }
        false => {
            let (host, port) = parse_host_port(authority)?;
            let port_given = port.is_some();
            let port = port.unwrap_or(DEFAULT_PORT);
            (Endpoint::Tcp { host, port, tls }, port_given, path)
        }
    };
    let db = match path {
        "" => None,
        path => Some(parse_db(path)?),
    };
    if let Some(secret) = &query.password {
        password = Some(Secret::new(secret.clone()));
    }
    let address = RedisAddress::new(endpoint, port_given)
        .logged_in(query.db.or(db), query.user.clone().or(user), password)
        .with_call_limit(query.timeout);
    with_query_files(address, query)
}

/// The sentinels `HOST[:PORT],...` name, and the primary they monitor as `primary`.
fn sentinels(authority: &str, primary: &str, tls: bool) -> Result<Endpoint, Error> {
    let sentinels = authority
        .split(',')
        .map(|one| parse_host_port(one).map(|(host, port)| (host, port.unwrap_or(SENTINEL_PORT))))
        .collect::<Result<Vec<_>, Error>>()?;
    if sentinels.len() > MAX_SENTINELS {
        return Err(Error::TooManySentinels(MAX_SENTINELS));
    }
    let primary = decode(primary)?;
    if primary.is_empty() || primary.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(Error::NoPrimaryName);
    }
    Ok(Endpoint::Sentinel {
        sentinels,
        primary,
        tls,
    })
}

/// `address` with the password in the file the query's `password_file` names, and the TLS
/// files its `ca_file`, `cert_file` and `key_file` name, where it names them; and the query's
/// `fail`.
fn with_query_files(
    mut address: RedisAddress,
    query: Query,
) -> Result<(RedisAddress, OnFailure), Error> {
    let on_failure = query.fail.unwrap_or(OnFailure::Open);
    if query.tls_files.named() {
        if !address.is_tls() {
            return Err(Error::TlsFilesWithoutTls);
        }
        address = address.with_tls_client(query.tls_files.read()?);
    }
    match &query.password_file {
        Some(path) => Ok((with_password_from(address, path)?, on_failure)),
        None => Ok((address, on_failure)),
    }
}

/// `address` with the password in the file at `path` (its `password_file` key): its first
/// line, at most [`MAX_PASSWORD`] bytes; the error says what is wrong with it.
fn with_password_from(address: RedisAddress, path: &Path) -> Result<RedisAddress, Error> {
    if address.password().is_some() {
        return Err(Error::PasswordTwice(address.to_string()));
    }
    Ok(address.with_password(read_password(path)?))
}

/// The most a `ca_file` or `cert_file` may hold: a system's whole bundle of authorities is a
/// fifth of it.
const MAX_CERTIFICATES: u64 = 1024 * 1024;

/// The most a `key_file` may hold: an RSA key of 16384 bits is an eighth of it.
const MAX_KEY: u64 = 64 * 1024;

impl TlsFiles {
    /// Whether the query names any of them.
    fn named(&self) -> bool {
        self.authorities.is_some() || self.certificate.is_some() || self.key.is_some()
    }

    /// What a TLS connection trusts and presents, from these files: each a regular file (links
    /// followed), read without blocking and within its bound; the key's file one that only its
    /// owner may read or write.
    fn read(&self) -> Result<TlsClient, Error> {
        let read = |key: &'static str, path: &Path, max: u64, private: bool| {
            named_files::read_bounded(path, max, private).map_err(|why| Error::TlsFileUnread {
                key,
                path: printable(&path.display().to_string()),
                why,
            })
        };
        let authorities = match &self.authorities {
            Some(path) => Some(read("ca_file", path, MAX_CERTIFICATES, false)?),
            None => None,
        };
        let identity = match (&self.certificate, &self.key) {
            (Some(certificate), Some(key)) => Some((
                read("cert_file", certificate, MAX_CERTIFICATES, false)?,
                read("key_file", key, MAX_KEY, true)?,
            )),
            (None, None) => None,
            _ => return Err(Error::HalfAnIdentity),
        };
        TlsClient::new(authorities, identity).map_err(|err| {
            let (key, path) = match err.part {
                TlsPart::Authorities => ("ca_file", &self.authorities),
                TlsPart::Certificate => ("cert_file", &self.certificate),
                TlsPart::Key => ("key_file", &self.key),
            };
            let path = path
                .as_deref()
                .unwrap_or(Path::new(""))
                .display()
                .to_string();
            Error::TlsFileUnusable {
                key,
                path: printable(&path),
                why: err,
            }
        })
    }
}

/// `redis+unix:///PATH[?QUERY]`, after the scheme.
fn parse_unix(rest: &str) -> Result<(RedisAddress, OnFailure), Error> {
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    if !path.starts_with('/') {
        return Err(Error::RelativeSocket);
    }
    let query = parse_query(query)?;
    let address = RedisAddress::new(Endpoint::Unix(PathBuf::from(decode(path)?)), false)
        .logged_in(
            query.db,
            query.user.clone(),
            query.password.clone().map(Secret::new),
        )
        .with_call_limit(query.timeout);
    with_query_files(address, query)
}

/// `HOST[:PORT]`, the host an IPv6 address in brackets or a name.
fn parse_host_port(authority: &str) -> Result<(String, Option<u16>), Error> {
    let (host, port) = match authority.strip_prefix('[') {
        Some(rest) => {
            let (host, after) = rest.split_once(']').ok_or(Error::UnclosedIpv6)?;
            (host, after.strip_prefix(':'))
        }
        None => match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        },
    };
    if host.is_empty() {
        return Err(Error::NoHost);
    }
    let port = match port {
        None | Some("") => None,
        Some(port) => Some(
            port.parse::<u16>()
                .ok()
                .filter(|&port| port > 0)
                .ok_or_else(|| Error::BadPort(port.to_string()))?,
        ),
    };
    Ok((decode(host)?, port))
}

/// A database number.
/// A query's `timeout`: a duration from 1ms to [`LONGEST_CALL_LIMIT`].
fn parse_call_limit(text: &str) -> Result<Duration, Error> {
    let limit = retry_policy::duration::parse_duration(text).ok();
    limit
        .filter(|limit| (Duration::from_millis(1)..=LONGEST_CALL_LIMIT).contains(limit))
        .ok_or_else(|| Error::BadTimeout(printable(text)))
}

fn parse_db(text: &str) -> Result<u32, Error> {
    text.parse()
        .map_err(|_| Error::BadDatabase(text.to_string()))
}

/// `text` with its `%XX` escapes decoded (a `%` that starts none kept as it is); an error
/// when that is not UTF-8.
fn decode(text: &str) -> Result<String, Error> {
    percent_decoded(text, Stray::Kept).ok_or(Error::NotUtf8)
}

/// The longest password a file may give.
pub const MAX_PASSWORD: usize = 4096;

/// The password in the file at `path`: its first line, without its end.
fn read_password(path: &Path) -> Result<Secret, Error> {
    named_files::secret_line(path, MAX_PASSWORD)
        .map(Secret::new)
        .map_err(|why| Error::PasswordFile {
            path: printable(&path.display().to_string()),
            why,
        })
}

impl fmt::Display for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Store::File(None) => f.write_str("file"),
            Store::File(Some(dir)) => write!(f, "file:{}", printable(&dir.to_string_lossy())),
            Store::Redis(address) => address.fmt(f),
        }
    }
}

impl fmt::Debug for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Store({self})")
    }
}

/// The Redis address `text` gives, for a test; a panic when it gives none.
#[cfg(test)]
pub(crate) fn redis_address(text: &str) -> RedisAddress {
    match Store::parse(text) {
        Ok(Store::Redis(address)) => address,
        other => panic!("{text}: {other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::redis_address as address;
    use super::*;
    use retry_policy::causes::with_causes;

    #[test]
    fn an_address_is_passed_on_without_its_password_and_with_its_password_file() {
        for (given, passed_on) in [
            (
                "redis://app:s3cret@cache:6379/2?fail=closed",
                "redis://app@cache:6379/2?fail=closed",
            ),
            ("rediss://:s3:c@ret@cache", "rediss://cache"),
            (
                "redis://cache?Password=s3cret&timeout=2s",
                "redis://cache?timeout=2s",
            ),
            (
                "redis+unix:///run/redis.sock?pass=s3cret&db=1",
                "redis+unix:///run/redis.sock?db=1",
            ),
            (
                "redis+sentinel://app:pw@s1:26379,s2/primary?password_file=/run/pw",
                "redis+sentinel://app@s1:26379,s2/primary?password_file=/run/pw",
            ),
            ("redis://app@cache", "redis://app@cache"),
            ("file:/var/lib/budgets", "file:/var/lib/budgets"),
        ] {
            let passed = without_password(given);
            assert_eq!(passed, passed_on, "{given}");
            assert!(!holds_password(&passed), "{given}");
            assert!(!passed.contains("s3"), "{given}");
        }
    }

    #[test]
    fn passwords_never_show_whatever_their_spelling() {
        let cases = [
            (
                "redis://app:s3cret@cache:6379/2",
                "redis://app:***@cache:6379/2",
            ),
            ("redis://:s3cret@cache", "redis://:***@cache"),
            ("redis://app@cache", "redis://app@cache"),
            ("redis://cache:6379", "redis://cache:6379"),
            (
                "redis+unix:///run/redis.sock?db=1&pass=s3cret",
                "redis+unix:///run/redis.sock?db=1&pass=***",
            ),
            (
                "redis+unix:///run/redis.sock?pa%73s=s3cret",
                "redis+unix:///run/redis.sock?pass=***",
            ),
            (
                "redis+unix:///s?%70assword=s3cret&db=0",
                "redis+unix:///s?db=0&pass=***",
            ),
            ("redis://a:s3:c@h/0?password=s3cret", "redis://a:***@h/0"),
            ("redis://app:s3/cret@cache", "redis://app:***@cache"),
            ("redis://app:s3@cret@cache", "redis://app:***@cache"),
            (
                "redis://app:s3%40cret@[::1]:7000",
                "redis://app:***@[::1]:7000",
            ),
        ];
        for (text, shown) in cases {
            let address = address(text);
            assert_eq!(address.to_string(), shown, "{text}");
            assert!(!format!("{address:?}").contains("s3"), "{text}");
            assert_eq!(holds_password(text), shown.contains("***"), "{text}");
        }
        assert_eq!(
            address("redis://app:s3%40cret@cache")
                .password()
                .map(Secret::reveal),
            Some("s3@cret")
        );
    }

    #[test]
    fn the_parts_are_read_as_a_client_reads_them() {
        let tcp = address("redis://u%40x:p@example.com:7000/3");
        assert_eq!(
            tcp.endpoint(),
            &Endpoint::Tcp {
                host: "example.com".into(),
                port: 7000,
                tls: false
            }
        );
        assert_eq!((tcp.db(), tcp.user()), (Some(3), Some("u@x")));
        let unix = address("redis+unix:///run/r.sock?db=2&user=app");
        assert_eq!(unix.endpoint(), &Endpoint::Unix("/run/r.sock".into()));
        assert_eq!(
            (unix.db(), unix.user(), unix.password()),
            (Some(2), Some("app"), None)
        );
        let plain = address("redis://cache");
        assert_eq!(
            (plain.db(), plain.user(), plain.endpoint()),
            (
                None,
                None,
                &Endpoint::Tcp {
                    host: "cache".into(),
                    port: DEFAULT_PORT,
                    tls: false
                }
            )
        );
    }

    #[test]
    fn a_sentinel_address_names_its_sentinels_in_order_and_the_primary() {
        // TLS, where the build has it.
        let tls = cfg!(feature = "tls");
        let scheme = if tls { "rediss" } else { "redis" };
        let text = &format!(
            "{scheme}+sentinel://app:s3cret@10.0.0.1,10.0.0.2:26380,[::1]/main/2?timeout=1s"
        );
        let sentinel = address(text);
        assert_eq!(
            sentinel.endpoint(),
            &Endpoint::Sentinel {
                sentinels: vec![
                    ("10.0.0.1".into(), SENTINEL_PORT),
                    ("10.0.0.2".into(), 26380),
                    ("::1".into(), SENTINEL_PORT),
                ],
                primary: "main".into(),
                tls,
            }
        );
        assert_eq!((sentinel.db(), sentinel.user()), (Some(2), Some("app")));
        assert_eq!(
            sentinel.to_string(),
            format!("{scheme}+sentinel://app:***@10.0.0.1:26379,10.0.0.2:26380,[::1]:26379/main/2")
        );
        assert!(holds_password(text));
        // The primary it names is reached with the address's credentials, TLS and database.
        let primary = sentinel.at("10.0.0.7", 6379);
        assert_eq!(
            primary.to_string(),
            format!("{scheme}://app:***@10.0.0.7:6379/2")
        );
        for (text, expected) in [
            ("redis+sentinel://h1,h2", "names no primary"),
            ("redis+sentinel://h1/", "names no primary"),
            ("redis+sentinel://h1,/main", "it names no host"),
            ("redis+sentinel://h1:0/main", "its port '0'"),
        ] {
            let err = Store::parse(text).unwrap_err().to_string();
            assert!(err.contains(expected), "{text}: {err}");
        }
        let many = vec!["h"; MAX_SENTINELS + 1].join(",");
        let err = Store::parse(&format!("redis+sentinel://{many}/main")).unwrap_err();
        assert_eq!(err.to_string(), "it names more than 16 sentinels");
    }

    #[test]
    fn a_timeout_bounds_each_call_and_is_half_a_second_unless_given() {
        let limit = |text| address(text).call_limit();
        assert_eq!(limit("redis://cache"), DEFAULT_CALL_LIMIT);
        assert_eq!(limit("redis://cache?timeout=2s"), Duration::from_secs(2));
        assert_eq!(
            limit("redis+unix:///r.sock?db=1&timeout=250ms"),
            Duration::from_millis(250)
        );
        assert_eq!(
            address("redis://cache:6380?timeout=5s").to_string(),
            "redis://cache:6380"
        );
    }

    #[test]
    fn errors_name_the_part_and_never_a_secret() {
        for (text, expected) in [
            ("memcached://u:s3cret@h", "is not a budget store's scheme"),
            ("redis//u:s3cret@h", "not a budget store"),
            ("redis://u:s3cret@h:port", "its port 'port' is not a number"),
            ("redis://u:s3cret@h/x", "its database 'x' is not a number"),
            ("redis://u:s3cret@", "it names no host"),
            ("redis://u:s3cret@h#frag", "has no meaning"),
            ("redis+unix://rel?pass=s3cret", "must be absolute"),
            ("redis+unix:///s?s3cret", "not KEY=VALUE"),
            ("redis+unix:///s?pw=s3cret", "not one of db, user, pass"),
            (
                "redis://h?timeout=0s",
                "its timeout '0s' is not a duration from 1ms to 60s",
            ),
            (
                "redis://h?timeout=2m",
                "its timeout '2m' is not a duration from 1ms to 60s",
            ),
            (
                "redis://h?timeout=soon",
                "its timeout 'soon' is not a duration",
            ),
            ("redis://u:s3%ffcret@h", "not valid percent-encoded UTF-8"),
        ] {
            let err = Store::parse(text).unwrap_err().to_string();
            assert!(err.contains(expected), "{text}: {err}");
            assert!(!err.contains("s3"), "{text}: {err}");
        }
        assert_eq!(Store::parse("file").unwrap(), Store::File(None));
    }

    #[test]
    fn the_file_store_takes_a_directory_and_a_failure_mode() {
        let parsed = |text: &str| Store::parse_with_failure(text);
        assert_eq!(
            parsed("file").unwrap(),
            (Store::File(None), OnFailure::Open)
        );
        assert_eq!(
            parsed("file:/var/lib/retry?fail=closed").unwrap(),
            (
                Store::File(Some("/var/lib/retry".into())),
                OnFailure::Closed
            )
        );
        assert_eq!(
            parsed("redis://cache?fail=closed&timeout=2s").unwrap().1,
            OnFailure::Closed
        );
        for bad in [
            "file:",
            "filex",
            "file?timeout=2s",
            "file?fail=maybe",
            "redis://h?fail=x",
        ] {
            assert!(parsed(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_password_is_refused_on_the_command_line_and_taken_from_the_environment() {
        let resolve = |flag: Option<&str>, variable: Option<&str>| {
            let env = |name: &str| match name {
                "RETRY_BUDGET_STORE" => variable.map(OsString::from),
                _ => None,
            };
            StoreSettings::resolve(flag, &env, "--budget").map(|store| store.location)
        };
        for text in [
            "redis://app:s3cret@cache",
            "redis://:s3cret@cache:6379/2",
            "redis://cache?password=s3cret",
            "redis://cache?db=1&PassWord=s3cret",
            "redis+unix:///run/r.sock?p%61ss=s3cret",
            "redis+unix:///run/r.sock?%50ASS=s3cret",
            "rediss://u:s3cret@h:port",
        ] {
            let err = resolve(Some(text), None).unwrap_err().to_string();
            assert!(
                err.starts_with("--budget-store: the address holds a password"),
                "{text}: {err}"
            );
            assert!(err.contains("RETRY_BUDGET_STORE"), "{err}");
            assert!(err.contains("?password_file="), "{err}");
            assert!(!err.contains("s3"), "{text}: {err}");
        }
        let from_variable = resolve(None, Some("redis://cache?PASSWORD=s3cret")).unwrap();
        assert_eq!(from_variable.to_string(), "redis://:***@cache");
        assert!(resolve(Some("redis://app@cache?db=2"), None).is_ok());
    }

    #[test]
    fn a_password_file_gives_its_first_line() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("password");
        std::fs::write(&file, "pw\r\nrest\n").unwrap();
        let query = format!("redis://app@cache?password_file={}", file.display());
        assert_eq!(
            self::address(&query).password().map(Secret::reveal),
            Some("pw")
        );
        let address = with_password_from(address("redis://app@cache"), &file).unwrap();
        assert_eq!(address.to_string(), "redis://app:***@cache");
        assert_eq!(address.password().map(Secret::reveal), Some("pw"));
        assert_eq!(address.scrub("WRONGPASS pw"), "WRONGPASS ***");
        let twice = with_password_from(self::address("redis://app:s3@cache"), &file);
        assert!(with_causes(&twice.unwrap_err()).contains("not both"));
        for (content, why) in [("\n", "empty"), ("a\u{1b}b", "control character")] {
            std::fs::write(&file, content).unwrap();
            let err = with_password_from(self::address("redis://cache"), &file).unwrap_err();
            let err = with_causes(&err);
            assert!(err.contains(why), "{err}");
        }
        std::fs::write(&file, "x".repeat(MAX_PASSWORD + 1)).unwrap();
        let err = with_password_from(self::address("redis://cache"), &file).unwrap_err();
        let err = with_causes(&err);
        assert!(err.contains("longer than"), "{err}");
        let err = with_password_from(self::address("redis://cache"), dir.path()).unwrap_err();
        let err = with_causes(&err);
        assert!(
            err.contains("it is a directory, not a regular file"),
            "{err}"
        );
    }

    #[test]
    fn tls_files_belong_to_a_tls_address_and_are_read_whole_and_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let file = |name: &str| dir.path().join(name).display().to_string();
        let error = |text: &str| with_causes(&Store::parse(text).err().unwrap());
        let ca = format!("ca_file={}", file("ca.crt"));
        for plain in [
            format!("redis://cache?{ca}"),
            format!("redis+sentinel://s1/main?{ca}"),
            format!("redis+unix:///run/redis.sock?{ca}"),
        ] {
            assert!(error(&plain).contains("use rediss://"), "{plain}");
        }
        assert!(error(&format!("file?{ca}")).contains("takes only fail"));
        let half = format!("rediss://cache?cert_file={}", file("client.crt"));
        assert!(error(&half).contains("go together"));
        // Nothing there, a directory, and a file larger than a bundle of authorities may be.
        assert!(error(&format!("rediss://cache?{ca}")).contains("the ca_file"));
        let at_dir = format!("rediss://cache?ca_file={}", dir.path().display());
        assert!(error(&at_dir).contains("a directory, not a regular file"));
        std::fs::write(file("ca.crt"), vec![b'-'; MAX_CERTIFICATES as usize + 1]).unwrap();
        assert!(error(&format!("rediss://cache?{ca}")).contains("more than 1048576 bytes"));
    }
}
