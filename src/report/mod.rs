//! What a run says about itself: the events, their text and JSON views, the reporter that
//! writes them on stderr, what it tells CI systems, the files it writes when it ends
//! (`--report`, `--report-dotenv`, `--metrics`), and the escaping that keeps every message on one
//! line.

pub(crate) mod ci;
pub(crate) mod events;
pub(crate) mod file;
mod json;
pub(crate) mod message;
pub(crate) mod metrics;
pub(crate) mod outlet;
pub(crate) mod reporter;
pub(crate) mod target;
pub(crate) mod text;
pub(crate) mod verbosity;
