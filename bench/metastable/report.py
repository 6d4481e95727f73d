#!/usr/bin/env python3
"""Turn bench/metastable's raw series into the table BENCHMARKS.md quotes
(bench/metastable/results.md) and the picture the docs show (docs/metastable-live.svg)."""

import json
import os
import platform
import shutil
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.environ.get("METASTABLE_OUT", os.path.join(HERE, "results"))


def recovered(seconds):
    return "**down**" if seconds is None else f"{seconds:g} s"


def simulated(run):
    """What the model predicted for `run`, if it has a counterpart there."""
    return recovered(run["simulated"]) if "simulated" in run else "(no counterpart)"


def cpu_model():
    with open("/proc/cpuinfo") as file:
        return next(line.split(":", 1)[1].strip() for line in file if line.startswith("model name"))


def triggers(runs):
    """The triggers' lengths in seconds, the paper's first: "10 s (the paper's run b), and in a
    second series for 20 s"."""
    lengths = sorted({run["trigger_seconds"] for run in runs})
    said = [f"{seconds:g} s" + (" (the paper's run b)" if seconds == 10 else "")
            for seconds in lengths]
    return said[0] + "".join(f", and in a second series for {length}" for length in said[1:])


def main():
    with open(os.path.join(OUT, "series.json")) as file:
        data = json.load(file)
    scale, runs = data["scale"], data["runs"]
    capacity = 1000.0 / scale["work_ms"]
    lines = [
        "## Metastable failures, live",
        "",
        f"Measured by `bench/metastable/run` on {time.strftime('%Y-%m-%d')}: {os.cpu_count()} "
        f"cores ({cpu_model()}), Linux {platform.release()}. The server "
        f"(`bench/metastable/server.c`) answers in order, after {scale['work_ms']:.0f} ms of CPU "
        f"each, on one core in a CPU cgroup: {capacity:.1f} requests a second. Clients, on the "
        f"other core, start {scale['rate']:g} requests a second open-loop ({scale['load']:g} of "
        f"the capacity, as a request every 75 µs was in the simulator), each a real process; "
        f"each attempt has a {scale['timeout']:g} s time limit. At {scale['warmup']:g} s the "
        f"cgroup caps the server at {scale['trigger_capacity']:g} of a CPU for "
        f"{triggers(runs)}. Recovery is from the trigger's end until goodput stays at 90% of the "
        f"requests, judged over 2 s; `simulated` is `retry-sim metastable` at the same "
        f"scale, its policy given the same waits.",
        "",
        "| trigger | clients | each request | recovered after | simulated | attempts per request "
        "| peak load |",
        "|---|---|---|---|---|---|---|",
    ]
    for run in runs:
        lines.append(
            f"| {scale['trigger_capacity']:g} for {run['trigger_seconds']:g} s | {run['name']} | "
            f"{run['what']} | {recovered(run['recovery'])} | {simulated(run)} | "
            f"{run['attempts_per_request']:.2f} | {run['peak_load']:.2f} |")
    lines += ["", "![Goodput and load over time through the 10 s trigger, for each kind of client]"
              "(docs/metastable-live.svg)", ""]
    with open(os.path.join(HERE, "results.md"), "w") as file:
        file.write("\n".join(lines))
    shutil.copy(os.path.join(OUT, "metastable-live.svg"),
                os.path.join(ROOT, "docs", "metastable-live.svg"))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
