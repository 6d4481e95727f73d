//! How `retry` supervises the processes it starts, as a crate of its own beside `retry-sys`
//! (whose `spawn` starts them): the tool's signal policy and the one place it waits, for a
//! signal, a child, a helper thread or a moment (`signals`, with the reaper of ended children
//! and the setting right of what the parent left); one attempt's process group supervised to
//! its end, its time limit enforced and signals passed on (`supervision`); the controlling
//! terminal handed to an attempt and taken back (`terminal`); the run loop's real clock, whose
//! waits a signal cuts (`clock`); and the command line every attempt runs (`command_line`).
//! What an attempt's output and the run's reports make of it all is the binary's.
#![forbid(unsafe_code)]

pub mod clock;
pub mod command_line;
pub mod signals;
pub mod supervision;
pub mod terminal;
