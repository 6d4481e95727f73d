//! The simulators' event queue: events in the order of the moments they happen at.
//!
//! A simulation spends most of its time here, so the queue is made for it: a binary min-heap
//! whose keys are the bits of non-negative `f64` times (which order as the times do, so that
//! comparing them is comparing integers), and where replacing the first event in place costs one
//! sift, where a pop and a push would cost two; most events replace the one that caused them.
//! Events at the same moment come out in the order of their values, so a seeded simulation always
//! gives the same result.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::collections::binary_heap::PeekMut;

/// A min-queue of events of type `E` by the time they happen at.
#[derive(Clone, Debug)]
pub(crate) struct EventQueue<E> {
    heap: BinaryHeap<Reverse<(u64, E)>>,
}

impl<E: Copy + Ord> EventQueue<E> {
    /// An empty queue with room for `capacity` events.
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(capacity),
        }
    }

    /// Add `event`, happening at `time` (at least 0).
    pub(crate) fn push(&mut self, time: f64, event: E) {
        self.heap.push(Reverse((key(time), event)));
    }

    /// The first event and its time, if any.
    pub(crate) fn first(&self) -> Option<(f64, E)> {
        let Reverse((key, event)) = *self.heap.peek()?;
        Some((f64::from_bits(key), event))
    }

    /// Put `event`, happening at `time`, in the place of the first event.
    pub(crate) fn replace_first(&mut self, time: f64, event: E) {
        if let Some(mut first) = self.heap.peek_mut() {
            *first = Reverse((key(time), event));
        }
    }

    /// Take the first event away.
    pub(crate) fn remove_first(&mut self) {
        if let Some(first) = self.heap.peek_mut() {
            PeekMut::pop(first);
        }
    }
}

/// The key of `time`: its bits, which order as non-negative times do.
fn key(time: f64) -> u64 {
    debug_assert!(time >= 0.0, "a time before the start: {time}");
    time.to_bits()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn events_come_out_in_time_order(
            times in proptest::collection::vec(0.0f64..1e6, 1..200),
            replaced in proptest::collection::vec(0.0f64..1e6, 0..200),
        ) {
            let mut queue = EventQueue::with_capacity(times.len());
            for (index, &time) in times.iter().enumerate() {
                queue.push(time, index);
            }
            let mut out = Vec::new();
            let mut replacements = replaced.iter();
            while let Some((time, event)) = queue.first() {
                out.push(time);
                prop_assert_eq!(time, if event < times.len() { times[event] } else { time });
                match replacements.next() {
                    Some(&later) => queue.replace_first(time + later, usize::MAX),
                    None => queue.remove_first(),
                }
            }
            prop_assert!(out.windows(2).all(|pair| pair[0] <= pair[1]), "{out:?}");
            prop_assert_eq!(out.len(), times.len() + replaced.len());
        }
    }
}
