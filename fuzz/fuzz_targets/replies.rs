//! A Redis server's replies are the one network input the tool parses: any bytes are read in
//! bounded memory and either give replies the store's readers take without a panic, or end the
//! reading with an error. The body is `retry_budget::fuzzing::replies`, inside the crate (built
//! with `--cfg fuzzing`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| retry_budget::fuzzing::replies(data));
