//! The proxy a request to a monitor or a trace collector goes through, as curl chooses it from
//! the environment, since the cron hosts and CI runners that reach the internet only through a
//! proxy say so there: `https_proxy` (or `HTTPS_PROXY`) for an `https://` URL, `http_proxy`
//! (lower case only, as curl reads it: a CGI script's `HTTP_PROXY` can be set by a request's
//! `Proxy:` header) for an `http://` one, `all_proxy` (or `ALL_PROXY`) for either; and
//! `no_proxy` (or `NO_PROXY`): `*`, or hosts by name (a domain and every name under it) or
//! address, each with a port or not. A Redis store is never proxied.
//!
//! Only an `http://` proxy is spoken to (curl's default scheme when a value names none); its
//! credentials (`http://user:password@proxy:3128`) are sent as `Proxy-Authorization: Basic`, and
//! never said: a message names the proxy's host alone. A value that cannot be used is said, and
//! the request is not sent, as curl would not send it.

use super::Url;
use crate::environment;

/// The port of a proxy whose value names none, as curl has it.
const DEFAULT_PORT: u16 = 1080;

/// A proxy the environment names that cannot be used: the variable, and why.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("{variable}: {why}")]
pub(crate) struct BadProxy {
    variable: &'static str,
    why: Unusable,
}

/// Why a proxy's value cannot be used.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
enum Unusable {
    /// The scheme, made printable.
    #[error("a proxy spoken to over '{0}' is not supported; give an http:// proxy")]
    Scheme(String),
    /// What is wrong with its host and port.
    #[error("the proxy's address: {0}")]
    Address(&'static str),
    #[error("the proxy's credentials are not UTF-8")]
    CredentialsNotUtf8,
}

/// A proxy to send a request through.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Proxy {
    host: String,
    port: u16,
    /// `user:password`, for `Proxy-Authorization`: a secret.
    credentials: Option<String>,
}

/// Never shows the credentials.
impl std::fmt::Debug for Proxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Proxy({}:{})", self.host, self.port)
    }
}

impl Proxy {
    /// The proxy a request to `url` goes through, as the environment `env` says; none for a
    /// direct connection; an error, naming the variable, for a value that cannot be used.
    pub(crate) fn for_url(
        url: &Url,
        env: &impl Fn(&str) -> Option<String>,
    ) -> Result<Option<Proxy>, BadProxy> {
        let given = |names: &[&'static str]| -> Option<(&'static str, String)> {
            names.iter().find_map(|&name| {
                let value = env(name).filter(|value| !value.trim().is_empty())?;
                Some((name, value))
            })
        };
        let for_scheme = match url.is_tls() {
            true => given(&["https_proxy", "HTTPS_PROXY"]),
            false => given(&["http_proxy"]),
        };
        let Some((name, value)) = for_scheme.or_else(|| given(&["all_proxy", "ALL_PROXY"])) else {
            return Ok(None);
        };
        let bypassed = given(&["no_proxy", "NO_PROXY"])
            .is_some_and(|(_, list)| bypasses(&list, url.host(), url.port()));
        if bypassed {
            return Ok(None);
        }
        Proxy::parse(value.trim())
            .map(Some)
            .map_err(|why| BadProxy {
                variable: name,
                why,
            })
    }

    /// `http://[user:password@]host[:port][/]`, or the same without its scheme.
    fn parse(text: &str) -> Result<Proxy, Unusable> {
        let rest = match text.split_once("://") {
            None => text,
            Some(("http" | "HTTP", rest)) => rest,
            Some((scheme, _)) => {
                return Err(Unusable::Scheme(retry_policy::printable::printable(scheme)));
            }
        };
        let authority = rest.split('/').next().unwrap_or_default();
        let (credentials, host_port) = match authority.rsplit_once('@') {
            Some((credentials, host_port)) => (Some(credentials), host_port),
            None => (None, authority),
        };
        let url = Url::parse(&format!("http://{host_port}")).map_err(Unusable::Address)?;
        let port = match host_port.rsplit_once(':') {
            Some((_, port)) if !port.ends_with(']') => url.port(),
            _ => DEFAULT_PORT,
        };
        let decode = |part: &str| {
            retry_policy::encoding::percent_decoded(part, retry_policy::encoding::Stray::Kept)
                .ok_or(Unusable::CredentialsNotUtf8)
        };
        let credentials = match credentials {
            Some(credentials) => {
                let (user, password) = credentials.split_once(':').unwrap_or((credentials, ""));
                Some(format!("{}:{}", decode(user)?, decode(password)?))
            }
            None => None,
        };
        Ok(Proxy {
            host: url.host().to_string(),
            port,
            credentials,
        })
    }

    /// Its host, which a message may name.
    pub(crate) fn host(&self) -> &str {
        &self.host
    }

    /// Its port.
    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    /// The `Proxy-Authorization` header's value, if it has credentials (a secret).
    pub(crate) fn authorization(&self) -> Option<String> {
        self.credentials
            .as_deref()
            .map(|credentials| format!("Basic {}", base64(credentials.as_bytes())))
    }
}

/// The environment's value of `name`, for [`Proxy::for_url`].
pub(crate) fn from_environment(name: &str) -> Option<String> {
    environment::own(name).and_then(|value| value.into_string().ok())
}

/// Whether `no_proxy`'s `list` sends a request to `host`:`port` directly: `*`, or an entry
/// that is the host or a domain above it (a leading dot or not), or its address, with no port
/// or this one.
fn bypasses(list: &str, host: &str, port: u16) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    list.split(',').map(str::trim).any(|entry| {
        if entry == "*" {
            return true;
        }
        let (name, entry_port) = match entry.strip_prefix('[') {
            Some(bracketed) => match bracketed.split_once(']') {
                Some((name, after)) => (name, after.strip_prefix(':')),
                None => return false,
            },
            None => match entry.rsplit_once(':') {
                Some((name, port)) if !name.contains(':') => (name, Some(port)),
                _ => (entry, None),
            },
        };
        if entry_port.is_some_and(|entry_port| entry_port.parse() != Ok(port)) {
            return false;
        }
        let name = name
            .trim_start_matches('.')
            .trim_end_matches('.')
            .to_ascii_lowercase();
        !name.is_empty()
            && (host == name
                || host
                    .strip_suffix(&name)
                    .is_some_and(|above| above.ends_with('.')))
    })
}

/// `bytes` in base64 (RFC 4648, with padding), for an HTTP Basic authorization.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut text = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let word = chunk.iter().enumerate().fold(0u32, |word, (index, &byte)| {
            word | u32::from(byte) << (16 - 8 * index)
        });
        for index in 0..4 {
            match index <= chunk.len() {
                true => text.push(char::from(
                    ALPHABET[(word >> (18 - 6 * index) & 63) as usize],
                )),
                false => text.push('='),
            }
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proxy_for(url: &str, pairs: &[(&str, &str)]) -> Result<Option<Proxy>, BadProxy> {
        let env = |name: &str| {
            pairs
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| value.to_string())
        };
        Proxy::for_url(&Url::parse(url).unwrap(), &env)
    }

    #[test]
    fn the_proxy_is_chosen_as_curl_chooses_it() {
        let https = "https://hc-ping.com/uuid";
        let http = "http://collector:4318/v1/traces";
        let proxy = |host: &str, port| {
            Some(Proxy {
                host: host.into(),
                port,
                credentials: None,
            })
        };
        assert_eq!(proxy_for(https, &[]), Ok(None));
        assert_eq!(
            proxy_for(https, &[("HTTPS_PROXY", "http://p:3128")]),
            Ok(proxy("p", 3128))
        );
        assert_eq!(
            proxy_for(https, &[("https_proxy", "p")]),
            Ok(proxy("p", 1080))
        );
        // Plain HTTP: the lower-case variable only.
        assert_eq!(
            proxy_for(http, &[("HTTP_PROXY", "http://p:3128")]),
            Ok(None)
        );
        assert_eq!(
            proxy_for(http, &[("http_proxy", "http://p:3128/")]),
            Ok(proxy("p", 3128))
        );
        assert_eq!(
            proxy_for(http, &[("ALL_PROXY", "p:8080")]),
            Ok(proxy("p", 8080))
        );
        let err = proxy_for(https, &[("https_proxy", "socks5://p:1080")])
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("https_proxy: a proxy spoken to over 'socks5'"),
            "{err}"
        );
    }

    #[test]
    fn no_proxy_takes_names_domains_addresses_ports_and_a_star() {
        for (list, host, port, direct) in [
            ("*", "anything", 443, true),
            ("example.com", "example.com", 443, true),
            ("example.com", "hc.example.com", 443, true),
            (".example.com", "hc.example.com", 443, true),
            ("example.com", "badexample.com", 443, false),
            ("localhost, 127.0.0.1", "127.0.0.1", 4318, true),
            ("127.0.0.1:4318", "127.0.0.1", 4318, true),
            ("127.0.0.1:4318", "127.0.0.1", 4319, false),
            ("[::1]:4318", "::1", 4318, true),
            ("::1", "::1", 80, true),
            ("", "example.com", 443, false),
        ] {
            assert_eq!(bypasses(list, host, port), direct, "{list} {host}:{port}");
        }
    }

    #[test]
    fn credentials_are_basic_and_never_shown() {
        let pairs = [("https_proxy", "http://me:s3cr%40t@proxy:3128")];
        let proxy = proxy_for("https://hc-ping.com/x", &pairs).unwrap().unwrap();
        assert_eq!(proxy.authorization().as_deref(), Some("Basic bWU6czNjckB0"));
        assert!(!format!("{proxy:?}").contains("s3cr"));
        assert_eq!(base64(b"a"), "YQ==");
        assert_eq!(base64(b"ab"), "YWI=");
        assert_eq!(base64(b"abc"), "YWJj");
    }
}
