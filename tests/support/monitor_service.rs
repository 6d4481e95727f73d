//! A stand-in for a hosted heartbeat monitor (healthchecks.io, Cronitor, Sentry, Better Stack),
//! on loopback: it keeps every request it gets (its method, target and body) and answers each as
//! the test says, by its number from 0: a status line with headers, or no answer at all (a
//! monitor that hangs). Hand-written, as `http_service` is: a request's head and a body of the
//! length it gives are all it reads.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One request the monitor got.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Received {
    pub(crate) method: String,
    /// The path and query.
    pub(crate) target: String,
    pub(crate) body: String,
}

/// How the monitor answers one request.
pub(crate) enum Answer {
    /// This status line, then these header lines (e.g. `"200 OK"`, `["Ping-Body-Limit: 100"]`).
    With(&'static str, Vec<&'static str>),
    /// Never: it keeps the connection open and says nothing.
    Hang,
}

/// A running monitor; it stops with the test process.
pub(crate) struct MonitorService {
    port: u16,
    received: Arc<Mutex<Vec<Received>>>,
}

impl MonitorService {
    /// A monitor that answers request `n` as `answer(n)` says.
    pub(crate) fn start(answer: impl Fn(usize) -> Answer + Send + Sync + 'static) -> Self {
        let listener = TcpListener::bind(("127.0.0.1", 0)).expect("a loopback port");
        let port = listener.local_addr().unwrap().port();
        let received = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&received);
        let answer = Arc::new(answer);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (kept, answer) = (Arc::clone(&kept), Arc::clone(&answer));
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().unwrap());
                    let Some(request) = read_request(&mut reader) else {
                        return;
                    };
                    let number = {
                        let mut kept = kept.lock().unwrap();
                        kept.push(request);
                        kept.len() - 1
                    };
                    match answer(number) {
                        Answer::With(status, headers) => {
                            let mut reply = format!("HTTP/1.1 {status}\r\n");
                            for header in headers {
                                reply += &format!("{header}\r\n");
                            }
                            reply += "Content-Length: 2\r\nConnection: close\r\n\r\nOK";
                            let _ = (&stream).write_all(reply.as_bytes());
                        }
                        Answer::Hang => std::thread::sleep(Duration::from_secs(300)),
                    }
                });
            }
        });
        MonitorService { port, received }
    }

    /// A monitor that answers every request `200 OK`.
    pub(crate) fn answering() -> Self {
        MonitorService::start(|_| Answer::With("200 OK", vec![]))
    }

    /// The monitor's URL for `path` (which starts with `/`).
    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// The requests it has had, in order.
    pub(crate) fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    /// Each request it has had, as `METHOD TARGET`.
    pub(crate) fn requests(&self) -> Vec<String> {
        let received = self.received();
        received
            .iter()
            .map(|request| format!("{} {}", request.method, request.target))
            .collect()
    }
}

/// One request from `reader`: its line, its headers, and the body its `Content-Length` gives.
fn read_request(reader: &mut impl BufRead) -> Option<Received> {
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut words = line.split_whitespace();
    let (method, target) = (words.next()?.to_string(), words.next()?.to_string());
    let mut length = 0;
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).ok()?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().ok()?;
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Received {
        method,
        target,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}
