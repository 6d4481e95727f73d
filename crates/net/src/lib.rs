//! retry's connections to other machines, for the budget's Redis store and for the monitors and
//! trace receivers a run reports to: a TCP connection made within a time limit, every read and
//! write on it bounded by the same limit, optionally under TLS whose server certificate is
//! checked against the system's certificate authorities (or the ones a [`TlsClient`] names
//! instead), presenting a client certificate to a server that asks for one when the
//! [`TlsClient`] has one. What is said over a connection belongs to its user (`retry-budget`'s
//! RESP, the binary's HTTP); this crate only opens it.

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
    /// later read and write by `limit` too; under TLS for `host` as `tls` says, when given.
    pub fn connect(
        host: &str,
        port: u16,
        tls: Option<&TlsClient>,
        limit: Duration,
    ) -> io::Result<Stream> {
        Stream::plain(host, port, limit)?.over(host, tls)
    }

    /// This plain connection (to a proxy, through which a tunnel to `host` was opened, say),
    /// under TLS for `host` as `tls` says, when given.
    pub fn over(self, host: &str, tls: Option<&TlsClient>) -> io::Result<Stream> {
        match (self, tls) {
            (Stream::Tcp(stream), Some(tls)) => secure(stream, host, tls),
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

/// What a TLS client trusts and presents: the system's certificate authorities, or the ones
/// given instead (a private CA's); and, for a server that asks for one, a client certificate
/// and its key. All PEM, read by the caller (this crate opens no file); the key never shows,
/// even in a debug print.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct TlsClient {
    /// The certificates of the authorities to trust instead of the system's.
    authorities: Option<Vec<u8>>,
    /// The certificate chain to present, and its private key.
    identity: Option<(Vec<u8>, Vec<u8>)>,
}

impl TlsClient {
    /// Trust the system's authorities and present nothing: what a browser does.
    pub const SYSTEM: TlsClient = TlsClient {
        authorities: None,
        identity: None,
    };

    /// Trust only the authorities in `authorities` (PEM), when given; present `identity` (a PEM
    /// certificate chain and a PEM private key), when given. The error says which part holds
    /// nothing usable, and why.
    pub fn new(
        authorities: Option<Vec<u8>>,
        identity: Option<(Vec<u8>, Vec<u8>)>,
    ) -> Result<TlsClient, TlsPartError> {
        let client = TlsClient {
            authorities,
            identity,
        };
        client.check()?;
        Ok(client)
    }

    /// Whether it presents a client certificate.
    pub fn has_identity(&self) -> bool {
        self.identity.is_some()
    }
}

impl std::fmt::Debug for TlsClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsClient")
            .field("authorities", &self.authorities.as_ref().map(Vec::len))
            .field("identity", &self.identity.as_ref().map(|_| "***"))
            .finish()
    }
}

/// The part of a [`TlsClient`] that holds nothing usable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TlsPart {
    /// The authorities' certificates.
    Authorities,
    /// The client's certificate chain.
    Certificate,
    /// The client's private key.
    Key,
}

/// A part of a [`TlsClient`] that holds nothing usable, and why: said as its reason is, with
/// the reason's cause (the PEM parser's or rustls's error) as its own.
#[derive(Debug)]
pub struct TlsPartError {
    /// Which part.
    pub part: TlsPart,
    /// Why.
    pub why: Unusable,
}

impl std::fmt::Display for TlsPartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.why.fmt(f)
    }
}

impl std::error::Error for TlsPartError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.why.source()
    }
}

/// An error of the TLS library (rustls's, its PEM parser's), kept whole as a cause. Its `Debug`
/// is its words: as a cause it is a trait object, whose table would otherwise hold the
/// library's derived `Debug` of its whole error tree, code that every start of the static
/// binary paid for in resident memory (230 KiB more, measured with `/usr/bin/time -f %M` over
/// 41 runs of `retry -- true`) though no run prints it.
pub struct Library<E>(pub E);

impl<E: std::fmt::Display> std::fmt::Debug for Library<E> {
    #[cold]
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl<E: std::fmt::Display> std::fmt::Display for Library<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl<E: std::fmt::Display> std::error::Error for Library<E> {}

/// Why a part of a [`TlsClient`] holds nothing usable.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Unusable {
    /// Its text is not PEM.
    #[cfg(feature = "tls")]
    #[error("it is not PEM")]
    NotPem(#[source] Library<rustls::pki_types::pem::Error>),
    /// It holds no certificate.
    #[error("it holds no PEM CERTIFICATE")]
    NoCertificate,
    /// It holds no private key rustls can read.
    #[cfg(feature = "tls")]
    #[error("it holds no unencrypted PEM private key")]
    NoPrivateKey(#[source] Library<rustls::pki_types::pem::Error>),
    /// None of its certificates, this many, can be an authority.
    #[error("none of its {0} certificates can be used")]
    NoneUsable(usize),
    /// rustls has no protocol version to speak with these parts.
    #[cfg(feature = "tls")]
    #[error("no TLS version can be spoken with it")]
    NoProtocol(#[source] Library<rustls::Error>),
    /// The key is not the certificate's.
    #[error("it is not the key of the client certificate given with it")]
    NotTheKey,
    /// The certificate cannot be presented.
    #[cfg(feature = "tls")]
    #[error("it cannot be presented as a client's certificate")]
    NotPresentable(#[source] Library<rustls::Error>),
    /// This build has no TLS.
    #[error("this retry was built without TLS")]
    NoTls,
}

#[cfg(feature = "tls")]
mod pem {
    //! The PEM parts of a [`TlsClient`](super::TlsClient), parsed by rustls's own parser.

    use super::{Library, TlsPart, TlsPartError, Unusable};
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};

    /// Every certificate in `pem`; at least one.
    pub(super) fn certificates(
        pem: &[u8],
        part: TlsPart,
    ) -> Result<Vec<CertificateDer<'static>>, TlsPartError> {
        let unusable = |why| TlsPartError { part, why };
        let certificates = CertificateDer::pem_slice_iter(pem)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|err| unusable(Unusable::NotPem(Library(err))))?;
        match certificates.is_empty() {
            true => Err(unusable(Unusable::NoCertificate)),
            false => Ok(certificates),
        }
    }

    /// The private key in `pem`: PKCS#8, PKCS#1 (RSA) or SEC1 (EC), unencrypted.
    pub(super) fn private_key(pem: &[u8]) -> Result<PrivateKeyDer<'static>, TlsPartError> {
        PrivateKeyDer::from_pem_slice(pem).map_err(|err| TlsPartError {
            part: TlsPart::Key,
            why: Unusable::NoPrivateKey(Library(err)),
        })
    }
}

#[cfg(feature = "tls")]
impl TlsClient {
    /// Whether every part given parses, and the key is the certificate's.
    fn check(&self) -> Result<(), TlsPartError> {
        self.config().map(drop)
    }

    /// The configuration of a connection as this client.
    fn config(&self) -> Result<rustls::ClientConfig, TlsPartError> {
        use std::sync::Arc;
        let mut roots = rustls::RootCertStore::empty();
        match &self.authorities {
            Some(pem) => {
                let certificates = pem::certificates(pem, TlsPart::Authorities)?;
                let (_, ignored) = roots.add_parsable_certificates(certificates);
                if roots.is_empty() {
                    return Err(TlsPartError {
                        part: TlsPart::Authorities,
                        why: Unusable::NoneUsable(ignored),
                    });
                }
            }
            None => {
                roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
            }
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|err| TlsPartError {
                part: TlsPart::Authorities,
                why: Unusable::NoProtocol(Library(err)),
            })?
            .with_root_certificates(roots);
        let Some((chain, key)) = &self.identity else {
            return Ok(builder.with_no_client_auth());
        };
        let chain = pem::certificates(chain, TlsPart::Certificate)?;
        builder
            .with_client_auth_cert(chain, pem::private_key(key)?)
            .map_err(|err| match err {
                rustls::Error::InconsistentKeys(_) => TlsPartError {
                    part: TlsPart::Key,
                    why: Unusable::NotTheKey,
                },
                err => TlsPartError {
                    part: TlsPart::Certificate,
                    why: Unusable::NotPresentable(Library(err)),
                },
            })
    }
}

#[cfg(not(feature = "tls"))]
impl TlsClient {
    /// Without TLS built in, nothing can use it.
    fn check(&self) -> Result<(), TlsPartError> {
        Err(TlsPartError {
            part: TlsPart::Authorities,
            why: Unusable::NoTls,
        })
    }
}

/// `stream` under TLS for `host`, as `client` says: the server's certificate checked against
/// the system's certificate authorities (`SSL_CERT_FILE` and `SSL_CERT_DIR` name others) or the
/// client's own, the client's certificate presented when it has one.
#[cfg(feature = "tls")]
fn secure(stream: TcpStream, host: &str, client: &TlsClient) -> io::Result<Stream> {
    use std::sync::Arc;
    let tls = |why: String| io::Error::other(format!("TLS: {why}"));
    let config = client
        .config()
        .map_err(|err| match std::error::Error::source(&err) {
            Some(cause) => tls(format!("{err}: {cause}")),
            None => tls(err.to_string()),
        })?;
    let name = rustls::pki_types::ServerName::try_from(host.to_string())
        .map_err(|err| tls(format!("{host}: {err}")))?;
    let connection = rustls::ClientConnection::new(Arc::new(config), name)
        .map_err(|err| tls(err.to_string()))?;
    Ok(Stream::Tls(Box::new(rustls::StreamOwned::new(
        connection, stream,
    ))))
}

#[cfg(not(feature = "tls"))]
fn secure(_stream: TcpStream, _host: &str, _client: &TlsClient) -> io::Result<Stream> {
    Err(io::Error::other("this retry was built without TLS"))
}
