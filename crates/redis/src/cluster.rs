//! One call of the script on the node that holds its keys: a standalone server, the primary
//! sentinels name, or the node of a Redis Cluster that owns the keys' slot, reached by
//! following the cluster's redirects as `redis-cli -c` does.
//!
//! Every key of one budget (its state, breaker and pushback in `retry:budget:{NAME}`, its terms
//! in `retry:budget:{NAME}:terms`) and of one job's history (`retry:budget:history:{JOB}`)
//! hashes to one slot, by the name in braces, so one node answers every call of a store: the
//! client keeps no map of the slots, only the connection to the node that answered last.
//! `-MOVED SLOT HOST:PORT` sends the call there, and that node is kept for the next calls (an
//! empty host, which Redis 7 sends with `cluster-preferred-endpoint-type unknown-endpoint`, is
//! the answering node's); `-ASK SLOT HOST:PORT` sends it there once, after `ASKING`, while the
//! kept node stays; a node new to the script loads it on `NOSCRIPT` (script.rs). `-READONLY`
//! from a sentinel address's primary means a failover made it a replica: the sentinels are
//! asked again. At most [`MAX_REDIRECTS`] of these per call, within its time limit: a loop of
//! them fails the call rather than hold it. `-TRYAGAIN` (a slot's keys half moved) sends the
//! call to the same node again after a short pause, while the call's time lasts; then, like
//! `-CLUSTERDOWN` and any other error, it is a store that cannot be used now, which the
//! address's `fail` decides on. Over TLS,
//! each node's certificate is checked against the host its redirect names. A standalone server
//! never redirects, so all this costs it nothing: one round trip per call.

use std::time::{Duration, Instant};

use super::address::{Endpoint, RedisAddress};
use super::resp::{Connection, Reply, Trouble, describe, first_words};
use super::script::{self, ScriptCall};
use super::sentinel;

/// The most redirects one call follows.
const MAX_REDIRECTS: usize = 5;

/// A connection kept between calls, and the node it is to.
pub struct Node {
    address: RedisAddress,
    connection: Connection,
}

/// Where an answer sends the call.
#[derive(Debug, PartialEq)]
enum Redirect {
    /// To this node, for good (`MOVED`).
    Moved(RedisAddress),
    /// To this node, this once (`ASK`).
    Ask(RedisAddress),
    /// To the primary the sentinels name now (`READONLY`).
    Primary,
    /// To the same node, after a pause (`TRYAGAIN`).
    Again,
}

/// The pause before a call the cluster asked to try again: a slot's keys are moving.
const TRY_AGAIN_PAUSE: Duration = Duration::from_millis(20);

/// Run `script` on the node that holds its keys, starting from `kept` (the node
/// of the last call) or else the server `origin` names, within `limit`; hands back the answer,
/// and the node to keep for the next call (none after a failure).
pub(crate) fn call(
    origin: &RedisAddress,
    kept: Option<Node>,
    script: &ScriptCall,
    limit: Duration,
) -> (Result<Reply, Trouble>, Option<Node>) {
    let until = Instant::now() + limit;
    match follow(origin, kept, script, until) {
        Ok((reply, node)) => (Ok(reply), Some(node)),
        Err(trouble) => (Err(trouble), None),
    }
}

/// The answer of the node that holds the keys, and that node.
fn follow(
    origin: &RedisAddress,
    kept: Option<Node>,
    script: &ScriptCall,
    until: Instant,
) -> Result<(Reply, Node), Trouble> {
    let kept = kept.filter(|node| !node.connection.is_closed());
    let reused = kept.is_some();
    let mut node = kept.map_or_else(|| reach(origin, until), Ok)?;
    let mut answer = script::evaluate(&mut node.connection, script);
    // Closed while idle, between the look above and the call: once more, afresh.
    if reused && matches!(answer, Err(Trouble::Dropped)) {
        node = reach(origin, until)?;
        answer = script::evaluate(&mut node.connection, script);
    }
    let mut answered_by = node.address.clone();
    let mut redirects = 0;
    loop {
        let reply = answer?;
        let Some(redirect) = redirect_of(&reply, origin, &answered_by)? else {
            return Ok((reply, node));
        };
        // A try again starts the chain again: only time bounds those.
        if redirect == Redirect::Again {
            redirects = 0;
        } else {
            if redirects == MAX_REDIRECTS {
                return Err(Trouble::Refused(format!(
                    "it sent the call on more than {MAX_REDIRECTS} times (a loop of redirects)"
                )));
            }
            redirects += 1;
        }
        answer = match redirect {
            Redirect::Moved(address) => {
                node = open(address, until)?;
                answered_by = node.address.clone();
                script::evaluate(&mut node.connection, script)
            }
            Redirect::Ask(address) => {
                let mut asked = open(address, until)?;
                asked.connection.expect_ok(&[b"ASKING"], "asking")?;
                answered_by = asked.address;
                script::evaluate(&mut asked.connection, script)
            }
            Redirect::Primary => {
                node = reach(origin, until)?;
                answered_by = node.address.clone();
                script::evaluate(&mut node.connection, script)
            }
            // Until the time is up: then the cluster's answer is the call's.
            Redirect::Again
                if until.saturating_duration_since(Instant::now()) > TRY_AGAIN_PAUSE =>
            {
                std::thread::sleep(TRY_AGAIN_PAUSE);
                answered_by = node.address.clone();
                match script::evaluate(&mut node.connection, script) {
                    // The time ran out on the try: the cluster's last answer is still the
                    // call's (and the connection, a reply still owed on it, is not kept).
                    Err(trouble) if trouble.is_time_limit() => {
                        return Err(Trouble::Refused(match &reply {
                            Reply::Error(error) => first_words(error),
                            other => describe(other),
                        }));
                    }
                    answer => answer,
                }
            }
            Redirect::Again => return Ok((reply, node)),
        };
    }
}

/// Where `answer`, from the node at `at`, sends the call; none when it is the answer.
fn redirect_of(
    answer: &Reply,
    origin: &RedisAddress,
    at: &RedisAddress,
) -> Result<Option<Redirect>, Trouble> {
    let Reply::Error(error) = answer else {
        return Ok(None);
    };
    let mut words = error.split(' ');
    let kind = words.next().unwrap_or_default();
    if kind == "READONLY" && matches!(origin.endpoint(), Endpoint::Sentinel { .. }) {
        return Ok(Some(Redirect::Primary));
    }
    if kind == "TRYAGAIN" {
        return Ok(Some(Redirect::Again));
    }
    if kind != "MOVED" && kind != "ASK" {
        return Ok(None);
    }
    let target = (words.next(), words.next(), words.next());
    let (Some(_slot), Some(target), None) = target else {
        return Err(malformed(error));
    };
    let (host, port) = target.rsplit_once(':').ok_or_else(|| malformed(error))?;
    let port: u16 = port.parse().map_err(|_| malformed(error))?;
    let host = match (host, at.endpoint()) {
        ("", Endpoint::Tcp { host, .. }) => host.as_str(),
        ("", _) => return Err(malformed(error)),
        (host, _) => host.trim_start_matches('[').trim_end_matches(']'),
    };
    let address = at.at(host, port);
    Ok(Some(match kind {
        "MOVED" => Redirect::Moved(address),
        _ => Redirect::Ask(address),
    }))
}

/// A redirect that names no node.
fn malformed(error: &str) -> Trouble {
    Trouble::Malformed(format!(
        "a redirect that names no node: {}",
        retry_policy::printable::printable(&error.chars().take(100).collect::<String>())
    ))
}

/// The server `origin` names: itself, or the primary its sentinels name.
fn reach(origin: &RedisAddress, until: Instant) -> Result<Node, Trouble> {
    let (address, connection) = sentinel::reach(origin, until)?;
    Ok(Node {
        address,
        connection,
    })
}

/// The node at `address`, a redirect's.
fn open(address: RedisAddress, until: Instant) -> Result<Node, Trouble> {
    let left = until.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(Trouble::Io(std::io::ErrorKind::TimedOut.into()));
    }
    let connection = Connection::open(&address, left)
        .map_err(|trouble| trouble.about(&format!("the node {address} a redirect names")))?;
    Ok(Node {
        address,
        connection,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The node at `host`:`port`, TLS when `tls`.
    fn node(host: &str, port: u16, tls: bool) -> RedisAddress {
        let endpoint = Endpoint::Tcp {
            host: host.into(),
            port,
            tls,
        };
        RedisAddress::new(endpoint, true)
    }

    fn error(text: &str) -> Reply {
        Reply::Error(text.to_string())
    }

    #[test]
    fn a_redirect_names_its_node_and_an_empty_host_is_the_answering_nodes() {
        // A redirect keeps the address's TLS, where the build has it.
        let scheme = if cfg!(feature = "tls") {
            "rediss"
        } else {
            "redis"
        };
        let origin = node("10.0.0.1", 7000, cfg!(feature = "tls"))
            .logged_in(None, Some("u".into()), None)
            .with_call_limit(Some(Duration::from_secs(2)));
        let at = origin.at("10.0.0.2", 7001);
        let moved = redirect_of(&error("MOVED 3999 10.0.0.3:7002"), &origin, &at).unwrap();
        assert_eq!(moved, Some(Redirect::Moved(origin.at("10.0.0.3", 7002))));
        let same_host = redirect_of(&error("MOVED 3999 :7003"), &origin, &at).unwrap();
        assert_eq!(
            same_host,
            Some(Redirect::Moved(origin.at("10.0.0.2", 7003)))
        );
        let ask = redirect_of(&error("ASK 3999 ::1:7004"), &origin, &at).unwrap();
        assert_eq!(ask, Some(Redirect::Ask(origin.at("::1", 7004))));
        assert_eq!(
            moved.map(|redirect| format!("{redirect:?}")),
            Some(format!("Moved(RedisAddress({scheme}://u@10.0.0.3:7002))"))
        );
    }

    #[test]
    fn other_errors_are_answers_and_a_broken_redirect_is_no_guess() {
        let origin = node("10.0.0.1", 7000, false);
        let again = error("TRYAGAIN Multiple keys request during rehashing of slot");
        assert_eq!(
            redirect_of(&again, &origin, &origin).unwrap(),
            Some(Redirect::Again)
        );
        for answer in [
            error("CLUSTERDOWN The cluster is down"),
            error("READONLY You can't write against a read only replica."),
            Reply::Status("OK".into()),
        ] {
            assert_eq!(redirect_of(&answer, &origin, &origin).unwrap(), None);
        }
        for broken in [
            "MOVED",
            "MOVED 1",
            "MOVED 1 host",
            "MOVED 1 h:99999",
            "ASK 1 h:1 x",
        ] {
            assert!(
                redirect_of(&error(broken), &origin, &origin).is_err(),
                "{broken}"
            );
        }
        let sentinels = vec![("10.0.0.9".to_string(), 26379)];
        let primary = "main".to_string();
        let endpoint = Endpoint::Sentinel {
            sentinels,
            primary,
            tls: false,
        };
        let sentinel = RedisAddress::new(endpoint, true);
        let readonly = error("READONLY You can't write against a read only replica.");
        let at = sentinel.at("10.0.0.1", 6379);
        assert_eq!(
            redirect_of(&readonly, &sentinel, &at).unwrap(),
            Some(Redirect::Primary)
        );
    }
}
