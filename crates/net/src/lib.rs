//! retry's connections to other machines, for the budget's Redis store and for the monitors and
//! trace receivers a run reports to: a TCP connection made within a time limit, every read and
//! write on it bounded by the same limit, optionally under TLS whose server certificate is
//! checked against the system's certificate authorities. What is said over a connection belongs
//! to its user (`retry-budget`'s RESP, the binary's HTTP); this crate only opens it.

#![forbid(unsafe_code)]

use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::fd::{AsFd, BorrowedFd};
use std::time::Duration;

/// An open connection, plain or under TLS.
pub enum Stream {
    /// Plain TCP.
    Tcp(TcpStream),
    /// TLS over TCP.
    #[cfg(feature = "tls")]
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, TcpStream>>),
}

impl Stream {
    /// Connect to `host`:`port` within `limit`, trying each of its addresses, and bound every
    /// later read and write by `limit` too; under TLS for `host` when `tls` is set.
    pub fn connect(host: &str, port: u16, tls: bool, limit: Duration) -> io::Result<Stream> {
        Stream::plain(host, port, limit)?.over(host, tls)
    }

    /// This plain connection (to a proxy, through which a tunnel to `host` was opened, say),
    /// under TLS for `host` when `tls` is set.
    pub fn over(self, host: &str, tls: bool) -> io::Result<Stream> {
        match (self, tls) {
            (Stream::Tcp(stream), true) => secure(stream, host),
            (stream, _) => Ok(stream),
        }
    }

    /// Bound each later read and write by `left` (at least a millisecond): what a caller with a
    /// deadline for the whole exchange sets before each step.
    pub fn set_time_left(&self, left: Duration) -> io::Result<()> {
        #[cfg_attr(not(feature = "tls"), expect(clippy::infallible_destructuring_match))]
        let socket = match self {
            Stream::Tcp(stream) => stream,
            #[cfg(feature = "tls")]
            Stream::Tls(stream) => &stream.sock,
        };
        let left = left.max(Duration::from_millis(1));
        socket.set_read_timeout(Some(left))?;
        socket.set_write_timeout(Some(left))
    }

    /// The socket under the connection.
    pub fn socket(&self) -> BorrowedFd<'_> {
        match self {
            Stream::Tcp(stream) => stream.as_fd(),
            #[cfg(feature = "tls")]
            Stream::Tls(stream) => stream.sock.as_fd(),
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(stream) => stream.read(buffer),
            #[cfg(feature = "tls")]
            Stream::Tls(stream) => stream.read(buffer),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(stream) => stream.write(bytes),
            #[cfg(feature = "tls")]
            Stream::Tls(stream) => stream.write(bytes),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Tcp(stream) => stream.flush(),
            #[cfg(feature = "tls")]
            Stream::Tls(stream) => stream.flush(),
        }
    }
}

impl Stream {
    /// A plain connection to `host`:`port`, trying each of its addresses within `limit`, every
    /// later read and write bounded by `limit` too.
    fn plain(host: &str, port: u16, limit: Duration) -> io::Result<Stream> {
        let stream = connect_tcp(host, port, limit)?;
        stream.set_read_timeout(Some(limit))?;
        stream.set_write_timeout(Some(limit))?;
        stream.set_nodelay(true)?;
        Ok(Stream::Tcp(stream))
    }
}

/// A TCP connection to `host`:`port`, trying each of its addresses within `limit`.
fn connect_tcp(host: &str, port: u16, limit: Duration) -> io::Result<TcpStream> {
    let mut last = io::Error::new(io::ErrorKind::NotFound, format!("{host} has no address"));
    for address in (host, port).to_socket_addrs()? {
        match TcpStream::connect_timeout(&address, limit) {
            Ok(stream) => return Ok(stream),
            Err(err) => last = err,
        }
    }
    Err(last)
}

/// `stream` under TLS, checking the server's certificate for `host` against the system's
/// certificate authorities (`SSL_CERT_FILE` and `SSL_CERT_DIR` name others).
#[cfg(feature = "tls")]
fn secure(stream: TcpStream, host: &str) -> io::Result<Stream> {
    use std::sync::Arc;
    let tls = |why: String| io::Error::other(format!("TLS: {why}"));
    let mut roots = rustls::RootCertStore::empty();
    roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|err| tls(err.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    let name = rustls::pki_types::ServerName::try_from(host.to_string())
        .map_err(|err| tls(format!("{host}: {err}")))?;
    let connection = rustls::ClientConnection::new(Arc::new(config), name)
        .map_err(|err| tls(err.to_string()))?;
    Ok(Stream::Tls(Box::new(rustls::StreamOwned::new(
        connection, stream,
    ))))
}

#[cfg(not(feature = "tls"))]
fn secure(_stream: TcpStream, _host: &str) -> io::Result<Stream> {
    Err(io::Error::other("this retry was built without TLS"))
}
