//! Where a budget lives (`--budget-store`, or `RETRY_BUDGET_STORE`), and what to do when that
//! place cannot be reached (`--budget-store-fail`).
//!
//! A store's address may hold a password: it is kept whole only for connecting, and shown
//! everywhere else (messages, events, the report, the plan) with the password replaced.

use std::fmt;
use std::path::PathBuf;

/// What stands in a shown address for its password.
const HIDDEN: &str = "***";

/// Where the budget lives.
#[derive(Clone, PartialEq, Eq)]
pub(crate) enum Store {
    /// A file on this machine, in `--budget-dir`.
    File,
    /// A Redis (or Valkey) server shared by a fleet, at this address.
    Redis(RedisAddress),
}

/// Where a budget lives, with everything needed to reach it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Location {
    /// A file in this directory, on this machine.
    File(PathBuf),
    /// A shared store, and the directory of the file store to fall back on, if there is one.
    Shared {
        address: RedisAddress,
        fallback: Option<PathBuf>,
    },
}

impl Location {
    /// `store`, with `dir` for the file store; none for the file store without a directory.
    pub(crate) fn new(store: Store, dir: Option<PathBuf>) -> Option<Location> {
        match store {
            Store::File => dir.map(Location::File),
            Store::Redis(address) => Some(Location::Shared {
                address,
                fallback: dir,
            }),
        }
    }
}

/// `file`, or the shared store's address with its password hidden.
impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::File(_) => f.write_str("file"),
            Location::Shared { address, .. } => address.fmt(f),
        }
    }
}

/// A `redis://`, `rediss://` or `redis+unix://` address, password and all.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct RedisAddress(String);

/// `--budget-store-fail`: what a store that cannot be reached means.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum OnFailure {
    /// Warn once, and use the file store on this machine for the rest of the run.
    Open,
    /// Count it as no token: the run gives up with reason `budget`.
    Closed,
}

impl OnFailure {
    /// The name on the command line.
    pub(crate) fn name(self) -> &'static str {
        match self {
            OnFailure::Open => "open",
            OnFailure::Closed => "closed",
        }
    }
}

impl Store {
    /// Parse a store's address, and check that the client can use it (nothing is connected);
    /// the error shows it with its password hidden.
    pub(crate) fn parse(text: &str) -> Result<Store, String> {
        if text == "file" {
            return Ok(Store::File);
        }
        let schemes = ["redis://", "rediss://", "redis+unix://"];
        if !schemes.iter().any(|scheme| text.starts_with(scheme)) {
            return Err(format!(
                "'{}' is not a budget store; expected file, redis://[USER:PASSWORD@]HOST[:PORT][/DB], \
                 rediss://... (TLS), or redis+unix:///PATH/TO/SOCKET[?db=N]",
                hide_password(text)
            ));
        }
        let address = RedisAddress(text.to_string());
        if cfg!(not(feature = "tls")) && text.starts_with("rediss://") {
            return Err(format!(
                "'{address}': this retry was built without TLS; use a release archive, or build \
                 it with --features tls (cargo install --locked --features tls ...)"
            ));
        }
        match ::redis::Client::open(text) {
            Ok(_) => Ok(Store::Redis(address)),
            Err(err) => {
                // The client says what is wrong, then " - InvalidClientConfig".
                let why = err.to_string();
                let why = why.split(" - ").next().unwrap_or_default();
                Err(format!(
                    "'{address}' is not a Redis address the client can use: {}",
                    address.scrub(why)
                ))
            }
        }
    }
}

impl RedisAddress {
    /// The address with its password, for connecting and for nothing else.
    pub(crate) fn with_password(&self) -> &str {
        &self.0
    }

    /// `text` (an error the client gave, say) with this address's password hidden, should it be
    /// there.
    pub(crate) fn scrub(&self, text: &str) -> String {
        let shown = hide_password(&self.0);
        let mut text = text.replace(&self.0, &shown);
        for password in passwords(&self.0) {
            text = text.replace(&password, HIDDEN);
        }
        text
    }
}

/// The parts of an address: the scheme, the user information before the last `@` (where the
/// password is, even one with a `/` in it that should have been percent-encoded), and the rest.
fn split_address(address: &str) -> (&str, Option<&str>, &str) {
    let (scheme, rest) = address.split_once("://").unwrap_or(("", address));
    match rest.rsplit_once('@') {
        Some((user_info, rest)) => (scheme, Some(user_info), rest),
        None => (scheme, None, rest),
    }
}

/// The passwords `address` holds, as written and percent-decoded: after `USER:`, or in `pass=`
/// or `password=`.
fn passwords(address: &str) -> Vec<String> {
    let (_, user_info, rest) = split_address(address);
    let mut found: Vec<&str> = Vec::new();
    if let Some((_, password)) = user_info.and_then(|info| info.split_once(':')) {
        found.push(password);
    }
    let query = rest.split_once('?').map_or("", |(_, query)| query);
    for pair in query.split('&') {
        if let Some(("pass" | "password", password)) = pair.split_once('=') {
            found.push(password);
        }
    }
    let mut passwords: Vec<String> = found
        .iter()
        .map(|password| percent_decoded(password))
        .collect();
    passwords.extend(found.iter().map(|password| password.to_string()));
    passwords.retain(|password| !password.is_empty());
    passwords
}

/// `text` with its `%XX` escapes decoded, as the client decodes a password.
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        let escape = bytes
            .get(index + 1..index + 3)
            .filter(|_| bytes[index] == b'%');
        match escape.and_then(|hex| u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()) {
            Some(byte) => {
                decoded.push(byte);
                index += 3;
            }
            None => {
                decoded.push(bytes[index]);
                index += 1;
            }
        }
    }
    String::from_utf8_lossy(&decoded).into_owned()
}

impl fmt::Display for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Store::File => f.write_str("file"),
            Store::Redis(address) => address.fmt(f),
        }
    }
}

/// Shown with its password hidden.
impl fmt::Display for RedisAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&hide_password(&self.0))
    }
}

/// Never shows the password, not even in a debug print.
impl fmt::Debug for RedisAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RedisAddress({self})")
    }
}

impl fmt::Debug for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Store({self})")
    }
}

/// `address` with the password of `scheme://USER:PASSWORD@HOST` (or `?pass=PASSWORD`) hidden.
fn hide_password(address: &str) -> String {
    let (scheme, user_info, rest) = split_address(address);
    let mut shown = match scheme.is_empty() {
        true => String::new(),
        false => format!("{scheme}://"),
    };
    if let Some(info) = user_info {
        match info.split_once(':') {
            Some((user, _)) => shown += &format!("{user}:{HIDDEN}@"),
            None => shown += &format!("{info}@"),
        }
    }
    match rest.split_once('?') {
        Some((path, query)) => {
            let hidden: Vec<String> = query
                .split('&')
                .map(|pair| match pair.split_once('=') {
                    Some((key @ ("pass" | "password"), _)) => format!("{key}={HIDDEN}"),
                    _ => pair.to_string(),
                })
                .collect();
            shown += &format!("{path}?{}", hidden.join("&"));
        }
        None => shown += rest,
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_show() {
        let cases = [
            (
                "redis://app:s3cret@cache:6379/2",
                "redis://app:***@cache:6379/2",
            ),
            ("redis://:s3cret@cache", "redis://:***@cache"),
            ("rediss://app@cache", "rediss://app@cache"),
            ("redis://cache:6379", "redis://cache:6379"),
            (
                "redis+unix:///run/redis.sock?db=1&pass=s3cret",
                "redis+unix:///run/redis.sock?db=1&pass=***",
            ),
            (
                "redis://a:b:c@h/0?password=x",
                "redis://a:***@h/0?password=***",
            ),
            ("redis://app:s3/cret@cache", "redis://app:***@cache"),
            ("redis://app:s3@cret@cache", "redis://app:***@cache"),
        ];
        for (address, shown) in cases {
            assert_eq!(hide_password(address), shown);
            if let Ok(store) = Store::parse(address) {
                assert_eq!(store.to_string(), shown);
                assert!(!format!("{store:?}").contains("s3"));
            }
        }
        assert!(Store::parse("redis://app:s3cret@cache:6379/2").is_ok());
    }

    #[test]
    fn errors_are_scrubbed_of_the_password() {
        let Ok(Store::Redis(address)) = Store::parse("redis://app:s3cret@cache:6379") else {
            panic!("not redis")
        };
        let scrubbed =
            address.scrub("auth as app with s3cret failed at redis://app:s3cret@cache:6379");
        assert!(!scrubbed.contains("s3cret"), "{scrubbed}");
        let Ok(Store::Redis(address)) = Store::parse("redis://app:s3%40cret@cache") else {
            panic!("not redis")
        };
        let scrubbed = address.scrub("WRONGPASS s3@cret, from s3%40cret");
        assert!(!scrubbed.contains("s3"), "{scrubbed}");
    }

    #[test]
    fn unknown_stores_are_refused_without_their_password() {
        assert_eq!(Store::parse("file"), Ok(Store::File));
        let err = Store::parse("memcached://u:s3cret@h").unwrap_err();
        assert!(err.contains("'memcached://u:***@h'"), "{err}");
        assert!(!err.contains("s3cret"));
    }
}
