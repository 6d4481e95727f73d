//! A Redis server's address as this client uses it: where the server is (a TCP port, with TLS
//! for `rediss://`; a Unix socket; or the primary that sentinels name), the database, the user
//! and password to log in with, how long a call may take, and what a TLS connection trusts and
//! presents. The grammar of the URLs that name one is the caller's (`retry-budget`'s store
//! addresses); this is what they parse to. An address is shown rebuilt from its parts, its
//! password hidden, never from the text it was parsed from, so that the password cannot show
//! whatever way it was spelt; [`Secret`] hides it even in a debug print.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use retry_net::TlsClient;
use retry_policy::printable::printable;

/// What stands in a shown address for its password.
const HIDDEN: &str = "***";

/// The port of a Redis server when the address names none.
pub const DEFAULT_PORT: u16 = 6379;

/// How long a call may take, the connection included, unless its address's
/// `timeout` says otherwise.
pub const DEFAULT_CALL_LIMIT: Duration = Duration::from_millis(500);

/// A password (or a text that holds one): shown as `***`, even in a debug print.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// `text`, a password, to be shown as `***`.
    pub fn new(text: String) -> Secret {
        Secret(text)
    }

    /// The password itself, to send to the server and for nothing else.
    pub fn reveal(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(HIDDEN)
    }
}

/// How to reach a Redis server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Endpoint {
    /// A TCP port, with TLS for `rediss://`.
    Tcp {
        /// The host name or address.
        host: String,
        /// The port.
        port: u16,
        /// `rediss://`: the connection is TLS.
        tls: bool,
    },
    /// A Unix socket.
    Unix(PathBuf),
    /// A primary that sentinels name: asked in turn where the primary is, then it, TLS to both
    /// for `rediss+sentinel://`.
    Sentinel {
        /// The sentinels' hosts and ports, in the order they are asked.
        sentinels: Vec<(String, u16)>,
        /// The primary's name, as the sentinels monitor it.
        primary: String,
        /// `rediss+sentinel://`: the connections are TLS.
        tls: bool,
    },
}

/// A `redis://`, `rediss://` or `redis+unix://` address, parsed.
#[derive(Clone, PartialEq, Eq)]
pub struct RedisAddress {
    endpoint: Endpoint,
    /// The port as the address gave it, to show it as given.
    port_given: bool,
    db: Option<u32>,
    user: Option<String>,
    password: Option<Secret>,
    /// How long a call may take, from the query's `timeout`.
    call_limit: Option<Duration>,
    /// What a TLS connection trusts and presents, when the query names files: shared by the
    /// address's copies (one for each node it leads to).
    tls_client: Option<Arc<TlsClient>>,
}

/// What a TLS connection trusts and presents when the address names no file.
static SYSTEM_TLS: TlsClient = TlsClient::SYSTEM;

impl RedisAddress {
    /// The server at `endpoint` (its port shown when `port_given`, as the address gave it):
    /// the first database, no user and no password, the default call limit, and for TLS the
    /// system's authorities.
    pub fn new(endpoint: Endpoint, port_given: bool) -> RedisAddress {
        RedisAddress {
            endpoint,
            port_given,
            db: None,
            user: None,
            password: None,
            call_limit: None,
            tls_client: None,
        }
    }

    /// This address, logged in to as `user` with `password`, in the database `db`.
    pub fn logged_in(
        self,
        db: Option<u32>,
        user: Option<String>,
        password: Option<Secret>,
    ) -> RedisAddress {
        RedisAddress {
            db,
            user,
            password,
            ..self
        }
    }

    /// This address, each call within `limit` (none: [`DEFAULT_CALL_LIMIT`]).
    pub fn with_call_limit(self, limit: Option<Duration>) -> RedisAddress {
        RedisAddress {
            call_limit: limit,
            ..self
        }
    }

    /// This address, its TLS connections trusting and presenting what `client` holds.
    pub fn with_tls_client(self, client: TlsClient) -> RedisAddress {
        RedisAddress {
            tls_client: Some(Arc::new(client)),
            ..self
        }
    }

    /// This address with `password` in place of any it had.
    pub fn with_password(self, password: Secret) -> RedisAddress {
        RedisAddress {
            password: Some(password),
            ..self
        }
    }

    /// How long a call may take, the connection included.
    pub fn call_limit(&self) -> Duration {
        self.call_limit.unwrap_or(DEFAULT_CALL_LIMIT)
    }

    /// How to reach the server.
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// The database to select, if not the first.
    pub fn db(&self) -> Option<u32> {
        self.db.filter(|&db| db != 0)
    }

    /// The user to log in as, if one is named.
    pub fn user(&self) -> Option<&str> {
        self.user.as_deref()
    }

    /// The password, from the address or given apart from it.
    pub fn password(&self) -> Option<&Secret> {
        self.password.as_ref()
    }

    /// What a connection to it trusts and presents, when it is under TLS.
    pub fn tls_client(&self) -> Option<&TlsClient> {
        let client = self.tls_client.as_deref().unwrap_or(&SYSTEM_TLS);
        self.is_tls().then_some(client)
    }

    /// Whether its query names a client certificate.
    pub fn presents_certificate(&self) -> bool {
        self.tls_client
            .as_deref()
            .is_some_and(TlsClient::has_identity)
    }

    /// Whether the store is spoken to under TLS.
    pub fn is_tls(&self) -> bool {
        matches!(
            self.endpoint,
            Endpoint::Tcp { tls: true, .. } | Endpoint::Sentinel { tls: true, .. }
        )
    }

    /// This address's credentials, database and limits, at another node, `host`:`port`: one a
    /// cluster redirects to, or the primary the sentinels name (TLS when this address is).
    pub fn at(&self, host: &str, port: u16) -> RedisAddress {
        RedisAddress {
            endpoint: Endpoint::Tcp {
                host: host.to_string(),
                port,
                tls: self.is_tls(),
            },
            port_given: true,
            ..self.clone()
        }
    }

    /// `text` (an error the server gave, say) with this address's password hidden, should it be
    /// there.
    pub fn scrub(&self, text: &str) -> String {
        match &self.password {
            Some(secret) if !secret.0.is_empty() => text.replace(&secret.0, HIDDEN),
            _ => text.to_string(),
        }
    }
}

/// Rebuilt from its parts, with its password hidden, and control characters in them escaped
/// (a host, a path or a user may hold anything).
impl fmt::Display for RedisAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hidden = match self.password {
            Some(_) => ":***",
            None => "",
        };
        match &self.endpoint {
            Endpoint::Tcp { host, port, tls } => {
                let scheme = if *tls { "rediss" } else { "redis" };
                write!(f, "{scheme}://")?;
                self.fmt_user(f, hidden)?;
                fmt_host(f, host)?;
                if self.port_given {
                    write!(f, ":{port}")?;
                }
                self.fmt_db(f)
            }
            Endpoint::Sentinel {
                sentinels,
                primary,
                tls,
            } => {
                let scheme = if *tls { "rediss" } else { "redis" };
                write!(f, "{scheme}+sentinel://")?;
                self.fmt_user(f, hidden)?;
                for (index, (host, port)) in sentinels.iter().enumerate() {
                    f.write_str(if index == 0 { "" } else { "," })?;
                    fmt_host(f, host)?;
                    write!(f, ":{port}")?;
                }
                write!(f, "/{}", printable(primary))?;
                self.fmt_db(f)
            }
            Endpoint::Unix(path) => {
                write!(f, "redis+unix://{}", printable(&path.to_string_lossy()))?;
                let mut query = Vec::new();
                if let Some(db) = self.db {
                    query.push(format!("db={db}"));
                }
                if let Some(user) = &self.user {
                    query.push(format!("user={}", printable(user)));
                }
                if self.password.is_some() {
                    query.push(format!("pass={HIDDEN}"));
                }
                match query.is_empty() {
                    true => Ok(()),
                    false => write!(f, "?{}", query.join("&")),
                }
            }
        }
    }
}

impl RedisAddress {
    /// The user information of a shown address: the user, and the password hidden.
    fn fmt_user(&self, f: &mut fmt::Formatter<'_>, hidden: &str) -> fmt::Result {
        match &self.user {
            Some(user) => write!(f, "{}{hidden}@", printable(user)),
            None if !hidden.is_empty() => write!(f, "{hidden}@"),
            None => Ok(()),
        }
    }

    /// The database of a shown address, when it names one.
    fn fmt_db(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.db {
            Some(db) => write!(f, "/{db}"),
            None => Ok(()),
        }
    }
}

/// A host of a shown address, an IPv6 address in brackets.
fn fmt_host(f: &mut fmt::Formatter<'_>, host: &str) -> fmt::Result {
    match host.contains(':') {
        true => write!(f, "[{}]", printable(host)),
        false => f.write_str(&printable(host)),
    }
}

/// Never shows the password, not even in a debug print.
impl fmt::Debug for RedisAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RedisAddress({self})")
    }
}
