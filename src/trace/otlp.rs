//! A run's spans as one OTLP `ExportTraceServiceRequest`, in protobuf (`http/protobuf`) or in
//! OTLP's JSON (`http/json`: hexadecimal ids, 64-bit numbers as strings, enums as numbers).
//!
//! Hand-written: the OpenTelemetry SDK crates with an HTTP exporter bring an async runtime and
//! about 80 crates into a binary whose run costs a millisecond, to write one message of a few
//! fields. The field numbers are those of `opentelemetry/proto/trace/v1/trace.proto` and
//! `common/v1/common.proto`; the integration tests hold these bytes to what the reference
//! decoder (the `opentelemetry-proto` package) reads.

use serde_json::json;

use super::spans::{Span, SpanEvent, Value};
use retry_policy::trace_context::{TraceContext, hex};

/// The instrumentation scope the spans come from.
const SCOPE: &str = "retry";

/// `Span.SpanKind.SPAN_KIND_INTERNAL`.
const KIND_INTERNAL: u64 = 1;

/// `Status.StatusCode`: `STATUS_CODE_OK` and `STATUS_CODE_ERROR`.
const STATUS_OK: u64 = 1;
const STATUS_ERROR: u64 = 2;

/// The request, in protobuf, for `spans` of the trace `context` from a resource with
/// `resource`'s attributes.
pub(crate) fn protobuf(
    context: &TraceContext,
    resource: &[(String, String)],
    spans: &[Span],
) -> Vec<u8> {
    let mut attributes = Vec::new();
    for (key, value) in resource {
        message(
            &mut attributes,
            1,
            &key_value(key, &Value::Text(value.clone())),
        );
    }
    let mut scope_spans = Vec::new();
    let mut scope = Vec::new();
    text(&mut scope, 1, SCOPE);
    text(&mut scope, 2, env!("CARGO_PKG_VERSION"));
    message(&mut scope_spans, 1, &scope);
    for span in spans {
        message(&mut scope_spans, 2, &span_message(context, span));
    }
    let mut resource_spans = Vec::new();
    message(&mut resource_spans, 1, &attributes);
    message(&mut resource_spans, 2, &scope_spans);
    let mut request = Vec::new();
    message(&mut request, 1, &resource_spans);
    request
}

/// One `Span`.
fn span_message(context: &TraceContext, span: &Span) -> Vec<u8> {
    let mut out = Vec::new();
    bytes(&mut out, 1, &context.trace_id);
    bytes(&mut out, 2, &span.id);
    if let Some(parent) = span.parent {
        bytes(&mut out, 4, &parent);
    }
    text(&mut out, 5, span.name);
    varint_field(&mut out, 6, KIND_INTERNAL);
    fixed64(&mut out, 7, span.start);
    fixed64(&mut out, 8, span.end);
    for (key, value) in &span.attributes {
        message(&mut out, 9, &key_value(key, value));
    }
    for event in &span.events {
        message(&mut out, 11, &event_message(event));
    }
    let mut status = Vec::new();
    match &span.error {
        Some(why) => {
            text(&mut status, 2, why);
            varint_field(&mut status, 3, STATUS_ERROR);
        }
        None => varint_field(&mut status, 3, STATUS_OK),
    }
    message(&mut out, 15, &status);
    out
}

/// One `Span.Event`.
fn event_message(event: &SpanEvent) -> Vec<u8> {
    let mut out = Vec::new();
    fixed64(&mut out, 1, event.time);
    text(&mut out, 2, event.name);
    for (key, value) in &event.attributes {
        message(&mut out, 3, &key_value(key, value));
    }
    out
}

/// One `KeyValue`, its value an `AnyValue`.
fn key_value(key: &str, value: &Value) -> Vec<u8> {
    let mut any = Vec::new();
    match value {
        Value::Text(value) => text(&mut any, 1, value),
        Value::Bool(value) => varint_field(&mut any, 2, u64::from(*value)),
        // int64 is a varint of the two's complement.
        Value::Int(value) => varint_field(&mut any, 3, *value as u64),
    }
    let mut out = Vec::new();
    text(&mut out, 1, key);
    message(&mut out, 2, &any);
    out
}

/// A field's key: its number and wire type.
fn key(out: &mut Vec<u8>, field: u32, wire_type: u8) {
    varint(out, u64::from(field) << 3 | u64::from(wire_type));
}

fn varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn varint_field(out: &mut Vec<u8>, field: u32, value: u64) {
    key(out, field, 0);
    varint(out, value);
}

fn fixed64(out: &mut Vec<u8>, field: u32, value: u64) {
    key(out, field, 1);
    out.extend_from_slice(&value.to_le_bytes());
}

fn bytes(out: &mut Vec<u8>, field: u32, value: &[u8]) {
    key(out, field, 2);
    varint(out, value.len() as u64);
    out.extend_from_slice(value);
}

fn text(out: &mut Vec<u8>, field: u32, value: &str) {
    bytes(out, field, value.as_bytes());
}

fn message(out: &mut Vec<u8>, field: u32, encoded: &[u8]) {
    bytes(out, field, encoded);
}

/// The request in OTLP's JSON.
pub(crate) fn json(
    context: &TraceContext,
    resource: &[(String, String)],
    spans: &[Span],
) -> Vec<u8> {
    let attributes: Vec<_> = resource
        .iter()
        .map(|(key, value)| json_key_value(key, &Value::Text(value.clone())))
        .collect();
    let spans: Vec<_> = spans.iter().map(|span| json_span(context, span)).collect();
    let request = json!({
        "resourceSpans": [{
            "resource": { "attributes": attributes },
            "scopeSpans": [{
                "scope": { "name": SCOPE, "version": env!("CARGO_PKG_VERSION") },
                "spans": spans,
            }],
        }],
    });
    request.to_string().into_bytes()
}

fn json_span(context: &TraceContext, span: &Span) -> serde_json::Value {
    let attributes: Vec<_> = span
        .attributes
        .iter()
        .map(|(key, value)| json_key_value(key, value))
        .collect();
    let events: Vec<_> = span
        .events
        .iter()
        .map(|event| {
            let attributes: Vec<_> = event
                .attributes
                .iter()
                .map(|(key, value)| json_key_value(key, value))
                .collect();
            json!({
                "timeUnixNano": event.time.to_string(),
                "name": event.name,
                "attributes": attributes,
            })
        })
        .collect();
    let status = match &span.error {
        Some(why) => json!({ "code": STATUS_ERROR, "message": why }),
        None => json!({ "code": STATUS_OK }),
    };
    let mut span_json = json!({
        "traceId": hex(&context.trace_id),
        "spanId": hex(&span.id),
        "name": span.name,
        "kind": KIND_INTERNAL,
        "startTimeUnixNano": span.start.to_string(),
        "endTimeUnixNano": span.end.to_string(),
        "attributes": attributes,
        "events": events,
        "status": status,
    });
    if let Some(parent) = span.parent {
        span_json["parentSpanId"] = json!(hex(&parent));
    }
    span_json
}

fn json_key_value(key: &str, value: &Value) -> serde_json::Value {
    let value = match value {
        Value::Text(value) => json!({ "stringValue": value }),
        Value::Bool(value) => json!({ "boolValue": value }),
        Value::Int(value) => json!({ "intValue": value.to_string() }),
    };
    json!({ "key": key, "value": value })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_keys_are_protobufs() {
        let mut out = Vec::new();
        varint(&mut out, 300);
        assert_eq!(out, [0xac, 0x02]);
        let mut out = Vec::new();
        varint_field(&mut out, 3, (-1i64) as u64);
        assert_eq!(out.len(), 11);
        assert_eq!(out[0], 3 << 3);
        let mut out = Vec::new();
        fixed64(&mut out, 7, 1);
        assert_eq!(out, [7 << 3 | 1, 1, 0, 0, 0, 0, 0, 0, 0]);
        let mut out = Vec::new();
        text(&mut out, 5, "retry");
        assert_eq!(out, b"\x2a\x05retry");
    }
}
