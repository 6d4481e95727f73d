//! retry's Redis client, and all it does: run a script on its keys with its arguments, within a
//! time limit ([`call`]), on the server an address names: a standalone server (over TCP, TLS or
//! a Unix socket), the primary that sentinels name (`sentinel`), or the node of a Redis Cluster
//! that owns the keys' slot (`cluster`, following its redirects). The protocol is this crate's
//! own (`resp`), so that every reply, untrusted input, is read in bounded memory, where a
//! client library reads a reply of any size a server sends; a [`Connection`] of one's own
//! speaks it for other commands. What a call's answer means is the caller's.
#![forbid(unsafe_code)]

mod address;
mod cluster;
mod resp;
mod script;
mod sentinel;

use std::time::Duration;

pub use address::{DEFAULT_CALL_LIMIT, DEFAULT_PORT, Endpoint, RedisAddress, Secret};
pub use cluster::Node;
pub use resp::{Connection, MAX_REPLY, Reply, Trouble, describe, first_words, read_reply};
pub use script::{Script, ScriptCall};

/// Run `script` on the node that holds its keys, starting from `kept` (the node of the last
/// call) or else the server `origin` names, within `limit`: the answer, and the node to keep
/// for the next call (none after a failure).
pub fn call(
    origin: &RedisAddress,
    kept: Option<Node>,
    script: &ScriptCall,
    limit: Duration,
) -> (Result<Reply, Trouble>, Option<Node>) {
    cluster::call(origin, kept, script, limit)
}

#[cfg(test)]
#[path = "../../../tests/support/redis_server.rs"]
#[allow(dead_code)] // Shared with the integration tests, which use all of it.
mod redis_server;

#[cfg(test)]
mod tests {
    use super::redis_server::RedisServer;
    use super::*;

    /// A script that answers its key and its arguments.
    static ECHO: Script = Script {
        text: "return {KEYS[1], ARGV[1], ARGV[2]}",
        sha1: b"4cfb4166ae4c0001fb4259c299bc0d8595c56cc2",
    };

    /// `script` on one key, with two arguments.
    fn echo(script: &'static Script) -> ScriptCall {
        ScriptCall {
            script,
            keys: vec![b"key".to_vec()],
            args: vec![b"one".to_vec(), b"two".to_vec()],
        }
    }

    #[test]
    fn a_call_loads_its_script_where_the_server_lacks_it_and_keeps_its_node() {
        let server = RedisServer::on_loopback();
        let endpoint = Endpoint::Tcp {
            host: "127.0.0.1".into(),
            port: server.port(),
            tls: false,
        };
        let address = RedisAddress::new(endpoint, true);
        let limit = Duration::from_secs(10);
        let bulk = |text: &str| Reply::Bulk(Some(text.as_bytes().to_vec()));
        let echoed = Reply::Array(Some(vec![bulk("key"), bulk("one"), bulk("two")]));
        let (answer, kept) = call(&address, None, &echo(&ECHO), limit);
        assert_eq!(answer.unwrap(), echoed);
        // The kept node's server forgets the script: the next call loads it again.
        let mut own = Connection::open(&address, limit).unwrap();
        assert_eq!(
            own.call(&[b"SCRIPT", b"FLUSH"]).unwrap(),
            Reply::Status("OK".into())
        );
        let (answer, kept) = call(&address, kept, &echo(&ECHO), limit);
        assert_eq!(answer.unwrap(), echoed);
        assert!(kept.is_some());
        // A script whose SHA-1 is not its text's is never run under the name it gave.
        static MISNAMED: Script = Script {
            text: "return {KEYS[1], ARGV[1], ARGV[2]}",
            sha1: &[b'0'; 40],
        };
        let (answer, kept) = call(&address, None, &echo(&MISNAMED), limit);
        assert!(matches!(answer, Err(Trouble::Malformed(_))), "{answer:?}");
        assert!(kept.is_none());
    }
}
