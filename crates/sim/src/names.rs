//! The names the simulators' own values go by on the command line: a value of one of their
//! options' enums, shown as the option takes it, from the one definition clap reads it by.

use std::fmt;

use clap::ValueEnum;

/// `value`, shown by its name on the command line.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Named<T>(pub(crate) T);

impl<T: ValueEnum> fmt::Display for Named<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.to_possible_value() {
            Some(value) => f.pad(value.get_name()),
            None => f.pad("?"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::Policy;

    #[test]
    fn shows_the_name_the_option_takes() {
        for policy in Policy::value_variants() {
            let name = Named(*policy).to_string();
            assert_eq!(Policy::from_str(&name, false), Ok(*policy));
        }
    }
}
