#!/usr/bin/env python3
"""Turn bench/metastable's raw series into the table BENCHMARKS.md quotes
(bench/metastable/results.md) and the picture the docs show (docs/metastable-live.svg)."""

import json
import os
import platform
import shutil
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.environ.get("METASTABLE_OUT", os.path.join(HERE, "results"))


def recovered(seconds):
    return "**down**" if seconds is None else f"{seconds:g} s"


def simulated(seconds):
    if seconds == "none":
        return "(no counterpart)"
    return recovered(seconds)


def main():
    with open(os.path.join(OUT, "series.json")) as file:
        data = json.load(file)
    cpu = subprocess.run(["sh", "-c", "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"],
                         capture_output=True, text=True).stdout.strip()
    capacity = 1000.0 / data["work_ms"]
    lines = [
        "## Metastable failures, live",
        "",
        f"Measured by `bench/metastable/run` on {time.strftime('%Y-%m-%d')}: {os.cpu_count()} "
        f"cores ({cpu}), Linux {platform.release()}. The server (`bench/metastable/server.c`) "
        f"answers in order, after {data['work_ms']:.0f} ms of CPU each, on one core in a CPU "
        f"cgroup: {capacity:.1f} requests a second. Clients, on the other core, start "
        f"{data['rate']:g} requests a second open-loop (0.38 of the capacity, as a request every "
        f"75 µs was in the simulator), each a real process; each attempt has a 3 s time limit. "
        f"At {data['warmup']:g} s the cgroup caps the server at 0.2 of a CPU for 10 s (the "
        f"paper's run b), and in a second series for 20 s. Recovery is from the trigger's end until goodput stays at 90% of the "
        f"requests, judged over 2 s; `simulated` is `retry simulate metastable` at the same "
        f"scale, its policy given the same waits.",
        "",
        "| trigger | clients | each request | recovered after | simulated | attempts per request | peak load |",
        "|---|---|---|---|---|---|---|",
    ]
    for run in data["runs"]:
        lines.append(
            f"| 0.2 for {run['trigger_seconds']:g} s | {run['name']} | {run['what']} | "
            f"{recovered(run['recovery'])} | "
            f"{simulated(run['simulated'])} | {run['attempts_per_request']:.2f} | "
            f"{run['peak_load']:.2f} |")
    lines += ["", "![Goodput and load over time through the 10 s trigger, for each kind of client]"
              "(docs/metastable-live.svg)", ""]
    with open(os.path.join(HERE, "results.md"), "w") as file:
        file.write("\n".join(lines))
    shutil.copy(os.path.join(OUT, "metastable-live.svg"),
                os.path.join(ROOT, "docs", "metastable-live.svg"))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
