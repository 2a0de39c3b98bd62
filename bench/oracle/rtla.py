#!/usr/bin/env python3
"""rtla's verdict on a plant, for bench/oracle.sh: the auto-analysis that `rtla timerlat top -a
US` prints when a wake-up of its timerlat thread is later than US, read into the oracle's
vocabulary so that score.py can set it beside tickscope's.

    rtla.py OUTPUT [STATUS] the JSON verdict of one run's output (stdout); STATUS, rtla's exit
                            status, tells a failed run (no analysis, STATUS not 0) from one
                            in which no wake-up crossed the threshold
    rtla.py --self-test     parses the samples below and checks each verdict (exit 1 if not)

The analysis (rtla's `timerlat_aa.c`, Linux tools/tracing/rtla; Daniel Bristot de Oliveira,
"rtla timerlat: Add auto-analysis support", Linux 6.3, 2023, and the `rtla-timerlat-top`
man page, https://docs.kernel.org/tools/rtla/rtla-timerlat-top.html) splits the one wake-up
that stopped the trace into parts, each a line "NAME: ... X us (P %)": the IRQ handler delay
(tagged "(exit from idle)" when the CPU was idle), the timerlat IRQ's own duration, the
thread that was running ("Blocking thread", then its "comm:pid X us" line), NMI, IRQ, softirq
and thread interference (each followed by one "name:number X us" line per source). An
IRQ-latency stop (the interrupt itself late) prints only the delay and the blocking thread,
without its time. The verdict is the largest part, named as tickscope names it (the table
"rtla's categories and ours" in docs/explain.md):

    IRQ handler delay          "exit from idle" when tagged so, else "interrupt delivery"
                               (rtla cannot tell the host's hold from interrupts disabled)
    Timerlat IRQ duration      "kernel path" (the timer's own interrupt)
    Blocking thread            "other thread", detail its comm
    Thread interference        "other thread", detail the largest thread's comm
    IRQ / NMI interference     "irq", detail the largest source's name ("nmi")
    Softirq interference       "softirq", detail the largest softirq's name (e.g. NET_RX)

Whitespace is free (rtla printed tabs before Linux 6.5 and spaces since); the parser keys on
the names and the "X us" that follows them.
"""
import json
import re
import sys

STOP = re.compile(r"## CPU (\d+) hit stop tracing, analyzing it ##")
# "NAME: [tag] X us [(P %)]" at the start of a line (after blanks).
PART = re.compile(r"^\s*(?P<name>[A-Za-z][A-Za-z ]*?)\s*:\s*(?P<tag>\(exit from idle\))?\s*"
                  r"(?P<us>\d+(?:\.\d+)?)\s*us\b")
# A part without a colon: "NMI interference X us (P %)", "IRQ interference ...".
INTERFERENCE = re.compile(r"^\s*(?P<name>NMI|IRQ|Softirq|Thread) interference\s+"
                          r"(?P<us>\d+(?:\.\d+)?)\s*us\b")
# A source line under a part: "comm:pid X us" / "desc:vector X us" (no percentage).
SOURCE = re.compile(r"^\s*(?P<who>\S(?:.*\S)?):(?P<num>\d+)\s+(?P<us>\d+(?:\.\d+)?)\s*us\s*$")
# The IRQ-latency stop's blocking thread: "comm:pid" alone on its line.
BARE = re.compile(r"^\s*(?P<who>\S(?:.*\S)?):(?P<num>\d+)\s*$")
TOTAL = re.compile(r"^\s*(?P<kind>IRQ|Thread) latency:\s*(?P<us>\d+(?:\.\d+)?)\s*us\s*\(100\s*%\)")


def parse(text):
    """The verdict of one `rtla timerlat top -a` output: {"stopped": False} when no wake-up
    crossed the threshold, else the stop's CPU, kind ("irq" or "thread"), latency (µs), the
    parts (name -> µs), the largest part and the cause it gives ({"category", "detail"})."""
    lines = text.splitlines()
    start = next((i for i, l in enumerate(lines) if STOP.search(l)), None)
    if start is None:
        return {"stopped": False}
    cpu = int(STOP.search(lines[start]).group(1))
    parts, sources, idle = {}, {}, False
    blocking = None
    current = None
    kind, total = None, None
    for line in lines[start + 1:]:
        if STOP.search(line):
            break  # another CPU's analysis: the first stop is the verdict
        m = TOTAL.match(line)
        if m:
            kind, total = m["kind"].lower(), float(m["us"])
            break
        m = INTERFERENCE.match(line)
        if m:
            current = m["name"] + " interference"
            parts[current] = float(m["us"])
            continue
        m = PART.match(line)
        if m and m["name"] != "Max timerlat IRQ latency from idle":
            current = m["name"]
            if current == "IRQ handler delay":
                idle = bool(m["tag"])
            if current != "IRQ latency":
                parts[current] = float(m["us"])
            continue
        if re.match(r"^\s*Blocking thread\s*:\s*$", line):
            current = "Blocking thread"
            continue
        m = SOURCE.match(line) or BARE.match(line)
        if m and current:
            us = float(m["us"]) if "us" in m.groupdict() and m["us"] else None
            if current == "Blocking thread" and blocking is None:
                blocking = m["who"]
            elif us is not None:
                best = sources.get(current)
                if best is None or us > best[1]:
                    sources[current] = (m["who"], us)
    v = {"stopped": True, "cpu": cpu, "kind": kind, "latency_us": total, "parts": parts,
         "blocking_thread": blocking}
    if kind == "irq" or not parts:
        # Only the interrupt's delay. rtla names the task that was current, not whether it
        # ran with interrupts disabled (a task in user mode cannot hold an interrupt), so
        # that task is not taken as the cause.
        v["largest"] = "IRQ handler delay"
        v["cause"] = delivery(idle)
        return v
    largest = max(parts, key=lambda k: parts[k])
    v["largest"] = largest
    src = sources.get(largest, (None, 0))[0]
    if largest == "IRQ handler delay":
        cause = delivery(idle)
    elif largest == "Timerlat IRQ duration":
        cause = {"category": "kernel path", "detail": None}
    elif largest == "Blocking thread":
        cause = {"category": "other thread", "detail": blocking}
    elif largest == "Thread interference":
        cause = {"category": "other thread", "detail": src}
    elif largest in ("IRQ interference", "NMI interference"):
        cause = {"category": "irq", "detail": src or ("nmi" if largest.startswith("NMI") else None)}
    elif largest == "Softirq interference":
        cause = {"category": "softirq", "detail": src}
    else:
        cause = {"category": "cannot tell", "detail": largest}
    v["cause"] = cause
    return v


def delivery(idle):
    return {"category": "exit from idle" if idle else "interrupt delivery", "detail": None}


# Samples laid out as rtla prints them (the format strings of timerlat_aa.c), one per case.
SAMPLES = [
    # A thread stop held by a SCHED_FIFO hog that preempted the timerlat thread.
    ("""rtla timerlat hit stop tracing
## CPU 1 hit stop tracing, analyzing it ##
  IRQ handler delay:                                         1.02 us (0.19 %)
  IRQ latency:                                               3.40 us
  Timerlat IRQ duration:                                     4.10 us (0.77 %)
  Blocking thread:                                           2.31 us (0.43 %)
                       bash:2511                             2.31 us
  Thread interference                                      512.77 us (96.50 %)
                plant-fifo:40001                           512.77 us
------------------------------------------------------------------------
  Thread latency:                                          531.36 us (100%)

Max timerlat IRQ latency from idle: 12.10 us in cpu 1
""", {"category": "other thread", "detail": "plant-fifo"}, "thread"),
    # The blocking thread itself (it ran when the interrupt came and kept the CPU).
    ("""## CPU 1 hit stop tracing, analyzing it ##
\tIRQ handler delay:\t\t                \t     0.90 us (0.42 %)
\tIRQ latency:\t\t\t\t\t\t     2.20 us
\tTimerlat IRQ duration:\t\t\t\t     3.00 us (1.39 %)
\tBlocking thread:\t\t\t\t\t   208.20 us (96.48 %)
\t\t\t  plant-kernel:3141\t\t   208.20 us
    Blocking thread stack trace
                -> timerlat_irq
                -> __hrtimer_run_queues
                -> filemap_read
------------------------------------------------------------------------
\t  Thread latency:\t\t\t\t\t   215.80 us (100%)
""", {"category": "other thread", "detail": "plant-kernel"}, "thread"),
    # Softirq interference (NET_RX), and a smaller IRQ interference beside it.
    ("""## CPU 1 hit stop tracing, analyzing it ##
  IRQ handler delay:                                         0.50 us (0.60 %)
  IRQ latency:                                               1.80 us
  Timerlat IRQ duration:                                     2.70 us (3.25 %)
  Blocking thread:                                           1.10 us (1.33 %)
                   swapper/1:0                               1.10 us
  IRQ interference                                           4.20 us (5.06 %)
                 local_timer:236                             4.20 us
  Softirq interference                                      71.40 us (86.02 %)
                      NET_RX:3                              68.00 us
                       TIMER:1                               3.40 us
------------------------------------------------------------------------
  Thread latency:                                           83.00 us (100%)
""", {"category": "softirq", "detail": "NET_RX"}, "thread"),
    # An IRQ-latency stop on a CPU woken from idle: no blocking time, the delay is all.
    ("""## CPU 1 hit stop tracing, analyzing it ##
  IRQ handler delay:                   (exit from idle)     48.90 us (97.80 %)
  IRQ latency:                                              50.00 us
  Blocking thread:
                   swapper/1:0
------------------------------------------------------------------------
     IRQ latency:                                           50.00 us (100%)
""", {"category": "exit from idle", "detail": None}, "irq"),
    # An IRQ-latency stop while a user-mode spinner ran: the spinner is not the cause.
    ("""## CPU 1 hit stop tracing, analyzing it ##
  IRQ handler delay:                                        61.00 us (98.39 %)
  IRQ latency:                                              62.00 us
  Blocking thread:
                 plant-other:4242
------------------------------------------------------------------------
     IRQ latency:                                           62.00 us (100%)
""", {"category": "interrupt delivery", "detail": None}, "irq"),
]


def self_test():
    bad = 0
    for text, want, kind in SAMPLES:
        v = parse(text)
        if not v["stopped"] or v["cause"] != want or v["kind"] != kind:
            print(f"rtla.py: sample {want}: got {json.dumps(v)}", file=sys.stderr)
            bad += 1
    if verdict("Saving trace\n", 0) != {"stopped": False}:
        print("rtla.py: a run without a stop parsed as one", file=sys.stderr)
        bad += 1
    if verdict("Could not enable timerlat tracer\n", 1) != {
            "failed": "rtla exited with 1: Could not enable timerlat tracer"}:
        print("rtla.py: a failed run was not reported as failed", file=sys.stderr)
        bad += 1
    if "failed" in verdict(SAMPLES[0][0], 2):
        print("rtla.py: a stop was lost to a non-zero exit status", file=sys.stderr)
        bad += 1
    n = len(SAMPLES) + 3
    print(f"rtla.py: {n - bad} of {n} samples parsed as expected")
    return 1 if bad else 0


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "--self-test":
        sys.exit(self_test())
    if len(sys.argv) not in (2, 3) or (len(sys.argv) == 3 and not sys.argv[2].isdigit()):
        print("usage: rtla.py OUTPUT [STATUS] | --self-test", file=sys.stderr)
        sys.exit(2)
    with open(sys.argv[1], errors="replace") as f:
        text = f.read()
    print(json.dumps(verdict(text, int(sys.argv[2]) if len(sys.argv) == 3 else 0)))


def verdict(text, status):
    """parse(text), or {"failed": …} with rtla's last line when it stopped nowhere and
    exited with `status` other than 0 (it could not run: no analysis to read)."""
    v = parse(text)
    if not v["stopped"] and status != 0:
        last = next((l.strip() for l in reversed(text.splitlines()) if l.strip()), "no output")
        v = {"failed": f"rtla exited with {status}: {last}"}
    return v


if __name__ == "__main__":
    main()
