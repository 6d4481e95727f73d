//! Every relative link in the README and in `docs/` leads somewhere: to a file of the
//! repository, and to a heading of it when the link names one (as GitHub makes their anchors).

use std::path::{Path, PathBuf};

/// The markdown files whose links are checked.
fn documents() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut documents = vec![root.join("README.md")];
    if let Ok(entries) = std::fs::read_dir(root.join("docs")) {
        documents.extend(
            entries
                .flatten()
                .map(|entry| entry.path())
                .filter(|path| path.extension().is_some_and(|extension| extension == "md")),
        );
    }
    documents
}

/// The targets of the `[text](target)` links in `text` that stay in the repository.
fn relative_links(text: &str) -> Vec<&str> {
    text.split("](")
        .skip(1)
        .filter_map(|rest| rest.split(')').next())
        .filter(|target| !target.contains("://") && !target.starts_with("mailto:"))
        .collect()
}

/// The anchor GitHub gives a heading: lowercase, spaces as hyphens, other punctuation dropped.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of the headings of the markdown `text`, outside code blocks.
fn anchors(text: &str) -> Vec<String> {
    let mut in_code = false;
    let mut found = Vec::new();
    for line in text.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
        } else if !in_code && line.starts_with('#') {
            found.push(anchor(line.trim_start_matches('#')));
        }
    }
    found
}

#[test]
fn every_relative_link_resolves() {
    let mut broken = Vec::new();
    for document in documents() {
        let text = std::fs::read_to_string(&document).expect("read a document");
        for target in relative_links(&text) {
            let (path, heading) = target.split_once('#').unwrap_or((target, ""));
            let file = match path {
                "" => document.clone(),
                path => document.parent().expect("a folder").join(path),
            };
            let whole = match std::fs::read_to_string(&file) {
                Ok(whole) => whole,
                Err(_) if file.exists() && heading.is_empty() => continue,
                Err(err) => {
                    broken.push(format!("{}: {target}: {err}", document.display()));
                    continue;
                }
            };
            if !heading.is_empty() && !anchors(&whole).iter().any(|found| found == heading) {
                broken.push(format!("{}: {target}: no such heading", document.display()));
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn anchors_are_made_as_github_makes_them() {
    assert_eq!(anchor(" On macOS and the BSDs"), "on-macos-and-the-bsds");
    assert_eq!(
        anchor(" The command's environment"),
        "the-commands-environment"
    );
    assert_eq!(
        anchor(" Where this differs from coreutils `timeout`, on purpose"),
        "where-this-differs-from-coreutils-timeout-on-purpose"
    );
}
