//! The one room of the workspace where `unsafe` is written: the calls Rust cannot check, each
//! behind a safe function whose types keep its contract. `spawn` splits the tool in two and
//! takes the child's steps before `exec`; `environ` reads the process's own environment where it
//! is kept and is the table the child executes with, borrowed by every start that uses it;
//! `signals` queries and sets dispositions, restores a child's mask and takes signals with
//! Linux's `sigtimedwait`; `descriptors` duplicates a descriptor known only by its number and
//! says which of stdin, stdout and stderr the process started with closed; `before_main` is the
//! constructor that reads what std's runtime changes as it starts; `allocator` is the static
//! musl build's heap. Everything else in the `retry` binary is
//! compiled with `deny(unsafe_code)`, and every other crate of the workspace with `forbid(unsafe_code)`; the
//! safe calls nix has (pipes, masks, process groups, the terminal, `kill`) are used as nix gives
//! them, here too.

#[cfg(target_env = "musl")]
pub mod allocator;
mod before_main;
pub mod descriptors;
pub mod environ;
pub mod signals;
pub mod spawn;
