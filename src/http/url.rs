//! An `http://` or `https://` URL taken apart, and built on (a check's `/start`, a query's
//! pairs): what a request and the proxy chosen for it read. Its `Debug` and its errors name the
//! host alone, since a URL is a credential.

use retry_policy::encoding::percent_encoded;

/// An `http://` or `https://` URL, taken apart. Its `Debug` hides all but the host.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Url {
    tls: bool,
    host: String,
    port: u16,
    /// The path, from its first `/`, without the query.
    path: String,
    /// The query, without its `?`, if any.
    query: Option<String>,
}

impl std::fmt::Debug for Url {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Url({}, ...)", self.host)
    }
}

impl Url {
    /// `text` as a URL; the error says what is wrong without repeating it.
    pub(crate) fn parse(text: &str) -> Result<Url, &'static str> {
        let (tls, rest) = if let Some(rest) = text.strip_prefix("https://") {
            (true, rest)
        } else if let Some(rest) = text.strip_prefix("http://") {
            (false, rest)
        } else {
            return Err("it must start with https:// or http://");
        };
        if text.chars().any(|c| c.is_control() || c == ' ') {
            return Err("it holds a space or a control character");
        }
        let rest = rest.split('#').next().unwrap_or_default();
        let end = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, target) = rest.split_at(end);
        if authority.contains('@') {
            return Err("a user and password before the host are not supported");
        }
        let (host, port) = split_port(authority)?;
        let (path, query) = match target.split_once('?') {
            Some((path, query)) => (path, Some(query.to_string())),
            None => (target, None),
        };
        Ok(Url {
            tls,
            host: host.to_string(),
            port: port.unwrap_or(if tls { 443 } else { 80 }),
            path: if path.is_empty() { "/" } else { path }.to_string(),
            query,
        })
    }

    /// The host, which a message may name.
    pub(crate) fn host(&self) -> &str {
        &self.host
    }

    /// Its port.
    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    /// Whether it is an `https://` URL.
    pub(crate) fn is_tls(&self) -> bool {
        self.tls
    }

    /// `host:port` as a request names it (`Host`, `CONNECT`): an IPv6 address in brackets.
    pub(super) fn authority(&self) -> String {
        match self.host.contains(':') {
            true => format!("[{}]:{}", self.host, self.port),
            false => format!("{}:{}", self.host, self.port),
        }
    }

    /// This URL with `/segment` after its path (`/start` after a check's URL).
    pub(crate) fn joined(&self, segment: &str) -> Url {
        Url {
            path: format!("{}/{segment}", self.path.trim_end_matches('/')),
            ..self.clone()
        }
    }

    /// This URL with `pairs` added to its query; each value is percent-encoded.
    pub(crate) fn with_query(&self, pairs: &[(&str, &str)]) -> Url {
        let mut query = self.query.clone().unwrap_or_default();
        for (key, value) in pairs {
            if !query.is_empty() {
                query.push('&');
            }
            query.push_str(key);
            query.push('=');
            query.push_str(&percent_encoded(value));
        }
        Url {
            query: Some(query).filter(|query| !query.is_empty()),
            ..self.clone()
        }
    }

    /// What the request line names: the path and the query.
    pub(crate) fn target(&self) -> String {
        match &self.query {
            Some(query) => format!("{}?{query}", self.path),
            None => self.path.clone(),
        }
    }
}

/// `authority` as a host and an optional port; an IPv6 address in brackets loses them.
fn split_port(authority: &str) -> Result<(&str, Option<u16>), &'static str> {
    let (host, port) = match authority.strip_prefix('[') {
        Some(bracketed) => {
            let (host, after) = bracketed
                .split_once(']')
                .ok_or("its IPv6 address lacks its ']'")?;
            (host, after.strip_prefix(':'))
        }
        None => match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        },
    };
    if host.is_empty() {
        return Err("it names no host");
    }
    match port {
        None => Ok((host, None)),
        Some(port) => port
            .parse()
            .ok()
            .filter(|&port| port != 0)
            .map(|port| (host, Some(port)))
            .ok_or("its port is not a number from 1 to 65535"),
    }
}
