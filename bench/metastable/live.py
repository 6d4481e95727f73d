#!/usr/bin/env python3
"""The metastable-failure experiment, live on one machine: see bench/metastable/README.md.

Run by bench/metastable/run, which builds what it needs. For each configuration of clients it
starts the server (server.c) in a CPU cgroup of its own on one core, drives a fleet of real
client processes open-loop from the other core, caps the server's CPU for a while (the
trigger), and records every request and every attempt the server saw. Then it asks
`retry-sim metastable` what it predicts for the same scale, and writes the table, the
picture and the raw series.
"""

import json
import os
import resource
import signal
import socket
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
RETRY = os.environ["RETRY_BIN"]
SIM = os.environ["RETRY_SIM_BIN"]
SERVER = os.environ["METASTABLE_SERVER"]
DEBIAN_RETRY = os.environ["PEER_MINFRIN"]
OUT = os.environ.get("METASTABLE_OUT", os.path.join(HERE, "results"))

# The paper's parameters (Huang et al., OSDI 2022; lexiangh/Metastability, Retry_Metastability/
# client/experiments.sh): the trigger after 60 s (initialWait), for 10 s (triggerLength), at 0.40
# of the primary's 2 CPUs (triggerCpu; primary/trigger.sh restores 2): 0.2 of its capacity (and
# 20 s beyond the paper's runs, with METASTABLE_TRIGGER_SECONDS=20, to see past the boundary); a
# 3 s time limit per attempt (experiment.sh -o 3); 4 resends (retry=4). The rate is scaled to
# what one core of clients can start; the server's work makes the load the fraction of its
# capacity that a request every 75 us was of the simulator's calibrated capacity (0.38).
WARMUP = float(os.environ.get("METASTABLE_WARMUP", "60"))
TRIGGER_SECONDS = float(os.environ.get("METASTABLE_TRIGGER_SECONDS", "10"))
TRIGGER_CAPACITY = 0.2
OBSERVE = float(os.environ.get("METASTABLE_OBSERVE", "30"))
TIMEOUT = 3
RATE = float(os.environ.get("METASTABLE_RATE", "10"))
LOAD = 0.38
WORK_MS = 1000.0 * LOAD / RATE
# What a series was measured at, recorded with it: runs merge only with runs at the same.
SCALE = {"rate": RATE, "work_ms": WORK_MS, "load": LOAD, "warmup": WARMUP, "observe": OBSERVE,
         "trigger_capacity": TRIGGER_CAPACITY, "timeout": TIMEOUT}
PORT = 18090
REDIS_PORT = 18091
CLIENT_CPU, SERVER_CPU = "0", "1"


def url():
    return f"http://127.0.0.1:{PORT}/"


def curl(*extra):
    return ["curl", "-fsS", "-o", "/dev/null", *extra, url()]


# The terms `retry budget set` keeps for a configuration's named budget, in its store, before
# its clients start.
TERMS = {
    "ratio-redis": ["--rate", "10/1m", "--ratio", "0.1"],
    "breaker": ["--rate", "20/5m", "--breaker", "5/10s", "--cool-down", "5s"],
}


def configurations(budget_dir):
    """(name, what it is, argv of one request, the simulator's policy and options for it)."""
    tool = [RETRY, "-q", "--timeout", f"{TIMEOUT}s"]
    ratio = ["--budget", "live"]
    return [
        ("none", "curl alone", curl("-m", str(TIMEOUT)), ("none", [])),
        ("resend", "retry --budget off --base 0s -n 5 (the paper's client)",
         tool + ["--budget", "off", "--base", "0s", "-n", "5", "--"] + curl(), ("resend", [])),
        ("defaults", "retry (its defaults: the default budget, 20/5m on this machine)",
         tool + ["--"] + curl(), ("defaults", ["--hosts", "1"])),
        ("budget-off", "retry --budget off (the defaults without their budget)",
         tool + ["--budget", "off", "--"] + curl(), ("budget-off", [])),
        ("budget-file", "retry --budget live (file store, 10/1m)",
         tool + ["--budget", "live", "--budget-store", f"file:{budget_dir}", "--"] + curl(), None),
        ("breaker", "retry --budget live, its terms the default budget's and a breaker "
         "(5 give-ups in 10 s, a cool-down of 5 s)",
         tool + ["--budget", "live", "--budget-store", f"file:{budget_dir}", "--"] + curl(), None),
        ("ratio-redis", "retry --budget live, its terms 10/1m and a ratio of 0.1, shared on redis",
         tool + ratio + ["--budget-store", f"redis://127.0.0.1:{REDIS_PORT}", "--"] + curl(),
         ("ratio-shared", ["--hosts", "1"])),
        ("curl-retry", "curl --retry 4 -m 3", curl("-m", str(TIMEOUT), "--retry", "4"),
         ("budget-off", ["--jitter", "none", "--cap", "8s"])),
        ("debian-retry", "Debian's retry -t 5 (5 attempts, 10 s apart)",
         [DEBIAN_RETRY, "-t", "5", "--"] + curl("-m", str(TIMEOUT)),
         ("budget-off", ["--jitter", "none", "--base", "10s", "--cap", "10s"])),
        ("shell-loop", "for i in 1..5: curl && break; sleep 1",
         ["sh", "-c", "for i in 1 2 3 4 5; do \"$@\" && exit 0; sleep 1; done; exit 1", "sh"]
         + curl("-m", str(TIMEOUT)),
         ("budget-off", ["--jitter", "none", "--base", "1s", "--cap", "1s"])),
    ]


class Cgroup:
    """The server's CPU cgroup: cgroup v2's cpu.max, or v1's cpu.cfs_quota_us."""

    PERIOD = 100_000

    def __init__(self):
        v2 = "/sys/fs/cgroup/cgroup.controllers"
        if os.path.exists(v2):
            self.path = "/sys/fs/cgroup/retry-metastable"
            with open("/sys/fs/cgroup/cgroup.subtree_control", "w") as control:
                control.write("+cpu")
        else:
            self.path = "/sys/fs/cgroup/cpu/retry-metastable"
        os.makedirs(self.path, exist_ok=True)
        self.v2 = os.path.exists(v2)

    def cap(self, cpus):
        quota = int(cpus * self.PERIOD)
        if self.v2:
            self._write("cpu.max", f"{quota} {self.PERIOD}")
        else:
            self._write("cpu.cfs_period_us", str(self.PERIOD))
            self._write("cpu.cfs_quota_us", str(quota))

    def join(self):
        self._write("cgroup.procs", str(os.getpid()))

    def remove(self):
        """Remove the cgroup, which its processes have left."""
        os.rmdir(self.path)

    def _write(self, name, value):
        with open(os.path.join(self.path, name), "w") as file:
            file.write(value)


def drive(argv, start, seconds, rate, record):
    """Start `argv` every 1/rate s from `start` (epoch) for `seconds`, open-loop, with its
    output thrown away; write each request's start, end and exit status to `record`."""
    null = os.open(os.devnull, os.O_RDWR)
    actions = [(os.POSIX_SPAWN_DUP2, null, 0), (os.POSIX_SPAWN_DUP2, null, 1),
               (os.POSIX_SPAWN_DUP2, null, 2)]
    started, ended = {}, []
    lock = threading.Lock()
    done = threading.Event()

    def reap():
        while not done.is_set() or started:
            try:
                pid, status = os.waitpid(-1, 0)
            except ChildProcessError:
                time.sleep(0.01)
                continue
            with lock:
                begun = started.pop(pid, None)
            if begun is not None:
                ended.append((begun, time.time(), os.waitstatus_to_exitcode(status)))

    reaper = threading.Thread(target=reap)
    reaper.start()
    count = int(seconds * rate)
    behind = 0.0
    for index in range(count):
        due = start + index / rate
        pause = due - time.time()
        if pause > 0:
            time.sleep(pause)
        behind = max(behind, time.time() - due)
        with lock:
            pid = os.posix_spawnp(argv[0], argv, os.environ, file_actions=actions)
            started[pid] = due
    # Requests still in flight at the end are ended, as the observation is over.
    time.sleep(1)
    with lock:
        late = list(started)
    for pid in late:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    done.set()
    deadline = time.time() + 10
    while started and time.time() < deadline:
        time.sleep(0.1)
    for pid in list(started):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    reaper.join(timeout=5)
    with open(record, "w") as file:
        json.dump(ended, file)
    # Open loop holds only while each request starts when due; a client core that cannot keep
    # the rate makes a smaller load than the one measured for.
    if behind > 1 / rate:
        print(f"bench/metastable: the clients fell {behind * 1000:.0f} ms behind their schedule, "
              f"more than one interval: this core cannot start {rate:g} requests a second",
              file=sys.stderr)
    else:
        print(f"bench/metastable: the clients kept to their schedule within "
              f"{behind * 1000:.1f} ms", file=sys.stderr)


def wait_for_port(port, process):
    """Wait until `process` accepts connections on `port` on loopback, for 10 s at most."""
    deadline = time.time() + 10
    while time.time() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"bench/metastable: {process.args[0]} ended with {process.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"bench/metastable: nothing listens on port {port} after 10 s")


def run_one(name, argv, cgroup, budget_dir):
    """One configuration through the trigger: the requests' and the server's records."""
    os.makedirs(OUT, exist_ok=True)
    server_log = os.path.join(OUT, f"{name}-{TRIGGER_SECONDS:g}s.server.log")
    record = os.path.join(OUT, f"{name}-{TRIGGER_SECONDS:g}s.requests.json")
    cgroup.cap(1.0)

    def in_cgroup():
        cgroup.join()
        os.sched_setaffinity(0, {int(SERVER_CPU)})
        # A server held down keeps a connection open for each attempt queued.
        _, most = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (most, most))

    server = subprocess.Popen([SERVER, str(PORT), f"{WORK_MS}", server_log], preexec_fn=in_cgroup)
    redis = None
    try:
        if any(word.startswith("redis://") for word in argv):
            redis = subprocess.Popen(["taskset", "-c", CLIENT_CPU, "redis-server", "--port",
                                      str(REDIS_PORT), "--bind", "127.0.0.1", "--save", "",
                                      "--appendonly", "no"], stdout=subprocess.DEVNULL)
            wait_for_port(REDIS_PORT, redis)
        wait_for_port(PORT, server)
        # Every configuration starts with full budgets: the named ones', and this machine's
        # default ones (the clients' XDG_STATE_HOME, set in main).
        defaults = os.path.join(os.environ["XDG_STATE_HOME"], "retry", "default-budgets")
        for directory in (budget_dir, defaults):
            os.makedirs(directory, mode=0o700, exist_ok=True)
            for path in os.listdir(directory):
                os.unlink(os.path.join(directory, path))
        if name in TERMS:
            # The budget's terms, once, in the store every client reads them from.
            store = argv[argv.index("--budget-store") + 1]
            subprocess.run([RETRY, "budget", "set", "live", *TERMS[name], "--budget-store", store],
                           check=True)
        start = time.time() + 1
        seconds = WARMUP + TRIGGER_SECONDS + OBSERVE
        driver = subprocess.Popen(["taskset", "-c", CLIENT_CPU, sys.executable, __file__,
                                   "drive", json.dumps(argv), str(start), str(seconds),
                                   str(RATE), record])
        time.sleep(max(0.0, start + WARMUP - time.time()))
        cgroup.cap(TRIGGER_CAPACITY)
        time.sleep(max(0.0, start + WARMUP + TRIGGER_SECONDS - time.time()))
        cgroup.cap(1.0)
        if driver.wait() != 0:
            raise RuntimeError(f"bench/metastable: the clients' driver failed for {name}")
    finally:
        cgroup.cap(1.0)
        for process in (server, redis):
            if process:
                process.terminate()
                process.wait()
    with open(record) as file:
        requests = json.load(file)
    with open(server_log) as file:
        attempts = [float(line.split()[1]) for line in file if line.startswith("a ")]
    return start, requests, attempts


def series(start, requests, attempts):
    """Per second from the start: goodput (successes per request due) and offered load
    (attempts reaching the server, per attempt it can finish a second)."""
    seconds = int(WARMUP + TRIGGER_SECONDS + OBSERVE)
    good, offered = [0] * seconds, [0] * seconds
    for _, end, status in requests:
        second = int(end - start)
        if status == 0 and 0 <= second < seconds:
            good[second] += 1
    capacity = 1000.0 / WORK_MS
    for arrived in attempts:
        second = int(arrived - start)
        if 0 <= second < seconds:
            offered[second] += 1
    return [g / RATE for g in good], [o / capacity for o in offered]


def recovery(goodput):
    """Seconds from the trigger's end until goodput, over 2 s, stayed at 90% of the requests
    for good, if it did for at least the last 10 s; as the simulator judges, in 2 s bins since
    one second holds only RATE requests."""
    end = int(WARMUP + TRIGGER_SECONDS)
    pairs = [(second, (goodput[second] + goodput[second + 1]) / 2)
             for second in range(end, len(goodput) - 1, 2)]
    good_from = len(goodput)
    for second, value in reversed(pairs):
        if value < 0.9:
            break
        good_from = second
    return good_from - end if len(goodput) - good_from >= 10 else None


def simulated(policy, options):
    """What `retry-sim metastable` predicts for this scale: recovery seconds or None."""
    argv = [SIM, "metastable", "--policies", policy, "--trigger-capacities",
            str(TRIGGER_CAPACITY), "--trigger-seconds", f"{TRIGGER_SECONDS:g}s", "--intervals",
            f"{1000 / RATE:g}ms", "--capacity", f"{1000 / WORK_MS:.4f}/s", "--observe",
            f"{OBSERVE:g}s", "--seed", "1", "--csv", "/dev/stdout", *options]
    rows = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
    row = next(line for line in rows.splitlines() if line.startswith(policy + ","))
    fields = row.split(",")
    return float(fields[5]) if fields[4] == "true" else None


def svg(runs, path):
    """Goodput and offered load over time through one trigger, one line per configuration, two
    panels."""
    colours = ["#000000", "#E69F00", "#56B4E9", "#009E73", "#CC79A7", "#0072B2", "#D55E00",
               "#999999"]
    width, height, left, top, plot_w, plot_h = 1100, 470, 60, 50, 460, 300
    first = int(WARMUP) - 20
    trigger_seconds = runs[0]["trigger_seconds"]
    assert all(run["trigger_seconds"] == trigger_seconds for run in runs)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'font-family="sans-serif" font-size="12"><rect width="100%" height="100%" '
             f'fill="white"/><text x="{width / 2}" y="20" text-anchor="middle" font-size="15">'
             f'Live: {RATE:g} requests/s at {LOAD} of the server, its CPU at '
             f'{TRIGGER_CAPACITY} for {trigger_seconds:g}s from {WARMUP:g}s</text>']
    for panel, (label, key, top_value) in enumerate(
            [("Goodput (successes a second per request a second)", "goodput", 2.0),
             ("Load (attempts a second per capacity)", "offered", 2.0)]):
        x0 = left + panel * (plot_w + 90)
        parts.append(f'<text x="{x0 + plot_w / 2}" y="{top - 10}" text-anchor="middle">'
                     f'{label}</text>')
        parts.append(f'<rect x="{x0}" y="{top}" width="{plot_w}" height="{plot_h}" '
                     f'fill="none" stroke="#333"/>')
        for tick in (0.5, 1.0, 1.5):
            y = top + plot_h * (1 - tick / top_value)
            parts.append(f'<line x1="{x0}" x2="{x0 + plot_w}" y1="{y}" y2="{y}" '
                         f'stroke="#e5e5e5"/><text x="{x0 - 6}" y="{y + 4}" '
                         f'text-anchor="end">{tick}</text>')
        seconds = len(runs[0][key])
        assert all(len(run[key]) == seconds for run in runs)
        for tick in range(first, seconds + 1, 10):
            x = x0 + plot_w * (tick - first) / (seconds - first)
            parts.append(f'<text x="{x}" y="{top + plot_h + 16}" text-anchor="middle">'
                         f'{tick}</text>')
        parts.append(f'<text x="{x0 + plot_w / 2}" y="{top + plot_h + 34}" '
                     f'text-anchor="middle">seconds</text>')
        for index, run in enumerate(runs):
            points = " ".join(
                f"{x0 + plot_w * (second - first) / (seconds - first):.1f},"
                f"{top + plot_h * (1 - min(value, top_value) / top_value):.1f}"
                for second, value in enumerate(run[key]) if second >= first)
            parts.append(f'<polyline fill="none" stroke="{colours[index % len(colours)]}" '
                         f'stroke-width="2" points="{points}"/>')
    for index, run in enumerate(runs):
        x = 40 + index * (width - 80) / len(runs)
        parts.append(f'<rect x="{x}" y="{height - 50}" width="14" height="4" '
                     f'fill="{colours[index % len(colours)]}"/><text x="{x + 20}" '
                     f'y="{height - 44}">{run["name"]}</text>')
    parts.append("</svg>\n")
    with open(path, "w") as file:
        file.write("\n".join(parts))


def main():
    if sys.argv[1:2] == ["drive"]:
        _, _, argv, start, seconds, rate, record = sys.argv
        drive(json.loads(argv), float(start), float(seconds), float(rate), record)
        return
    only = set(sys.argv[1:])
    budget_dir = os.path.join(OUT, "budgets")
    names = [name for name, *_ in configurations(budget_dir)]
    if only - set(names):
        sys.exit(f"bench/metastable: no configuration {', '.join(sorted(only - set(names)))}; "
                 f"there are {', '.join(names)}")
    os.makedirs(budget_dir, exist_ok=True)
    # The clients' state: this machine's default budgets, as every client run of a
    # configuration shares them, apart from the home of whoever runs the bench.
    os.environ["XDG_STATE_HOME"] = os.path.join(OUT, "state")
    cgroup = Cgroup()
    try:
        runs = run_all(only, cgroup, budget_dir)
    finally:
        cgroup.remove()
    runs = merged(runs, names)
    with open(os.path.join(OUT, "series.json"), "w") as file:
        json.dump({"scale": SCALE, "runs": runs}, file)
    paper = [run for run in runs if run["trigger_seconds"] == 10]
    if paper:
        svg(paper, os.path.join(OUT, "metastable-live.svg"))


def run_all(only, cgroup, budget_dir):
    """Every configuration named in `only` (all when it is empty) through the trigger."""
    runs = []
    for name, what, argv, simulation in configurations(budget_dir):
        if only and name not in only:
            continue
        print(f"bench/metastable: {name}: {' '.join(argv)}", file=sys.stderr)
        start, requests, attempts = run_one(name, argv, cgroup, budget_dir)
        goodput, offered = series(start, requests, attempts)
        runs.append({
            "name": name, "what": what, "argv": argv, "trigger_seconds": TRIGGER_SECONDS,
            "recovery": recovery(goodput),
            "attempts_per_request": len(attempts) / max(1, len(requests)),
            "peak_load": max(offered),
            "goodput": goodput, "offered": offered,
        })
        if simulation:
            runs[-1]["simulated"] = simulated(*simulation)
        print(f"bench/metastable: {name}: recovery {runs[-1]['recovery']}, "
              f"simulated {runs[-1].get('simulated', 'nowhere')}", file=sys.stderr)
    return runs


def merged(runs, order):
    """`runs`, with the other runs of an earlier series at the same scale (other
    configurations, other triggers), in `order`: a rerun replaces only its own."""
    try:
        with open(os.path.join(OUT, "series.json")) as file:
            earlier = json.load(file)
    except FileNotFoundError:
        return runs
    if earlier.get("scale") != SCALE:
        return runs
    fresh = {(run["name"], run["trigger_seconds"]) for run in runs}
    kept = [run for run in earlier["runs"] if (run["name"], run["trigger_seconds"]) not in fresh]
    return sorted(kept + runs, key=lambda run: (run["trigger_seconds"], order.index(run["name"])))


if __name__ == "__main__":
    main()
