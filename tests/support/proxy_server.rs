//! A real `tinyproxy` (Debian's package) on loopback, as the proxy a cron host or CI runner
//! reaches the internet through: started on a free port with a configuration of its own
//! (loopback clients only, every port open to `CONNECT`, Basic credentials when asked for, a
//! log of every request at level Info), stopped when dropped. And a small HTTPS server
//! (`tls_sink.py`, Python's `ssl` with a certificate the test authority signed), so that a
//! request to an `https://` monitor goes through the proxy's tunnel.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use super::harness::{Scratch, require_installed, wait_for};
use super::redis_server::free_port;

/// A running tinyproxy.
pub(crate) struct ProxyServer {
    child: Child,
    port: u16,
    log: PathBuf,
    _scratch: Scratch,
}

impl ProxyServer {
    /// A proxy that asks for `credentials` (`user:password`) when given.
    pub(crate) fn start(credentials: Option<&str>) -> ProxyServer {
        require_installed("tinyproxy");
        let scratch = Scratch::new();
        let port = free_port();
        let log = scratch.path("tinyproxy.log");
        let mut config = format!(
            "Port {port}\nListen 127.0.0.1\nTimeout 30\nLogFile \"{}\"\nLogLevel Info\n\
             MaxClients 50\nAllow 127.0.0.1\nDisableViaHeader Yes\n",
            log.display()
        );
        if let Some((user, password)) = credentials.and_then(|given| given.split_once(':')) {
            config += &format!("BasicAuth {user} {password}\n");
        }
        let path = scratch.path("tinyproxy.conf");
        std::fs::write(&path, config).unwrap();
        let child = Command::new("tinyproxy")
            .args(["-d", "-c"])
            .arg(&path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("tinyproxy starts");
        wait_for("tinyproxy to listen", || {
            std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
        });
        ProxyServer {
            child,
            port,
            log,
            _scratch: scratch,
        }
    }

    /// Its URL, with `credentials` in it when given.
    pub(crate) fn url(&self, credentials: Option<&str>) -> String {
        match credentials {
            Some(credentials) => format!("http://{credentials}@127.0.0.1:{}", self.port),
            None => format!("http://127.0.0.1:{}", self.port),
        }
    }

    /// What it logged.
    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for ProxyServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The HTTPS server, for a build with TLS.
#[cfg(feature = "tls")]
pub(crate) mod sink {
    use std::io::{BufRead, BufReader};
    use std::path::PathBuf;
    use std::process::{Child, Command, Stdio};

    use super::super::harness::Scratch;
    use super::super::redis_server::make_certificates;

    /// A running HTTPS server that keeps each request's line, and answers `200 OK`.
    pub(crate) struct TlsSink {
        child: Child,
        port: u16,
        requests: PathBuf,
        scratch: Scratch,
    }

    impl TlsSink {
        /// A server with a certificate for 127.0.0.1 that the test authority signed.
        pub(crate) fn start() -> TlsSink {
            let scratch = Scratch::new();
            make_certificates(&scratch.path(""));
            let requests = scratch.path("requests");
            let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/support/tls_sink.py");
            let mut child = Command::new("python3")
                .arg(script)
                .args([
                    scratch.path("server.crt"),
                    scratch.path("server.key"),
                    requests.clone(),
                ])
                .stdout(Stdio::piped())
                .spawn()
                .expect("python3 runs the HTTPS server");
            let mut line = String::new();
            BufReader::new(child.stdout.take().unwrap())
                .read_line(&mut line)
                .unwrap();
            let port = line.trim().parse().expect("the HTTPS server's port");
            TlsSink {
                child,
                port,
                requests,
                scratch,
            }
        }

        /// Its URL for `path`.
        pub(crate) fn url(&self, path: &str) -> String {
            format!("https://127.0.0.1:{}{path}", self.port)
        }

        /// The authority that signed its certificate, for `SSL_CERT_FILE`.
        pub(crate) fn authority(&self) -> PathBuf {
            self.scratch.path("ca.crt")
        }

        /// Each request line it got.
        pub(crate) fn requests(&self) -> Vec<String> {
            std::fs::read_to_string(&self.requests)
                .unwrap_or_default()
                .lines()
                .map(str::to_string)
                .collect()
        }
    }

    impl Drop for TlsSink {
        fn drop(&mut self) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
