//! A value an option takes by name from a fixed list (`--jitter full`): the one definition of
//! its names, which the command line's parser offers and every message shows.

/// A value chosen by name from a fixed list.
pub trait Choice: Copy + PartialEq + Sized + 'static {
    /// Every value, in the order help lists them.
    const ALL: &'static [Self];

    /// Its name on the command line.
    fn name(self) -> &'static str;

    /// What it means, in a few words, where help and the completions list the values.
    fn about(self) -> &'static str;

    /// The value named `name`, if there is one.
    fn named(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|value| value.name() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backoff::Jitter;

    #[test]
    fn every_value_is_found_by_its_name() {
        for jitter in Jitter::ALL {
            assert_eq!(Jitter::named(jitter.name()), Some(*jitter));
        }
        assert_eq!(Jitter::named("fulll"), None);
    }
}
