//! A stand-in for a hosted heartbeat monitor (healthchecks.io, Cronitor, Sentry, Better Stack),
//! on loopback: it keeps every request it gets (its method, target and body) and answers each as
//! the test says, by its number from 0: a status line with headers, or no answer at all (a
//! monitor that hangs). Hand-written, as `http_service` is: a request's head and a body of the
//! length it gives are all it reads.
//!
//! Two of the servers' own behaviours can be asked for, as their code has them: a Healthchecks
//! check ([`Check`]: `hc/api/views.py` and `models.py`), which stores a ping that is not a
//! `POST` as ignored when the check takes only `POST`, keeps the first `PING_BODY_LIMIT` bytes
//! of a body (announced in every answer), and whose timer runs from the last success or
//! failure, never a `/log`; and Sentry's check-ins ([`CheckIns`]: Relay and the monitors'
//! consumer), each looked up by its id alone, refused when it belongs to another monitor or has
//! already finished.

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
#[derive(Clone)]
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

    /// A Healthchecks server that announces `limit` (its `PING_BODY_LIMIT`) in every answer.
    pub(crate) fn healthchecks(limit: &'static str) -> Self {
        let header: &'static str = Box::leak(format!("Ping-Body-Limit: {limit}").into_boxed_str());
        MonitorService::start(move |_| Answer::With("200 OK", vec![header]))
    }

    /// What a Healthchecks check made of the requests it got, as its server does: taking only
    /// `POST` when `post_only`, keeping the first `limit` bytes of each body.
    pub(crate) fn check(&self, post_only: bool, limit: usize) -> Check {
        let mut check = Check::default();
        for request in self.received() {
            check.ping(&request, post_only, limit);
        }
        check
    }

    /// What Sentry made of the check-ins it got: each looked up by its id alone.
    pub(crate) fn check_ins(&self) -> CheckIns {
        let mut check_ins = CheckIns::default();
        for request in self.received() {
            check_ins.check_in(&request);
        }
        check_ins
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

/// A Healthchecks check, as its server keeps it from the pings it got.
#[derive(Debug, Default)]
pub(crate) struct Check {
    /// Each ping as the server stores it: its kind (`start`, `success`, `fail`, `log`, or
    /// `ignored`), its `rid`, and the body it kept.
    pub(crate) pings: Vec<(String, String, String)>,
    /// `new`, `up`, `down`, as the check shows it.
    pub(crate) status: String,
    /// The run in progress, by the `rid` of its start, if one has started and not ended.
    pub(crate) started: Option<String>,
    /// The durations the server could measure: each success or failure whose start it has
    /// (the same `rid`).
    pub(crate) timed: usize,
    /// The number of the ping from which the check's timer runs: its last success or failure.
    pub(crate) timer_from: Option<usize>,
}

impl Check {
    fn ping(&mut self, request: &Received, post_only: bool, limit: usize) {
        let (path, query) = request
            .target
            .split_once('?')
            .unwrap_or((&request.target, ""));
        let rid = query
            .split('&')
            .find_map(|pair| pair.strip_prefix("rid="))
            .unwrap_or_default()
            .to_string();
        let last = path.rsplit('/').next().unwrap_or_default();
        let kind = match last {
            _ if post_only && request.method != "POST" => "ignored",
            "start" => "start",
            "log" => "log",
            "fail" => "fail",
            code if code.parse::<u8>().is_ok_and(|code| code != 0) => "fail",
            _ => "success",
        };
        let kept: String = request.body.bytes().take(limit).map(char::from).collect();
        self.pings.push((kind.to_string(), rid.clone(), kept));
        match kind {
            "start" => self.started = Some(rid),
            "success" | "fail" => {
                if self.started.as_ref() == Some(&rid) {
                    self.timed += 1;
                    self.started = None;
                }
                self.status = if kind == "success" { "up" } else { "down" }.into();
                self.timer_from = Some(self.pings.len() - 1);
            }
            _ => {}
        }
    }
}

/// Sentry's check-ins, each looked up by its id alone, as its consumer does.
#[derive(Debug, Default)]
pub(crate) struct CheckIns {
    /// Each check-in by its id: its monitor (the URL's path) and its last status.
    pub(crate) by_id: std::collections::BTreeMap<String, (String, String)>,
    /// The check-ins refused: another monitor's, or one that had already finished.
    pub(crate) refused: Vec<String>,
}

impl CheckIns {
    fn check_in(&mut self, request: &Received) {
        let (monitor, query) = request
            .target
            .split_once('?')
            .unwrap_or((&request.target, ""));
        let value = |key: &str| {
            query
                .split('&')
                .find_map(|pair| pair.strip_prefix(key)?.strip_prefix('='))
                .unwrap_or_default()
                .to_string()
        };
        let (id, status) = (value("check_in_id"), value("status"));
        match self.by_id.get_mut(&id) {
            None => {
                self.by_id.insert(id, (monitor.to_string(), status));
            }
            Some((owner, last)) if owner == monitor && last == "in_progress" => *last = status,
            Some(_) => self.refused.push(request.target.clone()),
        }
    }
}
