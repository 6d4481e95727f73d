//! A run's place in a distributed trace, as W3C Trace Context's `traceparent` carries it
//! (OpenTelemetry's environment carriers: `TRACEPARENT`, beside a `TRACESTATE` passed on as it
//! is). A run joins the trace its parent names, its own span a child of the parent's span, and
//! gives each attempt a `traceparent` whose parent is that attempt's span, so that the command's
//! own spans nest under it. A value that is not one the specification allows (a wrong length,
//! version `ff`, upper case, zero ids) is not trusted: the run starts a new trace. The span ids
//! of a run's attempts are derived from its own span's, so that the attempt's environment and
//! the exported span agree without sharing any state.

use crate::encoding::{hex_into, unhex};
use crate::seed::split_mix;

/// A trace's id.
pub type TraceId = [u8; 16];

/// A span's id.
pub type SpanId = [u8; 8];

/// A run's place in its trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceContext {
    /// The trace the run belongs to.
    pub trace_id: TraceId,
    /// The run's own span.
    pub run_span: SpanId,
    /// The span the run's parent named, if it named a valid one.
    pub parent: Option<SpanId>,
    /// The trace flags; bit 0 is "sampled".
    pub flags: u8,
}

impl TraceContext {
    /// The run's context under `traceparent` (the environment's `TRACEPARENT`), its own span
    /// `run_span`; a new trace `new_trace`, sampled, when there is no valid parent.
    pub fn new(traceparent: Option<&str>, new_trace: TraceId, run_span: SpanId) -> TraceContext {
        match traceparent.and_then(parse) {
            Some((trace_id, parent, flags)) => TraceContext {
                trace_id,
                run_span: nonzero(run_span),
                parent: Some(parent),
                flags,
            },
            None => TraceContext {
                trace_id: if new_trace == [0; 16] {
                    [1; 16]
                } else {
                    new_trace
                },
                run_span: nonzero(run_span),
                parent: None,
                flags: 1,
            },
        }
    }

    /// Whether the trace is sampled: its spans may be exported.
    pub fn sampled(&self) -> bool {
        self.flags & 1 == 1
    }

    /// The span of the attempt numbered `attempt` (from 1).
    pub fn attempt_span(&self, attempt: u64) -> SpanId {
        let run = u64::from_be_bytes(self.run_span);
        nonzero(split_mix(run ^ attempt.wrapping_mul(0x9e37_79b9_7f4a_7c15)).to_be_bytes())
    }

    /// The `traceparent` the attempt numbered `attempt` gets: this trace, that attempt's span,
    /// the run's flags.
    pub fn traceparent(&self, attempt: u64) -> String {
        let mut text = String::with_capacity(55);
        text.push_str("00-");
        hex_into(&self.trace_id, &mut text);
        text.push('-');
        hex_into(&self.attempt_span(attempt), &mut text);
        text.push('-');
        hex_into(&[self.flags], &mut text);
        text
    }
}

/// `id`, or one in its place when it is all zeros, which the specification forbids.
fn nonzero(id: SpanId) -> SpanId {
    if id == [0; 8] {
        [0, 0, 0, 0, 0, 0, 0, 1]
    } else {
        id
    }
}

/// The trace id, parent span id and flags `value` holds, if it is a valid `traceparent`: a
/// version other than `ff`; for version `00` exactly 55 characters, for a later one at least
/// that many with a `-` after them; lowercase hexadecimal ids, neither all zeros.
fn parse(value: &str) -> Option<(TraceId, SpanId, u8)> {
    let bytes = value.as_bytes();
    let version = bytes.get(..2)?;
    match version {
        b"ff" => return None,
        b"00" if bytes.len() != 55 => return None,
        _ if bytes.len() < 55 || (bytes.len() > 55 && bytes[55] != b'-') => return None,
        _ => {}
    }
    if [2, 35, 52].iter().any(|&at| bytes[at] != b'-') {
        return None;
    }
    let _version: [u8; 1] = decode(&bytes[0..2])?;
    let trace_id: TraceId = decode(&bytes[3..35])?;
    let parent: SpanId = decode(&bytes[36..52])?;
    let [flags] = decode(&bytes[53..55])?;
    if trace_id == [0; 16] || parent == [0; 8] {
        return None;
    }
    Some((trace_id, parent, flags))
}

/// The bytes the lowercase hexadecimal `text` writes, if it writes exactly `N`.
fn decode<const N: usize>(text: &[u8]) -> Option<[u8; N]> {
    unhex(text.iter().copied())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::hex;

    const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn a_valid_parent_is_joined_and_each_attempt_is_its_own_span() {
        let context = TraceContext::new(Some(PARENT), [9; 16], [7; 8]);
        assert_eq!(hex(&context.trace_id), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(
            context.parent.map(|id| hex(&id)),
            Some("00f067aa0ba902b7".into())
        );
        assert!(context.sampled());
        let first = context.traceparent(1);
        assert!(
            first.starts_with("00-4bf92f3577b34da6a3ce929d0e0e4736-") && first.ends_with("-01"),
            "{first}"
        );
        assert_eq!(first.len(), 55);
        assert_eq!(&first[36..52], hex(&context.attempt_span(1)));
        let spans: std::collections::HashSet<SpanId> = (1..=1000)
            .map(|attempt| context.attempt_span(attempt))
            .collect();
        assert_eq!(spans.len(), 1000);
        assert!(!spans.contains(&context.run_span));
        // A later version is read by its first fields.
        let later = format!("01{}-what-comes-next", &PARENT[2..]);
        assert_eq!(
            TraceContext::new(Some(&later), [9; 16], [7; 8]).trace_id,
            context.trace_id
        );
    }

    #[test]
    fn an_invalid_parent_starts_a_new_sampled_trace() {
        for bad in [
            "",
            "garbage",
            &PARENT[..54],
            &format!("{PARENT}-"),
            &format!("ff{}", &PARENT[2..]),
            &PARENT.to_uppercase(),
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g",
            "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",
        ] {
            let context = TraceContext::new(Some(bad), [9; 16], [7; 8]);
            assert_eq!((context.trace_id, context.parent), ([9; 16], None), "{bad}");
            assert!(context.sampled());
        }
        let unsampled = PARENT.replace("-01", "-00");
        assert!(!TraceContext::new(Some(&unsampled), [9; 16], [7; 8]).sampled());
        assert_eq!(
            TraceContext::new(None, [0; 16], [0; 8]).run_span,
            [0, 0, 0, 0, 0, 0, 0, 1]
        );
    }
}
