//! The package as others see it: the Rust it needs.

use std::process::Command;

/// A `1.85`-style version as numbers, for comparing.
fn version(text: &str) -> Vec<u32> {
    text.split('.').map(|part| part.parse().unwrap()).collect()
}

#[test]
fn rust_version_is_the_highest_the_locked_dependencies_need() {
    let root = env!("CARGO_MANIFEST_DIR");
    let output = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--locked", "--offline"])
        .current_dir(root)
        .output()
        .expect("run cargo metadata");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let packages = metadata["packages"].as_array().unwrap();
    let (ours, theirs): (Vec<_>, Vec<_>) = packages
        .iter()
        .partition(|package| package["manifest_path"].as_str().unwrap().starts_with(root));
    let declared = ours[0]["rust_version"].as_str().expect("a rust-version");
    let (needed, by) = theirs
        .iter()
        .filter_map(|package| Some((package["rust_version"].as_str()?, package["name"].as_str()?)))
        .max_by_key(|(version_text, _)| version(version_text))
        .unwrap();
    assert_eq!(
        version(declared),
        version(needed),
        "Cargo.toml says rust-version {declared}, but {by} needs {needed}"
    );
}
