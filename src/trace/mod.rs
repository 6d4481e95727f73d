//! A run in a distributed trace, through OpenTelemetry's standard variables and nothing else.
//! When the environment carries a `TRACEPARENT`, or names an OTLP endpoint, the run joins that
//! trace (or starts one) and gives each attempt its own `TRACEPARENT`, whose parent is the
//! attempt's span, so that the command's own spans nest under it; with an endpoint, and the
//! trace sampled, one request at the run's end sends the run's span and its attempts'. Without
//! either, or with `OTEL_SDK_DISABLED=true`, nothing here runs and `TRACEPARENT` passes through
//! as it came. A collector that is down or slow is a warning, within the exporter's timeout and
//! the run's deadline; it changes neither the exit status nor the output. `export` reads the
//! exporter's variables, `spans` records the spans from the run's events, `otlp` encodes them.

mod export;
mod otlp;
mod spans;

use std::ffi::OsString;
use std::time::{Duration, Instant};

use crate::environment;
use crate::http::{self, NotTaken};
use crate::lifecycle::{Ending, Observer, Stage};
use export::Export;
use retry_policy::deadline::telling_limit;
use retry_policy::events::{Event, EventSink};
use retry_policy::outcome::{Reason, RunEnd};
use retry_policy::printable::printable;
use retry_policy::run_id::RunId;
use retry_policy::signal::Signal;
use retry_policy::trace_context::{SpanId, TraceContext, TraceId};
use retry_process::signals::{SignalWatch, Waited, Waiter};

use spans::Recorder;

#[cfg(fuzzing)]
pub(crate) use otlp::rejected;

/// A run's spans, recorded from its events and sent at its end.
pub(crate) struct Traced<'t> {
    tracing: &'t Tracing,
    recorder: Recorder,
}

impl Observer for Traced<'_> {
    fn stage(&self) -> Stage {
        Stage::Tell
    }

    fn emit(&mut self, event: &Event) {
        self.recorder.emit(event);
    }

    fn finish(self: Box<Self>, ending: &mut Ending<'_>) {
        ending.telling(|end, watch, deadline, warn| {
            self.tracing
                .send(&self.recorder, end, watch, deadline, warn)
                .err()
        });
    }
}

/// A run's tracing: its place in the trace, and where its spans go.
#[derive(Debug)]
pub(crate) struct Tracing {
    context: TraceContext,
    /// Where the spans are sent; none when no endpoint is named, or the trace is not sampled.
    export: Option<Export>,
}

impl Tracing {
    /// The tracing `env` asks for, if any, its new ids (a new trace's, the run's span) drawn
    /// from `ids` only then. What cannot be used is said in `problems`.
    pub(crate) fn from_environment(
        env: &impl Fn(&str) -> Option<OsString>,
        ids: impl FnOnce() -> (TraceId, SpanId),
        problems: &mut Vec<String>,
    ) -> Option<Tracing> {
        let traceparent = environment::TRACEPARENT.given(env);
        let mut found = Vec::new();
        let export = Export::from_environment(env, &mut found);
        // Most runs have neither, and look no further.
        if traceparent.is_none() && export.is_none() && found.is_empty() {
            return None;
        }
        let disabled = env("OTEL_SDK_DISABLED")
            .is_some_and(|value| value.to_string_lossy().trim().eq_ignore_ascii_case("true"));
        if disabled {
            return None;
        }
        problems.append(&mut found);
        if traceparent.is_none() && export.is_none() {
            return None;
        }
        let traceparent = traceparent.as_deref().and_then(|value| value.to_str());
        let (new_trace, run_span) = ids();
        let context = TraceContext::new(traceparent, new_trace, run_span);
        Some(Tracing {
            export: export.filter(|_| context.sampled()),
            context,
        })
    }

    /// The run's place in the trace.
    pub(crate) fn context(&self) -> TraceContext {
        self.context
    }

    /// The observer that records the run `run_id`'s spans and sends them at its end, when
    /// they are to be sent.
    pub(crate) fn recorder(&self, run_id: RunId) -> Option<Traced<'_>> {
        self.export.as_ref().map(|_| Traced {
            tracing: self,
            recorder: Recorder::new(self.context, run_id),
        })
    }

    /// Send the spans `recorder` kept of the run that ended as `end`, within the exporter's
    /// timeout and the run's `deadline` (and its grace; only the grace when a signal ended it),
    /// awake to `watch`'s signals; `warn` is
    /// told what the collector did not take, a signal that ends the run is returned.
    fn send(
        &self,
        recorder: &Recorder,
        end: &RunEnd,
        watch: &SignalWatch,
        deadline: Option<Instant>,
        warn: &mut dyn FnMut(String),
    ) -> Result<(), Signal> {
        let Some(export) = &self.export else {
            return Ok(());
        };
        let spans = recorder.spans(end);
        let body = otlp::protobuf(&self.context, &export.resource, &spans);
        let content_type = "application/x-protobuf";
        let interrupted = matches!(end.reason, Reason::Interrupted(..));
        let until = telling_limit(Instant::now(), export.timeout, deadline, interrupted);
        let (url, headers) = (export.url.clone(), export.headers.clone());
        let sent = watch.run_job(Some(until), move || {
            let request = http::Request {
                method: "POST",
                url: &url,
                headers: &headers,
                body: Some((content_type, &body)),
            };
            deliver(&request, until)
        });
        let failed = match sent {
            Ok(Waited::Done(Ok(answer))) => {
                if let Some((spans, why)) = otlp::rejected(answer.body()) {
                    let why = printable(&why.chars().take(200).collect::<String>());
                    warn(format!(
                        "traces: the collector ({}) rejected {spans} of the run's spans: {why}",
                        export.url.host()
                    ));
                }
                return Ok(());
            }
            Ok(Waited::Done(Err(why))) => why.to_string(),
            Ok(Waited::TimedOut) => "it did not answer in time".to_string(),
            Ok(Waited::Stopped(signal)) => return Err(signal),
            Err(err) => format!("cannot start a thread: {err}"),
        };
        warn(format!(
            "traces: the collector ({}) did not take the run's spans: {failed}",
            export.url.host()
        ));
        Ok(())
    }
}

/// The pause before the export's second try, doubled before each later one.
const PAUSE: Duration = Duration::from_millis(100);

/// Send `request` until the collector takes it, before `until`: an answer OTLP calls
/// retryable (429, 502, 503, 504), or a connection that failed, is tried again after the
/// collector's `Retry-After` where it gives one, else a pause that doubles from [`PAUSE`], for
/// as long as the time left holds the wait. The answer taken, or why there is none.
fn deliver(request: &http::Request, until: Instant) -> Result<http::Answer, http::Undelivered> {
    let (mut pause, mut tries) = (PAUSE, 0);
    loop {
        tries += 1;
        let (asked, why) = match http::send(request, until) {
            Ok(answer) if (200..300).contains(&answer.status) => return Ok(answer),
            Ok(answer) if matches!(answer.status, 429 | 502 | 503 | 504) => {
                let asked = answer
                    .header("Retry-After")
                    .and_then(|seconds| seconds.parse().ok())
                    .map(Duration::from_secs);
                (asked, NotTaken::Answered(answer.status))
            }
            Ok(answer) => return Err(NotTaken::Answered(answer.status).at_once()),
            Err(failure) => (None, NotTaken::Failed(failure)),
        };
        let wait = asked.unwrap_or(pause);
        if Instant::now() + wait >= until {
            return Err(why.after(tries));
        }
        std::thread::sleep(wait);
        pause *= 2;
    }
}
