//! An HTTP server of the tests' own on a loopback port, whose answer the request's path
//! chooses, for the presets' tests against the real curl and wget:
//! - `/status/N`: status N with a short body; `/status/N/after/S` adds `Retry-After: S`; either
//!   may go on with a path of any length (`/status/503/repo.git/info/refs`);
//! - `/reset`: reads the request, then resets the connection (and so does `/reset/anything`);
//! - `/silent`: reads the request and never answers, until the server is dropped (and so
//!   `/silent/anything`);
//! - `/flaky/N/K`: status N for the first K requests to that path, then 200.
//!
//! Every request is counted by path, once its body is read, so that a test can say how many
//! attempts reached it: how many requests the server carried out.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

/// The server; it stops serving when dropped (its thread ends with the next connection).
pub(crate) struct FaultyHttp {
    port: u16,
    requests: Arc<Mutex<HashMap<String, usize>>>,
    /// Connections held open without an answer (`/silent`).
    held: Arc<Mutex<Vec<TcpStream>>>,
}

impl FaultyHttp {
    pub(crate) fn start() -> FaultyHttp {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(HashMap::new()));
        let held = Arc::new(Mutex::new(Vec::new()));
        let (counted, holding) = (Arc::clone(&requests), Arc::clone(&held));
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (counted, holding) = (Arc::clone(&counted), Arc::clone(&holding));
                std::thread::spawn(move || answer(stream, &counted, &holding));
            }
        });
        FaultyHttp {
            port,
            requests,
            held,
        }
    }

    /// The URL of `path` on this server.
    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// How many requests reached `path`.
    pub(crate) fn requests(&self, path: &str) -> usize {
        self.requests
            .lock()
            .unwrap()
            .get(path)
            .copied()
            .unwrap_or(0)
    }
}

impl Drop for FaultyHttp {
    fn drop(&mut self) {
        self.held.lock().unwrap().clear();
        // Wake the accepting thread, which then finds nobody to serve for ever.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

fn answer(
    stream: TcpStream,
    requests: &Mutex<HashMap<String, usize>>,
    held: &Mutex<Vec<TcpStream>>,
) {
    let mut reader = BufReader::new(stream);
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    let mut header = String::new();
    let mut body_length = 0;
    while reader.read_line(&mut header).is_ok_and(|read| read > 2) {
        if let Some((name, value)) = header.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            body_length = value.trim().parse().unwrap_or(0);
        }
        header.clear();
    }
    // A body left unread would turn the close into a reset before the client read the answer.
    let mut body = vec![0; body_length.min(1 << 20)];
    if std::io::Read::read_exact(&mut reader, &mut body).is_err() {
        return;
    }
    let path = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or("/")
        .to_string();
    let count = {
        let mut requests = requests.lock().unwrap();
        let count = requests.entry(path.clone()).or_default();
        *count += 1;
        *count
    };
    let mut stream = reader.into_inner();
    let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let (status, retry_after) = match parts.as_slice() {
        ["reset", ..] => return reset(&stream),
        ["silent", ..] => return held.lock().unwrap().push(stream),
        ["status", code, "after", seconds, ..] => (code.parse().unwrap_or(503), Some(*seconds)),
        ["status", code, ..] => (code.parse().unwrap_or(500), None),
        ["flaky", code, times] if count <= times.parse().unwrap_or(0) => {
            (code.parse().unwrap_or(503), None)
        }
        _ => (200, None),
    };
    let after = retry_after.map_or(String::new(), |seconds| {
        format!("Retry-After: {seconds}\r\n")
    });
    let body = format!("status {status}\n");
    let _ = write!(
        stream,
        "HTTP/1.1 {status} Faulty\r\n{after}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
}

/// Reset the connection: close it with SO_LINGER 0, which sends RST.
pub(crate) fn reset(stream: &TcpStream) {
    let linger = nix::sys::socket::sockopt::Linger;
    let value = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    let _ = nix::sys::socket::setsockopt(stream, linger, &value);
}
