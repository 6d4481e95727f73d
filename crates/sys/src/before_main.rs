//! What the process must read of its start before std's runtime changes it: SIGPIPE's
//! disposition, which the runtime sets to be ignored, and which of stdin, stdout and stderr are
//! closed, which it opens on `/dev/null`. One constructor, which the loader runs before `main`
//! (and so before the runtime), reads both; `signals` and `descriptors` keep what it read.

use crate::{descriptors, signals};

/// The constructor: where the loader finds it, on each system the tool is built for.
#[used]
#[cfg_attr(
    any(target_os = "linux", target_os = "freebsd", target_os = "android"),
    unsafe(link_section = ".init_array")
)]
#[cfg_attr(
    target_vendor = "apple",
    unsafe(link_section = "__DATA,__mod_init_func")
)]
static BEFORE_MAIN: extern "C" fn() = before_main;

extern "C" fn before_main() {
    signals::remember_sigpipe();
    descriptors::remember_closed();
}
