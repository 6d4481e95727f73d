//! What a run says about itself: the text and JSON views of its events, the reporter that
//! writes them on stderr, what it tells CI systems, and the files it writes when it ends
//! (`--report`, in the `formats` it names).

pub(crate) mod ci;
pub(crate) mod end_file;
pub(crate) mod file;
pub(crate) mod formats;
pub(crate) mod json;
pub(crate) mod junit;
pub(crate) mod metrics;
pub(crate) mod outlet;
pub(crate) mod reporter;
pub(crate) mod target;
pub(crate) mod text;
pub(crate) mod verbosity;
