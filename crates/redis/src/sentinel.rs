//! Reaching the server an address names: itself, or for `redis+sentinel://` the primary its
//! sentinels name, found as Redis's guide for sentinel clients says. Each sentinel is asked in
//! turn, within a short limit of its own ([`ASK_LIMIT`]), `SENTINEL get-master-addr-by-name
//! PRIMARY`; the server at the address it gives is reached, logged in to, and asked `ROLE`,
//! and only a primary is used: a sentinel that names a replica (one that has not yet seen a
//! failover, or is wrong) sends the question to the next. A sentinel that wants a password
//! (`NOAUTH`) gets the address's. When a round of every sentinel finds no primary, another
//! follows after a short pause, until the call's time is up: during a failover the sentinels
//! name the new primary within a second or so, and a store's call waits that long only if its
//! `timeout` allows.

use std::time::{Duration, Instant};

use super::address::{Endpoint, RedisAddress};
use super::resp::{Connection, Reply, Trouble, describe, first_words};

/// How long one sentinel may take to answer, at most.
const ASK_LIMIT: Duration = Duration::from_millis(250);

/// The pause between two rounds of the sentinels.
const PAUSE: Duration = Duration::from_millis(50);

/// A connection to the server `address` names, and that server's own address: the address
/// itself, or the primary its sentinels name; every wait ends by `until`.
pub(crate) fn reach(
    address: &RedisAddress,
    until: Instant,
) -> Result<(RedisAddress, Connection), Trouble> {
    let Endpoint::Sentinel {
        sentinels, primary, ..
    } = address.endpoint()
    else {
        let connection = Connection::open(address, left(until)?)?;
        return Ok((address.clone(), connection));
    };
    let mut last = Trouble::Refused("no sentinel was asked".into());
    loop {
        for (host, port) in sentinels {
            match primary_named_by(address, host, *port, primary, until) {
                Ok(found) => return Ok(found),
                Err(trouble) => last = trouble,
            }
        }
        // Another round while the time lasts, with a margin to say why none was found.
        match left(until) {
            Ok(left) if left > 3 * PAUSE => std::thread::sleep(PAUSE),
            _ => return Err(last),
        }
    }
}

/// The primary the sentinel at `host`:`port` names `primary`, reached and checked to be one.
fn primary_named_by(
    address: &RedisAddress,
    host: &str,
    port: u16,
    primary: &str,
    until: Instant,
) -> Result<(RedisAddress, Connection), Trouble> {
    let sentinel = address.at(host, port);
    let in_words = |trouble: Trouble| trouble.about(&format!("sentinel {host}:{port}"));
    let (primary_host, primary_port) = ask_sentinel(&sentinel, primary, until).map_err(in_words)?;
    let server = address.at(&primary_host, primary_port);
    let mut connection = Connection::open(&server, left(until)?)
        .map_err(|trouble| trouble.about(&format!("the primary {server} it names")))?;
    match connection.call(&[b"ROLE"])? {
        Reply::Array(Some(items)) if items.first() == Some(&bulk("master")) => {
            Ok((server, connection))
        }
        Reply::Error(error) => Err(Trouble::Refused(format!(
            "ROLE of the primary {server} the sentinel {host}:{port} names: {}",
            first_words(&error)
        ))),
        _ => Err(Trouble::Refused(format!(
            "the sentinel {host}:{port} names {server}, which is not a primary"
        ))),
    }
}

/// Where the sentinel `sentinel` says the primary named `primary` is.
fn ask_sentinel(
    sentinel: &RedisAddress,
    primary: &str,
    until: Instant,
) -> Result<(String, u16), Trouble> {
    let mut connection = Connection::reach(sentinel, left(until)?.min(ASK_LIMIT))?;
    let question: [&[u8]; 3] = [b"SENTINEL", b"get-master-addr-by-name", primary.as_bytes()];
    let mut answer = connection.call(&question)?;
    if matches!(&answer, Reply::Error(error) if error.starts_with("NOAUTH")) {
        connection.log_in(sentinel)?;
        answer = connection.call(&question)?;
    }
    match &answer {
        Reply::Array(Some(items)) => match items.as_slice() {
            [Reply::Bulk(Some(host)), Reply::Bulk(Some(port))] => {
                let host = String::from_utf8(host.clone()).ok();
                let port = std::str::from_utf8(port)
                    .ok()
                    .and_then(|port| port.parse().ok());
                host.zip(port).ok_or_else(|| unusable(&answer))
            }
            _ => Err(unusable(&answer)),
        },
        Reply::Array(None) => Err(Trouble::Refused(format!(
            "it knows no primary named {}",
            retry_policy::printable::printable(primary)
        ))),
        Reply::Error(error) => Err(Trouble::Refused(first_words(error))),
        _ => Err(unusable(&answer)),
    }
}

/// A sentinel's answer that is not one a sentinel gives.
fn unusable(answer: &Reply) -> Trouble {
    Trouble::Malformed(format!(
        "its answer ({}) is not a primary's address",
        describe(answer)
    ))
}

/// A bulk string's reply.
fn bulk(text: &str) -> Reply {
    Reply::Bulk(Some(text.as_bytes().to_vec()))
}

/// The time left until `until`, or the trouble of none left.
fn left(until: Instant) -> Result<Duration, Trouble> {
    until
        .checked_duration_since(Instant::now())
        .filter(|left| !left.is_zero())
        .ok_or_else(|| Trouble::Io(std::io::ErrorKind::TimedOut.into()))
}
