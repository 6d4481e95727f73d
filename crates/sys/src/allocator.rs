//! The allocator of the static musl build (the release archive's): dlmalloc's heap behind a
//! futex lock. musl's own allocator trades speed for size, and a short run spent a third of its
//! instructions in it (BENCHMARKS.md). The dlmalloc crate (the allocator Rust's own wasm targets
//! use) gives the heap; its ready-made global allocator is not used because it locks a pthread
//! mutex, whose unlock costs musl's C library some 45 instructions a call, where std's `Mutex`
//! is one atomic word, locked and unlocked without leaving Rust. glibc's allocator is fast, so
//! the default build keeps it and this module is not built there.

use std::alloc::{GlobalAlloc, Layout};
use std::sync::{Mutex, MutexGuard, PoisonError};

use dlmalloc::Dlmalloc;

/// A global allocator: one dlmalloc heap, one thread at a time.
pub struct Allocator {
    heap: Mutex<Heap>,
}

/// dlmalloc's state: pointers into memory this process mapped.
struct Heap(Dlmalloc);

// SAFETY: the heap's pointers are into memory of the process, not of a thread; the mutex hands
// the heap to one thread at a time.
unsafe impl Send for Heap {}

impl Allocator {
    /// An allocator whose heap maps its first memory on the first allocation.
    pub const fn new() -> Self {
        Allocator {
            heap: Mutex::new(Heap(Dlmalloc::new())),
        }
    }

    /// The heap, locked. A panic never happens with it locked (dlmalloc does not panic), so a
    /// poisoned lock cannot mean a heap left half-changed.
    fn heap(&self) -> MutexGuard<'_, Heap> {
        self.heap.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Default for Allocator {
    fn default() -> Self {
        Allocator::new()
    }
}

// SAFETY: each call goes to dlmalloc with the layout the caller gave (and, for `dealloc` and
// `realloc`, the one the block was allocated with, as `GlobalAlloc` requires of the caller),
// under the lock; std's `Mutex` neither allocates nor unwinds, so none of these re-enters the
// allocator.
unsafe impl GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as above.
        unsafe { self.heap().0.malloc(layout.size(), layout.align()) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as above.
        unsafe { self.heap().0.calloc(layout.size(), layout.align()) }
    }

    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { self.heap().0.free(block, layout.size(), layout.align()) }
    }

    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as above.
        unsafe {
            self.heap()
                .0
                .realloc(block, layout.size(), layout.align(), new_size)
        }
    }
}
