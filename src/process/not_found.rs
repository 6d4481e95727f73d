//! Why a command the system calls not found is there all the same. `execve` says "no such file"
//! both for a program that is missing and for one whose interpreter is: a script whose `#!` line
//! names a program that is not installed, or ends in a carriage return (a file saved with
//! Windows line endings), or a binary whose loader is missing (built for another system or C
//! library). Shells say so; so does the tool, found the way `execvp` searched, so that nobody
//! looks for a file that is right there. Read only after a spawn failed: a run that starts its
//! command pays nothing for it.

use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use retry_policy::printable::printable;

/// The most of a file's start read for its `#!` line, as Linux reads (`BINPRM_BUF_SIZE`).
const FIRST_LINE_BOUND: usize = 256;

/// Why `program`, which executing said is not found, could not run, when it is a file there:
/// what it needs that is missing, after the file found in `path` (the `PATH` searched) when
/// `program` has no slash, e.g. ` (/opt/bin/deploy): the interpreter its #! line names, '…', is
/// not found`.
pub(crate) fn missing_part(program: &OsStr, path: Option<&OsStr>) -> Option<String> {
    let file = located(program, path)?;
    let start = first_bytes(&file)?;
    let found = match file.as_os_str() == program {
        true => String::new(),
        false => format!(" ({})", printable(&file.to_string_lossy())),
    };
    let Some(line) = start.strip_prefix(b"#!") else {
        return Some(format!(
            "{found}: a file it needs to start is not found: its loader, for a program built for \
             another system or C library"
        ));
    };
    let line = line.split(|&byte| byte == b'\n').next().unwrap_or(line);
    let interpreter = String::from_utf8_lossy(line.trim_ascii_start())
        .split([' ', '\t'])
        .next()
        .unwrap_or_default()
        .to_string();
    let crlf = match interpreter.ends_with('\r') {
        true => " (its line ends in a carriage return: the file has Windows line endings)",
        false => "",
    };
    Some(format!(
        "{found}: the interpreter its #! line names, '{}', is not found{crlf}",
        printable(&interpreter)
    ))
}

/// The file `program` names, found as `execvp` searches `path` for a name without a slash.
fn located(program: &OsStr, path: Option<&OsStr>) -> Option<PathBuf> {
    let is_file = |candidate: &Path| candidate.is_file();
    if program.as_bytes().contains(&b'/') {
        return Some(PathBuf::from(program)).filter(|file| is_file(file));
    }
    if program.is_empty() {
        return None;
    }
    let path = path?.as_bytes();
    path.split(|&byte| byte == b':')
        .map(|dir| match dir {
            b"" => Path::new(".").join(program),
            dir => Path::new(OsStr::from_bytes(dir)).join(program),
        })
        .find(|candidate| is_file(candidate))
}

/// The start of `file`, opened without waiting (it may have become a FIFO since) and read only
/// if it is a regular file.
fn first_bytes(file: &Path) -> Option<Vec<u8>> {
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(file)
        .ok()?;
    if !opened.metadata().ok()?.is_file() {
        return None;
    }
    let mut start = Vec::with_capacity(FIRST_LINE_BOUND);
    opened
        .take(FIRST_LINE_BOUND as u64)
        .read_to_end(&mut start)
        .ok()?;
    Some(start)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn script(dir: &Path, name: &str, text: &[u8]) -> PathBuf {
        let file = dir.join(name);
        std::fs::write(&file, text).unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
        file
    }

    #[test]
    fn a_script_names_the_interpreter_that_is_missing() {
        let dir = tempfile::tempdir().unwrap();
        let file = script(dir.path(), "s", b"#! /no/such/sh -e\necho\n");
        let said = missing_part(file.as_os_str(), None).unwrap();
        assert_eq!(
            said,
            ": the interpreter its #! line names, '/no/such/sh', is not found"
        );
    }

    #[test]
    fn windows_line_endings_are_named() {
        let dir = tempfile::tempdir().unwrap();
        script(dir.path(), "deploy", b"#!/bin/sh\r\necho\r\n");
        let path = OsStr::new("/nowhere:").to_owned();
        let mut search = path.clone();
        search.push(dir.path());
        let said = missing_part(OsStr::new("deploy"), Some(&search)).unwrap();
        let found = dir.path().join("deploy");
        assert!(
            said.starts_with(&format!(" ({}): ", found.display())),
            "{said}"
        );
        assert!(said.contains("'/bin/sh\\r', is not found (its line ends in a carriage return"));
    }

    #[test]
    fn a_binary_is_said_to_lack_its_loader() {
        let dir = tempfile::tempdir().unwrap();
        let file = script(dir.path(), "b", b"\x7fELF\x02\x01\x01");
        let said = missing_part(file.as_os_str(), None).unwrap();
        assert!(said.contains("its loader"), "{said}");
    }

    #[test]
    fn a_program_that_is_not_there_has_no_missing_part() {
        let dir = tempfile::tempdir().unwrap();
        let search = dir.path().as_os_str();
        assert_eq!(missing_part(OsStr::new("absent"), Some(search)), None);
        assert_eq!(
            missing_part(dir.path().join("absent").as_os_str(), None),
            None
        );
        assert_eq!(missing_part(OsStr::new(""), Some(search)), None);
        // A directory is no program.
        assert_eq!(missing_part(dir.path().as_os_str(), None), None);
    }
}
