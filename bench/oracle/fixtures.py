#!/usr/bin/env python3
"""Writes the oracle's CI fixtures: per plant, a few late wake-ups with their truth and the
trace events they were attributed from, trimmed to what the attribution reads.

fixtures.py OUT_DIR SCORE_JSON PLANT_DIR...   (PLANT_DIR as for score.py, late.jsonl written
with --explain-log-events; SCORE_JSON is score.py's output for the same run). One
OUT_DIR/<plant>.jsonl each: a header line {"plant", "comm", "correct", "blame_forbidden",
"max_latency_ns", "targets", "live", "backend", "setting"} then one line per wake-up {"sample", "truth",
"live_cause", "events"}. "targets" is true when the live run met precision and recall >= 0.95
over all its late wake-ups ("live" has the figures); CI then holds the replay to them.
"""
import bisect, json, os, sys

PER_PLANT = 20   # wake-ups whose truth is the plant
PER_OTHER = 4    # wake-ups of the same run no burst overlapped
PERIOD = 1_000_000
SETTING = {"period": PERIOD, "virtualized": True, "wait_syscalls": [230],
           "timer_functions": ["hrtimer_wakeup"]}


def about(e, tid):
    """Whether event e is in thread tid's context or moves it."""
    k = e["kind"]
    return e["pid"] == tid or (k["event"] == "sched_switch" and tid in (k["prev_pid"], k["next_pid"]))


def trim(b, spins, hybrid):
    s = b["sample"]
    ev = b["events"]
    starts = [e["ts"] for e in ev if e["pid"] == s["tid"] and e["kind"]["event"] == "hrtimer_start"
              and abs(e["kind"]["expires"] - s["expiry"]) <= PERIOD // 2]
    if hybrid:
        # Its sleep's timer ends up to a period before the expiry.
        starts = [e["ts"] for e in ev if e["pid"] == s["tid"] and e["kind"]["event"] == "hrtimer_start"
                  and 0 <= s["expiry"] - e["kind"]["expires"] < PERIOD][-1:]
    if spins:
        # A spinning thread has no timer: its state at the expiry is its last event before
        # it (crates/explain/src/spin.rs).
        starts = [e["ts"] for e in ev if about(e, s["tid"]) and e["ts"] <= s["expiry"]][-1:]
    lo = min(starts + [s["expiry"] - 100_000]) - 1_000
    hi = s["woke"] + 10_000
    kept = [e for e in ev if lo <= e["ts"] <= hi]
    idle = [e for e in ev if e["ts"] < lo and e["kind"]["event"] == "cpu_idle"]
    return idle[-1:] + kept


def main():
    out, score, dirs = sys.argv[1], sys.argv[2], sys.argv[3:]
    live = {r["plant"]: r for r in json.load(open(score))["plants"]}
    os.makedirs(out, exist_ok=True)
    for d in dirs:
        p = json.load(open(os.path.join(d, "plant.json")))
        spins = "--method busy" in p.get("command", "")
        hybrid = "--method hybrid" in p.get("command", "")
        iv = sorted(tuple(map(int, l.split())) for l in open(os.path.join(d, "truth.txt")))
        starts = [a for a, _ in iv]
        mine, others = [], []
        for line in open(os.path.join(d, "late.jsonl")):
            b = json.loads(line)
            if "events" not in b:
                continue
            s = b["sample"]
            k = bisect.bisect_left(starts, s["woke"])
            hit = any(a < s["woke"] and e > s["expiry"] for a, e in iv[max(0, k - 64):k])
            if p.get("max_latency_ns") and s["woke"] - s["expiry"] > p["max_latency_ns"]:
                hit = False
            row = {"sample": s, "truth": p["name"] if hit else "other",
                   "live_cause": b["cause"], "events": trim(b, spins, hybrid)}
            (mine if hit else others).append(row)
        # Spread over the run rather than the first few.
        pick = lambda rows, n: rows[:: max(1, len(rows) // n)][:n]
        rows = pick(mine, PER_PLANT) + pick(others, PER_OTHER)
        if not rows:
            continue
        with open(os.path.join(out, p["name"] + ".jsonl"), "w") as f:
            head = {k: p.get(k) for k in ("comm", "correct", "blame_forbidden", "max_latency_ns")}
            r = live.get(p["name"], {})
            figures = {k: r.get(k) for k in ("late", "truth_plant", "precision", "recall",
                                              "unexplained_share")}
            met = all(figures[k] is not None and figures[k] >= 0.95 for k in ("precision", "recall"))
            # Where the run did not trace the wait's return (BPF, a run's own threads), the
            # measured thread has no sys_exit in any window: the replay must know (S4, S5).
            returns = any(e["kind"]["event"] == "sys_exit" and e["pid"] == r["sample"]["tid"]
                          for r in rows for e in r["events"])
            # The backend that ran: the text path's recordings lack what idle_switch.rs
            # puts back, and the replay does it again.
            backend = json.load(open(os.path.join(d, "run.json")))["explain"].get("backend")
            head.update(plant=p["name"], targets=met, live=figures, backend=backend,
                        setting=dict(SETTING, returns_traced=returns, spins=spins,
                                     timer_before_expiry=hybrid))
            f.write(json.dumps(head, separators=(",", ":")) + "\n")
            for r in rows:
                f.write(json.dumps(r, separators=(",", ":")) + "\n")
        print(f"fixtures: {p['name']}: {len(rows)} wake-ups", file=sys.stderr)


if __name__ == "__main__":
    main()
