//! A Lua script as a server runs it: named by its SHA-1 (`EVALSHA`), and loaded first where the
//! server does not have it yet (a server's cache of scripts is its own: each node of a cluster,
//! a primary after a failover).

use super::resp::{Connection, Reply, Trouble, describe};

/// A Lua script, and the SHA-1 by which `EVALSHA` names it.
#[derive(Debug)]
pub struct Script {
    /// The script.
    pub text: &'static str,
    /// Its SHA-1, in lowercase hexadecimal, as `SCRIPT LOAD` answers it: a constant the
    /// script's owner writes, and checks against a real server in a test.
    pub sha1: &'static [u8; 40],
}

/// One run of a script: which, on which keys, with which arguments.
#[derive(Debug)]
pub struct ScriptCall {
    /// The script.
    pub script: &'static Script,
    /// Its keys (`KEYS`), which a Redis Cluster routes the call by.
    pub keys: Vec<Vec<u8>>,
    /// Its arguments (`ARGV`).
    pub args: Vec<Vec<u8>>,
}

/// Run `call` on `connection` by the script's SHA-1, loading the script if the server does not
/// have it yet.
pub(crate) fn evaluate(connection: &mut Connection, call: &ScriptCall) -> Result<Reply, Trouble> {
    let keys = call.keys.len().to_string();
    let mut command: Vec<&[u8]> = vec![b"EVALSHA", call.script.sha1, keys.as_bytes()];
    command.extend(call.keys.iter().chain(&call.args).map(Vec::as_slice));
    match connection.call(&command)? {
        Reply::Error(error) if error.starts_with("NOSCRIPT") => {
            match connection.call(&[b"SCRIPT", b"LOAD", call.script.text.as_bytes()])? {
                Reply::Bulk(Some(sha)) if sha == call.script.sha1 => connection.call(&command),
                Reply::Error(error) => Ok(Reply::Error(error)),
                other => Err(Trouble::Malformed(format!(
                    "SCRIPT LOAD answered {}, not the script's SHA-1",
                    describe(&other)
                ))),
            }
        }
        reply => Ok(reply),
    }
}
