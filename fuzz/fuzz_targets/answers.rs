//! An HTTP server's answers (a monitor's, a trace collector's) are network input the tool
//! parses: any bytes are read in bounded memory and either give an answer whose status, headers
//! and body the tool takes without a panic, or end the reading with an error. The body is
//! `retry_exec::fuzzing::answers`, inside the crate (built with `--cfg fuzzing`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| retry_exec::fuzzing::answers(data));
