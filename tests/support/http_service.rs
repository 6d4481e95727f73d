//! A small HTTP service on loopback for the tests that need a real server a command talks to:
//! it answers each request as the test says (by its number, from 0), closes the connection, and
//! keeps when each request arrived. Hand-written rather than a crate: a status line and headers
//! are all it ever answers.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// A running service; it stops with the test process.
pub(crate) struct HttpService {
    port: u16,
    arrivals: Arc<Mutex<Vec<Instant>>>,
}

impl HttpService {
    /// Answer request `n` with the status line and headers `answer(n)` gives (e.g. `"503
    /// Service Unavailable"`, or `"429 Too Many Requests\r\nRetry-After: 5"`) and no body.
    pub(crate) fn start(answer: impl Fn(usize) -> String + Send + 'static) -> HttpService {
        let listener = TcpListener::bind(("127.0.0.1", 0)).expect("a loopback port");
        let port = listener.local_addr().unwrap().port();
        let arrivals = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&arrivals);
        std::thread::spawn(move || {
            for mut stream in listener.incoming().flatten() {
                let mut head = Vec::new();
                let mut byte = [0; 1];
                while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
                    head.push(byte[0]);
                }
                let number = {
                    let mut seen = seen.lock().unwrap();
                    seen.push(Instant::now());
                    seen.len() - 1
                };
                let reply = format!(
                    "HTTP/1.1 {}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                    answer(number)
                );
                let _ = stream.write_all(reply.as_bytes());
            }
        });
        HttpService { port, arrivals }
    }

    /// The service's root URL.
    pub(crate) fn url(&self) -> String {
        format!("http://127.0.0.1:{}/", self.port)
    }

    /// How many requests arrived so far.
    pub(crate) fn requests(&self) -> usize {
        self.arrivals.lock().unwrap().len()
    }

    /// When each request arrived, in order.
    pub(crate) fn arrivals(&self) -> Vec<Instant> {
        self.arrivals.lock().unwrap().clone()
    }
}
