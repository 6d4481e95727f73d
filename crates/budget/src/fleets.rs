//! The shared store on the fleets Redis runs as: a Redis Cluster, whose redirects a budget's
//! calls follow as its slot moves, and a primary that sentinels name, through a failover. The
//! client is `retry-redis`'s; these tests run a store's calls through it, on real servers.

use std::time::Duration;

use crate::model::{DEFAULT_TERMS, LONGEST_HOLD};
use crate::redis::redis_fleet::{RedisCluster, Sentinels, redis_cli};
use crate::redis::{Failure, RedisStore};
use crate::store::redis_address as address;
use crate::unread::StoreFailure;
use crate::waiter::Threads;
use retry_policy::run::TokenRequest;

/// A store of the budget `name` that starts at `url`.
fn store(url: &str, name: &str) -> RedisStore<'static, Threads> {
    RedisStore::new(address(url), &name.parse().unwrap(), &Threads)
}

/// Take a token for a retry (or be refused one): one call of the script.
fn reserve(store: &mut RedisStore<'static, Threads>) -> Result<(), Failure> {
    let request = TokenRequest {
        latest: None,
        asked: None,
        longest_hold: LONGEST_HOLD,
    };
    store.reserve(request).map(drop)
}

/// The retries the budget `name` has counted, as a store starting at `url` shows them.
fn retries(url: &str, name: &str) -> u64 {
    let shown = store(url, name).show().unwrap();
    shown.written.map_or(0, |state| state.retries)
}

#[test]
fn a_store_on_a_cluster_follows_its_redirects_from_any_node() {
    let cluster = RedisCluster::start(0);
    let patient = |node: usize| format!("{}?timeout=10s", cluster.url(node));
    // One slot for all of a budget's keys and its job's history.
    let slot = cluster.slot_of("retry:budget:{api}");
    assert_eq!(cluster.slot_of("retry:budget:{api}:terms"), slot);
    assert_eq!(cluster.slot_of("retry:budget:history:{api}"), slot);
    let owner = cluster.owner_of(slot, 0);
    // From every node, MOVED to the owner; the script loaded there once it is flushed.
    for node in 0..cluster.len() {
        cluster.cli(owner, &["SCRIPT", "FLUSH"]);
        reserve(&mut store(&patient(node), "api")).unwrap();
    }
    assert_eq!(retries(&patient(0), "api"), cluster.len() as u64);
    // A MOVED without a host: the answering node's host.
    let other = (owner + 1) % cluster.len();
    for node in 0..cluster.len() {
        let setting = ["CONFIG", "SET", "cluster-preferred-endpoint-type"];
        cluster.cli(node, &[&setting[..], &["unknown-endpoint"]].concat());
    }
    let moved = cluster.cli(other, &["EVALSHA", "0", "1", "retry:budget:{api}"]);
    assert!(
        moved.contains(&format!(":{}", cluster.port(owner))),
        "{moved}"
    );
    reserve(&mut store(&patient(other), "api")).unwrap();
    assert_eq!(retries(&patient(other), "api"), cluster.len() as u64 + 1);
}

#[test]
fn a_store_on_a_cluster_follows_a_slot_as_it_moves_and_ends_a_loop() {
    let cluster = RedisCluster::start(0);
    let patient = |node: usize| format!("{}?timeout=10s", cluster.url(node));
    // ASK: a budget whose keys (its terms kept, so two of them) have moved to the node
    // its slot is moving to; then MOVED, once that node serves the slot.
    let slot = cluster.slot_of("retry:budget:{moving}");
    let from = cluster.owner_of(slot, 0);
    let to = (from + 1) % cluster.len();
    let mut moving = store(&patient(from), "moving");
    moving.set_terms(&DEFAULT_TERMS).unwrap();
    reserve(&mut moving).unwrap();
    cluster.begin_migration(slot, from, to);
    cluster.move_keys(slot, from, to);
    let count = |node: usize| {
        let slot = slot.to_string();
        cluster.cli(node, &["CLUSTER", "COUNTKEYSINSLOT", &slot])
    };
    assert_eq!((count(from), count(to)), ("0".into(), "2".into()));
    reserve(&mut moving).unwrap();
    cluster.assign(slot, to);
    reserve(&mut moving).unwrap();
    assert_eq!(retries(&patient(from), "moving"), 3);

    // TRYAGAIN: a budget nowhere yet, its slot moving (its two keys missing on both
    // nodes), is tried again until the call's time is up, and then is a store that cannot
    // be used now; once the slot has moved, it is made on its new node.
    let slot = cluster.slot_of("retry:budget:{fresh}");
    let from = cluster.owner_of(slot, 0);
    let to = (from + 1) % cluster.len();
    cluster.begin_migration(slot, from, to);
    // Time enough for a reply on busy cores, which a slot that stays moving outlasts. The
    // cluster's last answer is the call's; but on busy cores the wait for the call's thread,
    // bounded by the same time, may end before the thread hands it over: then the store did
    // not answer in time. Either way it cannot be used now, and the call ended in its time.
    let hasty = format!("{}?timeout=2s", cluster.url(from));
    match reserve(&mut store(&hasty, "fresh")) {
        Err(Failure::Failed(StoreFailure::Refused(message))) => {
            assert!(message.starts_with("TRYAGAIN"), "{message}");
        }
        Err(Failure::Failed(StoreFailure::TimedOut(limit))) => {
            assert_eq!(limit, Duration::from_secs(2));
        }
        other => panic!("a slot moving for longer than the call's time: {other:?}"),
    }
    cluster.assign(slot, to);
    reserve(&mut store(&hasty, "fresh")).unwrap();
    assert_eq!(retries(&patient(from), "fresh"), 1);

    // A loop: two nodes that each say the other serves the slot.
    let slot = cluster.slot_of("retry:budget:{looped}");
    let owner = cluster.owner_of(slot, 0);
    let other = (owner + 1) % cluster.len();
    let other_id = cluster.id(other);
    cluster.cli(
        owner,
        &["CLUSTER", "SETSLOT", &slot.to_string(), "NODE", &other_id],
    );
    let Err(Failure::Failed(StoreFailure::Refused(message))) =
        reserve(&mut store(&patient(owner), "looped"))
    else {
        panic!("a loop of redirects is a refusal")
    };
    assert!(message.contains("a loop of redirects"), "{message}");
}

/// The address of `main` through the sentinels at `ports`, in that order.
fn through(ports: &[u16], query: &str) -> String {
    let sentinels: Vec<String> = ports
        .iter()
        .map(|port| format!("127.0.0.1:{port}"))
        .collect();
    format!("redis+sentinel://{}/main?{query}", sentinels.join(","))
}

#[test]
fn a_store_behind_sentinels_uses_the_primary_past_a_misled_sentinel_and_a_failover() {
    let mut fleet = Sentinels::start();
    let sentinels = fleet.ports();
    // A sentinel that names the replica is passed over for the next; alone, it is a
    // store that cannot be used, never a replica used as the primary.
    let misled = fleet.add_misled(fleet.replica.port());
    assert_eq!(fleet.primary_named_by(misled), fleet.replica.port());
    let url = through(&[&[misled][..], &sentinels].concat(), "timeout=10s");
    let mut kept = store(&url, "api");
    reserve(&mut kept).unwrap();
    let key = ["EXISTS", "retry:budget:{api}"];
    assert_eq!(redis_cli(fleet.primary.port(), &key), "1");
    let alone = through(&[misled], "timeout=300ms");
    let Err(Failure::Failed(failure)) = reserve(&mut store(&alone, "api")) else {
        panic!("a replica is never used as the primary")
    };
    let message = failure.to_string();
    let replica = format!("redis://127.0.0.1:{}", fleet.replica.port());
    assert!(
        message.contains(&format!("names {replica}, which is not a primary")),
        "{message}"
    );
    // The kept connection is to a replica now: READONLY, and the sentinels asked again.
    fleet.fail_over();
    reserve(&mut kept).unwrap();
    let shown = store(&through(&sentinels, "timeout=10s"), "api")
        .show()
        .unwrap();
    assert_eq!(shown.written.map(|state| state.retries), Some(2));
}
