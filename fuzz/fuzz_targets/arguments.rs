//! Argument parsing never panics, and every bad command line gets a one-line message, as the
//! binary prints it (with exit 125).
//!
//! The input is split at NUL bytes into arguments, each as raw bytes (not necessarily UTF-8).
#![no_main]

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

use clap::error::ErrorKind;
use clap::Parser;
use libfuzzer_sys::fuzz_target;
use retry::cli::{one_line_error, Cli};
use retry::config::Config;
use retry::message::printable;

fuzz_target!(|data: &[u8]| {
    let words = data
        .split(|&byte| byte == 0)
        .map(|word| OsString::from_vec(word.to_vec()));
    let args = std::iter::once(OsString::from("retry")).chain(words);
    match Cli::try_parse_from(args) {
        Ok(cli) if cli.subcommand.is_some() => {}
        Ok(cli) => {
            if let Err(err) = Config::try_from(cli) {
                assert_one_line(&printable(&err.to_string()));
            }
        }
        Err(err)
            if matches!(
                err.kind(),
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion
            ) => {}
        Err(err) => assert_one_line(&one_line_error(&err)),
    }
});

fn assert_one_line(message: &str) {
    assert!(!message.trim().is_empty(), "an empty message");
    assert!(
        !message.contains(['\n', '\r']),
        "a message of several lines: {message:?}"
    );
}
