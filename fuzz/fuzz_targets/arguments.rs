//! Any command line either parses or gets a one-line message (exit 125), never a panic; and
//! whatever parses, the run's arithmetic takes without a panic: every accepted value must work.
//! The body is `retry_exec::fuzzing::arguments`, inside the crate (built with `--cfg fuzzing`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| retry_exec::fuzzing::arguments(data));
