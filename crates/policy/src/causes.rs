//! How an error is said with the errors that caused it: each crate's error keeps what it wraps
//! as its `source()`, and a message a person reads names the whole chain, outermost first, each
//! cause after a colon (`--budget-store: cannot read the password_file /run/pw: No such file or
//! directory (os error 2)`), as `anyhow` prints `{:#}`. Written here, beside the policy's own
//! errors, so that a crate without `anyhow` says a chain the same way.

use std::error::Error;
use std::fmt;
use std::str::FromStr;

/// An error and its causes, displayed as one line: `outer: cause: its cause`. Generic over the
/// outer error, so that saying one makes no `dyn Error` of it: the trait object's table holds
/// the error's `Debug`, whose code (a whole parser's error kinds, say) a run would carry for
/// nothing.
#[derive(Clone, Copy, Debug)]
pub struct WithCauses<'a, E: ?Sized>(pub &'a E);

impl<E: Error + ?Sized> fmt::Display for WithCauses<'_, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)?;
        let mut cause = self.0.source();
        while let Some(error) = cause {
            write!(f, ": {error}")?;
            cause = error.source();
        }
        Ok(())
    }
}

/// `error` with its causes, as one line.
pub fn with_causes<E: Error + ?Sized>(error: &E) -> String {
    WithCauses(error).to_string()
}

/// `text` as a `T`, refused in words that name the refusal's causes: for a clap value parser,
/// since clap says only an error's own words.
pub fn parsed<T: FromStr>(text: &str) -> Result<T, String>
where
    T::Err: Error + 'static,
{
    text.parse().map_err(|why: T::Err| with_causes(&why))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("cannot read the password_file /run/pw")]
    struct Outer(#[source] std::io::Error);

    #[test]
    fn each_cause_follows_its_error_after_a_colon() {
        let error = Outer(std::io::Error::other("it is a FIFO, not a regular file"));
        assert_eq!(
            with_causes(&error),
            "cannot read the password_file /run/pw: it is a FIFO, not a regular file"
        );
        assert_eq!(with_causes(&error.0), "it is a FIFO, not a regular file");
    }
}
