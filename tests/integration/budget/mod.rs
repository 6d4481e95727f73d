//! The retry budget (`--budget`), in a file on one host and in a Redis store a fleet shares, and
//! the default budget a run spends from when it names none.

/// A budget's breaker across runs, on a file and on a Redis store.
mod breaker;
/// Deadline, job and breaker together, on both stores: one order decides.
mod combinations;
/// The default budget: never noticed, free while nothing fails, never in the way.
mod default_budget;
/// The file store: sharing on one host, and state that is damaged, foreign or locked.
mod file_store;
/// A fleet's runs on a Redis Cluster and behind Sentinel, through a slot's move and failovers.
mod fleet_stores;
/// A job's history of runs, on a file and on a Redis store.
mod history;
/// One run of a job at a time: a lock on one machine, a lease on a shared store.
mod overlap;
/// The Redis store against real servers: sharing, the ratio, faults, TLS and `budget show`.
mod shared_store;
/// A wait one run's command asked for, holding every run that shares the budget.
mod shared_wait;
/// The store's password, hidden from every message, event, report and child.
mod store_password;
/// The store's replies as untrusted input, and connections a server closed.
mod store_replies;
/// Many concurrent runs, some killed, losing no update.
mod stress;
