#!/usr/bin/env python3
"""The plant's misses, each beside what the oracle's own record saw (not tickscope's trace).

misses.py PLANT_DIR...   (the directories `bench/oracle.sh --keep` leaves)

For every late wake-up the oracle scored as the plant's (a logged burst overlaps
[expiry, woke), see score.py) whose top cause is not a correct one for the plant (for the
spinner: that names it), prints the
cause tickscope named, the latency, how much of [expiry, woke) the plant's bursts cover and
where the first of them starts (µs from the expiry: negative = already under way), and, from
the oracle's independent sched_switch record of the measured CPU (switch.txt), how long the
plant's thread and the busiest other task ran inside [expiry, woke). Then a tally: cause ×
whether another task ran longer there than the plant (a plant with a thread of its own on the
measured CPU) or whether the burst was under way at the expiry (any other plant).

Read with care: this VM's ftrace never records the idle task's switch out on CPU 1 (see
score.py, blind_stretches), so the idle task's time here runs to the next recorded switch and
is left out of "the busiest other task". Plants whose cause is not a thread (quota, ipi,
softirq, ...) have no plant time on the CPU; the burst's position says whether the cause was
in effect when the thread was woken.
"""
import bisect, collections, json, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import score  # noqa: E402


def main():
    if len(sys.argv) < 2:
        print("usage: misses.py PLANT_DIR...", file=sys.stderr)
        sys.exit(2)
    for d in sys.argv[1:]:
        if not os.path.isfile(os.path.join(d, "plant.json")):
            print(f"misses.py: skipping {d}: no plant.json (not a plant's directory)", file=sys.stderr)
            continue
        p = json.load(open(os.path.join(d, "plant.json")))
        name, comm = p["name"], p["comm"]
        iv = score.load_truth(os.path.join(d, "truth.txt"))
        starts = [a for a, _ in iv]
        runs = score.on_cpu_runs(os.path.join(d, "switch.txt")) or []
        run_starts = [a for a, _, _, _ in runs]
        tally, rows = collections.Counter(), []
        for line in open(os.path.join(d, "late.jsonl")):
            b = json.loads(line)
            s = b["sample"]
            lo, hi = s["expiry"], s["woke"]
            ov = score.overlap(iv, starts, lo, hi)
            # score.py's rules: a configuration plant explains at most its own size; a plant
            # that must never be blamed (the spinner) misses only where it is named.
            if ov <= 0 or (p.get("max_latency_ns") and hi - lo > p["max_latency_ns"]):
                continue
            if p.get("blame_forbidden"):
                if not score.names_plant(b, comm):
                    continue
            elif score.cause_matches(b["cause"], p["correct"]):
                continue
            first = next(a for a, e in iv if a < hi and e > lo)
            k = bisect.bisect_left(run_starts, hi)
            ran = collections.Counter()
            for a, e, pid, c in runs[max(0, k - 200):k]:
                t = max(0, min(e, hi) - max(a, lo))
                if t and pid not in (0, s["tid"]):
                    ran[c] += t
            plant = ran.get(comm, 0) if comm else 0
            other_ns, other = max(((v, c) for c, v in ran.items() if c != comm), default=(0, "-"))
            if comm:
                how = "another task ran longer" if other_ns > plant else "the plant ran longer or alike"
            else:
                how = "burst under way at the expiry" if first <= lo else "burst began after the expiry"
            tally[(b["cause"]["category"], how)] += 1
            rows.append(
                f"  {b['cause']['category']:14s} {(b['cause'].get('detail') or '')[:22]:22s}"
                f" late {(hi - lo) / 1e3:8.1f} µs  burst {ov / 1e3:8.1f} µs from {(first - lo) / 1e3:+9.1f}"
                f"  plant ran {plant / 1e3:7.1f} µs  busiest other {other[:16]:16s} {other_ns / 1e3:7.1f} µs")
        print(f"{name}: {sum(tally.values())} misses")
        for (cat, how), n in tally.most_common():
            print(f"  {n:4d}  {cat}, {how}")
        for r in rows:
            print(r)


if __name__ == "__main__":
    main()
