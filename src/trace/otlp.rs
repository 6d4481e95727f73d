//! A run's spans as one OTLP `ExportTraceServiceRequest`, in protobuf (`http/protobuf`, which
//! every OTLP receiver takes; the protocol makes `http/json` optional, and it is not written).
//!
//! Hand-written: the OpenTelemetry SDK crates with an HTTP exporter bring an async runtime and
//! about 80 crates into a binary whose run costs a millisecond, to write one message of a few
//! fields. The field numbers are those of `opentelemetry/proto/trace/v1/trace.proto` and
//! `common/v1/common.proto`; the integration tests hold these bytes to what the reference
//! decoder (the `opentelemetry-proto` package) reads.

use super::spans::{Span, SpanEvent, Value};
use retry_policy::trace_context::TraceContext;

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

/// What a collector's answer (an `ExportTraceServiceResponse`) says it did not take: the spans
/// it rejected and its message, when its `partial_success` says any. The answer is untrusted:
/// read within its bounds, a field that does not parse ends the reading.
pub(crate) fn rejected(answer: &[u8]) -> Option<(u64, String)> {
    let partial = fields(answer).find_map(|(number, value)| match (number, value) {
        (1, Field::Bytes(bytes)) => Some(bytes),
        _ => None,
    })?;
    let (mut spans, mut message) = (0, String::new());
    for (number, value) in fields(partial) {
        match (number, value) {
            (1, Field::Varint(count)) => spans = count,
            (2, Field::Bytes(text)) => message = String::from_utf8_lossy(text).into_owned(),
            _ => {}
        }
    }
    (spans > 0 || !message.is_empty()).then_some((spans, message))
}

/// A field's value, as protobuf's wire types give it.
enum Field<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    Fixed,
}

/// The fields of the protobuf message `bytes`, each with its number, up to the first that
/// does not parse.
fn fields(mut bytes: &[u8]) -> impl Iterator<Item = (u64, Field<'_>)> {
    std::iter::from_fn(move || {
        let key = read_varint(&mut bytes)?;
        let value = match key & 7 {
            0 => Field::Varint(read_varint(&mut bytes)?),
            2 => {
                let length = usize::try_from(read_varint(&mut bytes)?).ok()?;
                let (value, rest) = bytes.split_at_checked(length)?;
                bytes = rest;
                Field::Bytes(value)
            }
            wire @ (1 | 5) => {
                bytes = bytes.get(if wire == 1 { 8 } else { 4 }..)?;
                Field::Fixed
            }
            _ => return None,
        };
        Some((key >> 3, value))
    })
}

/// A varint from the start of `bytes`, which it then leaves behind.
fn read_varint(bytes: &mut &[u8]) -> Option<u64> {
    let mut value = 0u64;
    for (index, &byte) in bytes.iter().enumerate().take(10) {
        value |= u64::from(byte & 0x7f) << (7 * index);
        if byte & 0x80 == 0 {
            *bytes = &bytes[index + 1..];
            return Some(value);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partial_success_is_read_and_anything_else_ignored() {
        let mut partial = Vec::new();
        varint_field(&mut partial, 1, 2);
        text(&mut partial, 2, "spans too old");
        let mut answer = Vec::new();
        fixed64(&mut answer, 7, 1);
        message(&mut answer, 1, &partial);
        assert_eq!(rejected(&answer), Some((2, "spans too old".into())));
        assert_eq!(rejected(&[]), None, "a whole success");
        let mut empty = Vec::new();
        message(&mut empty, 1, &[]);
        assert_eq!(rejected(&empty), None);
        for garbage in [&[0xff; 12][..], &[0x0a, 0x7f, 1], &[0x0b]] {
            assert_eq!(rejected(garbage), None);
        }
    }

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
