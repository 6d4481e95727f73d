//! A bounded record of a sequence that may run long: its first items and its latest ones, kept in
//! full, and a count of those dropped between them. The report and a CI summary keep a run's
//! attempts so, however many there are.

use std::collections::VecDeque;

/// The first and the latest `each_end` items of a sequence, and how many fell between.
#[derive(Debug)]
pub(crate) struct FirstAndLast<T> {
    each_end: usize,
    first: Vec<T>,
    last: VecDeque<T>,
    omitted: u64,
}

impl<T> FirstAndLast<T> {
    /// An empty record that keeps `each_end` items at each end.
    pub(crate) fn new(each_end: usize) -> Self {
        FirstAndLast {
            each_end,
            first: Vec::new(),
            last: VecDeque::new(),
            omitted: 0,
        }
    }

    /// Add the next item, dropping the oldest of the latest ones if it must.
    pub(crate) fn push(&mut self, item: T) {
        if self.first.len() < self.each_end {
            self.first.push(item);
            return;
        }
        if self.last.len() == self.each_end {
            self.last.pop_front();
            self.omitted += 1;
        }
        self.last.push_back(item);
    }

    /// The latest item, if there is one.
    pub(crate) fn latest_mut(&mut self) -> Option<&mut T> {
        match self.last.back_mut() {
            Some(item) => Some(item),
            None => self.first.last_mut(),
        }
    }

    /// The first items kept.
    pub(crate) fn first(&self) -> impl Iterator<Item = &T> {
        self.first.iter()
    }

    /// The latest items kept after the first ones.
    pub(crate) fn last(&self) -> impl Iterator<Item = &T> {
        self.last.iter()
    }

    /// Every item kept, in order.
    pub(crate) fn kept(&self) -> impl Iterator<Item = &T> {
        self.first().chain(self.last())
    }

    /// How many items were dropped between the first and the latest ones.
    pub(crate) fn omitted(&self) -> u64 {
        self.omitted
    }

    /// How many items were ever added.
    pub(crate) fn total(&self) -> u64 {
        (self.first.len() + self.last.len()) as u64 + self.omitted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_both_ends_and_counts_the_middle() {
        let mut record = FirstAndLast::new(3);
        (1..=10).for_each(|item| record.push(item));
        assert_eq!(
            record.kept().copied().collect::<Vec<_>>(),
            [1, 2, 3, 8, 9, 10]
        );
        assert_eq!((record.omitted(), record.total()), (4, 10));
        assert_eq!(record.latest_mut().copied(), Some(10));
    }

    #[test]
    fn a_short_sequence_is_kept_whole() {
        let mut record = FirstAndLast::new(3);
        (1..=2).for_each(|item| record.push(item));
        assert_eq!(record.kept().copied().collect::<Vec<_>>(), [1, 2]);
        assert_eq!(record.last().count(), 0);
        assert_eq!((record.omitted(), record.total()), (0, 2));
        assert_eq!(record.latest_mut().copied(), Some(2));
    }
}
