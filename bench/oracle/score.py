#!/usr/bin/env python3
"""Scores tickscope --explain against planted ground truth (bench/oracle.sh).

score.py OUT_JSON OUT_MD PLANT_DIR...   Each PLANT_DIR holds:
  plant.json   {"name", "comm", "correct": {"category": [...], "detail": str|null},
                "blame_forbidden": bool, "threshold": str, "command": str,
                "max_latency_ns": int (optional: later wake-ups are not the plant's)}
  truth.txt    "start end" CLOCK_MONOTONIC ns per burst, logged by the plant itself
  late.jsonl   tickscope --explain-log: one breakdown per late wake-up
  switch.txt   an independent raw sched_switch record of the measured CPU (tracefs text)
  tids.txt     tickscope's non-measuring thread ids seen during the run

A late wake-up is the plant's when a logged burst overlaps [expiry, woke), else "other".
A cause is "correct" for a plant when its category is in the plant's list (and its detail
equals the plant's when one is given), or it matches one of the plant's "also" entries. "cannot tell"/"unexplained" count against recall,
never precision, and are reported on their own.
"""
import json, os, re, sys, bisect

UNSURE = ("cannot tell", "unexplained", "events lost")


def load_truth(path):
    iv = []
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            a, b = line.split()
            iv.append((int(a), int(b)))
    iv.sort()
    return iv


def overlap(iv, starts, lo, hi):
    """Total overlap (ns) of the logged bursts with [lo, hi)."""
    k = bisect.bisect_left(starts, hi)
    total = 0
    for a, b in iv[max(0, k - 64):k]:
        total += max(0, min(b, hi) - max(a, lo))
    return total


SWITCH = re.compile(r"\s(\d+)\.(\d+): sched_switch: prev_comm=(.*) prev_pid=(\d+) .*next_comm=(.*) next_pid=(\d+)")


def switches(switch_path):
    """(ns, prev_pid, next_pid, next_comm, prev_comm) of every switch in the oracle's own
    sched_switch record of the measured CPU (not the trace tickscope reads), in order."""
    with open(switch_path) as f:
        for line in f:
            m = SWITCH.search(line)
            if m:
                ts = int(m.group(1)) * 1_000_000_000 + int(m.group(2).ljust(9, "0")[:9])
                yield ts, int(m.group(4)), int(m.group(6)), m.group(5), m.group(3)


def on_cpu_runs(switch_path):
    """[(from, to, pid, comm)] in ns: who ran on the measured CPU, from the oracle's own
    sched_switch record; None without one. This VM's ftrace never records the idle task's
    switch out on CPU 1 (BPF does; found 2026-11-28): a switch taking another task off the CPU
    while the record has the idle task on it ends a run of that task that began at the last
    interrupt that entered the CPU in between (the one that made it runnable: the idle task
    keeps no CPU on which a task is runnable), else at the switch to idle. Before, such a
    run counted as idle: a plant, or a tickscope thread, switched in from idle held the CPU
    unseen."""
    if not os.path.exists(switch_path):
        return None
    timer, ipi = vectors(switch_path)
    marks = sorted(timer + ipi)
    runs, cur, since = [], None, None
    for ts, prev_pid, next_pid, next_comm, prev_comm in switches(switch_path):
        if cur is not None and cur[0] == 0 and prev_pid != 0:
            k = bisect.bisect_left(marks, ts)
            start = marks[k - 1] if k > 0 and marks[k - 1] > since else since
            runs.append((since, start, 0, cur[1]))
            runs.append((start, ts, prev_pid, prev_comm))
        elif cur is not None:
            runs.append((since, ts, cur[0], cur[1]))
        cur, since = (next_pid, next_comm), ts
    return runs


def blind_stretches(switch_path):
    """[(from, to)] in ns: stretches of the measured CPU the oracle's own trace did not see
    end — a task was switched in and the next switch on the CPU names another task as the
    one leaving. Its switch out, and every event in its context, went unrecorded (on this
    VM the sandbox's own agent threads (of PID 1) are invisible to perf, BPF and
    ftrace's scheduler events alike); neither that trace nor tickscope's can show what held
    the CPU there. A stretch that began with a switch to idle is left out: this VM's ftrace
    never records the idle task's switch out on CPU 1 (BPF does)."""
    if not os.path.exists(switch_path):
        return []
    out, prev = [], None
    for ts, prev_pid, next_pid, _, _ in switches(switch_path):
        if prev is not None and prev[1] != 0 and prev_pid != prev[1]:
            out.append((prev[0], ts))
        prev = (ts, next_pid)
    return out


VECTOR = re.compile(r"\s(\d+)\.(\d+): (local_timer|call_function|call_function_single|reschedule)_entry:")


def vectors(switch_path):
    """(timer interrupt times, IPI times) in ns on the measured CPU, from the oracle's own
    trace instance (not the trace tickscope reads)."""
    timer, ipi = [], []
    if not os.path.exists(switch_path):
        return timer, ipi
    with open(switch_path) as f:
        for line in f:
            m = VECTOR.search(line)
            if m:
                ts = int(m.group(1)) * 1_000_000_000 + int(m.group(2).ljust(9, "0")[:9])
                (timer if m.group(3) == "local_timer" else ipi).append(ts)
    return timer, ipi


def times_by_pid(switch_path, pattern):
    """{pid: [ns]} of the lines of the oracle's own trace that `pattern` matches: its named
    groups `pid`, `s` and `frac` are the task and the time (seconds, fraction)."""
    out = {}
    if os.path.exists(switch_path):
        with open(switch_path) as f:
            for line in f:
                m = pattern.search(line)
                if m:
                    ts = int(m["s"]) * 1_000_000_000 + int(m["frac"].ljust(9, "0")[:9])
                    out.setdefault(int(m["pid"]), []).append(ts)
    return out


# The user page faults taken on the measured CPU, per task (exceptions:page_fault_user).
FAULT = re.compile(r"-(?P<pid>\d+)\s+\[\d+\].*\s(?P<s>\d+)\.(?P<frac>\d+): page_fault_user:")

# When a task was switched out in state R+ on the measured CPU (the throttle's task work on
# Linux 6.18, see docs/explain.md).
THROTTLED = re.compile(
    r"\s(?P<s>\d+)\.(?P<frac>\d+): sched_switch: .*prev_pid=(?P<pid>\d+) .*prev_state=R\+ ==>")


def delivery(timer, ipi, lo, hi):
    """The timer interrupt's delay after the expiry `lo` (ns; the first local_timer entry in
    [lo - 1 µs, hi)) and whether an IPI entered the CPU before it; None if not seen."""
    k = bisect.bisect_left(timer, lo - 1_000)
    if k >= len(timer) or timer[k] >= hi:
        return None
    t = timer[k]
    j = bisect.bisect_left(ipi, lo)
    return max(0, t - lo), j < len(ipi) and ipi[j] < t


def held(runs, starts, lo, hi, measured):
    """On-CPU time (ns) per comm within [lo, hi), idle, tickscope's threads and the measured
    thread (`measured`, its tid: another program's under `tickscope attach`) left out."""
    out = {}
    k = bisect.bisect_left(starts, hi)
    for a, b, pid, comm in runs[max(0, k - 256):k]:
        t = min(b, hi) - max(a, lo)
        if t > 0 and pid not in (0, measured) and not comm.startswith("tickscope"):
            out[comm] = out.get(comm, 0) + t
    return out


# Marks (in a breakdown) that are the plant's own mechanism, for its share of the latency.
MECHANISM = {"ipi": ("irq", ("call_function", "call_function_single", "reschedule")),
             "softirq": ("softirq", ("NET_RX",))}




def cause_matches(cause, spec):
    """Whether `cause` is correct under `spec`: its category listed and its detail equal to
    the spec's when one is given, or correct under one of the spec's "also" entries."""
    if any(cause_matches(cause, a) for a in spec.get("also", [])):
        return True
    if cause["category"] not in spec["category"]:
        return False
    return spec.get("detail") is None or cause.get("detail") == spec["detail"]


def names_plant(b, comm):
    return bool(comm) and b["cause"].get("detail") == comm


def main():
    out_json, out_md, dirs = sys.argv[1], sys.argv[2], sys.argv[3:]
    plants, rows, report = [], {}, {"plants": []}
    columns = set()
    total_late = total_unsure = total_unexplained = total_self = 0
    for d in dirs:
        p = json.load(open(os.path.join(d, "plant.json")))
        name, comm = p["name"], p["comm"]
        plants.append(name)
        iv = load_truth(os.path.join(d, "truth.txt"))
        starts = [a for a, _ in iv]
        tids = set()
        if os.path.exists(os.path.join(d, "tids.txt")):
            tids = {int(x) for x in open(os.path.join(d, "tids.txt")).read().split()}
        runs = on_cpu_runs(os.path.join(d, "switch.txt"))
        timer_irqs, ipis = vectors(os.path.join(d, "switch.txt"))
        outs = times_by_pid(os.path.join(d, "switch.txt"), THROTTLED) if name == "quota" else {}
        blind = blind_stretches(os.path.join(d, "switch.txt"))
        blind_starts = [a for a, _ in blind]
        seen_n = seen_tp = blind_n = 0
        kept_off = (load_truth(os.path.join(d, "truth.txt.held"))
                    if os.path.exists(os.path.join(d, "truth.txt.held")) else [])
        faults = times_by_pid(os.path.join(d, "switch.txt"), FAULT) if name == "pagefault" else {}
        # quota: the plant's spins that never saw the group throttled (not bursts; the truth
        # is unchanged): a "cpu quota" named outside every burst but inside one of them.
        quiet = (load_truth(os.path.join(d, "truth.txt.quiet"))
                 if os.path.exists(os.path.join(d, "truth.txt.quiet")) else None)
        quiet_starts = [a for a, _ in quiet] if quiet else []
        quiet_hits = 0
        # And the group's throttled periods: all of them (cpu.stat at the end) against those
        # during the plant's spins (the plant's count). The rest came outside them: the
        # measuring thread's own spending, or a refill just after a spin's last read.
        throttles = None
        if quiet is not None and os.path.exists(os.path.join(d, "cpu.stat")):
            stat = dict(l.split() for l in open(os.path.join(d, "cpu.stat")) if len(l.split()) == 2)
            head = [l.split() for l in open(os.path.join(d, "truth.txt.quiet")) if l.startswith("#")]
            spins = next((int(h[2]) for h in head if h[1:2] == ["throttled_in_spins"]), None)
            if "nr_throttled" in stat and spins is not None:
                throttles = {"all": int(stat["nr_throttled"]), "in_spins": spins}
        # The timer interrupt's delay with and without an IPI inside it (ns), per truth.
        effect = {"with": [], "without": []}
        run_starts = [a for a, _, _, _ in runs] if runs else []
        own = None if runs is None else [(a, b) for a, b, pid, _ in runs if pid in tids]
        own_starts = [a for a, _ in own] if own else []
        span = (iv[0][0], iv[-1][1]) if len(iv) > 1 else None
        in_span_other = 0
        # Per top cause, the late wake-ups inside the plant's active span that overlapped a
        # burst and those that did not, and the plant's misses (for the background check).
        col_in, col_out, missed = {}, {}, {}
        shares = []
        uncontested = uncontested_tp = 0
        lines = [json.loads(l) for l in open(os.path.join(d, "late.jsonl"))]
        tp = fp = fn = unsure = unexplained = blamed = 0
        errors, selfhit = [], 0
        matrix = {}
        for b in lines:
            s = b["sample"]
            lo, hi = s["expiry"], s["woke"]
            ov = overlap(iv, starts, lo, hi)
            truth = name if ov > 0 else "other"
            # A configuration plant (timer slack) explains at most its own size.
            if p.get("max_latency_ns") and hi - lo > p["max_latency_ns"]:
                truth = "other"
            dv = delivery(timer_irqs, ipis, lo, hi)
            if dv is not None and truth == name:
                effect["with" if dv[1] else "without"].append(dv[0])
                # The IPI plant was seen at work: an IPI entered CPU 1 inside the delay.
                if name == "ipi" and dv[1]:
                    uncontested += 1
                    uncontested_tp += cause_matches(b["cause"], p["correct"])
            # The pagefault plant was seen at work: the measured thread took a user page
            # fault inside the wake-up, or an IPI (the page-out's TLB flush) entered the CPU
            # inside the timer interrupt's delay.
            if name == "pagefault" and truth == name and (
                    any(lo <= t < hi for t in faults.get(s["tid"], []))
                    or (dv is not None and dv[1])):
                uncontested += 1
                uncontested_tp += cause_matches(b["cause"], p["correct"])
            # The rt-throttle plant was seen at work: the wake-up's expiry fell in a stretch
            # the spinner itself was kept off its CPU (throttled), from its own clock reads.
            if name == "rt-throttle" and truth == name and any(a <= lo < e for a, e in kept_off):
                uncontested += 1
                uncontested_tp += cause_matches(b["cause"], p["correct"])
            # The quota plant was seen at work: the measured thread switched out R+ inside.
            if name == "quota" and truth == name and any(
                    lo <= t < hi for t in outs.get(s["tid"], [])):
                uncontested += 1
                uncontested_tp += cause_matches(b["cause"], p["correct"])
            cat = b["cause"]["category"]
            col = cat + (" (plant)" if names_plant(b, comm) else "")
            columns.add(col)
            matrix.setdefault(truth, {}).setdefault(col, 0)
            matrix[truth][col] += 1
            ok = cause_matches(b["cause"], p["correct"])
            if p.get("blame_forbidden") and truth == name:
                blamed += names_plant(b, comm)
            if cat in UNSURE:
                unsure += 1
                unexplained += cat == "unexplained"
            if truth == name:
                # Recall where the oracle's own trace saw the whole wake-up (no blind stretch).
                k = bisect.bisect_left(blind_starts, hi)
                if any(a < hi and e > lo for a, e in blind[max(0, k - 4):k]):
                    blind_n += 1
                else:
                    seen_n += 1
                    seen_tp += ok
                if ok:
                    tp += 1
                    # Time error: the plant's marks inside [expiry, woke) against the
                    # logged burst's overlap (marks carry the plant's name).
                    marked = sum(m["to_ns"] - m["from_ns"] for m in b.get("marks", [])
                                 if m.get("name") == comm)
                    if marked and comm:
                        errors.append(abs(marked - ov))
                else:
                    fn += 1
            elif ok:
                fp += 1
                if quiet and overlap(quiet, quiet_starts, lo, hi) > 0:
                    quiet_hits += 1
            if span and truth != name and span[0] <= lo < span[1]:
                in_span_other += 1
            # Wrong for this plant: not a correct cause, or for a plant that must never be
            # blamed (the spinner), naming it.
            wrong = names_plant(b, comm) if p.get("blame_forbidden") else not ok
            if truth == name and wrong:
                missed[col] = missed.get(col, 0) + 1
            if span and span[0] <= lo < span[1] and wrong:
                side = col_in if truth == name else col_out
                side.setdefault(col, []).append(hi - lo)
            if truth == name and hi > lo:
                mech = MECHANISM.get(name)
                mine = [m for m in b.get("marks", [])
                        if (mech and m["kind"] == mech[0] and m["name"] in mech[1])
                        or (comm and m["kind"] == "thread" and m["name"] == comm)]
                shares.append(sum(m["to_ns"] - m["from_ns"] for m in mine) / (hi - lo))
                if comm and runs is not None and not p.get("blame_forbidden"):
                    h = held(runs, run_starts, lo, hi, s["tid"])
                    # Seen at work: the plant held the CPU, and longest.
                    if h.get(comm, 0) > 0 and h[comm] >= max(h.values()):
                        uncontested += 1
                        uncontested_tp += ok
            if own is not None:
                k = bisect.bisect_left(own_starts, hi)
                if any(a < hi and e > lo for a, e in own[max(0, k - 8):k]):
                    selfhit += 1
        n_truth = sum(matrix.get(name, {}).values())
        # Share of the plant's active time taken by its bursts (the issue asks <= 20 %).
        duty = (sum(b - a for a, b in iv) / (iv[-1][1] - iv[0][0])
                if len(iv) > 1 and iv[-1][1] > iv[0][0] else None)
        if p.get("blame_forbidden"):
            precision = None
            recall = (n_truth - blamed_truth(lines, iv, starts, comm)) / n_truth if n_truth else None
        else:
            precision = tp / (tp + fp) if tp + fp else None
            recall = tp / n_truth if n_truth else None
        errors.sort()
        shares.sort()
        # Late wake-ups per second inside bursts against outside them (within the plant's
        # active span): about 1 when the plant does not make wake-ups late at all.
        lift = None
        if span and duty and 0 < duty < 1:
            busy = sum(b - a for a, b in iv)
            rest = (span[1] - span[0]) - busy
            if in_span_other:
                lift = (n_truth / busy) / (in_span_other / rest)
        # The background check: a wrong cause named about as often (per second) outside the
        # bursts as inside them is the machine's own (the host's stalls, a competing load),
        # which a burst overlapped by chance — not something the plant did that was named
        # wrongly. Rates over the plant's active span, of the wake-ups the cause is wrong for.
        # A wake-up counts as inside when [expiry, woke) overlaps a burst, so its expiry may
        # fall up to its latency before one: inside, the exposure is the bursts' time plus, per
        # burst, the median latency of that cause's wake-ups; outside, the rest of the span.
        background = []
        if span and duty and 0 < duty < 1:
            busy = sum(b - a for a, b in iv)
            for col, k in sorted(missed.items(), key=lambda kv: -kv[1]):
                lat = sorted(col_in.get(col, []) + col_out.get(col, []))
                reach = lat[len(lat) // 2] if lat else 0
                inside = min(busy + len(iv) * reach, span[1] - span[0])
                outside = span[1] - span[0] - inside
                # A cause whose wake-ups last longer than the gaps between bursts overlaps
                # one wherever it falls (the spinning plants' 50 ms RT throttles): no
                # outside to compare with (None, "—").
                background.append({
                    "cause": col, "missed": k,
                    "per_s_in_bursts": len(col_in.get(col, [])) / (inside / 1e9),
                    "per_s_outside": (len(col_out.get(col, [])) / (outside / 1e9)
                                      if outside >= 0.01 * (span[1] - span[0]) else None)})
        r = {
            "plant": name, "command": p["command"], "threshold": p["threshold"],
            "misses_background": background,
            "correct": p["correct"], "late": len(lines), "truth_plant": n_truth,
            "bursts": len(iv), "duty_cycle": duty, "lift": lift,
            "plant_share_p50": shares[len(shares) // 2] if shares else None,
            "uncontested": (uncontested if (comm or name in ("ipi", "quota", "pagefault", "rt-throttle"))
                            and not p.get("blame_forbidden") else None),
            "recall_uncontested": uncontested_tp / uncontested if uncontested else None,
            "trace_blind": blind_n,
            "recall_traced": seen_tp / seen_n if seen_n else None,
            "true_positive": tp, "false_positive": fp, "precision": precision, "recall": recall,
            "blamed": blamed if p.get("blame_forbidden") else None,
            "cannot_tell_share": unsure / len(lines) if lines else None,
            "unexplained_share": unexplained / len(lines) if lines else None,
            "time_error_ns": {"n": len(errors), "p50": errors[len(errors) // 2] if errors else None,
                              "max": errors[-1] if errors else None},
            "self_interference": selfhit if own is not None else None,
            "ipi_effect": {k: {"n": len(v), "p50_ns": sorted(v)[len(v) // 2] if v else None}
                           for k, v in effect.items()},
            "quiet_spins": ({"spins": len(quiet), "false_positives_inside": quiet_hits,
                             "throttled_periods": throttles}
                            if quiet is not None else None),
            "matrix": matrix,
            # The plant's own stderr (oracle.sh): a coarser truth where a kernel file it
            # reads is missing says so here.
            "plant_said": ([l.strip() for l in open(os.path.join(d, "plant.err")) if l.strip()]
                           if os.path.exists(os.path.join(d, "plant.err")) else []),
        }
        # rtla's verdict on the same plant (oracle.sh rtla_beside, where timerlat exists):
        # whether it names the plant's cause by the same rule as ours (one stop, no truth
        # overlap: rtla prints no time for it).
        rtla_path = os.path.join(d, "rtla.json")
        if os.path.exists(rtla_path):
            v = json.load(open(rtla_path))
            if v.get("stopped"):
                c = dict(v["cause"])
                v["names_plant_cause"] = (not names_plant({"cause": c}, comm)
                                          if p.get("blame_forbidden")
                                          else cause_matches(c, p["correct"]))
            r["rtla"] = v
        report["plants"].append(r)
        total_late += len(lines)
        total_unsure += unsure
        total_unexplained += unexplained
        total_self += selfhit
    report["late"] = total_late
    report["unexplained_share"] = total_unexplained / total_late if total_late else None
    report["cannot_tell_share"] = total_unsure / total_late if total_late else None
    report["self_interference"] = total_self
    with open(out_json, "w") as f:
        json.dump(report, f, indent=1)
    cols = sorted(columns)
    fmt = lambda v: "—" if v is None else (f"{v:.2f}" if isinstance(v, float) else str(v))
    md = ["# tickscope --explain against planted causes", "",
          "| plant | threshold | bursts | duty | lift | late | plant's | plant's share p50 | precision | recall | recall where the plant was seen at work | trace blind | recall where the trace saw it all | blamed in burst | cannot tell | unexplained | time err p50/max µs | own thread on CPU |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in report["plants"]:
        te = r["time_error_ns"]
        tstr = "—" if te["p50"] is None else f"{te['p50']/1000:.0f}/{te['max']/1000:.0f}"
        unc = ("—" if r["uncontested"] is None
               else f"{fmt(r['recall_uncontested'])} (of {r['uncontested']})")
        md.append(f"| {r['plant']} | {r['threshold']} | {r['bursts']} | {fmt(r['duty_cycle'])} | "
                  f"{fmt(r['lift'])} | {r['late']} | {r['truth_plant']} | "
                  f"{fmt(r['plant_share_p50'])} | "
                  f"{fmt(r['precision'])} | {fmt(r['recall'])} | {unc} | "
                  f"{r['trace_blind']} | {fmt(r['recall_traced'])} | {fmt(r['blamed'])} | "
                  f"{fmt(r['cannot_tell_share'])} | {fmt(r['unexplained_share'])} | {tstr} | "
                  f"{fmt(r['self_interference'])} |")
    md += ["", "Confusion matrix (rows: truth from the plant's own log; columns: top cause; "
           "`(plant)` = the cause names the plant's thread):", "",
           "| truth | " + " | ".join(cols) + " |", "|---|" + "---|" * len(cols)]
    for r in report["plants"]:
        for truth in (r["plant"], "other"):
            row = r["matrix"].get(truth, {})
            label = truth if truth != "other" else f"other ({r['plant']} run)"
            md.append(f"| {label} | " + " | ".join(str(row.get(c, 0)) for c in cols) + " |")
    for r in report["plants"]:
        e = r["ipi_effect"]
        if r["plant"] == "ipi" and e["with"]["n"]:
            md.append(f"- {r['plant']}: the timer interrupt came {e['with']['p50_ns']/1000:.0f} µs "
                      f"after the expiry (median) in the {e['with']['n']} plant's late wake-ups "
                      f"with an IPI inside that delay, {fmt_us(e['without']['p50_ns'])} in the "
                      f"{e['without']['n']} without (oracle's own trace of CPU 1).")
    for r in report["plants"]:
        q = r.get("quiet_spins")
        if q is not None:
            md.append(f"- {r['plant']}: {r['false_positive']} wake-ups named correctly outside "
                      f"every burst, {q['false_positives_inside']} of them inside one of the "
                      f"plant's {q['spins']} spins that never saw the group throttled (not "
                      f"bursts: the truth is unchanged).")
            t = q.get("throttled_periods")
            if t:
                md.append(f"- {r['plant']}: the group was throttled in {t['all']} periods, "
                          f"{t['in_spins']} of them during the plant's spins, "
                          f"{t['all'] - t['in_spins']} outside them.")
    for r in report["plants"]:
        if r["misses_background"]:
            parts = [f"{m['cause']} {m['missed']} ({m['per_s_in_bursts']:.1f} / "
                     + ("—" if m["per_s_outside"] is None else f"{m['per_s_outside']:.1f}")
                     + ")" for m in r["misses_background"]]
            md.append(f"- {r['plant']}: its misses by cause, with that cause's late wake-ups "
                      f"per second inside its bursts / outside them (about equal or fewer "
                      f"inside: the machine's own, a burst overlapped by chance): "
                      + ", ".join(parts) + ".")
    for r in report["plants"]:
        for line in r.get("plant_said", []):
            md.append(f"- {r['plant']}: the plant said: {line}")
    for r in report["plants"]:
        v = r.get("rtla")
        if v is None:
            continue
        if "skipped" in v:
            md.append(f"- {r['plant']}: rtla timerlat -a not run beside it: {v['skipped']}.")
        elif "failed" in v:
            md.append(f"- {r['plant']}: rtla timerlat -a failed beside it: {v['failed']}")
        elif not v.get("stopped"):
            md.append(f"- {r['plant']}: rtla timerlat -a: no wake-up of its thread was later "
                      f"than {r['threshold']} during the plant's run.")
        else:
            c = v["cause"]
            ours = max(r["matrix"].get(r["plant"], {}).items(), key=lambda kv: kv[1],
                       default=None)
            md.append(f"- {r['plant']}: rtla timerlat -a (one stop, {fmt(v.get('latency_us'))} µs, "
                      f"its largest part: {v['largest']}): {c['category']}"
                      + (f" ({c['detail']})" if c.get("detail") else "")
                      + f" — {'names' if v['names_plant_cause'] else 'does not name'} the "
                      f"plant's cause"
                      + (f"; ours most often: {ours[0]} ({ours[1]} of {r['truth_plant']})"
                         if ours else "") + ".")
    for r in report["plants"]:
        if not r["truth_plant"]:
            md.append(f"- {r['plant']}: no late wake-up overlapped a burst — the cause was not "
                      f"created above {r['threshold']} here (not scored).")
    md += ["", f"All plants: {total_late} late wake-ups, unexplained "
           f"{fmt(report['unexplained_share'])}, cannot tell {fmt(report['cannot_tell_share'])}, "
           f"late wake-ups with a tickscope thread on the measured CPU: {total_self}."]
    with open(out_md, "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))


def fmt_us(ns):
    return "—" if ns is None else f"{ns/1000:.0f} µs"


def blamed_truth(lines, iv, starts, comm):
    return sum(1 for b in lines
               if overlap(iv, starts, b["sample"]["expiry"], b["sample"]["woke"]) > 0
               and names_plant(b, comm))


if __name__ == "__main__":
    main()
