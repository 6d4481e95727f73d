//! The program and arguments that every attempt runs.
//!
//! Arguments are kept as the operating system gave them (`OsString`), never re-split or
//! re-quoted; only `--shell` joins them, with single spaces, into one line for `sh -c`.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::os::unix::ffi::OsStrExt;

/// The program to execute and its arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandLine {
    program: OsString,
    args: Vec<OsString>,
}

impl CommandLine {
    /// Run `words[0]` directly with the rest as its arguments; `None` when `words` is empty.
    pub fn direct(words: Vec<OsString>) -> Option<Self> {
        let mut words = words.into_iter();
        let program = words.next()?;
        Some(CommandLine {
            program,
            args: words.collect(),
        })
    }

    /// Run `words` joined by spaces as one `sh -c` line; `None` when the line is blank, which
    /// `sh -c` would run as nothing, and succeed.
    pub fn shell(words: Vec<OsString>) -> Option<Self> {
        let mut line = OsString::new();
        for (index, word) in words.iter().enumerate() {
            if index > 0 {
                line.push(" ");
            }
            line.push(word);
        }
        // The shell's own blanks: a carriage return or a form feed is a command to it.
        let blank = line.as_bytes().iter().all(|byte| b" \t\n".contains(byte));
        (!blank).then(|| CommandLine {
            program: "sh".into(),
            args: vec!["-c".into(), line],
        })
    }

    /// The program to execute.
    pub fn program(&self) -> &OsStr {
        &self.program
    }

    /// The arguments after the program.
    pub fn args(&self) -> &[OsString] {
        &self.args
    }
}

impl fmt::Display for CommandLine {
    /// The program name, for messages such as "command not found: curl".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.program.to_string_lossy())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    #[test]
    fn direct_keeps_every_argument_whole() {
        let line = CommandLine::direct(words(&["printf", "%s\n", "it's a b"])).unwrap();
        assert_eq!(line.program(), "printf");
        assert_eq!(line.args(), words(&["%s\n", "it's a b"]));
    }

    #[test]
    fn shell_joins_with_spaces() {
        let line = CommandLine::shell(words(&["echo", "a", "&&", "exit 3"])).unwrap();
        assert_eq!(line.program(), "sh");
        assert_eq!(line.args(), words(&["-c", "echo a && exit 3"]));
    }

    #[test]
    fn nothing_to_run_is_none() {
        assert_eq!(CommandLine::direct(Vec::new()), None);
        assert_eq!(CommandLine::shell(Vec::new()), None);
        assert_eq!(CommandLine::shell(words(&[""])), None);
        assert_eq!(CommandLine::shell(words(&[" ", "\t\n"])), None);
        // sh runs a carriage return as a command, and says it is not found.
        assert!(CommandLine::shell(words(&["\r"])).is_some());
    }
}
