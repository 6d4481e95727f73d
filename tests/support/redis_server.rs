//! Real `redis-server`s for the tests of the shared budget store: each started on a private
//! Unix socket or a random loopback port (with an ACL user, or TLS, when asked), in a temporary
//! directory that holds its files, and killed when dropped. Never a mock: the store's Lua script
//! runs on the server the users run.
//!
//! The unit tests of `src/budget/redis.rs` include this file too, so it uses nothing but std,
//! libc and tempfile. A missing `redis-server` (or `openssl`, for TLS) fails the test with the
//! command that installs it.

use std::io::Read;
use std::net::{TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// How long a server may take to start listening.
const STARTUP: Duration = Duration::from_secs(10);

/// The ACL rule docs/budget.md gives for the store's user, tested here to be enough.
pub(crate) const STORE_ACL: [&str; 9] = [
    "~retry:budget:*",
    "-@all",
    "+evalsha",
    "+script|load",
    "+hmget",
    "+hset",
    "+hdel",
    "+pexpire",
    "+time",
];

/// A running `redis-server`, killed when dropped.
pub(crate) struct RedisServer {
    child: Child,
    /// The server's files: its socket, log, and certificates.
    dir: tempfile::TempDir,
    url: String,
}

/// How a server listens.
enum Listener {
    /// On a Unix socket in its directory, and no TCP port.
    Socket,
    /// On a loopback TCP port.
    Loopback,
    /// On a loopback TCP port, with TLS only.
    Tls,
    /// On a loopback TCP port, with TLS only, its certificate `name.crt` (and key) in `certs`,
    /// signed by `certs/ca.crt`.
    TlsWith { certs: PathBuf, name: String },
}

impl RedisServer {
    /// A server on a Unix socket in a temporary directory (`--port 0`): `redis+unix://...`.
    pub(crate) fn on_socket() -> RedisServer {
        RedisServer::start(Listener::Socket, &[])
    }

    /// A server on a Unix socket whose default user needs `password`; the URL holds none.
    pub(crate) fn on_socket_requiring(password: &str) -> RedisServer {
        RedisServer::start(Listener::Socket, &["--requirepass".into(), password.into()])
    }

    /// A server on a random loopback port: `redis://127.0.0.1:PORT`.
    pub(crate) fn on_loopback() -> RedisServer {
        RedisServer::start(Listener::Loopback, &[])
    }

    /// A server on a random loopback port, started with `extra` arguments too (a cluster's
    /// node, a replica).
    pub(crate) fn on_loopback_with(extra: &[String]) -> RedisServer {
        RedisServer::start(Listener::Loopback, extra)
    }

    /// The loopback port a server on one listens on.
    pub(crate) fn port(&self) -> u16 {
        let port = self.url.rsplit(':').next().unwrap_or_default();
        port.parse()
            .unwrap_or_else(|_| panic!("{} has no port", self.url))
    }

    /// A server on a random loopback port whose only user is `user` with `password`, allowed
    /// only what [`STORE_ACL`] allows; the URL holds neither.
    pub(crate) fn with_user(user: &str, password: &str) -> RedisServer {
        let mut rule = vec![user.to_string(), "on".into(), format!(">{password}")];
        rule.extend(STORE_ACL.iter().map(|word| word.to_string()));
        let mut args = vec!["--user".to_string()];
        args.extend(rule);
        args.extend(["--user", "default", "off"].map(String::from));
        RedisServer::start(Listener::Loopback, &args)
    }

    /// A server on a random loopback port speaking TLS only (`rediss://127.0.0.1:PORT`), with a
    /// certificate for 127.0.0.1 signed by a certificate authority made for it: see
    /// [`RedisServer::authority`].
    pub(crate) fn with_tls() -> RedisServer {
        RedisServer::start(Listener::Tls, &[])
    }

    /// A server on a random loopback port speaking TLS only, with the certificate `name` that
    /// [`make_server_certificate`] made in `certs`, and `extra` arguments.
    pub(crate) fn with_tls_from(certs: &Path, name: &str, extra: &[String]) -> RedisServer {
        let listener = Listener::TlsWith {
            certs: certs.to_path_buf(),
            name: name.to_string(),
        };
        RedisServer::start(listener, extra)
    }

    /// The server's URL, without any password.
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// The server's URL with a call limit no load on a test machine reaches (`?timeout=10s`),
    /// for the tests whose subject is not the limit: the default 500ms, ample for a server on
    /// loopback, can be missed when every core is busy with other tests.
    pub(crate) fn patient_url(&self) -> String {
        format!("{}?timeout=10s", self.url)
    }

    /// The directory of a TLS server's certificates, the client's among them.
    pub(crate) fn certificates(&self) -> &Path {
        self.dir.path()
    }

    /// Kill the server now, as a crash would.
    pub(crate) fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    fn start(listener: Listener, extra: &[String]) -> RedisServer {
        let dir = tempfile::tempdir().expect("a temporary directory for redis-server");
        if let Listener::Tls = listener {
            make_certificates(dir.path());
        }
        // A port picked as free may be taken before the server binds it: try again then.
        for _ in 0..5 {
            let (args, url) = listening(&listener, dir.path());
            let mut child = Command::new("redis-server")
                .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
                .arg("--dir")
                .arg(dir.path())
                .arg("--logfile")
                .arg(dir.path().join("redis.log"))
                .args(&args)
                .args(extra)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .spawn()
                .unwrap_or_else(|err| {
                    panic!(
                        "cannot start redis-server ({err}); the budget store tests need it: \
                         apt-get install -y redis-server"
                    )
                });
            if await_listening(&mut child, &listener, dir.path(), &url) {
                return RedisServer { child, dir, url };
            }
        }
        let mut log = String::new();
        let _ = std::fs::File::open(dir.path().join("redis.log"))
            .and_then(|mut file| file.read_to_string(&mut log));
        panic!("redis-server did not start listening; its log:\n{log}");
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The arguments that make a server listen as `listener` says, and its URL.
fn listening(listener: &Listener, dir: &Path) -> (Vec<String>, String) {
    let loopback = ["--bind".to_string(), "127.0.0.1".into()];
    match listener {
        Listener::Socket => {
            let socket = dir.join("redis.sock").display().to_string();
            let args = vec![
                "--port".into(),
                "0".into(),
                "--unixsocket".into(),
                socket.clone(),
            ];
            (args, format!("redis+unix://{socket}"))
        }
        Listener::Loopback => {
            let port = free_port();
            let mut args = vec!["--port".into(), port.to_string()];
            args.extend(loopback);
            (args, format!("redis://127.0.0.1:{port}"))
        }
        Listener::Tls | Listener::TlsWith { .. } => {
            let (certs, name) = match listener {
                Listener::TlsWith { certs, name } => (certs.as_path(), name.as_str()),
                _ => (dir, "server"),
            };
            let port = free_port();
            let file = |name: String| certs.join(name).display().to_string();
            let mut args = vec!["--port".into(), "0".into(), "--tls-port".into()];
            args.push(port.to_string());
            for (flag, file_name) in [
                ("--tls-cert-file", format!("{name}.crt")),
                ("--tls-key-file", format!("{name}.key")),
                ("--tls-ca-cert-file", "ca.crt".to_string()),
            ] {
                args.extend([flag.to_string(), file(file_name)]);
            }
            // A stock server's default, said aloud: its clients present a certificate.
            args.extend(["--tls-auth-clients".into(), "yes".into()]);
            args.extend(loopback);
            (args, format!("rediss://127.0.0.1:{port}"))
        }
    }
}

/// A loopback port nobody listens on just now, for a redis-server: below the range the kernel
/// hands out for a bind to port 0 (32768 and up on Linux), and apart from the range the other
/// tests' servers are given (20000 and up), so that no other test's listener can take it
/// between the pick and the server's bind; unique within this run of the tests.
pub(crate) fn free_port() -> u16 {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let base = std::process::id() % 1_000 * 10;
    loop {
        let next = NEXT.fetch_add(1, Ordering::SeqCst);
        let port = 10_000 + ((base + next) % 10_000) as u16;
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

/// Wait until the server accepts connections (true), or has exited (false).
fn await_listening(child: &mut Child, listener: &Listener, dir: &Path, url: &str) -> bool {
    let start = Instant::now();
    loop {
        if child.try_wait().expect("wait for redis-server").is_some() {
            return false;
        }
        let accepted = match listener {
            Listener::Socket => UnixStream::connect(dir.join("redis.sock")).is_ok(),
            Listener::Loopback | Listener::Tls | Listener::TlsWith { .. } => {
                let address = url.rsplit('/').next().unwrap_or_default();
                TcpStream::connect(address).is_ok()
            }
        };
        if accepted {
            return true;
        }
        assert!(
            start.elapsed() < STARTUP,
            "redis-server did not listen within {STARTUP:?}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A certificate authority (`ca.crt`), a server certificate for 127.0.0.1 signed by it
/// (`server.crt`, `server.key`), and a client certificate (`client.crt`, `client.key`), made
/// with `openssl` in `dir`.
pub(crate) fn make_certificates(dir: &Path) {
    make_authority(dir);
    make_server_certificate(dir, "server", "IP:127.0.0.1,DNS:localhost");
    make_client_certificate(dir);
}

/// A client certificate `client.crt` signed by the authority in `dir`, and its key
/// `client.key`, readable by its owner alone.
pub(crate) fn make_client_certificate(dir: &Path) {
    let mut request = words(&format!("req {NEW_KEY} -keyout client.key -out client.csr"));
    request.extend(["-subj".into(), "/CN=retry test client".into()]);
    openssl(dir, &request);
    std::fs::write(dir.join("client.ext"), "extendedKeyUsage=clientAuth\n")
        .expect("write the certificate's extensions");
    openssl(
        dir,
        &words(
            "x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 1 \
             -extfile client.ext -out client.crt",
        ),
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        dir.join("client.key"),
        std::fs::Permissions::from_mode(0o600),
    )
    .expect("make the client's key its owner's alone");
}

/// The query keys that give a store the authority and the client certificate made in `dir`
/// (`make_certificates`): `ca_file=...&cert_file=...&key_file=...`.
pub(crate) fn tls_files_query(dir: &Path) -> String {
    let file = |name: &str| dir.join(name).display().to_string();
    format!(
        "ca_file={}&cert_file={}&key_file={}",
        file("ca.crt"),
        file("client.crt"),
        file("client.key")
    )
}

/// Run `openssl` with `args` in `dir`.
fn openssl(dir: &Path, args: &[String]) {
    let output = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|err| {
            panic!("cannot run openssl ({err}); the TLS test needs it: apt-get install -y openssl")
        });
    assert!(
        output.status.success(),
        "openssl {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The words of `line`, as arguments.
fn words(line: &str) -> Vec<String> {
    line.split_whitespace().map(String::from).collect()
}

/// The key options of a new P-256 key, unencrypted.
const NEW_KEY: &str = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";

/// A certificate authority, `ca.crt` and `ca.key`, in `dir`.
pub(crate) fn make_authority(dir: &Path) {
    let mut authority = words(&format!(
        "req -x509 -days 1 {NEW_KEY} -keyout ca.key -out ca.crt"
    ));
    authority.extend(["-subj".into(), "/CN=retry test authority".into()]);
    openssl(dir, &authority);
}

/// A server certificate `name.crt` (and `name.key`) for the names `alt_names` (openssl's
/// `subjectAltName`, e.g. `IP:127.0.0.1`), signed by the authority in `dir`.
pub(crate) fn make_server_certificate(dir: &Path, name: &str, alt_names: &str) {
    let mut request = words(&format!("req {NEW_KEY} -keyout {name}.key -out {name}.csr"));
    request.extend(["-subj".into(), "/CN=retry test server".into()]);
    openssl(dir, &request);
    let extensions = format!("{name}.ext");
    std::fs::write(
        dir.join(&extensions),
        format!("subjectAltName={alt_names}\n"),
    )
    .expect("write the certificate's extensions");
    openssl(
        dir,
        &words(&format!(
            "x509 -req -in {name}.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 1 \
             -extfile {extensions} -out {name}.crt"
        )),
    );
}
