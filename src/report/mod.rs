//! What a run says about itself: the events, the text and JSON reporter on stderr, the
//! `--report` file, and the escaping that keeps every message on one line.

pub mod events;
pub mod file;
pub mod message;
