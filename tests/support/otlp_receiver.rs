//! A trace collector on loopback for the tests (`otlp_receiver.py`): it decodes each request
//! with the reference definitions (the `opentelemetry-proto` package, which scripts/test puts
//! in target/test-python), or reads OTLP's JSON by hand, and keeps what it read; or it never
//! answers. It stops when dropped.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use super::harness::Scratch;

/// A running receiver.
pub(crate) struct OtlpReceiver {
    child: Child,
    port: u16,
    out: PathBuf,
    _scratch: Scratch,
}

/// Where scripts/test installs the reference decoder.
const PACKAGES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/target/test-python");

impl OtlpReceiver {
    /// A receiver that answers each request once it has read it (`hang`: never).
    pub(crate) fn start(hang: bool) -> OtlpReceiver {
        OtlpReceiver::answering(if hang { "hang" } else { "answer" })
    }

    /// A receiver in the script's `mode` (`answer`, `hang`, `unavailable-once`, `drop-once`,
    /// `partial`).
    pub(crate) fn answering(mode: &str) -> OtlpReceiver {
        let scratch = Scratch::new();
        let out = scratch.path("received");
        let script = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/support/otlp_receiver.py"
        );
        let mut child = Command::new("python3")
            .args([script, &out.display().to_string()])
            .arg(mode)
            .env("PYTHONPATH", PACKAGES)
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs the OTLP receiver");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line.trim().parse().unwrap_or_else(|_| {
            let _ = child.kill();
            panic!(
                "the OTLP receiver did not start (is opentelemetry-proto in {PACKAGES}? \
                 scripts/test --install-only puts it there)"
            )
        });
        OtlpReceiver {
            child,
            port,
            out,
            _scratch: scratch,
        }
    }

    /// Its base URL, for OTEL_EXPORTER_OTLP_ENDPOINT.
    pub(crate) fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The requests it read, in order.
    pub(crate) fn requests(&self) -> Vec<serde_json::Value> {
        std::fs::read_to_string(&self.out)
            .unwrap_or_default()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }
}

impl Drop for OtlpReceiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
