//! The package as others see it: the Rust it needs, and what the published crate holds.

use crate::harness::program;

/// What cargo prints for `args`, run in the repository, offline and with the locked versions.
fn cargo(args: &[&str]) -> String {
    let run = program(env!("CARGO"))
        .args(args)
        .args(["--locked", "--offline"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .run();
    run.expect_code(0);
    run.stdout()
}

/// A `1.85`-style version as numbers, for comparing.
fn version(text: &str) -> Vec<u32> {
    text.split('.').map(|part| part.parse().unwrap()).collect()
}

#[test]
fn rust_version_is_the_highest_the_locked_dependencies_need() {
    let root = env!("CARGO_MANIFEST_DIR");
    let output = cargo(&["metadata", "--format-version", "1"]);
    let metadata: serde_json::Value = serde_json::from_str(&output).unwrap();
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

#[test]
fn the_crate_holds_the_man_pages_the_completions_and_the_licences() {
    let root = env!("CARGO_MANIFEST_DIR");
    let listed = cargo(&["package", "--list", "--allow-dirty"]);
    let listed: Vec<&str> = listed.lines().collect();
    let in_folder = |folder: &str| {
        std::fs::read_dir(std::path::Path::new(root).join(folder))
            .unwrap()
            .map(|entry| format!("{folder}/{}", entry.unwrap().file_name().to_str().unwrap()))
            .collect::<Vec<_>>()
    };
    let wanted = in_folder("man")
        .into_iter()
        .chain(in_folder("completions"))
        .chain(["README.md", "LICENSE-MIT", "LICENSE-APACHE", "Cargo.lock"].map(String::from));
    for file in wanted {
        assert!(listed.contains(&file.as_str()), "the crate lacks {file}");
    }
    for file in &listed {
        assert!(
            !file.starts_with("target/") && !file.starts_with("fuzz/"),
            "the crate holds {file}"
        );
    }
}
