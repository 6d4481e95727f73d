//! One HTTP/1.1 request, for the monitors a run tells (heartbeat pings) and the collector its
//! spans go to: an `http://` or
//! `https://` URL taken apart, the request written with `Connection: close`, and the answer's
//! status line and headers read in bounded memory, all within one deadline.
//!
//! Hand-written rather than a client crate: a run sends one small request to one server and
//! needs its status, a header and a short body, never a redirect, a cookie or a pool; the
//! crates that do more bring a runtime or several dozen crates into a binary that starts in a
//! millisecond. The answer is untrusted input: at most [`MAX_HEAD`] bytes of its head are read,
//! and of its body only what its `Content-Length` gives, and at most [`MAX_BODY`] bytes.
//! A URL is a credential (a healthchecks UUID is the check's password), so no error here ever
//! holds one: a failure names the host alone. A request goes through the proxy the environment
//! names for it (`proxy`), as curl's would.

use std::io::{self, Read, Write};
use std::time::Instant;

use retry_net::{Stream, TlsClient};

mod proxy;
mod url;

use proxy::{BadProxy, Proxy};
pub(crate) use url::Url;

/// Why a request got no answer, each way naming the hosts alone.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Failure {
    /// The proxy the environment names for the URL cannot be used.
    #[error(transparent)]
    Proxy(#[from] BadProxy),
    #[error("cannot reach {host}: {error}")]
    Unreachable { host: String, error: io::Error },
    #[error("cannot reach {host} through the proxy {proxy}: {error}")]
    UnreachableThrough {
        host: String,
        proxy: String,
        error: io::Error,
    },
    #[error("cannot send to {host}: {error}")]
    NotSent { host: String, error: io::Error },
    #[error("no answer from {host}: {error}")]
    NoAnswer { host: String, error: io::Error },
}

/// Why a request tried until the server took it, or its time was up, was not taken: the last
/// answer (its status) or failure, and how many tries that was, where it was tried again.
#[derive(Debug, thiserror::Error)]
#[error("{}{}", .last, .tries.map_or(String::new(), |tries| format!(" (tried {tries} times)")))]
pub(crate) struct Undelivered {
    last: NotTaken,
    tries: Option<u32>,
}

/// An answer that says no, or none.
#[derive(Debug, thiserror::Error)]
pub(crate) enum NotTaken {
    #[error("it answered {0}")]
    Answered(u16),
    #[error(transparent)]
    Failed(#[from] Failure),
}

impl NotTaken {
    /// Said once, as the last of one try.
    pub(crate) fn at_once(self) -> Undelivered {
        Undelivered {
            last: self,
            tries: None,
        }
    }

    /// Said after `tries` tries.
    pub(crate) fn after(self, tries: u32) -> Undelivered {
        Undelivered {
            last: self,
            tries: Some(tries),
        }
    }
}

/// The most bytes of an answer's status line and headers read.
const MAX_HEAD: usize = 16 * 1024;

/// The most bytes of an answer's body read.
const MAX_BODY: usize = 64 * 1024;

/// A request to send.
pub(crate) struct Request<'a> {
    /// `GET` or `POST`.
    pub(crate) method: &'static str,
    pub(crate) url: &'a Url,
    /// Headers of the caller's (an exporter's, which are secrets): names and values without a
    /// line break, which their reader checks.
    pub(crate) headers: &'a [(String, String)],
    /// The body, with its content type; none for a `GET`.
    pub(crate) body: Option<(&'static str, &'a [u8])>,
}

/// What the server answered: its status, the headers the caller reads, and its body (when
/// its length was given, and no longer than [`MAX_BODY`]).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Answer {
    pub(crate) status: u16,
    head: String,
    body: Vec<u8>,
}

impl Answer {
    /// Its body: empty when its length was not given, or was more than [`MAX_BODY`].
    pub(crate) fn body(&self) -> &[u8] {
        &self.body
    }

    /// The value of the header `name` (any case), if the answer has it.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.head.split("\r\n").skip(1).find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.trim().eq_ignore_ascii_case(name).then(|| value.trim())
        })
    }
}

/// Send `request` and read the answer, all before `until`, through the proxy the environment
/// names for its URL, if any (`proxy`); the error says what failed, naming the hosts alone.
pub(crate) fn send(request: &Request, until: Instant) -> Result<Answer, Failure> {
    let url = request.url;
    let left = || until.saturating_duration_since(Instant::now());
    let proxy = Proxy::for_url(url, &proxy::from_environment)?;
    let (mut stream, through) = match &proxy {
        None => {
            let stream = Stream::connect(
                url.host(),
                url.port(),
                url.is_tls().then_some(&TlsClient::SYSTEM),
                left(),
            )
            .map_err(|error| Failure::Unreachable {
                host: url.host().to_string(),
                error,
            })?;
            (stream, None)
        }
        Some(proxy) => {
            let failed = |error| Failure::UnreachableThrough {
                host: url.host().to_string(),
                proxy: proxy.host().to_string(),
                error,
            };
            (tunnel(proxy, url, left).map_err(failed)?, Some(proxy))
        }
    };
    let host = || url.host().to_string();
    // Plain HTTP goes to the proxy itself, the URL whole in the request line.
    let forwarded = through.filter(|_| !url.is_tls());
    stream
        .set_time_left(left())
        .and_then(|()| stream.write_all(&request_bytes(request, forwarded)))
        .and_then(|()| stream.flush())
        .map_err(|error| Failure::NotSent {
            host: host(),
            error,
        })?;
    read_answer(&mut stream, left).map_err(|error| Failure::NoAnswer {
        host: host(),
        error,
    })
}

/// A connection to `url`'s server through `proxy`: for `https://`, a tunnel the proxy opens
/// (`CONNECT`), under TLS for the server; for `http://`, the connection to the proxy itself.
fn tunnel(
    proxy: &Proxy,
    url: &Url,
    left: impl Fn() -> std::time::Duration,
) -> std::io::Result<Stream> {
    let mut stream = Stream::connect(proxy.host(), proxy.port(), None, left())?;
    if !url.is_tls() {
        return Ok(stream);
    }
    let authority = url.authority();
    let mut connect = format!("CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n");
    if let Some(authorization) = proxy.authorization() {
        connect += &format!("Proxy-Authorization: {authorization}\r\n");
    }
    connect += "\r\n";
    stream.set_time_left(left())?;
    stream.write_all(connect.as_bytes())?;
    let answer = read_answer(&mut stream, left)?;
    if !(200..300).contains(&answer.status) {
        return Err(std::io::Error::other(format!(
            "the proxy answered {} to CONNECT",
            answer.status
        )));
    }
    stream.over(url.host(), Some(&TlsClient::SYSTEM))
}

/// The request's bytes: its line, its headers and its body; its URL whole, and the proxy's
/// credentials, when it goes to the `proxy` itself.
fn request_bytes(request: &Request, proxy: Option<&Proxy>) -> Vec<u8> {
    let url = request.url;
    let host = match (url.host().contains(':'), url.port(), url.is_tls()) {
        (true, ..) => format!("[{}]:{}", url.host(), url.port()),
        (false, 443, true) | (false, 80, false) => url.host().to_string(),
        (false, port, _) => format!("{}:{port}", url.host()),
    };
    let target = match proxy {
        Some(_) => format!("http://{host}{}", url.target()),
        None => url.target(),
    };
    let mut bytes = format!(
        "{} {target} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: retry/{}\r\nConnection: close\r\n",
        request.method,
        env!("CARGO_PKG_VERSION"),
    )
    .into_bytes();
    if let Some(authorization) = proxy.and_then(Proxy::authorization) {
        let _ = write!(bytes, "Proxy-Authorization: {authorization}\r\n");
    }
    for (name, value) in request.headers {
        let _ = write!(bytes, "{name}: {value}\r\n");
    }
    let body = match request.body {
        Some((content_type, body)) => {
            let _ = write!(
                bytes,
                "Content-Type: {content_type}\r\nContent-Length: {}\r\n",
                body.len()
            );
            body
        }
        None => &[],
    };
    bytes.extend_from_slice(b"\r\n");
    bytes.extend_from_slice(body);
    bytes
}

/// A connection whose every read can be bounded by the time left.
pub(crate) trait TimedRead: Read {
    /// Bound the next reads by `left`.
    fn set_time_left(&mut self, left: std::time::Duration) -> std::io::Result<()>;
}

impl TimedRead for Stream {
    fn set_time_left(&mut self, left: std::time::Duration) -> std::io::Result<()> {
        Stream::set_time_left(self, left)
    }
}

/// Bytes already in memory (the fuzz target's answers).
impl TimedRead for &[u8] {
    fn set_time_left(&mut self, _left: std::time::Duration) -> std::io::Result<()> {
        Ok(())
    }
}

/// Read an answer from `stream`, each read bounded by `left`: its status line and headers, and
/// the body its `Content-Length` gives, if that is no more than [`MAX_BODY`].
pub(crate) fn read_answer(
    stream: &mut impl TimedRead,
    left: impl Fn() -> std::time::Duration,
) -> std::io::Result<Answer> {
    let mut read = Vec::with_capacity(1024);
    let mut buffer = [0u8; 2048];
    let mut fill = |read: &mut Vec<u8>, most: usize| -> std::io::Result<bool> {
        let left = left();
        if left.is_zero() {
            return Err(std::io::ErrorKind::TimedOut.into());
        }
        stream.set_time_left(left)?;
        let count = stream.read(&mut buffer[..(most - read.len()).min(2048)])?;
        read.extend_from_slice(&buffer[..count]);
        Ok(count > 0)
    };
    let head_end = loop {
        if let Some(at) = read.windows(4).position(|window| window == b"\r\n\r\n") {
            break at + 4;
        }
        if read.len() >= MAX_HEAD {
            return Err(std::io::Error::other(format!(
                "its answer's headers are longer than {MAX_HEAD} bytes"
            )));
        }
        if !fill(&mut read, MAX_HEAD)? {
            break read.len();
        }
    };
    let mut answer = parse_head(&read[..head_end])
        .ok_or_else(|| std::io::Error::other("its answer is not HTTP"))?;
    let length = answer
        .header("Content-Length")
        .and_then(|length| length.parse::<usize>().ok())
        .filter(|&length| length <= MAX_BODY);
    if let Some(length) = length {
        let whole = head_end + length;
        while read.len() < whole && fill(&mut read, whole)? {}
        answer.body = read[head_end..whole.min(read.len())].to_vec();
    }
    Ok(answer)
}

/// The answer whose head is `head`, if its status line is HTTP's.
fn parse_head(head: &[u8]) -> Option<Answer> {
    let head = String::from_utf8_lossy(head).into_owned();
    let mut words = head.split("\r\n").next()?.split(' ');
    if !words.next()?.starts_with("HTTP/1.") {
        return None;
    }
    let status = words.next()?;
    let status: u16 = status
        .parse()
        .ok()
        .filter(|code| status.len() == 3 && (100..600).contains(code))?;
    Some(Answer {
        status,
        head,
        body: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_is_taken_apart_and_built_on() {
        let url = Url::parse("https://hc-ping.com/5a8b?create=1#x").unwrap();
        assert_eq!(
            (url.is_tls(), url.host(), url.port()),
            (true, "hc-ping.com", 443)
        );
        let start = url.joined("start").with_query(&[("rid", "a b/c")]);
        assert_eq!(start.target(), "/5a8b/start?create=1&rid=a%20b%2Fc");
        let url = Url::parse("http://[::1]:8080").unwrap();
        assert_eq!(
            (url.host(), url.port(), url.target()),
            ("::1", 8080, "/".into())
        );
        assert_eq!(url.joined("fail").target(), "/fail");
        let headers = [("Authorization".to_string(), "Bearer x".to_string())];
        let request = Request {
            method: "POST",
            url: &url,
            headers: &headers,
            body: Some(("text/plain", b"hi")),
        };
        let bytes = String::from_utf8(request_bytes(&request, None)).unwrap();
        assert!(
            bytes.starts_with("POST / HTTP/1.1\r\nHost: [::1]:8080\r\n"),
            "{bytes}"
        );
        assert!(bytes.contains("\r\nAuthorization: Bearer x\r\n"), "{bytes}");
        assert!(bytes.ends_with("Content-Length: 2\r\n\r\nhi"), "{bytes}");
    }

    #[test]
    fn a_bad_url_is_refused_without_repeating_it() {
        for (text, why) in [
            ("ftp://host/x", "https://"),
            ("https://user:secret@host/x", "user and password"),
            ("https://host:99999/x", "port"),
            ("https:///x", "no host"),
            ("https://host/a b", "space"),
            ("https://[::1/x", "']'"),
        ] {
            let err = Url::parse(text).unwrap_err();
            assert!(err.contains(why), "{text}: {err}");
            assert!(!err.contains("secret"));
        }
        let url = Url::parse("https://host/secret-uuid").unwrap();
        assert!(!format!("{url:?}").contains("secret"));
    }

    #[test]
    fn an_answers_body_is_read_as_long_as_its_length_says_and_no_longer_than_the_most() {
        let read = |bytes: &[u8]| read_answer(&mut &bytes[..], || std::time::Duration::MAX);
        let answer = read(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nOKmore").unwrap();
        assert_eq!((answer.status, answer.body()), (200, &b"OK"[..]));
        let answer = read(b"HTTP/1.1 503 Busy\r\n\r\nbody").unwrap();
        assert_eq!((answer.status, answer.body()), (503, &b""[..]));
        let huge = format!(
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\nx",
            MAX_BODY + 1
        );
        assert_eq!(read(huge.as_bytes()).unwrap().body(), b"");
        let short = read(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nab").unwrap();
        assert_eq!(short.body(), b"ab", "what came before the end");
        assert!(read(b"not http\r\n\r\n").is_err());
    }

    #[test]
    fn an_answers_status_and_headers_are_read() {
        let answer = parse_head(b"HTTP/1.1 200 OK\r\nPing-Body-Limit: 100000\r\n\r\n").unwrap();
        assert_eq!(answer.status, 200);
        assert_eq!(answer.header("ping-body-limit"), Some("100000"));
        assert_eq!(answer.header("Server"), None);
        for bad in [
            &b"SSH-2.0-OpenSSH\r\n\r\n"[..],
            b"HTTP/1.1 2000 OK\r\n\r\n",
            b"",
        ] {
            assert_eq!(parse_head(bad), None);
        }
    }
}
