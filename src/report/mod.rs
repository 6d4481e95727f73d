//! What a run says about itself: the events, their text and JSON views, the reporter that
//! writes them on stderr, the `--report` file, and the escaping that keeps every message on one
//! line.

pub(crate) mod events;
pub(crate) mod file;
mod json;
pub(crate) mod message;
pub(crate) mod outlet;
pub(crate) mod reporter;
pub(crate) mod target;
mod text;
pub(crate) mod verbosity;
