//! The things a simulation has in flight (calls, requests), each in a numbered slot that its
//! events name, and reused once it ends, so that a long run holds only what is in flight.

/// Values in numbered slots.
#[derive(Clone, Debug)]
pub(crate) struct Slots<T> {
    values: Vec<T>,
    /// Slots whose values ended, to reuse.
    free: Vec<u32>,
}

impl<T> Default for Slots<T> {
    fn default() -> Self {
        Slots {
            values: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<T> Slots<T> {
    /// Put `value` in a slot, and say which.
    pub(crate) fn insert(&mut self, value: T) -> u32 {
        match self.free.pop() {
            Some(slot) => {
                self.values[slot as usize] = value;
                slot
            }
            None => {
                self.values.push(value);
                (self.values.len() - 1) as u32
            }
        }
    }

    /// The value in `slot` has ended: the slot is free for another.
    pub(crate) fn release(&mut self, slot: u32) {
        self.free.push(slot);
    }
}

impl<T> std::ops::Index<u32> for Slots<T> {
    type Output = T;

    fn index(&self, slot: u32) -> &T {
        &self.values[slot as usize]
    }
}

impl<T> std::ops::IndexMut<u32> for Slots<T> {
    fn index_mut(&mut self, slot: u32) -> &mut T {
        &mut self.values[slot as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_released_slot_is_reused() {
        let mut slots = Slots::default();
        let (first, second) = (slots.insert('a'), slots.insert('b'));
        assert_eq!((first, second), (0, 1));
        slots.release(first);
        assert_eq!(slots.insert('c'), first);
        assert_eq!((slots[first], slots[second]), ('c', 'b'));
        slots[second] = 'd';
        assert_eq!(slots.insert('e'), 2);
        assert_eq!(slots[second], 'd');
    }
}
