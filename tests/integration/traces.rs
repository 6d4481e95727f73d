//! Traces through OpenTelemetry's standard variables: a run joins the `TRACEPARENT` it is given
//! and gives each attempt its own, whose parent is that attempt's span; with an OTLP endpoint it
//! sends its span and its attempts' at its end, in protobuf (decoded by the reference
//! definitions) or JSON (its hexadecimal ids checked by hand); a trace not sampled, a malformed
//! parent, a collector that is down or hangs, and secrets in the headers, each as they should.

use crate::support::harness::{Invocation, retry};
use crate::support::otlp_receiver::OtlpReceiver;

const PARENT_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_SPAN: &str = "00f067aa0ba902b7";

/// A run of three failing attempts, each printing its `TRACEPARENT`, under the sampled parent
/// span `PARENT_SPAN`, sending to `receiver` with `protocol`.
fn traced(receiver: &OtlpReceiver, protocol: &str) -> Invocation {
    retry(["-n", "3", "--base", "0s", "--"])
        .args([
            "sh",
            "-c",
            "echo \"$TRACEPARENT\"; env | grep -c '^OTEL_EXPORTER_OTLP_HEADERS' || true; exit 2",
        ])
        .env("TRACEPARENT", format!("00-{PARENT_TRACE}-{PARENT_SPAN}-01"))
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", protocol)
        .env(
            "OTEL_EXPORTER_OTLP_HEADERS",
            "Authorization=Bearer%20s3cret",
        )
        .env("OTEL_SERVICE_NAME", "nightly-sync")
}

/// Each attempt's `TRACEPARENT` from a run's output, its trace id and span id.
fn attempt_parents(stdout: &str) -> Vec<(String, String)> {
    stdout
        .lines()
        .filter(|line| line.starts_with("00-"))
        .map(|line| {
            let parts: Vec<&str> = line.split('-').collect();
            assert_eq!((parts.len(), parts[3]), (4, "01"), "{line}");
            (parts[1].to_string(), parts[2].to_string())
        })
        .collect()
}

#[test]
fn each_attempt_is_a_span_under_the_run_under_the_parent_in_protobuf() {
    // http/json, which the protocol makes optional, is said, and sent as protobuf.
    for protocol in ["http/protobuf", "http/json"] {
        let receiver = OtlpReceiver::start(false);
        let run = traced(&receiver, protocol).run();
        run.expect_code(2);
        assert_eq!(
            run.stderr().contains("http/json is not supported"),
            protocol == "http/json",
            "{run}"
        );
        assert!(!run.stderr().contains("s3cret"), "{}", run.stderr());
        // The command never sees the exporter's headers.
        assert!(
            run.stdout().lines().filter(|line| *line == "0").count() == 3,
            "{}",
            run.stdout()
        );
        let parents = attempt_parents(&run.stdout());
        assert_eq!(parents.len(), 3);
        assert!(parents.iter().all(|(trace, _)| trace == PARENT_TRACE));
        let requests = receiver.requests();
        assert_eq!(requests.len(), 1, "{protocol}: one request: {requests:?}");
        let request = &requests[0];
        assert_eq!(request["path"], "/v1/traces");
        assert_eq!(request["authorization"], "Bearer s3cret");
        assert_eq!(request["resources"][0]["service.name"], "nightly-sync");
        let spans = request["spans"].as_array().unwrap();
        assert_eq!(spans.len(), 4, "{protocol}: {spans:?}");
        let run_span = &spans[0];
        assert_eq!(run_span["name"], "retry");
        assert_eq!(run_span["trace_id"], PARENT_TRACE);
        assert_eq!(run_span["parent"], PARENT_SPAN);
        assert_eq!(run_span["attributes"]["retry.attempts"], 3);
        assert_eq!(run_span["attributes"]["retry.reason"], "exhausted");
        assert_eq!(run_span["attributes"]["retry.exit_status"], 2);
        assert_eq!(run_span["status"], 2, "an error");
        for (number, (span, (_, seen))) in spans[1..].iter().zip(&parents).enumerate() {
            assert_eq!(span["name"], "attempt");
            assert_eq!(span["trace_id"], PARENT_TRACE);
            assert_eq!(span["parent"], run_span["span_id"]);
            // The command's parent is its attempt's span.
            assert_eq!(&span["span_id"], seen, "{protocol}");
            assert_eq!(span["attributes"]["retry.attempt"], number as u64 + 1);
            assert_eq!(span["attributes"]["retry.exit_status"], 2);
            assert!(span["start"].as_u64() >= run_span["start"].as_u64());
            assert!(span["end"].as_u64() <= run_span["end"].as_u64());
        }
        assert_eq!(spans[1]["attributes"]["retry.verdict"], "retry");
        assert_eq!(spans[2]["attributes"]["retry.wait_cause"], "backoff");
        assert_eq!(spans[3]["attributes"]["retry.reason"], "exhausted");
    }
}

#[test]
fn a_trace_not_sampled_is_passed_on_and_a_malformed_parent_starts_a_new_one() {
    let receiver = OtlpReceiver::start(false);
    let unsampled = traced(&receiver, "http/protobuf")
        .env("TRACEPARENT", format!("00-{PARENT_TRACE}-{PARENT_SPAN}-00"))
        .run();
    unsampled.expect_code(2);
    let stdout = unsampled.stdout();
    let seen: Vec<&str> = stdout
        .lines()
        .filter(|line| line.starts_with("00-"))
        .collect();
    assert_eq!(seen.len(), 3, "{stdout}");
    assert!(
        seen.iter()
            .all(|line| line.ends_with("-00") && line.contains(PARENT_TRACE)),
        "passed on, not sampled: {stdout}"
    );
    assert!(receiver.requests().is_empty(), "nothing is exported");
    for malformed in [
        "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "00-xyz",
        "",
    ] {
        let run = traced(&receiver, "http/protobuf")
            .env("TRACEPARENT", malformed)
            .run();
        run.expect_code(2);
        assert!(
            !run.stderr().contains("TRACEPARENT"),
            "no error: {}",
            run.stderr()
        );
        let parents = attempt_parents(&run.stdout());
        let trace = &parents[0].0;
        assert_ne!(trace, PARENT_TRACE);
        assert!(parents.iter().all(|(each, _)| each == trace));
        let request = receiver.requests().pop().unwrap();
        assert_eq!(request["spans"][0]["trace_id"], trace.as_str());
        assert_eq!(request["spans"][0]["parent"], "", "a new trace's root");
    }
}

#[test]
fn a_nested_retry_joins_the_same_trace_under_its_attempt() {
    let receiver = OtlpReceiver::start(false);
    let binary = crate::support::harness::binary();
    let run = retry(["-n", "1", "--"])
        .args([binary.as_str(), "-n", "1", "--", "true"])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        .env_remove("TRACEPARENT")
        .run();
    run.expect_code(0);
    let requests = receiver.requests();
    assert_eq!(requests.len(), 2, "{requests:?}");
    // The inner run ends first.
    let (inner, outer) = (&requests[0]["spans"], &requests[1]["spans"]);
    assert_eq!(inner[0]["trace_id"], outer[0]["trace_id"]);
    assert_eq!(outer[0]["parent"], "");
    assert_eq!(
        inner[0]["parent"], outer[1]["span_id"],
        "under the outer attempt"
    );
}

#[test]
fn a_collector_that_is_down_hangs_or_speaks_grpc_changes_neither_status_nor_output() {
    let closed = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let down = format!("http://127.0.0.1:{}", closed.local_addr().unwrap().port());
    drop(closed);
    let run = retry(["-n", "1", "--", "sh", "-c", "echo out; exit 3"])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &down)
        .env("OTEL_EXPORTER_OTLP_HEADERS", "x-key=s3cret")
        .run();
    run.expect_code(3).expect_stdout("out\n");
    run.expect_stderr("traces: the collector (127.0.0.1) did not take the run's spans");
    assert!(!run.stderr().contains("s3cret"), "{}", run.stderr());
    let hanging = OtlpReceiver::start(true);
    let run = retry(["-n", "1", "--", "sh", "-c", "echo out; exit 3"])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", hanging.endpoint())
        .env("OTEL_EXPORTER_OTLP_TIMEOUT", "300")
        .run();
    run.expect_code(3).expect_stdout("out\n");
    run.expect_stderr("traces: the collector (127.0.0.1) did not take the run's spans");
    let grpc = OtlpReceiver::start(false);
    let run = retry(["--", "true"])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", grpc.endpoint())
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
        .run();
    run.expect_code(0).expect_stderr("grpc is not supported");
    assert_eq!(
        run.stderr().matches("grpc").count(),
        1,
        "said once: {}",
        run.stderr()
    );
    assert!(grpc.requests().is_empty());
}

#[test]
fn without_the_variables_the_command_gets_no_traceparent_and_disabled_passes_it_on() {
    let run = retry(["--", "sh", "-c", "echo \"[$TRACEPARENT]\""])
        .env_remove("TRACEPARENT")
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .run();
    run.expect_code(0).expect_stdout("[]\n");
    // An empty TRACEPARENT (as `TRACEPARENT= retry ...` leaves) is none: no trace is begun that
    // no span of this run's would ever reach.
    let run = retry(["--", "sh", "-c", "echo \"[$TRACEPARENT]\""])
        .env("TRACEPARENT", "")
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .run();
    run.expect_code(0).expect_stdout("[]\n");
    let given = format!("00-{PARENT_TRACE}-{PARENT_SPAN}-01");
    let run = retry(["--", "sh", "-c", "echo \"[$TRACEPARENT]\""])
        .env("TRACEPARENT", &given)
        .env("OTEL_SDK_DISABLED", "true")
        .run();
    run.expect_code(0).expect_stdout(&format!("[{given}]\n"));
}

#[test]
fn a_budgets_wait_and_an_open_breaker_are_events_on_their_spans() {
    let receiver = OtlpReceiver::start(false);
    let scratch = crate::support::harness::Scratch::new();
    let store = format!("file:{}", scratch.path("budgets").display());
    std::fs::create_dir(scratch.path("budgets")).unwrap();
    retry([
        "budget",
        "set",
        "svc",
        "--budget-store",
        &store,
        "--rate",
        "1/1s",
    ])
    .args(["--breaker", "1/1m", "--cool-down", "1h"])
    .run()
    .expect_code(0);
    let run = |attempts: &str| {
        retry([
            "--budget",
            "svc",
            "--budget-store",
            &store,
            "-n",
            attempts,
            "--base",
            "0s",
        ])
        .args(["--", "false"])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        .run()
    };
    // Two retries: the first takes the one token, the second waits for the next.
    run("3").expect_code(1);
    let spans = receiver.requests()[0]["spans"].clone();
    assert_eq!(spans[2]["events"], serde_json::json!([]), "{spans}");
    assert_eq!(spans[3]["attributes"]["retry.wait_cause"], "budget");
    assert_eq!(spans[3]["events"], serde_json::json!(["retry.budget.wait"]));
    // That run gave up, which opened the breaker: the next is kept out.
    run("1").expect_code(75);
    let spans = receiver.requests()[1]["spans"].clone();
    assert_eq!(spans.as_array().unwrap().len(), 1, "no attempt: {spans}");
    assert_eq!(
        spans[0]["events"],
        serde_json::json!(["retry.breaker.open"])
    );
    assert_eq!(spans[0]["attributes"]["retry.exit_status"], 75);
}

#[test]
fn a_retryable_answer_or_a_dropped_connection_is_tried_again_and_rejected_spans_are_said() {
    for mode in ["unavailable-once", "drop-once"] {
        let receiver = OtlpReceiver::answering(mode);
        let run = traced(&receiver, "http/protobuf").run();
        run.expect_code(2).expect_no_stderr("traces:");
        let requests = receiver.requests();
        assert_eq!(requests.len(), 1, "{mode}: the second try was taken");
        assert_eq!(requests[0]["spans"].as_array().unwrap().len(), 4, "{mode}");
    }
    let receiver = OtlpReceiver::answering("partial");
    let run = traced(&receiver, "http/protobuf").run();
    run.expect_code(2).expect_stderr(
        "traces: the collector (127.0.0.1) rejected 2 of the run's spans: spans older than the \
         retention",
    );
}
