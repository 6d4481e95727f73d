//! Speaking to a Redis (or Valkey) server: one connection over TCP, TLS or a Unix socket,
//! commands sent as RESP arrays, and every reply read in bounded memory.
//!
//! A server's replies are untrusted input: a reply larger than [`MAX_REPLY`] bytes, an array of
//! more than [`MAX_ITEMS`] items or nested deeper than [`MAX_DEPTH`], or bytes that are not RESP
//! end the call with an error, having read at most a little more than the bound. Every read and
//! write on the connection is bounded in time by the limit it was opened with.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use super::address::{Endpoint, RedisAddress};

/// The most bytes one reply may take.
pub const MAX_REPLY: usize = 64 * 1024;

/// The most items in one array.
pub(crate) const MAX_ITEMS: usize = 64;

/// The deepest nesting of arrays in a reply: a primary's `ROLE` lists its replicas, each an
/// array, in an array.
pub(crate) const MAX_DEPTH: usize = 3;

/// The longest line of a reply (a status, an error, a length).
const MAX_LINE: usize = 4096;

/// A reply, as RESP2 gives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// A simple string: `+OK`.
    Status(String),
    /// An error: `-ERR ...`, `-MOVED ...`.
    Error(String),
    /// An integer: `:1`.
    Integer(i64),
    /// A bulk string; none for the null one.
    Bulk(Option<Vec<u8>>),
    /// An array; none for the null one.
    Array(Option<Vec<Reply>>),
}

/// Why a call did not get a reply.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Trouble {
    /// The connection was closed or reset before any byte of the reply came: the server (or
    /// something between) dropped an idle connection, and the command may be sent again on a
    /// new one.
    #[error("the connection was closed")]
    Dropped,
    /// Reading or writing failed otherwise, a time limit among the ways.
    #[error(transparent)]
    Io(io::Error),
    /// The reply is not RESP, or larger than the bounds.
    #[error("its reply cannot be used: {0}")]
    Malformed(String),
    /// The server answered, but not with what was asked for: why, in words.
    #[error("{0}")]
    Refused(String),
}

impl Trouble {
    /// This trouble, said to be `about` a server (`sentinel HOST:PORT`), its kind kept.
    pub(crate) fn about(self, about: &str) -> Trouble {
        match self {
            Trouble::Io(err) => Trouble::Io(io::Error::new(err.kind(), format!("{about}: {err}"))),
            Trouble::Malformed(why) => Trouble::Malformed(format!("{about}: {why}")),
            other => Trouble::Refused(format!("{about}: {other}")),
        }
    }

    /// Whether a socket's time limit ended the read or the write.
    pub fn is_time_limit(&self) -> bool {
        matches!(self, Trouble::Io(err) if matches!(err.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut))
    }
}

impl From<io::Error> for Trouble {
    fn from(err: io::Error) -> Self {
        match err.kind() {
            io::ErrorKind::UnexpectedEof
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::BrokenPipe => Trouble::Dropped,
            _ => Trouble::Io(err),
        }
    }
}

/// The byte stream under a connection.
enum Stream {
    Net(retry_net::Stream),
    Unix(UnixStream),
}

impl Stream {
    fn socket(&self) -> BorrowedFd<'_> {
        match self {
            Stream::Net(stream) => stream.socket(),
            Stream::Unix(stream) => stream.as_fd(),
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Net(stream) => stream.read(buffer),
            Stream::Unix(stream) => stream.read(buffer),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Net(stream) => stream.write(bytes),
            Stream::Unix(stream) => stream.write(bytes),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Net(stream) => stream.flush(),
            Stream::Unix(stream) => stream.flush(),
        }
    }
}

/// An open connection, logged in and on its database.
pub struct Connection {
    stream: BufReader<Stream>,
}

impl Connection {
    /// Connect to `address`, log in and select its database; every wait bounded by `limit`.
    pub fn open(address: &RedisAddress, limit: Duration) -> Result<Connection, Trouble> {
        let mut connection = Connection::reach(address, limit)?;
        connection.log_in(address)?;
        if let Some(db) = address.db() {
            connection.expect_ok(
                &[b"SELECT", db.to_string().as_bytes()],
                "selecting its database",
            )?;
        }
        Ok(connection)
    }

    /// Connect to `address`, a server's or a sentinel's, without logging in; every wait
    /// bounded by `limit`.
    pub(crate) fn reach(address: &RedisAddress, limit: Duration) -> Result<Connection, Trouble> {
        let stream = match address.endpoint() {
            Endpoint::Unix(path) => {
                let stream = UnixStream::connect(path)?;
                stream.set_read_timeout(Some(limit))?;
                stream.set_write_timeout(Some(limit))?;
                Stream::Unix(stream)
            }
            Endpoint::Tcp { host, port, .. } => Stream::Net(retry_net::Stream::connect(
                host,
                *port,
                address.tls_client(),
                limit,
            )?),
            // The sentinel module asks them where the primary is, and reaches it.
            Endpoint::Sentinel { .. } => {
                return Err(Trouble::Io(io::Error::other(
                    "a sentinel address names no server of its own",
                )));
            }
        };
        Ok(Connection {
            stream: BufReader::with_capacity(16 * 1024, stream),
        })
    }

    /// Log in as `address`'s user with its password, when it has one.
    pub(crate) fn log_in(&mut self, address: &RedisAddress) -> Result<(), Trouble> {
        let Some(password) = address.password() else {
            return Ok(());
        };
        let mut auth: Vec<&[u8]> = vec![b"AUTH"];
        auth.extend(address.user().map(str::as_bytes));
        auth.push(password.reveal().as_bytes());
        self.expect_ok(&auth, "logging in")
    }

    /// Send one command and read its reply.
    pub fn call(&mut self, args: &[&[u8]]) -> Result<Reply, Trouble> {
        let mut command = format!("*{}\r\n", args.len()).into_bytes();
        for arg in args {
            command.extend_from_slice(format!("${}\r\n", arg.len()).as_bytes());
            command.extend_from_slice(arg);
            command.extend_from_slice(b"\r\n");
        }
        let stream = self.stream.get_mut();
        stream.write_all(&command)?;
        stream.flush()?;
        read_reply(&mut self.stream)
    }

    /// Whether the server has closed the connection while it was idle (it has nothing else to
    /// say between replies). Looks without waiting.
    pub(crate) fn is_closed(&self) -> bool {
        use nix::sys::socket::{MsgFlags, recv};
        let mut byte = [0u8; 1];
        let socket = std::os::fd::AsRawFd::as_raw_fd(&self.stream.get_ref().socket());
        match recv(
            socket,
            &mut byte,
            MsgFlags::MSG_PEEK | MsgFlags::MSG_DONTWAIT,
        ) {
            Ok(0) => true,
            Err(errno) => errno != nix::errno::Errno::EWOULDBLOCK,
            // Unread bytes of the transport's own (a TLS session ticket) or the server's.
            Ok(_) => false,
        }
    }

    /// Send a command whose reply must be `OK`.
    pub(crate) fn expect_ok(&mut self, args: &[&[u8]], doing: &str) -> Result<(), Trouble> {
        match self.call(args)? {
            Reply::Status(status) if status == "OK" => Ok(()),
            Reply::Error(error) => Err(Trouble::Io(io::Error::other(format!(
                "{doing}: {}",
                first_words(&error)
            )))),
            other => Err(Trouble::Malformed(format!("{doing}: {}", describe(&other)))),
        }
    }
}

/// Read one reply, at most [`MAX_REPLY`] bytes of it.
pub fn read_reply(input: &mut impl BufRead) -> Result<Reply, Trouble> {
    let mut left = MAX_REPLY;
    let first = read_line(input, &mut left).map_err(|trouble| match trouble {
        // Nothing of the reply came: the command may not have reached the server.
        Trouble::Io(err) if err.kind() == io::ErrorKind::UnexpectedEof => Trouble::Dropped,
        other => other,
    })?;
    parse_reply(first, input, &mut left, 0).map_err(|trouble| match trouble {
        // Part of the reply came: the command did reach the server.
        Trouble::Dropped => Trouble::Io(io::ErrorKind::UnexpectedEof.into()),
        other => other,
    })
}

/// The reply whose first line is `line`, the rest read from `input` within `left` bytes.
fn parse_reply(
    line: Vec<u8>,
    input: &mut impl BufRead,
    left: &mut usize,
    depth: usize,
) -> Result<Reply, Trouble> {
    let malformed = |why: &str| Trouble::Malformed(why.to_string());
    let (&kind, rest) = line
        .split_first()
        .ok_or_else(|| malformed("an empty line"))?;
    let text = || String::from_utf8_lossy(rest).into_owned();
    let number = || -> Result<i64, Trouble> {
        std::str::from_utf8(rest)
            .ok()
            .and_then(|text| text.parse().ok())
            .ok_or_else(|| malformed("a length or integer that is not a number"))
    };
    match kind {
        b'+' => Ok(Reply::Status(text())),
        b'-' => Ok(Reply::Error(text())),
        b':' => Ok(Reply::Integer(number()?)),
        b'$' => match number()? {
            -1 => Ok(Reply::Bulk(None)),
            length => {
                let length = usize::try_from(length)
                    .ok()
                    .filter(|&length| length + 2 <= *left)
                    .ok_or_else(|| malformed("a string larger than its bound"))?;
                let mut bytes = vec![0; length + 2];
                input.read_exact(&mut bytes)?;
                *left -= length + 2;
                if !bytes.ends_with(b"\r\n") {
                    return Err(malformed("a string that does not end its line"));
                }
                bytes.truncate(length);
                Ok(Reply::Bulk(Some(bytes)))
            }
        },
        b'*' => match number()? {
            -1 => Ok(Reply::Array(None)),
            count => {
                let count = usize::try_from(count)
                    .ok()
                    .filter(|&count| count <= MAX_ITEMS)
                    .ok_or_else(|| malformed("an array of more items than its bound"))?;
                if depth >= MAX_DEPTH {
                    return Err(malformed("arrays nested deeper than their bound"));
                }
                let mut items = Vec::with_capacity(count);
                for _ in 0..count {
                    let line = read_line(input, left)?;
                    items.push(parse_reply(line, input, left, depth + 1)?);
                }
                Ok(Reply::Array(Some(items)))
            }
        },
        _ => Err(malformed("a line that is not RESP")),
    }
}

/// One line, without its `\r\n`, of at most [`MAX_LINE`] bytes and `left` all told.
fn read_line(input: &mut impl BufRead, left: &mut usize) -> Result<Vec<u8>, Trouble> {
    let bound = MAX_LINE.min(*left);
    let mut line = Vec::new();
    input.take(bound as u64).read_until(b'\n', &mut line)?;
    *left -= line.len();
    if !line.ends_with(b"\n") {
        return match line.len() {
            0 => Err(Trouble::Io(io::ErrorKind::UnexpectedEof.into())),
            length if length >= bound => {
                Err(Trouble::Malformed("a line longer than its bound".into()))
            }
            _ => Err(Trouble::Io(io::ErrorKind::UnexpectedEof.into())),
        };
    }
    line.pop();
    if line.pop() != Some(b'\r') {
        return Err(Trouble::Malformed(
            "a line that does not end in CRLF".into(),
        ));
    }
    Ok(line)
}

/// The first words of a server's error, which is all a message needs.
pub fn first_words(error: &str) -> String {
    error.chars().take(200).collect()
}

/// A reply, briefly, for a message about an unexpected one.
pub fn describe(reply: &Reply) -> String {
    match reply {
        Reply::Status(status) => format!("status '{}'", first_words(status)),
        Reply::Error(error) => format!("error '{}'", first_words(error)),
        Reply::Integer(number) => format!("integer {number}"),
        Reply::Bulk(None) | Reply::Array(None) => "nil".into(),
        Reply::Bulk(Some(bytes)) => format!("a string of {} bytes", bytes.len()),
        Reply::Array(Some(items)) => format!("an array of {} items", items.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(bytes: &[u8]) -> Result<Reply, Trouble> {
        read_reply(&mut &bytes[..])
    }

    #[test]
    fn reads_what_the_script_answers() {
        assert_eq!(
            parse(b"*3\r\n$7\r\ngranted\r\n$1\r\n0\r\n$0\r\n\r\n").unwrap(),
            Reply::Array(Some(vec![
                Reply::Bulk(Some(b"granted".to_vec())),
                Reply::Bulk(Some(b"0".to_vec())),
                Reply::Bulk(Some(Vec::new())),
            ]))
        );
        assert_eq!(parse(b"+OK\r\n").unwrap(), Reply::Status("OK".into()));
        assert_eq!(
            parse(b"-NOSCRIPT No matching script\r\n").unwrap(),
            Reply::Error("NOSCRIPT No matching script".into())
        );
        assert_eq!(parse(b":-7\r\n").unwrap(), Reply::Integer(-7));
        assert_eq!(parse(b"$-1\r\n").unwrap(), Reply::Bulk(None));
    }

    #[test]
    fn endless_or_nonsense_replies_are_refused_within_bounds() {
        let huge = format!("${}\r\n", u32::MAX);
        for bytes in [
            huge.as_bytes(),
            b"*100000\r\n",
            b"*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n",
            b"?what\r\n",
            b"$3\r\nabcde\r\n",
            b":twelve\r\n",
            b"+OK\n",
        ] {
            let result = parse(bytes);
            assert!(
                matches!(result, Err(Trouble::Malformed(_))),
                "{:?}: {result:?}",
                String::from_utf8_lossy(bytes)
            );
        }
        // An endless line, and an endless array of small strings: refused once past the bound.
        let mut endless = std::io::BufReader::new(std::io::repeat(b'+'));
        assert!(matches!(
            read_reply(&mut endless),
            Err(Trouble::Malformed(_))
        ));
        let item = b"$2000\r\n"
            .iter()
            .copied()
            .chain([b'x'; 2000])
            .chain(*b"\r\n");
        let stream: Vec<u8> = b"*64\r\n"
            .iter()
            .copied()
            .chain(item.cycle().take(64 * 2009))
            .collect();
        assert!(matches!(parse(&stream), Err(Trouble::Malformed(_))));
    }

    #[test]
    fn a_connection_closed_before_the_reply_may_be_tried_again() {
        assert!(matches!(parse(b""), Err(Trouble::Dropped)));
        assert!(matches!(parse(b"*3\r\n$7\r\ngran"), Err(Trouble::Io(_))));
    }
}
