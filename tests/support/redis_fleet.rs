//! The Redis deployments fleets run, made of real servers on loopback for the tests of the
//! shared store: a Redis Cluster of three primaries (with a replica each when asked), made by
//! `redis-cli --cluster create`, and a primary with a replica watched by three
//! `redis-sentinel`s. Each is stopped when dropped, its servers with it. Their administration
//! (migrating a slot, a failover) goes through `redis-cli`, so this file, like
//! `redis_server.rs`, uses nothing but std and that file; the unit tests of the budget crate
//! include it too.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::redis_server::{RedisServer, free_port};

/// How long a cluster or a failover may take to settle.
const SETTLE: Duration = Duration::from_secs(60);

/// `redis-cli` against the server on loopback `port`, its reply's text (raw, one value a line).
pub(crate) fn redis_cli(port: u16, args: &[&str]) -> String {
    asked(port, args).unwrap_or_else(|why| panic!("redis-cli -p {port} {args:?}: {why}"))
}

/// `redis-cli` against the server on loopback `port`, or what went wrong: for a look at a server
/// that may be closing its connections (a primary made a replica).
fn asked(port: u16, args: &[&str]) -> Result<String, String> {
    let output = Command::new("redis-cli")
        .args(["-h", "127.0.0.1", "-p", &port.to_string()])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|err| {
            panic!(
                "cannot run redis-cli ({err}); the tests need it: apt-get install -y redis-tools"
            )
        });
    let stdout = String::from_utf8_lossy(&output.stdout)
        .trim_end()
        .to_string();
    match output.status.success() && !stdout.starts_with("Error:") {
        true => Ok(stdout),
        false => Err(format!(
            "{stdout}{}",
            String::from_utf8_lossy(&output.stderr)
        )),
    }
}

/// Whether the server on loopback `port` says its role is `role` (`master`, `slave`).
fn has_role(port: u16, role: &str) -> bool {
    asked(port, &["ROLE"]).is_ok_and(|reply| reply.starts_with(role))
}

/// Wait until `ready` holds, or fail naming `what`.
fn settle(what: &str, mut ready: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(
            start.elapsed() < SETTLE,
            "{what} did not happen within {SETTLE:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A Redis Cluster on loopback: three primaries, with `replicas` each.
pub(crate) struct RedisCluster {
    nodes: Vec<RedisServer>,
    /// `redis-cli`'s options for a cluster that speaks TLS: its authority.
    tls: Vec<String>,
}

/// The options that make a server a node of a cluster, its bus on a port of its own.
fn cluster_node() -> Vec<String> {
    let options = "--cluster-enabled yes --cluster-config-file nodes.conf \
                   --cluster-node-timeout 3000 --cluster-port";
    let mut options: Vec<String> = options.split_whitespace().map(String::from).collect();
    options.push(free_port().to_string());
    options
}

impl RedisCluster {
    /// Start the nodes, make them a cluster, and wait until every node agrees on the slots
    /// (and every replica has synchronised).
    pub(crate) fn start(replicas: usize) -> RedisCluster {
        let nodes = (0..3 * (1 + replicas))
            .map(|_| RedisServer::on_loopback_with(&cluster_node()))
            .collect();
        RedisCluster::of(nodes, replicas, Vec::new())
    }

    /// Three primaries that speak TLS only, to clients and to one another (`--tls-cluster`),
    /// each with the certificate of `names` that `make_server_certificate` made in `certs`, and
    /// each asking its clients for a certificate (`make_client_certificate`'s in `certs`).
    pub(crate) fn start_tls(certs: &std::path::Path, names: [&str; 3]) -> RedisCluster {
        let nodes = names
            .iter()
            .map(|name| {
                let mut options = cluster_node();
                options.extend(["--tls-cluster", "yes"].map(String::from));
                RedisServer::with_tls_from(certs, name, &options)
            })
            .collect();
        let file = |name: &str| certs.join(name).display().to_string();
        let tls = vec![
            "--tls".into(),
            "--cacert".into(),
            file("ca.crt"),
            "--cert".into(),
            file("client.crt"),
            "--key".into(),
            file("client.key"),
        ];
        RedisCluster::of(nodes, 0, tls)
    }

    /// The started `nodes` made a cluster with `replicas` a primary; `tls`, `redis-cli`'s
    /// options to reach them.
    fn of(nodes: Vec<RedisServer>, replicas: usize, tls: Vec<String>) -> RedisCluster {
        let cluster = RedisCluster { nodes, tls };
        let mut create = vec!["--cluster".to_string(), "create".into()];
        create.extend((0..cluster.len()).map(|index| format!("127.0.0.1:{}", cluster.port(index))));
        create.extend(["--cluster-replicas".into(), replicas.to_string()]);
        create.push("--cluster-yes".into());
        let create: Vec<&str> = create.iter().map(String::as_str).collect();
        cluster.cli(0, &create);
        cluster.await_agreement();
        settle("the replicas' synchronisation", || {
            (0..cluster.len()).all(|index| {
                let info = cluster.cli(index, &["INFO", "replication"]);
                info.contains("role:master") || info.contains("master_link_status:up")
            })
        });
        cluster
    }

    /// Wait until every node agrees on which node serves each slot.
    fn await_agreement(&self) {
        let first = format!("127.0.0.1:{}", self.nodes[0].port());
        settle("the nodes' agreement on the slots", || {
            let check = Command::new("redis-cli")
                .args(&self.tls)
                .args(["--cluster", "check", &first])
                .stdin(Stdio::null())
                .output()
                .expect("redis-cli --cluster check");
            let text = String::from_utf8_lossy(&check.stdout);
            check.status.success()
                && text.contains("All nodes agree about slots configuration")
                && text.contains("All 16384 slots covered")
                && (0..self.len()).all(|index| {
                    self.cli(index, &["CLUSTER", "INFO"])
                        .contains("cluster_state:ok")
                })
        });
    }

    /// The node `index`'s address, without any password.
    pub(crate) fn url(&self, index: usize) -> String {
        self.nodes[index].url().to_string()
    }

    /// The node `index`'s loopback port.
    pub(crate) fn port(&self, index: usize) -> u16 {
        self.nodes[index].port()
    }

    /// How many nodes there are.
    pub(crate) fn len(&self) -> usize {
        self.nodes.len()
    }

    /// `redis-cli` against node `index`.
    pub(crate) fn cli(&self, index: usize, args: &[&str]) -> String {
        let mut options: Vec<&str> = self.tls.iter().map(String::as_str).collect();
        options.extend(args);
        redis_cli(self.port(index), &options)
    }

    /// The cluster's id of node `index`.
    pub(crate) fn id(&self, index: usize) -> String {
        self.cli(index, &["CLUSTER", "MYID"])
    }

    /// The slot `key` hashes to.
    pub(crate) fn slot_of(&self, key: &str) -> u16 {
        let slot = self.cli(0, &["CLUSTER", "KEYSLOT", key]);
        slot.parse()
            .unwrap_or_else(|_| panic!("CLUSTER KEYSLOT said {slot:?}"))
    }

    /// The node that serves `slot`, as node `asked` sees it.
    pub(crate) fn owner_of(&self, slot: u16, asked: usize) -> usize {
        let nodes = self.cli(asked, &["CLUSTER", "NODES"]);
        let owner = nodes.lines().find_map(|line| {
            let fields: Vec<&str> = line.split(' ').collect();
            let serves = fields.get(8..)?.iter().any(|range| {
                let (low, high) = range.split_once('-').unwrap_or((range, range));
                matches!((low.parse::<u16>(), high.parse::<u16>()), (Ok(low), Ok(high)) if (low..=high).contains(&slot))
            });
            let port: u16 = fields.get(1)?.split(['@', ':']).nth(1)?.parse().ok()?;
            serves.then_some(port)
        });
        let port = owner.unwrap_or_else(|| panic!("no node serves slot {slot}:\n{nodes}"));
        (0..self.len())
            .find(|&index| self.port(index) == port)
            .expect("the owner is a node of the cluster")
    }

    /// The primaries, by index.
    pub(crate) fn primaries(&self) -> Vec<usize> {
        (0..self.len())
            .filter(|&index| self.cli(index, &["ROLE"]).starts_with("master"))
            .collect()
    }

    /// A replica of the primary `primary`.
    pub(crate) fn replica_of(&self, primary: usize) -> usize {
        let port = self.port(primary).to_string();
        (0..self.len())
            .find(|&index| {
                let role = self.cli(index, &["ROLE"]);
                role.starts_with("slave") && role.lines().nth(2) == Some(&port)
            })
            .unwrap_or_else(|| panic!("node {primary} has no replica"))
    }

    /// Start moving `slot` from node `from` to node `to`: `from` answers `ASK` for its keys it
    /// no longer holds, `to` takes them after `ASKING`.
    pub(crate) fn begin_migration(&self, slot: u16, from: usize, to: usize) {
        let slot = slot.to_string();
        self.cli(
            to,
            &["CLUSTER", "SETSLOT", &slot, "IMPORTING", &self.id(from)],
        );
        self.cli(
            from,
            &["CLUSTER", "SETSLOT", &slot, "MIGRATING", &self.id(to)],
        );
    }

    /// Move the keys of `slot` from `from` to `to` all at once, as `redis-cli --cluster
    /// reshard` moves a batch; `from` still serves the slot, and answers `ASK` for them.
    pub(crate) fn move_keys(&self, slot: u16, from: usize, to: usize) {
        let slot = slot.to_string();
        let keys = self.cli(from, &["CLUSTER", "GETKEYSINSLOT", &slot, "100"]);
        let keys: Vec<&str> = keys.lines().filter(|key| !key.is_empty()).collect();
        if !keys.is_empty() {
            let port = self.port(to).to_string();
            let mut migrate = vec!["MIGRATE", "127.0.0.1", &port, "", "0", "5000", "KEYS"];
            migrate.extend(keys.iter().copied());
            self.cli(from, &migrate);
        }
    }

    /// Give `slot` to node `to` for good, telling every primary, and wait until every node
    /// knows.
    pub(crate) fn assign(&self, slot: u16, to: usize) {
        let slot_text = slot.to_string();
        let owner = self.id(to);
        for index in std::iter::once(to).chain(self.primaries()) {
            self.cli(index, &["CLUSTER", "SETSLOT", &slot_text, "NODE", &owner]);
        }
        settle("every node's learning the slot's new owner", || {
            (0..self.len()).all(|index| self.owner_of(slot, index) == to)
        });
    }

    /// Move `slot` from node `from` to node `to`, keys and all, while calls go on.
    pub(crate) fn migrate(&self, slot: u16, from: usize, to: usize) {
        self.begin_migration(slot, from, to);
        self.move_keys(slot, from, to);
        self.assign(slot, to);
    }

    /// Fail the primary `primary` over to a replica of it, as an operator does (`CLUSTER
    /// FAILOVER` on the replica: the primary stops taking writes until the replica has them
    /// all), and wait until every node knows; the replica's index.
    pub(crate) fn fail_over(&self, primary: usize) -> usize {
        let replica = self.replica_of(primary);
        self.cli(replica, &["CLUSTER", "FAILOVER"]);
        settle("the failover", || {
            has_role(self.port(replica), "master") && has_role(self.port(primary), "slave")
        });
        self.await_agreement();
        replica
    }
}

/// A primary and its replica on loopback, watched by three `redis-sentinel`s under the name
/// `main`; stopped when dropped.
pub(crate) struct Sentinels {
    pub(crate) primary: RedisServer,
    pub(crate) replica: RedisServer,
    sentinels: Vec<(Child, u16, tempfile::TempDir)>,
}

impl Sentinels {
    /// The primary, its replica synchronised, and three sentinels that agree on them.
    pub(crate) fn start() -> Sentinels {
        let primary = RedisServer::on_loopback();
        let replica = RedisServer::on_loopback_with(&[
            "--replicaof".into(),
            "127.0.0.1".into(),
            primary.port().to_string(),
        ]);
        settle("the replica's synchronisation", || {
            redis_cli(replica.port(), &["INFO", "replication"]).contains("master_link_status:up")
        });
        let sentinels = (0..3)
            .map(|_| start_sentinel(primary.port(), "main"))
            .collect();
        let fleet = Sentinels {
            primary,
            replica,
            sentinels,
        };
        settle("the sentinels' knowing one another and the replica", || {
            fleet.ports().iter().all(|&port| {
                let info = redis_cli(port, &["SENTINEL", "MASTER", "main"]);
                let field = |name: &str| {
                    let mut lines = info.lines();
                    lines.find(|line| *line == name)?;
                    lines.next().map(str::to_string)
                };
                field("num-other-sentinels").as_deref() == Some("2")
                    && field("num-slaves").as_deref() == Some("1")
            })
        });
        fleet
    }

    /// The sentinels' loopback ports.
    pub(crate) fn ports(&self) -> Vec<u16> {
        self.sentinels.iter().map(|(_, port, _)| *port).collect()
    }

    /// A sentinel that names the server at `port` (a replica) as `main`'s primary: it watches
    /// it under that name, as a sentinel of a stale configuration would. Its port.
    pub(crate) fn add_misled(&mut self, port: u16) -> u16 {
        let misled = start_sentinel(port, "main");
        let port = misled.1;
        self.sentinels.push(misled);
        port
    }

    /// Where the sentinel at `port` says `main`'s primary is.
    pub(crate) fn primary_named_by(&self, port: u16) -> u16 {
        let answer = redis_cli(port, &["SENTINEL", "get-master-addr-by-name", "main"]);
        answer
            .lines()
            .nth(1)
            .and_then(|port| port.parse().ok())
            .expect("a primary's port")
    }

    /// Fail `main` over to its replica (`SENTINEL FAILOVER`), and wait until the replica is the
    /// primary, the sentinels all say so, and the old primary is a replica of it.
    pub(crate) fn fail_over(&self) {
        let first = self.ports()[0];
        redis_cli(first, &["SENTINEL", "FAILOVER", "main"]);
        let replica = self.replica.port();
        settle("the sentinels' failover", || {
            has_role(replica, "master")
                && has_role(self.primary.port(), "slave")
                && self.ports()[..3]
                    .iter()
                    .all(|&port| self.primary_named_by(port) == replica)
        });
    }
}

impl Drop for Sentinels {
    fn drop(&mut self) {
        for (child, _, _) in &mut self.sentinels {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A `redis-sentinel` on a loopback port that watches the primary at `primary_port` as `name`.
fn start_sentinel(primary_port: u16, name: &str) -> (Child, u16, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("a temporary directory for redis-sentinel");
    let port = free_port();
    let config = dir.path().join("sentinel.conf");
    std::fs::write(
        &config,
        format!(
            "port {port}\nbind 127.0.0.1\ndir {dir}\nlogfile {dir}/sentinel.log\n\
             sentinel monitor {name} 127.0.0.1 {primary_port} 2\n\
             sentinel down-after-milliseconds {name} 2000\n\
             sentinel failover-timeout {name} 10000\n",
            dir = dir.path().display()
        ),
    )
    .expect("write the sentinel's configuration");
    (run_sentinel(&config, port), port, dir)
}

/// A `redis-sentinel` started with `config`, once it listens on loopback `port`.
fn run_sentinel(config: &std::path::Path, port: u16) -> Child {
    let child = Command::new("redis-sentinel")
        .arg(config)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .unwrap_or_else(|err| {
            panic!("cannot start redis-sentinel ({err}); the tests need it: apt-get install -y redis-sentinel")
        });
    settle("the sentinel's listening", || {
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    child
}

/// A `redis-sentinel` that speaks TLS only, to its clients (asking them for a certificate) and
/// to the primary it watches as `main`, the TLS server `primary` (`RedisServer::with_tls`),
/// with the server certificate made for it; killed when dropped.
pub(crate) struct TlsSentinel {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl TlsSentinel {
    /// The sentinel of `primary`, alone (a quorum of one), listening.
    pub(crate) fn start(primary: &RedisServer) -> TlsSentinel {
        let dir = tempfile::tempdir().expect("a temporary directory for redis-sentinel");
        let port = free_port();
        let certs = primary.certificates().display().to_string();
        let config = dir.path().join("sentinel.conf");
        std::fs::write(
            &config,
            format!(
                "port 0\ntls-port {port}\nbind 127.0.0.1\ndir {dir}\n\
                 logfile {dir}/sentinel.log\ntls-cert-file {certs}/server.crt\n\
                 tls-key-file {certs}/server.key\ntls-ca-cert-file {certs}/ca.crt\n\
                 tls-auth-clients yes\ntls-replication yes\n\
                 sentinel monitor main 127.0.0.1 {primary_port} 1\n",
                dir = dir.path().display(),
                primary_port = primary.port(),
            ),
        )
        .expect("write the sentinel's configuration");
        TlsSentinel {
            child: run_sentinel(&config, port),
            port,
            _dir: dir,
        }
    }

    /// Its loopback port.
    pub(crate) fn port(&self) -> u16 {
        self.port
    }
}

impl Drop for TlsSentinel {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
