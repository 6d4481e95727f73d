//! Every crontab line of the README and the guides, run as cron runs it: one line, given whole to
//! `/bin/sh -c` with cron's environment (`env -i` with `PATH=/usr/bin:/bin`, `SHELL=/bin/sh`,
//! `HOME`, `LOGNAME`) and the variables its crontab block sets (`PATH=`, `MAILTO=`). What stands
//! outside the machine is replaced by local stand-ins: each URL by a local server, the files
//! under `/etc/retry/` by ones the test writes, the programs and the binary under
//! `/usr/local/bin/` by a scratch directory's, and a `--splay` by a millisecond.

use std::os::unix::fs::PermissionsExt;

use crate::support::harness::{Scratch, binary, program};
use crate::support::monitor_service::MonitorService;

/// A crontab line's schedule: five fields of digits, `*`, `/`, `,` and `-`.
fn is_schedule(fields: &[&str]) -> bool {
    fields.len() == 5
        && fields.iter().all(|field| {
            !field.is_empty()
                && field
                    .chars()
                    .all(|c| c.is_ascii_digit() || matches!(c, '*' | '/' | ',' | '-'))
        })
}

/// Each crontab line of the README and the guides, with the variable lines of its block before
/// it, and where it is.
fn crontab_lines() -> Vec<(String, Vec<String>, String)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md")];
    files.extend(
        std::fs::read_dir(root.join("docs"))
            .unwrap()
            .flatten()
            .map(|entry| entry.path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "md")),
    );
    let mut found = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let mut variables = Vec::new();
        for (number, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if !line.starts_with("    ") || code.is_empty() {
                variables.clear();
                continue;
            }
            let words: Vec<&str> = code.split_whitespace().collect();
            if words.len() == 1 && code.contains('=') && !code.starts_with('-') {
                variables.push(code.to_string());
                continue;
            }
            if words.len() > 5 && is_schedule(&words[..5]) {
                let place = format!("{}:{}", file.display(), number + 1);
                // The command: the line after its schedule, as cron gives it to the shell.
                let mut rest = code;
                for _ in 0..5 {
                    let field = rest.trim_start();
                    rest = &field[field.find(char::is_whitespace).unwrap_or(field.len())..];
                }
                let command = rest.trim_start().to_string();
                found.push((command, variables.clone(), place));
            }
        }
    }
    found
}

#[test]
fn every_crontab_line_of_the_docs_runs_as_cron_runs_it() {
    let lines = crontab_lines();
    assert!(lines.len() >= 8, "{lines:?}");
    let scratch = Scratch::new();
    let monitor = MonitorService::answering();
    let local = monitor.url("");
    let (bin, etc, prom) = (
        scratch.path("bin"),
        scratch.path("etc"),
        scratch.path("prom"),
    );
    for dir in [&bin, &etc, &prom, &scratch.path("home")] {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::os::unix::fs::symlink(binary(), bin.join("retry")).unwrap();
    for name in ["backup", "backup.sh"] {
        std::fs::write(bin.join(name), "#!/bin/sh\necho backed up\n").unwrap();
        std::fs::set_permissions(bin.join(name), std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let store = format!("file:{}", scratch.path("store").display());
    std::fs::write(
        etc.join("inventory.env"),
        format!("RETRY_BUDGET_STORE={store}\n"),
    )
    .unwrap();
    std::fs::write(
        etc.join("backup.monitor"),
        format!("healthchecks:{local}/monitor\n"),
    )
    .unwrap();
    for (command, variables, place) in lines {
        assert!(
            !command.ends_with('\\'),
            "{place}: a crontab entry is one line"
        );
        let local_url = |text: &str| {
            text.split(' ')
                .map(|word| match word.find("://") {
                    Some(at) if word[..at].ends_with("http") || word[..at].ends_with("https") => {
                        let scheme_start = word[..at].rfind(['=', ':']).map_or(0, |i| i + 1);
                        let path = word[at + 3..]
                            .find('/')
                            .map_or("/", |i| &word[at + 3 + i..]);
                        format!("{}{local}{path}", &word[..scheme_start])
                    }
                    _ => word.to_string(),
                })
                .collect::<Vec<_>>()
                .join(" ")
        };
        let rewrite = |text: &str| {
            local_url(text)
                .replace("/usr/local/bin", &bin.display().to_string())
                .replace("/etc/retry/", &format!("{}/", etc.display()))
                .replace(
                    "/var/lib/prometheus/node-exporter/",
                    &format!("{}/", prom.display()),
                )
                .replace("--splay 10m", "--splay 1ms")
        };
        let mut run = program("env").args(["-i", "PATH=/usr/bin:/bin", "SHELL=/bin/sh"]);
        run = run.args([
            format!("HOME={}", scratch.path("home").display()),
            "LOGNAME=root".into(),
        ]);
        run = run.args(variables.iter().map(|variable| rewrite(variable)));
        let line = rewrite(&command);
        let ran = run.args(["/bin/sh", "-c", &line]).run();
        assert_eq!(ran.code(), Some(0), "{place}: {line}\n{ran}");
    }
}
