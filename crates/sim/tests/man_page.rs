//! The committed man page of `retry-sim` is what the generator (`cargo xtask generate`) makes of
//! its clap definition now.

/// The generator's own code; `retry`'s pages use parts of it this page does not.
#[path = "../../../xtask/src/options.rs"]
mod options;
#[path = "../../../xtask/src/roff.rs"]
#[allow(dead_code)]
mod roff;
#[path = "../../../xtask/src/sim_page.rs"]
mod sim_page;

#[test]
fn the_man_page_is_fresh() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let (page, written) = sim_page::sim_generated(&root);
    assert!(
        std::fs::read(&page).ok() == Some(written),
        "{} is stale; regenerate it with: cargo xtask generate",
        page.display()
    );
}
