"""The measurements behind BENCHMARKS.md; run through bench/run.sh, which builds the binary."""

import http.server
import json
import os
import platform
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

RETRY = os.environ["RETRY_BIN"]
# The default build less its default `tls` feature (bench/run.sh).
NO_TLS = os.environ["RETRY_NO_TLS"]
SIM = os.environ["RETRY_SIM_BIN"]
# The release archive's build of the tool, and the peers (see bench/run.sh).
RELEASE = os.environ["RETRY_RELEASE"]
FLOOR, MINFRIN, ATTEMPT = os.environ["SPAWN_FLOOR"], os.environ["PEER_MINFRIN"], os.environ["PEER_ATTEMPT"]
# bench/starts.c, built by bench/run.sh.
STARTS = os.environ["STARTS_BIN"]
# The measured runs keep this machine's default retry budgets apart from the home of whoever runs
# the bench. Those that retry hundreds of times in a second, which the default budget is there
# to stop, turn it off; what the budget itself costs has a section of its own.
STATE = tempfile.mkdtemp(prefix="retry-bench-state-")
os.environ["XDG_STATE_HOME"] = STATE
OFF = "--budget off"


def sh(command):
    return subprocess.run(command, shell=True, check=True, capture_output=True, text=True).stdout


def hyperfine(*commands, runs=200, warmup=20):
    """Mean and standard deviation in ms of each command, with hyperfine (no shell in between)."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run(
            ["hyperfine", "-N", "--warmup", str(warmup), "--runs", str(runs), "--export-json", out.name, *commands],
            check=True, capture_output=True,
        )
        results = json.load(open(out.name))["results"]
    return [(r["mean"] * 1000, r["stddev"] * 1000) for r in results]


def instructions(command):
    """Instructions executed by the command's own process (callgrind, children not traced)."""
    with tempfile.TemporaryDirectory() as scratch:
        log = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={scratch}/out", *command.split()],
            capture_output=True, text=True,
        ).stderr
    return int(re.search(r"Collected : (\d+)", log).group(1))


def inclusive_instructions(command):
    """callgrind_annotate's inclusive figures for the command's own process, by function."""
    with tempfile.TemporaryDirectory() as scratch:
        subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={scratch}/out", *command.split()],
            capture_output=True, check=False,
        )
        listing = sh(f"callgrind_annotate --inclusive=yes --threshold=100 {scratch}/out")
    figures = {}
    for line in listing.splitlines():
        found = re.match(r"\s*([\d,]+) \(\s*[\d.]+%\)\s+(\S+?):(.+?) \[", line)
        if found:
            figures.setdefault(found.group(3), int(found.group(1).replace(",", "")))
    return figures


# Where a run's instructions go, by the functions that own each part (inclusive figures; a part
# whose function a build does not have counts 0).
PHASES = [
    ("std's start-up (the main thread's stack bounds)", [r"pthread_getattr_np"], []),
    ("building the clap definition, and dropping it", [r"Cli as clap_builder::derive::Args>::augment_args$",
                                                       r"^core::ptr::drop_in_place<clap_builder::builder::command::Command>$"], []),
    # Cli::parse_args builds the definition, parses, takes the values out and drops it all.
    ("parsing the command line, and taking the values out", [r"^retry_exec::options::Cli::parse_args$"],
     ["building the clap definition, and dropping it"]),
    ("the attempt: starting it, waiting for it, clearing its group", [r"ProcessRunner as retry_policy::run::ports::Attempts>::run$"], []),
]


def phases(command):
    """The run's instructions split into loading, the PHASES, and the rest of main: each phase the
    inclusive figures of the functions its patterns name, less the phases it names that run inside."""
    figures = inclusive_instructions(command)
    total = figures["PROGRAM TOTALS"] if "PROGRAM TOTALS" in figures else max(figures.values())
    main = next(value for name, value in figures.items() if name == "main")
    parts = [("loading and relocating the binary, before `main`", total - main)]
    for label, patterns, inside in PHASES:
        own = sum(max((v for n, v in figures.items() if re.search(p, n)), default=0) for p in patterns)
        parts.append((label, own - sum(v for name, v in parts if name in inside)))
    parts.append(("the rest: configuration, the run, the exit", main - sum(v for _, v in parts[1:])))
    return total, parts


def peak_rss_kib(command):
    """Peak resident set of the command's process, by GNU time (in KiB)."""
    return peak_rss_and_faults(command)[0]


def peak_rss_and_faults(command):
    """Peak resident set of the command's process (in KiB), and the minor page faults of it and
    the children it waited for, by GNU time."""
    log = subprocess.run(["/usr/bin/time", "-f", "%M %R", *command.split()], capture_output=True, text=True).stderr
    rss, faults = log.strip().splitlines()[-1].split()
    return int(rss), int(faults)


def percentile(values, q):
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(q * len(ordered)) - 1))]


def events(stderr):
    return [json.loads(line) for line in stderr.splitlines() if line.startswith('{"event"')]


def wait_lateness(wait, count):
    """How late attempts start after a scheduled wait, in ms, from the tool's own JSON events."""
    run = subprocess.run(
        [RETRY, *OFF.split(), "--log-format", "json", "--jitter", "none", "--base", wait, "--cap", wait,
         "-n", str(count + 1), "false"],
        capture_output=True, text=True,
    )
    starts = {e["attempt"]: e["offset_ms"] for e in events(run.stderr) if e["event"] == "attempt_start"}
    ends = {e["attempt"]: e["duration_ms"] for e in events(run.stderr) if e["event"] == "attempt_end"}
    waits = {e["before_attempt"]: e["wait_ms"] for e in events(run.stderr) if e["event"] == "wait"}
    return [starts[a] - (starts[a - 1] + ends[a - 1] + waits[a]) for a in range(2, count + 2)]


def signal_latency(runs):
    """Time from SIGTERM, sent during a 60 s wait, to the tool's exit, in ms."""
    latencies = []
    for _ in range(runs):
        tool = subprocess.Popen(
            [RETRY, "--log-format", "json", "--base", "60s", "--jitter", "none", "-n", "2", "false"],
            stderr=subprocess.PIPE, text=True,
        )
        for line in tool.stderr:
            if '"event":"wait"' in line:
                break
        time.sleep(0.02)
        sent = time.perf_counter()
        tool.send_signal(signal.SIGTERM)
        tool.wait()
        latencies.append((time.perf_counter() - sent) * 1000)
    return latencies


def cpu_while(args, settle=0.3, window=1.5):
    """CPU time (ns) the tool itself uses over `window` seconds of a run of `args` (schedstat)."""
    tool = subprocess.Popen([RETRY, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(settle)
    on_cpu = lambda: int(open(f"/proc/{tool.pid}/schedstat").read().split()[0])
    before = on_cpu()
    time.sleep(window)
    used = on_cpu() - before
    tool.terminate()
    tool.wait()
    return used


def throughput():
    """MB/s of 1 GiB of `yes` output, straight to /dev/null and through a --retry-on pattern."""
    produce = "yes | head -c 1073741824"
    direct, through = hyperfine(
        f"sh -c '{produce} > /dev/null'",
        f"sh -c \"{RETRY} -n 1 --retry-on output:needle -- sh -c '{produce}' > /dev/null\"",
        runs=5, warmup=1,
    )
    return [(1024 / (mean / 1000), mean) for mean, _ in (direct, through)]


def where_instructions_go(out):
    """Each build's `retry -- true`, split by callgrind into the parts of a run."""
    builds = [("default build", RETRY), ("release archive", RELEASE)]
    split = [phases(f"{binary} -- true") for _, binary in builds]
    out.write("Where the instructions of `retry -- true` go (callgrind's inclusive figures, "
              "by the functions that own each part; `bench/measure.py`, `PHASES`):\n\n")
    out.write("| part | " + " | ".join(name for name, _ in builds) + " |\n|---|" + "---|" * len(builds) + "\n")
    for index, (label, _) in enumerate(split[0][1]):
        out.write(f"| {label} | " + " | ".join(f"{parts[index][1]:,}" for _, parts in split) + " |\n")
    out.write("| **total** | " + " | ".join(f"**{total:,}**" for total, _ in split) + " |\n\n")


def per_attempt_instructions(command):
    """The instructions one more attempt costs: callgrind over 1001 attempts less over 1, over
    1000. `command` holds `{n}` (attempts) and `{retries}` (attempts less one)."""
    def run(attempts):
        return instructions(command.format(n=attempts, retries=attempts - 1))
    return (run(1001) - run(1)) / 1000


def per_attempt(out):
    """What each attempt costs, against a shell loop and the peers, and memory over many."""
    loop = "sh -c 'i=0; while [ $i -lt 1000 ]; do /bin/false; i=$((i+1)); done'"
    ours = f"{RETRY} -q {OFF} -n {{n}} --base 0s -- false"
    release = f"{RELEASE} -q {OFF} -n {{n}} --base 0s -- false"
    peers = [
        ("this tool: `retry -q --budget off -n 1000 --base 0s -- false`, default build", ours),
        ("the same, release archive", release),
        ("attempt-cli: `attempt fixed -a 1000 -w 0 -- false`", f"{ATTEMPT} fixed -a {{n}} -w 0 -- false"),
        ("minfrin: `retry -t 999 -d 0 -- false`", f"{MINFRIN} -t {{retries}} -d 0 -- false"),
    ]
    commands = [loop] + [command.format(n=1000, retries=999) for _, command in peers]
    # Five rounds over the list, and each command's median: the machine's speed drifts between
    # minutes, and a ratio of runs made at different speeds says little.
    rounds = []
    for _ in range(5):
        with tempfile.NamedTemporaryFile(suffix=".json") as exported:
            subprocess.run(["hyperfine", "-N", "-i", "--warmup", "2", "--runs", "10", "--export-json",
                            exported.name, *commands], check=True, capture_output=True)
            rounds.append([r["mean"] * 1000 for r in json.load(open(exported.name))["results"]])
    means = [statistics.median(round_[i] for round_ in rounds) for i in range(len(commands))]
    rows = [(label, mean, means[0], per_attempt_instructions(command))
            for (label, command), mean in zip(peers, means[1:])]
    out.write("## Per attempt\n\n1,000 attempts of `false` with no wait, beside a shell loop of 1,000 `/bin/false` "
              f"({means[0]:.0f} ms): hyperfine 10 runs (`-N -i`) over the list, five times, and each one's median; instructions per attempt by callgrind, "
              "(1,001 attempts less 1) / 1,000, the wrapper's own process.\n\n")
    out.write("| wrapper | 1,000 attempts | vs the shell loop | instructions per attempt |\n|---|---|---|---|\n")
    for label, mean, loop_ms, ins in rows:
        out.write(f"| {label} | {mean:.0f} ms | {mean / loop_ms:.2f}x | {ins:,.0f} |\n")
    (_, ours_ms, _, ours_ins), (_, _, _, release_ins), (_, attempt_ms, _, _), (_, _, _, minfrin_ins) = rows
    out.write(f"\nGoals: at or below attempt-cli's ratio to the shell loop: "
              f"**{'met' if ours_ms <= attempt_ms else 'not met'}** ({ours_ms / attempt_ms:.2f}x attempt-cli's "
              f"time); instructions per attempt within 3x minfrin's: "
              f"**{'met' if ours_ins <= 3 * minfrin_ins else 'not met'}** ({ours_ins / minfrin_ins:.1f}x); "
              f"the release archive's at most 7,200: **{'met' if release_ins <= 7200 else 'not met'}** "
              f"({release_ins:,.0f}).\n\n")

    out.write("Peak resident memory of the tool (GNU `time -f %M`) after 100 and after 30,000 attempts of "
              "`retry -q --budget off --base 0s -n N -- false`:\n\n| run | 100 attempts | 30,000 attempts | growth |\n|---|---|---|---|\n")
    growths = []
    with tempfile.TemporaryDirectory() as scratch:
        for build, binary in [("default build", RETRY), ("release archive", RELEASE)]:
            for label, extra in [("without a report", ""), (f"with `--report`", f"--report {scratch}/report.json")]:
                few, many = (peak_rss_kib(f"{binary} -q {OFF} --base 0s -n {n} {extra} -- false") for n in (100, 30000))
                growths.append(many - few)
                out.write(f"| {build}, {label} | {few} KiB | {many} KiB | {many - few:+} KiB |\n")
    out.write(f"\nGoal: within 1 MiB: **{'met' if max(growths) <= 1024 else 'not met'}**. "
              "(A test, `memory_and_the_report_stay_bounded_however_many_attempts`, holds it at 100 and "
              "4,000 attempts.)\n\n")


def process_starts(out):
    """bench/starts.c: each way to start a process, from a parent as large as the tool and larger."""
    sizes, count, rounds = [4, 256], 2000, 5
    means = {}
    for mib in sizes:
        runs = [dict(line.split() for line in sh(f"{STARTS} {mib} {count}").splitlines()) for _ in range(rounds)]
        means[mib] = {way: statistics.median(float(run[way]) for run in runs) for way in runs[0]}
    out.write("## Starting a process\n\n"
              f"`bench/starts.c`: {count:,} starts and waits of `/bin/true` each way, from a parent whose memory is "
              "as large as the tool's (4 MiB) and larger, in 4 KiB pages, every one written; the mean per start, the median of "
              f"{rounds} runs. `clone` is the split `src/sys/spawn/clone.rs` makes (`CLONE_VM | CLONE_VFORK`); glibc's "
              "`posix_spawn` is built on the same call.\n\n")
    out.write("| way | " + " | ".join(f"parent of {mib} MiB" for mib in sizes) + " |\n|---|"
              + "---|" * len(sizes) + "\n")
    for way in means[sizes[0]]:
        out.write(f"| `{way}` | " + " | ".join(f"{means[mib][way]:.0f} µs" for mib in sizes) + " |\n")
    clone, spawn = means[sizes[-1]]["clone"], means[sizes[-1]]["posix_spawn"]
    out.write(f"\nGoal: the tool's split costs no more than `posix_spawn` (within 10%): "
              f"**{'met' if clone <= spawn * 1.1 else 'not met'}** ({clone / spawn:.2f}x at {sizes[-1]} MiB).\n\n")


def default_budget_cost(out):
    """The default budget against `--budget off`: on a run that succeeds (nothing to spend) and on
    a run with one retry (one update of its file), each from a fresh state."""
    state = os.path.join(STATE, "retry")
    fresh = f"rm -rf {state}"
    rows = [
        ("a first attempt that succeeds", f"{RETRY} -- true", f"{RETRY} {OFF} -- true"),
        ("one retry", f"{RETRY} -n 2 --base 0s -- false", f"{RETRY} {OFF} -n 2 --base 0s -- false"),
    ]
    figures = []
    for label, budgeted, off in rows:
        rounds = []
        for _ in range(5):
            with tempfile.NamedTemporaryFile(suffix=".json") as exported:
                subprocess.run(["hyperfine", "-N", "-i", "--warmup", "20", "--runs", "200", "--prepare", fresh,
                                "--export-json", exported.name, budgeted, off], check=True, capture_output=True)
                means = [r["mean"] * 1000 for r in json.load(open(exported.name))["results"]]
                rounds.append(means[0] / means[1])
        counted = []
        for command in (budgeted, off):
            sh(fresh)
            counted.append(instructions(command))
        figures.append((label, statistics.median(rounds), *counted))
    out.write("## The default budget's cost\n\n"
              "What the budget a run spends from when it names none costs, against the same run with "
              "`--budget off`, each from a fresh state: wall time as the median of five paired ratios "
              "(`hyperfine -N --runs 200`, the two commands in one run), instructions by callgrind.\n\n"
              "| run | wall time vs `--budget off` | instructions | with `--budget off` |\n|---|---|---|---|\n")
    for label, ratio, budgeted, off in figures:
        out.write(f"| {label} | {ratio:.3f}x | {budgeted:,} | {off:,} |\n")
    (_, success_ratio, success_ins, success_off), _ = figures
    out.write(f"\nGoal: nothing spent while nothing fails: "
              f"**{'met' if success_ins - success_off < 5000 and success_ratio < 1.02 else 'not met'}** "
              f"({success_ins - success_off:+,} instructions, {success_ratio:.3f}x).\n\n")


def budget_cost(out):
    """A run that takes a token from the budget, in a file and in Redis, against one without, in
    both builds: each row's ratio to its own build's run without a budget is taken in each round
    of hyperfine over the whole list (the runs side by side), and the median of five rounds."""
    with tempfile.TemporaryDirectory() as scratch:
        server = subprocess.Popen(["redis-server", "--port", "0", "--unixsocket", f"{scratch}/redis.sock",
                                   "--save", "", "--appendonly", "no", "--dir", scratch],
                                  stdout=subprocess.DEVNULL)
        try:
            while not os.path.exists(f"{scratch}/redis.sock"):
                time.sleep(0.01)
            socket = f"redis+unix://{scratch}/redis.sock"
            rows = []
            for build, binary in [("default build", RETRY), ("release archive", RELEASE)]:
                first = len(rows)
                rows += [
                    (build, "no budget", f"{binary} -- true", first),
                    (build, "file store", f"{binary} --budget bench --budget-store file:{scratch}/budgets -- true", first),
                    (build, "Redis store (a Unix socket)", f"{binary} --budget bench --budget-store {socket} -- true", first),
                    (build, "no budget, a 10 ms attempt", f"{binary} -- sleep 0.01", first + 3),
                    (build, "Redis store, a 10 ms attempt", f"{binary} --budget bench --budget-store {socket} -- sleep 0.01", first + 3),
                ]
            rounds = [hyperfine(*(command for _, _, command, _ in rows)) for _ in range(5)]
            counted = [instructions(command) for _, _, command, _ in rows]
        finally:
            server.terminate()
            server.wait()
    times = [(statistics.median(r[i][0] for r in rounds), statistics.median(r[i][1] for r in rounds))
             for i in range(len(rows))]
    ratios = [statistics.median(r[i][0] / r[baseline][0] for r in rounds) for i, (*_, baseline) in enumerate(rows)]
    out.write("## The budget's cost\n\n`retry [--budget ...] -- true`, as in the wrapper overhead above, and "
              "with an attempt of 10 ms, during which the first attempt's count goes on (the server shares the "
              "machine's cores with the tool), in both builds. `hyperfine -N --runs 200` over the whole list, five "
              "times; the wall time is the median of the five means, the ratio the median of the five ratios to the "
              "same build's run without a budget in the same round:\n\n"
              "| build | budget | wall time | vs no budget | instructions |\n|---|---|---|---|---|\n")
    for (build, label, _, _), (ms, sd), ratio, ins in zip(rows, times, ratios, counted):
        out.write(f"| {build} | {label} | {ms:.2f} ms ± {sd:.2f} | {ratio:.2f}x | {ins:,} |\n")
    redis = [(build, ratios[i], ratios[i + 2]) for i, (build, label, _, _) in enumerate(rows) if label == "Redis store (a Unix socket)"]
    out.write("\nGoal: a run with a Redis budget at most 1.10x a run without, in both builds: "
              f"**{'met' if max(ratio for _, ratio, _ in redis) <= 1.10 else 'not met'}** ("
              + "; ".join(f"{build}: {ratio:.2f}x with `true`, {slow:.2f}x with a 10 ms attempt" for build, ratio, slow in redis)
              + ").\n\n")


def main():
    out = sys.stdout
    cpu = sh("grep -m1 'model name' /proc/cpuinfo").split(":", 1)[1].strip()
    out.write("# Benchmarks\n\n")
    out.write(f"Measured by `bench/run.sh` on {time.strftime('%Y-%m-%d')}: {os.cpu_count()} cores ({cpu}), "
              f"Linux {platform.release()}, the default build of `retry` (`cargo install --path .`) unless a row says otherwise "
              f"({sh(RETRY + ' --version').strip()}), in an environment of {len(os.environ)} variables (the "
              "tool reads some and passes them all on: each costs a few instructions). Run it again to reproduce; "
              "every figure below names the command behind it.\n\n")

    out.write("## Wrapper overhead\n\n")
    rows = [
        ("`true`", "true"),
        ("`timeout 10 true` (coreutils)", "timeout 10 true"),
        ("a static C program that spawns and waits: the floor (`bench/spawn.c`)", f"{FLOOR} true"),
        ("**`retry -- true`, default build** (`cargo install --path .`: glibc, dynamic, PIE)", f"{RETRY} -- true"),
        ("**`retry -- true`, release archive** (`scripts/dist`: musl, static PIE, `tls`)", f"{RELEASE} -- true"),
        ("`retry --version`, release archive: loading, std and clap, and no attempt", f"{RELEASE} --version"),
        ("minfrin `retry true` (Debian's `retry`)", f"{MINFRIN} true"),
        ("attempt-cli `attempt true`", f"{ATTEMPT} true"),
    ]
    commands = [command for _, command in rows]
    rounds = [hyperfine(*commands) for _ in range(5)]
    times = [(statistics.median(r[i][0] for r in rounds), statistics.median(r[i][1] for r in rounds))
             for i in range(len(rows))]
    # Each row against `timeout` and against the floor in the same round: the machine's speed
    # drifts between rounds, and a ratio of runs made at different speeds says little.
    ratio = lambda i, to: statistics.median(r[i][0] / r[to][0] for r in rounds)
    out.write("`hyperfine -N --warmup 20 --runs 200` over the list, five times: the wall time is the median of the "
              "five means, each ratio the median of the five rounds' ratios (the runs side by side); instructions "
              "by `valgrind --tool=callgrind` (the wrapper's own process); peak RSS and page faults (the "
              "command's included) by GNU `time -f '%M %R'`.\n\n")
    out.write("| command | wall time | vs `timeout` | vs the floor | instructions | peak RSS | page faults |\n"
              "|---|---|---|---|---|---|---|\n")
    measured = {}
    for index, ((label, command), (ms, sd)) in enumerate(zip(rows, times)):
        shown = f"| {label} | {ms:.2f} ms ± {sd:.2f} | {ratio(index, 1):.2f}x | {ratio(index, 2):.2f}x"
        if command == "true":
            out.write(f"{shown} | | | |\n")
            continue
        rss, faults = peak_rss_and_faults(command)
        measured[command] = (index, instructions(command), rss)
        out.write(f"{shown} | {measured[command][1]:,} | {rss} KiB | {faults} |\n")
    out.write("| joshdk/retry (Go) | | | | about 1,260,000 | | |\n\n")
    out.write("joshdk/retry's figure is the one issue 17 reports; it is not measured here, where there is no Go "
              "toolchain to build it.\n\n")
    _, ins_timeout, rss_timeout = measured["timeout 10 true"]
    default, ins_default, rss_default = measured[f"{RETRY} -- true"]
    out.write(f"Goals for the default build (`cargo install`'s): wall time at most `timeout`'s: "
              f"**{'met' if ratio(default, 1) <= 1 else 'not met'}** ({ratio(default, 1):.2f}x); "
              f"no more instructions than `timeout`: **{'met' if ins_default <= ins_timeout else 'not met'}** "
              f"({ins_default / ins_timeout:.2f}x); peak RSS at most `timeout`'s + 1 MiB: "
              f"**{'met' if rss_default <= rss_timeout + 1024 else 'not met'}** ({rss_default - rss_timeout:+} KiB).\n\n")
    release, ins_release, _ = measured[f"{RELEASE} -- true"]
    minfrin = measured[f"{MINFRIN} true"][0]
    out.write(f"Goals for the release archive: wall time within 5% of the floor's: "
              f"**{'met' if ratio(release, 2) <= 1.05 else 'not met'}** ({ratio(release, 2):.2f}x); below Debian's "
              f"`retry`'s: **{'met' if ratio(release, minfrin) < 1 else 'not met'}** ({ratio(release, minfrin):.2f}x); "
              f"at most 450,000 instructions: **{'met' if ins_release <= 450_000 else 'not met'}** ({ins_release:,}); "
              f"stretch, no more than `timeout`: **{'met' if ins_release <= ins_timeout else 'not met'}** "
              f"({ins_release / ins_timeout:.2f}x).\n\n")
    where_instructions_go(out)
    tls_cost(out)
    telling_cost(out)
    bare_environment_cost(out)
    startup_steps(out)
    per_attempt(out)
    process_starts(out)
    default_budget_cost(out)
    budget_cost(out)

    out.write("## Wait accuracy\n\n`retry --budget off --log-format json --jitter none --base W --cap W -n N+1 false`: lateness "
              "of each attempt's start after its scheduled wait, from the tool's own events.\n\n")
    out.write("| wait | waits measured | median lateness | p99 lateness |\n|---|---|---|---|\n")
    medians = []
    for wait, count in [("1ms", 200), ("10ms", 100), ("100ms", 30), ("1s", 5)]:
        late = wait_lateness(wait, count)
        medians.append(statistics.median(late))
        out.write(f"| {wait} | {count} | {statistics.median(late):.3f} ms | {percentile(late, 0.99):.3f} ms |\n")
    out.write(f"\nGoal: under 1 ms at the median: **{'met' if max(medians) < 1 else 'not met'}**.\n\n")

    latencies = signal_latency(30)
    out.write("## Signal latency\n\nSIGTERM sent during a 60 s wait (`retry --base 60s -n 2 false`) until the tool "
              f"has exited, 30 runs: median **{statistics.median(latencies):.2f} ms**, p99 "
              f"{percentile(latencies, 0.99):.2f} ms (the time includes the benchmark's own `wait`). "
              f"Goal under 5 ms: **{'met' if statistics.median(latencies) < 5 else 'not met'}**.\n\n")

    waiting = cpu_while(["--jitter", "none", "--base", "2s", "-n", "2", "false"])
    running = cpu_while(["--", "sleep", "2"])
    out.write("## Idle cost\n\nCPU time used by the tool's own process (from `/proc/PID/schedstat`, in "
              "nanoseconds) over 1.5 s in the middle of a 2 s wait and of a 2 s attempt (`retry -- sleep 2`):\n\n")
    out.write(f"| phase | CPU time used |\n|---|---|\n| during a wait | {waiting} ns |\n"
              f"| during an attempt | {running} ns |\n\n")
    out.write(f"Goal: no measurable CPU: **{'met' if max(waiting, running) < 1_000_000 else 'not met'}** "
              "(the tool sleeps in one `sigtimedwait` call).\n\n")

    (direct_mbs, direct_ms), (through_mbs, through_ms) = throughput()
    out.write("## Throughput under an output condition\n\n1 GiB of `yes` output, hyperfine 5 runs:\n\n")
    out.write("| path | time | throughput |\n|---|---|---|\n")
    out.write(f"| `yes \\| head -c 1G > /dev/null` | {direct_ms:.0f} ms | {direct_mbs:.0f} MiB/s |\n")
    out.write(f"| through `retry --retry-on output:needle` | {through_ms:.0f} ms | {through_mbs:.0f} MiB/s |\n\n")

    simulators(out)
    metastable_live(out)


# The original simulators' times for the same sweeps, measured once on the machine the table
# below was made on (2 cores, CPython 3.11.7, one core each), because the bench fetches nothing:
# - contention: aws-samples/aws-arch-backoff-simulator, src/backoff_simulator.py at 095a076, its
#   classes unchanged, without its plots, and its run() replaced by our default sweep:
#     for clients in range(10, 200, 10):
#         for backoff in backoff_types:   # its five strategies
#             for t in range(100): run_sim(setup_sim(clients, backoff[0], io.StringIO(), stats)[0])
# - load: mbrooker/simulator_example, retry_sim/ at fa8981e (client.py, retry_strategy.py, and
#   retry_sim.py's Stats, Server and sim_loop), unchanged, driven over our default sweep with its
#   three policies (no_retries, three_retries, adaptive_10pct):
#     for failure_rate in [0, 0.001, 0.005, 0.01, 0.02, 0.05, 0.075, 0.1, 0.2, 0.3, 0.5, 0.75, 1]:
#         for factory in [NRetriesFactory(0), NRetriesFactory(3), AdaptiveRetryFactory(0.1, 5)]:
#             for trial in range(2):
#                 sim_loop([Client(factory.make(), 10.0, server, stats, 0.0) for _ in range(100)], 40.0)
# both run as `time python3 sweep.py`.
ORIGINALS_S = {"contention": 158.5, "load": 174.6}


def simulators(out):
    """The two experiments' default sweeps on every core, and on one beside the originals."""
    contention = f"{SIM} --seed 1"
    load = f"{SIM} load --seed 1"
    metastable = f"{SIM} metastable --seed 1"
    load_as_original = f"{load} --policies none,retries,bucket"
    (contention_ms, contention_sd), (load_ms, load_sd), (metastable_ms, metastable_sd) = hyperfine(
        contention, load, metastable, runs=5, warmup=1)
    (one_contention, _), (one_load, _) = hyperfine(
        f"taskset -c 0 {contention}", f"taskset -c 0 {load_as_original}", runs=5, warmup=1)
    out.write("## Simulator\n\nThe default sweeps, hyperfine 5 runs, on "
              f"{os.cpu_count()} cores:\n\n| experiment | command | time |\n|---|---|---|\n")
    out.write(f"| contention (19 client counts, 5 strategies, 100 trials: 9500 trials) | `retry-sim --seed 1` "
              f"| **{contention_ms / 1000:.2f} s** ± {contention_sd / 1000:.2f} |\n")
    out.write(f"| load (13 failure rates, 4 policies, 2 trials of 40 s: 104 trials) | `retry-sim load --seed 1` "
              f"| **{load_ms / 1000:.2f} s** ± {load_sd / 1000:.2f} |\n")
    out.write(f"| metastable (5 policies, 16 triggers, 2 loads, and the picture's runs: 165 runs) | "
              f"`retry-sim metastable --seed 1` | **{metastable_ms / 1000:.2f} s** ± {metastable_sd / 1000:.2f} |\n\n")
    out.write("On one core (`taskset -c 0`), beside the original Python simulators on the same sweeps (measured once "
              "on this machine with CPython 3.11.7, one core; how, in `bench/measure.py`):\n\n"
              "| experiment | this tool, one core | the original | faster by |\n|---|---|---|---|\n")
    for name, ours, what in [("contention", one_contention, "`retry-sim --seed 1`"),
                             ("load", one_load, "`retry-sim load --seed 1 --policies none,retries,bucket`")]:
        original = ORIGINALS_S[name]
        out.write(f"| {name}: {what} | {ours / 1000:.2f} s | {original:.1f} s | **{original * 1000 / ours:.0f}×** |\n")
    out.write("\nGoal at least 50× per core: "
              f"**{'met' if min(ORIGINALS_S['contention'] * 1000 / one_contention, ORIGINALS_S['load'] * 1000 / one_load) >= 50 else 'not met'}**; "
              f"the load sweep under 2 s on 2 cores: **{'met' if load_ms < 2000 else 'not met'}**.\n")


def tls_cost(out):
    """What the default `tls` feature costs the default build's `retry -- true`: instructions,
    and wall time with the two builds run side by side."""
    builds = [("without `tls` (`--no-default-features`)", NO_TLS), ("with `tls` (the default)", RETRY)]
    commands = [f"{binary} -- true" for _, binary in builds]
    rounds = [hyperfine(*commands) for _ in range(5)]
    ratio = statistics.median(r[1][0] / r[0][0] for r in rounds)
    counted = [instructions(command) for command in commands]
    out.write("## What TLS costs the start\n\n"
              "`tls` (rediss:// stores, through rustls and ring) is a default feature, because the managed stores a "
              "fleet shares accept nothing else. The default build with and without it, `retry -- true`: "
              "`hyperfine -N --warmup 20 --runs 200` over the pair, five times (the wall time the median of the "
              "means, the ratio the median of the rounds' ratios); instructions by callgrind; size as built.\n\n"
              "| build | wall time | instructions | size |\n|---|---|---|---|\n")
    for index, (label, binary) in enumerate(builds):
        ms = statistics.median(r[index][0] for r in rounds)
        out.write(f"| {label} | {ms:.2f} ms | {counted[index]:,} | {os.path.getsize(binary) / 1e6:.1f} MB |\n")
    out.write(f"\nWith `tls`: {ratio:.2f}x the wall time, {counted[1] - counted[0]:+,} instructions "
              f"({(counted[1] / counted[0] - 1) * 100:+.1f}%). Most of them are the dynamic loader's: rustls' and "
              "ring's tables of pointers are relocated at each start of a position-independent binary (the "
              "relative relocations grow by about 1,150); nothing of TLS runs unless the store is `rediss://`.\n\n")


class Collector(http.server.BaseHTTPRequestHandler):
    """A monitor and a trace collector on loopback: it reads each request, and answers 200."""

    def answer(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"OK")

    do_GET = do_POST = answer

    def log_message(self, *args):
        pass


def telling_cost(out):
    """What a heartbeat monitor's two pings and one trace's export add to `retry -- true`,
    against a server on loopback (this process's), each run through `env` to set its variable."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Collector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    rows = [
        ("neither", f"env {RETRY} -- true"),
        ("a monitor: `RETRY_MONITOR=healthchecks:URL` (a start and an outcome)",
         f"env RETRY_MONITOR=healthchecks:{base}/uuid {RETRY} -- true"),
        ("a trace: `OTEL_EXPORTER_OTLP_ENDPOINT=URL` (one `http/protobuf` export)",
         f"env OTEL_EXPORTER_OTLP_ENDPOINT={base} {RETRY} -- true"),
    ]
    rounds = [hyperfine(*(command for _, command in rows)) for _ in range(5)]
    server.shutdown()
    out.write("## What a monitor and a trace add to a run\n\n"
              "`retry -- true` telling a server on loopback (a Python `http.server` in the bench's own process, "
              "answering 200), through `env` in every row: `hyperfine -N --warmup 20 --runs 200` over the three, "
              "five times, the median of the means and of the rounds' differences. Without either variable none "
              "of it runs: no lookup beyond the variables' own, no socket.\n\n"
              "| run | wall time | added |\n|---|---|---|\n")
    for index, (label, _) in enumerate(rows):
        ms = statistics.median(r[index][0] for r in rounds)
        added = statistics.median(r[index][0] - r[0][0] for r in rounds)
        out.write(f"| {label} | {ms:.2f} ms | {'' if index == 0 else f'{added:+.2f} ms'} |\n")
    out.write("\nThe start's ping goes on a thread of its own beside the first attempt; what a run waits for is the "
              "outcome's answer, and the export's.\n\n")


def bare_environment_cost(out):
    """The release archive's `retry -- true` in a bare environment (`env -i PATH=/usr/bin:/bin`,
    a fresh XDG_STATE_HOME): what every run pays, whatever capabilities it does not use. The
    figures each new capability is held to (issue 49: within 1% of the round before monitors,
    traces and jobs: 341,246 instructions, 2,736 KiB)."""
    with tempfile.TemporaryDirectory() as state, tempfile.TemporaryDirectory() as scratch:
        bare = f"env -i PATH=/usr/bin:/bin XDG_STATE_HOME={state}"
        log = subprocess.run(
            [*bare.split(), "valgrind", "--tool=callgrind", f"--callgrind-out-file={scratch}/out",
             RELEASE, "--", "true"],
            capture_output=True, text=True,
        ).stderr
        counted = int(re.search(r"Collected : (\d+)", log).group(1))
        resident = statistics.median(peak_rss_kib(f"{bare} {RELEASE} -- true") for _ in range(10))
    goal_instructions, goal_rss = 341_246 * 1.01, 2_736 * 1.01
    out.write("## What a run pays for what it does not use\n\n"
              "The release archive's `retry -- true` in a bare environment (`env -i PATH=/usr/bin:/bin`, "
              "a fresh `XDG_STATE_HOME`): instructions by callgrind, peak RSS the median of ten runs of "
              "GNU `time -f %M`. No monitor, trace, job, budget store or report: each of those must cost "
              "such a run nothing.\n\n"
              "| figure | measured | goal (within 1% of 341,246 and 2,736 KiB) |\n|---|---|---|\n"
              f"| instructions | {counted:,} | **{'met' if counted <= goal_instructions else 'not met'}** |\n"
              f"| peak RSS | {resident:.0f} KiB | **{'met' if resident <= goal_rss else 'not met'}** |\n\n")


def startup_steps(out):
    """What each change of issue 37 did, as bench/steps.sh last measured it: it builds every
    commit of the series, so this bench quotes its table rather than runs it (the file is kept in
    git; without it this fails rather than leave the section out)."""
    steps = os.path.join(os.path.dirname(os.path.abspath(__file__)), "steps.md")
    out.write("## What the start-up was cut by\n\n"
              "Each change that made a short run cheaper, in the order it was made, with the instructions of "
              "`retry -- true` and of one more attempt after it, for the two builds (callgrind; each row's build "
              "is the commit's own). What each one changed: its commit message.\n\n")
    with open(steps) as file:
        out.write(file.read() + "\n")


def metastable_live(out):
    """The live metastable experiment's table, as bench/metastable/run last wrote it: it takes
    half an hour and a CPU cgroup, so this bench quotes it rather than runs it. The file is kept
    in git; without it this fails rather than leave the section out."""
    results = os.path.join(os.path.dirname(os.path.abspath(__file__)), "metastable", "results.md")
    with open(results) as file:
        out.write("\n" + file.read())


main()
