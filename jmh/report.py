#!/usr/bin/env python3
"""Prints scripts/bench's results and the ratios the README quotes.

Reads, from the folder given as the only argument: jmh.json (JMH's -rf json), threads.jsonl (one
line per ConcurrentBench trial, written by dev.confine.bench.ThreadCounts) and floor-before.json /
floor-after.json (the C floor). Missing pieces (a benchmark regex that skipped some) are shown as
n/a.
"""
import json
import os
import sys

# The targets: LocalRunner spawn at least 2.0x ProcessBuilder and 0.85x the C floor.
TARGET_VS_PB = 2.0
TARGET_VS_C = 0.85


def load(path, default):
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        return default


def main(folder):
    runs = load(os.path.join(folder, "jmh.json"), [])
    scores = {}
    print()
    print(f"{'benchmark':<34} {'param':<6} {'score':>11} {'error':>10}  unit")
    for r in runs:
        name = r["benchmark"].rsplit(".", 2)
        name = name[-2] + "." + name[-1]
        param = ",".join(str(v) for v in (r.get("params") or {}).values())
        m = r["primaryMetric"]
        scores[(name, param)] = m["score"]
        err = m.get("scoreError")
        err = f"±{err:.1f}" if isinstance(err, (int, float)) and err == err else "n/a"
        print(f"{name:<34} {param:<6} {m['score']:>11.1f} {err:>10}  {m['scoreUnit']}")

    floors = []
    for when in ("before", "after"):
        f = load(os.path.join(folder, f"floor-{when}.json"), None)
        if f:
            floors.append(f["mean"])
            rounds = ", ".join(f"{x:.1f}" for x in f["rounds"])
            cpu = ""
            if "parentCpuMicrosPerSpawn" in f:
                cpu = (f"; per spawn: posix_spawn {f['spawnCallMicros']:.0f} us, exec to reaped"
                       f" {f['execToReapMicros']:.0f} us, parent CPU {f['parentCpuMicrosPerSpawn']:.0f} us")
            print(f"{'C floor (' + when + ' JMH)':<34} {'':<6} {f['mean']:>11.1f} {'':>10}  spawns/s  (rounds: {rounds}{cpu})")
    floor = sum(floors) / len(floors) if floors else None

    def ratio(a, b):
        return None if a is None or not b else a / b

    def show(label, value, target=None):
        if value is None:
            print(f"  {label:<56} n/a")
            return
        verdict = ""
        if target is not None:
            verdict = f"   target >= {target:.2f}x: {'met' if value >= target else 'MISSED'}"
        print(f"  {label:<56} {value:6.2f}x{verdict}")

    lr_spawn = scores.get(("SpawnBench.localRunner", ""))
    print("(ConcurrentBench counts one op per exec: its ops/s are execs/s.)")
    print()
    print("Ratios (higher is better for LocalRunner; each pair measured in the same run):")
    show("spawn /bin/true: LocalRunner / ProcessBuilder",
         ratio(lr_spawn, scores.get(("SpawnBench.processBuilder", ""))), TARGET_VS_PB)
    show("spawn /bin/true: LocalRunner / C floor (mean of runs)", ratio(lr_spawn, floor), TARGET_VS_C)
    if len(floors) == 2 and lr_spawn is not None:
        print("    (against each C run: " + ", ".join(f"{ratio(lr_spawn, x):.2f}x" for x in floors) + ")")
    show("capture 1 MiB: LocalRunner / ProcessBuilder",
         ratio(scores.get(("CaptureBench.localRunner", "")), scores.get(("CaptureBench.processBuilder", ""))))
    for variant in ("true", "sleep"):
        show(f"200 concurrent ({variant}): LocalRunner / ProcessBuilder",
             ratio(scores.get(("ConcurrentBench.localRunner", variant)),
                   scores.get(("ConcurrentBench.processBuilder", variant))))

    threads = []
    path = os.path.join(folder, "threads.jsonl")
    if os.path.exists(path):
        with open(path) as f:
            threads = [json.loads(line) for line in f if line.strip()]
    if threads:
        print()
        print("Platform threads in ConcurrentBench (JVM-wide; cold = before any exec, before = idle after")
        print("one exec, peak = exact JVM peak during the trial, after = at its end):")
        print(f"  {'benchmark':<30} {'param':<6} {'cold':>5} {'before':>7} {'peak':>5} {'after':>6}")
        for t in threads:
            print(f"  {t['benchmark']:<30} {t['variant']:<6} {t['cold']:>5} {t['before']:>7} {t['peak']:>5} {t['after']:>6}")
        print("  by kind (confine = the engine's own; processReaper = the JDK's, one per live child;")
        print("  virtualThreadCarrier = the JDK's ForkJoinPool, whichever engine runs):")
        for t in threads:
            for label, key in (("before", "beforeBreakdown"), ("busiest", "busiest"), ("after", "afterBreakdown")):
                kinds = ", ".join(f"{k} {v}" for k, v in sorted(t.get(key, {}).items()))
                print(f"  {t['benchmark'] + ' ' + t['variant']:<37} {label:<8} {kinds}")
        for t in threads:
            if not t["benchmark"].endswith("localRunner"):
                continue
            owned = [t.get(k, {}).get("confine", 0) for k in ("beforeBreakdown", "busiest", "afterBreakdown")]
            def non_carrier(m):
                return sum(v for k, v in m.items() if k != "virtualThreadCarrier")
            others = [non_carrier(t.get(k, {})) for k in ("beforeBreakdown", "busiest", "afterBreakdown")]
            constant = len(set(owned)) == 1 and len(set(others)) == 1
            print(f"  LocalRunner ({t['variant']}): engine threads before/busiest/after {owned}, "
                  f"non-carrier threads {others}: {'constant' if constant else 'NOT constant'}")
    print()
    print("Absolute numbers move with the machine's load; compare the ratios.")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "target/bench")
