#!/usr/bin/env bash
# tickscope attach against the target's own measurement of the same wake-ups, and what
# attaching costs the target.
#
#   [ROUNDS=5] [SECS=10] bench/attach.sh
#
# Each round runs four cases, in an order that rotates from round to round:
#   alone    cyclictest -m -p 90 -i 1000 -h 400 -q -a 1 -t 1 under `taskset -c 1`, nobody
#            attached: its own histogram and its CPU time (the observer cost's baseline);
#   attach   the same cyclictest, `tickscope attach --pid P --tid T -q --samples` from CPU 0
#            until cyclictest exits: cyclictest's own `-h` histogram against attach's
#            wake-ups (count, p50, p99), and the target's own p50/p99/CPU with attach;
#   explain  the same with `attach --explain` (the scheduler, interrupt and idle events of the
#            whole machine are traced too);
#   run      `tickscope run -p 90 -a 1 -i 1ms --samples` (the loop the periodic library runs,
#            `wake_step`) attached the same way; wake-ups joined exactly on their expiry.
# cyclictest runs SECS + 2 s (-D), so that attach, which measures after its 1 s `--discover`,
# measures about SECS. cyclictest's histogram counts every cycle from its start; attach counts
# from its first wake-up after discovery. The difference is the span's leading edge: the
# cycles between cyclictest's measuring thread's start (/proc starttime, 10 ms resolution)
# and attach's first expiry — printed as "lead" next to the count difference. "skipped" counts
# the periods between attach's first and last expiry that no expiry was armed for: cyclictest
# moves its next expiry past a wake-up later than a period, so neither side counts them
# (cycles it skipped before attach started make "diff" smaller than "lead").
# Latencies are compared in whole µs, truncated, as cyclictest's histogram counts them.
# "woke offset" = target's own − attach's: the return to user space and the target's clock
# read after the `sys_exit` attach takes as "woke" (docs/attach.md).
# Printed: per round, then min / median / max over the rounds, with the load average before
# and after. Needs root, rt-tests (cyclictest), python3, util-linux (taskset). TICKSCOPE=path
# uses that binary instead of building the release one.
set -euo pipefail
rounds=${ROUNDS:-5}
secs=${SECS:-10}
here=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" = 0 ] || { echo "attach.sh: needs root (tracefs, SCHED_FIFO)" >&2; exit 2; }
for tool in cyclictest python3 taskset; do
  command -v "$tool" >/dev/null || { echo "attach.sh: missing $tool (apt-get install rt-tests python3 util-linux)" >&2; exit 2; }
done
if [ -z "${TICKSCOPE:-}" ]; then
  cargo build --release --manifest-path "$here/Cargo.toml" -q -p tickscope-cli
  TICKSCOPE="$here/target/release/tickscope"
fi
work=$(mktemp -d /tmp/tickscope-attach.XXXXXX)
trap 'rm -rf "$work"' EXIT
python3 - "$TICKSCOPE" "$work" "$rounds" "$secs" <<'PY'
import csv, json, os, signal, statistics, subprocess, sys, time

ts, work, rounds, secs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
HZ = os.sysconf("SC_CLK_TCK")
children = []


def cleanup(*_):
    for p in children:
        if p.poll() is None:
            p.kill()
    sys.exit(1)


signal.signal(signal.SIGINT, cleanup)
signal.signal(signal.SIGTERM, cleanup)


def load():
    return " ".join(open("/proc/loadavg").read().split()[:3])


def pct(v, q):
    """Nearest rank, as cyclictest's histogram reads."""
    s = sorted(v)
    return s[min(len(s) - 1, max(0, -(-int(q * len(s) * 1000) // 1000) - 1))]


def hist_pct(h, overflow, q):
    total = sum(h) + overflow
    rank = max(1, -(-int(q * total * 1000) // 1000))
    seen = 0
    for us, n in enumerate(h):
        seen += n
        if seen >= rank:
            return us
    return float("inf")


def measuring_tid(pid, comm=None):
    for _ in range(200):
        try:
            for t in sorted(os.listdir(f"/proc/{pid}/task"), key=int):
                c = open(f"/proc/{pid}/task/{t}/comm").read().strip()
                if (comm and c == comm) or (not comm and int(t) != pid):
                    return int(t)
        except FileNotFoundError:
            pass
        time.sleep(0.02)
    raise SystemExit(f"attach.sh: no measuring thread in process {pid}")


def start_mono_ns(pid, tid):
    """The thread's start on CLOCK_MONOTONIC, ns (proc(5) starttime: boot time, clock ticks)."""
    st = open(f"/proc/{pid}/task/{tid}/stat").read()
    ticks = int(st[st.rindex(")") + 2:].split()[19])
    boot_minus_mono = time.clock_gettime_ns(time.CLOCK_BOOTTIME) - time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    return ticks * 1_000_000_000 // HZ - boot_minus_mono


def cyclictest_hist(text):
    h, overflow = [0] * 400, 0
    for line in text.splitlines():
        p = line.split()
        if len(p) == 2 and p[0].isdigit() and p[1].isdigit() and int(p[0]) < 400:
            h[int(p[0])] = int(p[1])
        elif line.startswith("# Histogram Overflows:"):
            overflow = int(line.split(":")[1])
    return h, overflow


def attach(pid, tid, out, extra):
    cmd = ["taskset", "-c", "0", ts, "attach", "--pid", str(pid), "--tid", str(tid), "-q",
           "--samples", f"{out}.csv", "--json", f"{out}.json", *extra]
    with open(f"{out}.err", "w") as err:
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
    children.append(p)
    return p


def samples(path):
    with open(path) as f:
        return [(int(r["expiry_ns"]), int(r["latency_ns"])) for r in csv.DictReader(f)]


def cyclictest_case(name, r, extra):
    out = f"{work}/{name}-{r}"
    cmd = ["taskset", "-c", "1", "cyclictest", "-m", "-p", "90", "-i", "1000", "-h", "400",
           "-q", "-a", "1", "-t", "1", "-D", str(secs + 2)]
    t_start = time.monotonic()
    with open(f"{out}.ct", "w") as f:
        ct = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT)
    children.append(ct)
    tid = measuring_tid(ct.pid)
    thread_start = start_mono_ns(ct.pid, tid)
    a = attach(ct.pid, tid, out, extra) if extra is not None else None
    _, status, ru = os.wait4(ct.pid, 0)
    wall = time.monotonic() - t_start
    ct.returncode = status
    if a is not None and a.wait() != 0:
        raise SystemExit(f"attach.sh: attach failed ({name}, round {r}): {open(out + '.err').read().strip()}")
    h, overflow = cyclictest_hist(open(f"{out}.ct").read())
    res = {
        "count": sum(h) + overflow,
        "p50": hist_pct(h, overflow, 0.5),
        "p99": hist_pct(h, overflow, 0.99),
        "cpu": 100 * (ru.ru_utime + ru.ru_stime) / wall,
    }
    if a is not None:
        s = samples(f"{out}.csv")
        att = [lat // 1000 for _, lat in s]  # whole µs, truncated, as cyclictest's histogram
        exp = [e for e, _ in s]
        res.update({
            "att_count": len(s),
            "att_p50": pct(att, 0.5),
            "att_p99": pct(att, 0.99),
            "lead": round((exp[0] - thread_start) / 1_000_000) - 1,
            "skipped": sum(round((b - a) / 1_000_000) - 1 for a, b in zip(exp, exp[1:])),
        })
        res["diff"] = res["count"] - res["att_count"]
        res["off50"] = res["p50"] - res["att_p50"]
        res["off99"] = res["p99"] - res["att_p99"]
    return res


def run_case(r):
    out = f"{work}/run-{r}"
    cmd = [ts, "run", "-p", "90", "-a", "1", "-i", "1ms", "-D", f"{secs + 2}s", "-q",
           "--samples", f"{out}.own.csv"]
    tr = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    children.append(tr)
    tid = measuring_tid(tr.pid, "tickscope-0")
    a = attach(tr.pid, tid, out, [])
    tr.wait()
    if a.wait() != 0:
        raise SystemExit(f"attach.sh: attach failed (run, round {r}): {open(out + '.err').read().strip()}")
    own, att = dict(samples(f"{out}.own.csv")), dict(samples(f"{out}.csv"))
    common = sorted(set(own) & set(att))
    o = [own[e] / 1000 for e in common]
    t = [att[e] / 1000 for e in common]
    off = [own[e] / 1000 - att[e] / 1000 for e in common]
    return {"own": len(own), "att_count": len(att), "joined": len(common),
            "p50": pct(o, .5), "att_p50": pct(t, .5), "p99": pct(o, .99), "att_p99": pct(t, .99),
            "off50": pct(off, .5), "off99": pct(off, .99)}


print(f"load before: {load()}  ({rounds} rounds of {secs} s, {ts})", flush=True)
cases = ["alone", "attach", "explain", "run"]
res = {c: [] for c in cases}
for r in range(1, rounds + 1):
    k = (r - 1) % len(cases)
    for c in cases[k:] + cases[:k]:
        print(f"round {r}/{rounds}: {c}", file=sys.stderr, flush=True)
        if c == "run":
            res[c].append(run_case(r))
        else:
            res[c].append(cyclictest_case(c, r, {"alone": None, "attach": [], "explain": ["--explain"]}[c]))
print(f"load after: {load()}")


def mmm(rows, key, fmt="{:.1f}"):
    v = [x[key] for x in rows]
    return "/".join(fmt.format(x) for x in (min(v), statistics.median(v), max(v)))


print("\ncyclictest's own -h histogram vs attach, same process (per round):")
print("round  ct count  attach count  diff  lead  skipped   p50 own/attach  p99 own/attach  offset p50/p99 µs")
for r, x in enumerate(res["attach"], 1):
    print(f"{r:5}  {x['count']:8}  {x['att_count']:12}  {x['diff']:4}  {x['lead']:4}  {x['skipped']:7}"
          f"   {x['p50']:6} / {x['att_p50']:<6}  {x['p99']:6} / {x['att_p99']:<6}  {x['off50']} / {x['off99']}")
a = res["attach"]
print(f"min/median/max: p50 offset {mmm(a, 'off50')} µs, p99 offset {mmm(a, 'off99')} µs,"
      f" count diff − lead {mmm([{'d': x['diff'] - x['lead']} for x in a], 'd', '{:.0f}')}")

print("\ntickscope run (library loop) vs attach, joined on expiry (per round):")
print("round  run count  attach count  joined   p50 own/attach µs  p99 own/attach µs  offset p50/p99 µs")
for r, x in enumerate(res["run"], 1):
    print(f"{r:5}  {x['own']:9}  {x['att_count']:12}  {x['joined']:6}   {x['p50']:6.1f} / {x['att_p50']:<6.1f}"
          f"     {x['p99']:6.1f} / {x['att_p99']:<6.1f}     {x['off50']:.2f} / {x['off99']:.2f}")
print(f"min/median/max: p50 offset {mmm(res['run'], 'off50', '{:.2f}')} µs,"
      f" p99 offset {mmm(res['run'], 'off99', '{:.2f}')} µs")

print("\nobserver cost on the target (cyclictest's own histogram and its CPU, % of one core),"
      " min/median/max over the rounds:")
for c in ("alone", "attach", "explain"):
    rows = res[c]
    print(f"  {c:8} p50 {mmm(rows, 'p50', '{:.0f}')} µs   p99 {mmm(rows, 'p99', '{:.0f}')} µs"
          f"   CPU {mmm(rows, 'cpu', '{:.2f}')} %")
base = {k: statistics.median(x[k] for x in res["alone"]) for k in ("p50", "p99", "cpu")}
for c in ("attach", "explain"):
    m = {k: statistics.median(x[k] for x in res[c]) for k in ("p50", "p99", "cpu")}
    print(f"  median {c} − alone: p50 {m['p50'] - base['p50']:+.1f} µs, p99 {m['p99'] - base['p99']:+.1f} µs,"
          f" CPU {m['cpu'] - base['cpu']:+.2f} pp")
PY
