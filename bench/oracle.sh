#!/usr/bin/env bash
# The oracle: tickscope's --explain scored against planted causes of known time.
#
#   bench/oracle.sh [--quick] [--json FILE] [--md FILE] [--fixtures DIR] [--only PLANT,…] [--keep]
#
# 12 s per plant; --quick 6 s, but rt-throttle, quota and pagefault, whose late wake-ups
# are few, 12 s.
# Root, 2+ CPUs. CPU 1 is measured (tickscope -a 1), CPU 0 is housekeeping. Each plant
# (bench/oracle/plant.c) creates one cause in bursts (duty cycle <= 20 %) and logs the
# CLOCK_MONOTONIC start and end of every burst from its own process: the truth never comes
# from the trace tickscope reads. A second, independent tracefs instance records the measured
# CPU's sched_switch, to count late wake-ups with a tickscope thread on that CPU. Scoring:
# bench/oracle/score.py (Markdown on stdout and --md, JSON with --json). Everything the
# script changes (RPS mask, trace instance, processes, RT bandwidth and CFS bandwidth slice
# sysctls, the quota cgroup) is restored by a trap on every exit, Ctrl-C included.
# TICKSCOPE=path uses that binary instead of building the shipped one (scripts/dist.sh).
# EXPLAIN=bpf|tracefs picks --explain's backend (default trace: BPF where the kernel allows it, else tracefs).
#
# Plants, what counts as correct, and the threshold (fixed before attribution was changed):
#   plant      cause created                         tickscope            threshold  correct top cause
#   fifo-hi    SCHED_FIFO 99 spin 500 µs / ~5 ms     fifo 90              100us      other thread (plant-fifo)
#   rr-eq      SCHED_RR 90 spin 500 µs / ~5 ms       fifo 90              100us      other thread (plant-rr)
#   other-hog  SCHED_OTHER nice -20 spin 2 ms/~10 ms other (nice 0)       100us      other thread (plant-other)
#   kernel     SCHED_OTHER read() of 4 MiB of its    fifo 90              100us      other thread (plant-kernel)
#              own cached file per burst
#   rt-throttle SCHED_FIFO 1 spin until throttled fifo 90             100us      rt throttled
#              and refilled once (bound 100 ms), ~200 ms apart, with RT runtime 4000 µs of
#              period 20000 µs (root cpu cgroup's cpu.rt_runtime_us / rt_period_us under RT
#              group scheduling, else the sched_rt_* sysctls), set only while the plant runs
#              (tickscope's own start-up is not throttled; lowered in two steps so that the
#              lowering itself throttles nothing, see rt_prepare; the plant itself drops it to 4000
#              and raises it back, its watcher running) and restored; the bursts logged are
#              the stretches each spin was kept off its CPU (the throttle, from its own clock
#              reads) and every stretch in which CPU 1's root RT run queue was throttled or
#              owed RT time, read from the scheduler's debug file (debugfs sched/debug) every
#              2 ms from CPU 0 for the plant's whole run (since 2026-11-26 evening: host stalls
#              charged as RT time kept it throttled up to 120 ms past the fixed tail, and
#              between spins, while the spin before a throttle delays no FIFO 90 thread; was:
#              the spin plus one RT period after the refill the plant saw, still used without
#              that file; before that: a 15 ms spin, which missed the tail — the rule for what
#              is correct did not change)
#   quota      SCHED_OTHER nice -20 spin on CPU 0     other (nice 0)       100us      cpu quota
#              until the group is throttled and refilled once (bound 100 ms), in a
#              cpu-cgroup (v1) with the measuring thread, cfs_quota_us 1000 of period 10000,
#              cpu.shares 262144, sched_cfs_bandwidth_slice_us 10 (group removed, slice
#              restored after), spins ~80 ms apart; the bursts logged are the stretches the
#              spin was kept off its CPU across which cpu.stat's throttled_time grew: the
#              throttles, or the whole spin when cpu.stat's nr_throttled counted a
#              throttle the plant did not see as a stretch (since 2026-11-27, before the
#              runs that judged it; was: the whole
#              spin until the plant ran again after the refill, whose unthrottled start
#              let the host's stalls in; before 2026-11-26: only the last throttle of a
#              spin). A spin that never saw the group throttled is no burst; it goes to
#              truth.txt.quiet, and score.py says how many "cpu quota" outside every burst
#              fell in one
#   softirq    1400-byte UDP flood 300 µs / ~10 ms   fifo 90              50us       softirq (NET_RX)
#              on CPU 0 to a socket with a slow BPF filter (~20000 loops a datagram),
#              RPS -> CPU 1
#   ipi        membarrier expedited from CPU 0 while  fifo 90              30us       hypervisor (IPI delivery)
#              a SCHED_FIFO 1 helper spins on CPU 1 (was: irq (any); changed with the evidence in
#              docs/explain.md "Interrupts held by the host": on this KVM guest the IPI's
#              handler takes < 1 µs, the delay it adds is held by the host). The burst
#              logged is split where CPU 0 paused between two calls for more than 20 µs (no
#              IPI was sent meanwhile; since 2026-11-26, before the runs that judged it)
#   slack      none: 400 µs timer slack              other, nanosleep-rel 100us      timer slack (wake-ups up to 500 µs late)
#   spinner    SCHED_OTHER user-mode spin 1.5/~12 ms fifo 90              50us       anything NOT naming plant-other
#   spin-fifo-hi  as fifo-hi, the measured thread     fifo 90, busy        100us      other thread (plant-fifo)
#              spinning to its expiry (--method busy: no timer; since 2026-11-28, added with
#              the spinning thread's model, crates/explain/src/spin.rs).
#              RT throttling at the default 95 % stops that thread 50 ms a second: such a
#              wake-up is "other" unless a burst overlaps it (a few per run)
#   spin-softirq  as softirq, the measured thread     fifo 90, busy        50us       softirq (NET_RX)
#              spinning (NET_RX runs at the RPS IPI's exit on CPU 1, inside its spin)
#   hybrid-fifo-hi  as fifo-hi, the measured thread   fifo 90, hybrid      100us      other thread (plant-fifo)
#              sleeping to a margin before its expiry and spinning the rest (--method
#              hybrid, margin auto): a burst lands in its sleep (the timer's model) or in its
#              spin (the spinning thread's); since 2026-11-28, before its runs were judged
#   fifo-hi-realtime  as fifo-hi, the measured thread fifo 90, --clock   100us      other thread (plant-fifo)
#              realtime (its timer on the realtime base, its samples on CLOCK_REALTIME;
#              the plant's log and the trace on CLOCK_MONOTONIC: crates/explain/src/
#              run_clock.rs moves one onto the other). Since 2026-11-28, before its runs
#              were judged
#   attach-fifo-hi  as fifo-hi, against cyclictest  cyclictest -p 90    100us      other thread (plant-fifo)
#              -q -m -a 1 -p 90 -i 1000 measured by `tickscope attach` (the path that explains
#              another program's wake-ups, from its trace): every thread it finds periodic,
#              the measuring thread (FIFO 90, 1 ms) and cyclictest's main thread (fair, 10 ms,
#              50 µs timer slack). Since 2026-11-28, before its runs were judged; skipped
#              without cyclictest (rt-tests)
#   pagefault  process_madvise(MADV_PAGEOUT) of      fifo 90, --no-mlock  50us       page fault, or
#              tickscope's own executable mappings from CPU 0, then 2 ms (the next  hypervisor (IPI
#              wake-ups fault their code back in), ~20 ms apart. The page-out also  delivery)
#              sends TLB-flush IPIs to CPU 1 (it runs tickscope's memory map): a wake-up they
#              delay is the IPI plant's case, caused by this plant (rule added 2026-11-26
#              before the run that judged it: faults come during the page-out too, so the
#              burst cannot leave the page-out out). Truth since 2026-11-26 (changed
#              before the runs that judged it): the page-out, and every stretch between two
#              reads (20 µs apart) of the measuring thread's fault counters
#              (/proc/PID/task/TID/stat) in which they grew — code the loop runs now and
#              then faults back in 8-9 ms later, and the fixed 2 ms let the host's own
#              stalls in. Since 2026-11-27 (before the runs that judged it) a plant thread
#              on CPU 1 drains that CPU's batch of pages waiting for the LRU in every gap:
#              a page faulted back in there is out of a page-out's reach until then
# "cannot tell" and "unexplained" count against recall, never precision.
# rtla timerlat -a runs beside ours only where the timerlat tracer and rtla exist (not on this
# project's VM): each plant that can act on rtla's timerlat thread runs again with rtla
# measuring instead (rtla_beside), and the report sets rtla's verdict beside ours.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
quick=0 json="" md="" fixtures="" only="" keep=0
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) quick=1 ;;
        --json) json=$2; shift ;;
        --md) md=$2; shift ;;
        --fixtures) fixtures=$2; shift ;;
        --only) only=$2; shift ;;
        --keep) keep=1 ;;
        *) echo "oracle.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
    shift
done
[ "$(id -u)" = 0 ] || { echo "oracle.sh: needs root (tracefs, SCHED_FIFO, RPS); run with sudo" >&2; exit 2; }
[ "$(nproc)" -ge 2 ] || { echo "oracle.sh: needs 2 CPUs (CPU 1 measured, CPU 0 housekeeping)" >&2; exit 2; }
command -v gcc >/dev/null || { echo "oracle.sh: needs gcc (apt-get install -y gcc)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "oracle.sh: needs python3" >&2; exit 2; }
secs=12; [ $quick = 1 ] && secs=6
backend=${EXPLAIN:-trace}

work=$(mktemp -d /tmp/tickscope-oracle.XXXXXX)
tracing=/sys/kernel/tracing
# Mounted for the run where it is not (a freshly booted machine), and unmounted after.
tracing_mounted=0
if ! mountpoint -q $tracing; then mount -t tracefs nodev $tracing && tracing_mounted=1; fi
# The rt-throttle plant's truth reads the scheduler's debug file (debugfs sched/debug); where
# debugfs is not mounted, the oracle mounts it for its run and unmounts it after (without it
# the plant falls back to a coarser truth, and says so).
debugfs=/sys/kernel/debug debugfs_mounted=0
if ! mountpoint -q $debugfs && mount -t debugfs nodev $debugfs 2>/dev/null; then debugfs_mounted=1; fi
inst=$tracing/instances/oracle-$$
rps=/sys/class/net/lo/queues/rx-0/rps_cpus
rps_saved=$(cat $rps 2>/dev/null || true)
# With RT group scheduling (this guest) the root cpu cgroup's own files hold the RT bandwidth
# (the sysctls refuse to change under it); without, the sysctls.
rt_runtime=/sys/fs/cgroup/cpu/cpu.rt_runtime_us rt_period=/sys/fs/cgroup/cpu/cpu.rt_period_us
[ -e $rt_runtime ] || rt_runtime=/proc/sys/kernel/sched_rt_runtime_us rt_period=/proc/sys/kernel/sched_rt_period_us
rt_saved=$(cat $rt_runtime 2>/dev/null || true) rt_period_saved=$(cat $rt_period 2>/dev/null || true)
cg=/sys/fs/cgroup/cpu/tickscope-oracle-$$
pids=()
slice=/proc/sys/kernel/sched_cfs_bandwidth_slice_us
slice_saved=$(cat $slice 2>/dev/null || true)
# Lower: runtime first, then the period; restore: the period first, then the runtime — so
# that runtime <= period at every step (else EINVAL).
# In two steps: the period timer keeps its old (1 s) schedule until it next fires, so a
# runtime of 4000 µs written at once throttled tickscope's thread — which had spent more than
# that in the current second — for up to a second before the plant began (named "rt
# throttled" outside every burst). rt_prepare sets 19000 of 20000 µs (95 %, as the default
# 950000 of 1000000) and waits 1.1 s, so that the timer runs on the 20 ms period; the plant
# itself then drops the runtime to 4000 µs and raises it back to 19000 at its end, with its
# watcher of the run queue running (bench/oracle/plant.c, mode rt), so that every throttle
# the lowered bandwidth causes falls in its log. rt_prepare runs before tickscope starts
# (since 2026-11-26 evening): run 0.7 s after tickscope's start, on a slow host its start-up
# had spent more than 19 ms of RT time in the old 1 s window, and 19000 throttled its thread
# for 143 ms before the plant began; and the plant's own start-up and exit (its locked log
# freed) left the runtime at 4000 µs for tens of ms outside its log.
rt_prepare() {
    echo 19000 > $rt_runtime && echo 20000 > $rt_period && sleep 1.1
}
rt_restore() {
    [ "$(cat $rt_period) $(cat $rt_runtime)" = "$rt_period_saved $rt_saved" ] && return 0
    echo "$rt_period_saved" > $rt_period || true
    echo "$rt_saved" > $rt_runtime || true
    [ "$(cat $rt_period) $(cat $rt_runtime)" = "$rt_period_saved $rt_saved" ] || \
        echo "oracle: WARNING: could not restore $rt_runtime/$rt_period to $rt_saved/$rt_period_saved" >&2
}
cg_remove() {
    [ -d "$cg" ] || return 0
    while read -r t; do echo "$t" > /sys/fs/cgroup/cpu/tasks 2>/dev/null || true; done < "$cg/tasks"
    rmdir "$cg"
}
cleanup() {
    for p in "${pids[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    [ -d "$inst" ] && { echo 0 > "$inst/tracing_on"; rmdir "$inst"; }
    [ -n "$rps_saved" ] && echo "$rps_saved" > $rps 2>/dev/null || true
    [ -n "$rt_saved" ] && rt_restore
    [ -n "$slice_saved" ] && echo "$slice_saved" > $slice 2>/dev/null || true
    cg_remove || true
    [ $debugfs_mounted = 1 ] && { umount $debugfs || echo "oracle: WARNING: could not unmount $debugfs" >&2; }
    [ $tracing_mounted = 1 ] && { umount $tracing || echo "oracle: WARNING: could not unmount $tracing" >&2; }
    if [ $keep = 1 ]; then echo "oracle: kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# rtla beside ours (rtla_beside below): where the timerlat tracer and rtla exist, each plant
# that can delay rtla's timerlat thread runs a second time with `rtla timerlat top -a` in
# tickscope's place, and score.py sets rtla's verdict beside our matrix. ORACLE_RTLA=0 skips.
rtla_why=
if ! grep -qw timerlat $tracing/available_tracers 2>/dev/null; then
    rtla_why="no timerlat tracer in $tracing/available_tracers (CONFIG_TIMERLAT_TRACER)"
elif ! command -v rtla >/dev/null; then
    rtla_why="no rtla program (Debian/Ubuntu: apt-get install rtla or linux-tools)"
elif [ "${ORACLE_RTLA:-1}" = 0 ]; then
    rtla_why="ORACLE_RTLA=0"
fi

all_cpus=0-$(( $(nproc) - 1 ))
gcc -O2 -Wall -o "$work/plant" "$here/oracle/plant.c" -lpthread
bin=${TICKSCOPE:-}
if [ -z "$bin" ]; then
    # The program as it is shipped (scripts/dist.sh, docs/dist.md), which every figure in
    # docs/explain.md measured. With the plain release build the pagefault plant is ~6 times
    # weaker: after a page-out the measuring thread itself faulted in 32-39 stretches per
    # 12 s run against 191-307 with the dist build (2026-11-26), so a run gave ~30 of its
    # wake-ups and one miss moved its recall by 0.03.
    bash "$root/scripts/dist.sh"
    bin=$root/target/dist/tickscope
fi
# From here the oracle's own work (this script, its polling of tickscope's threads, pgrep,
# cat) stays on CPU 0, the housekeeping CPU (the build above had every CPU): unpinned, its
# bash and pgrep ran on CPU 1 and delayed the fair measuring thread of the quota plant inside
# bursts (2026-11-26 15:35, two misses named `other thread (bash)`/`(pgrep)`). tickscope gets
# every online CPU back (it pins its own threads), and the plants pin themselves.
taskset -cp 0 $$ > /dev/null

# rtla_beside DIR THRESHOLD "TICKSCOPE ARGS" RUN_SECS [PLANT ARGS…]: the same plant again, with
# `rtla timerlat top -a` measuring CPU 1 in tickscope's place (its timerlat thread at the
# measuring thread's policy: FIFO 90, or SCHED_OTHER for a fair one), stopping at the first
# wake-up later than THRESHOLD; DIR/rtla.txt is what rtla printed, DIR/rtla.json its verdict
# (bench/oracle/rtla.py) or why the plant cannot act on rtla's thread. Not run on this
# project's VM (no timerlat tracer): the parser is checked on samples laid out as rtla
# prints (`rtla.py --self-test`, a cargo test), not on a live run.
rtla_beside() {
    local d=$1 thr=$2 targs=$3 run_secs=$4
    shift 4
    local why=
    if [ $# -eq 0 ]; then
        why="timer slack: the timerlat thread runs with the kernel's, not the plant's"
    elif [ "$1" = pageout ]; then
        why="the page-outs act on tickscope's own executable; the timerlat thread runs kernel code only"
    elif [ "$1" = quota ]; then
        why="the quota group holds tickscope's measuring thread; rtla's kernel thread is not in it"
    fi
    if [ -n "$why" ]; then
        printf '{"skipped": "%s"}\n' "$why" > "$d/rtla.json"
        return 0
    fi
    local prio=f:90
    [[ $targs == *"--policy other"* ]] && prio=o:0
    [ -n "${PLANT_RT:-}" ] && { rt_prepare || true; }
    taskset -c 0 rtla timerlat top -q -c 1 -P "$prio" -a "${thr%us}" -d "${run_secs}s" > "$d/rtla.txt" 2>&1 &
    local rp=$!
    pids+=("$rp")
    sleep 0.7
    RT_PERIOD_US=20000 RT_RUNTIME_FILE=$rt_runtime RT_RUNTIME_US=4000 RT_RUNTIME_RAISED_US=19000 taskset -c 0 "$work/plant" "$@" $((run_secs - 2)) "${PLANT_BURST}" "${PLANT_GAP}" "$d/rtla-truth.txt" ${PLANT_PRIO:-} 2>> "$d/plant.err" &
    local pp=$!
    pids+=("$pp")
    wait "$pp" || echo "oracle: plant $1 beside rtla failed" >&2
    local rc=0
    wait "$rp" || rc=$?
    [ -n "${PLANT_RT:-}" ] && rt_restore
    # The exit status tells a failed rtla (no analysis) from a run in which no wake-up
    # crossed the threshold.
    python3 -B "$here/oracle/rtla.py" "$d/rtla.txt" "$rc" > "$d/rtla.json"
}

# run_plant NAME COMM CORRECT_JSON BLAME_FORBIDDEN THRESHOLD "TICKSCOPE ARGS" [PLANT ARGS…]
run_plant() {
    local name=$1 comm=$2 correct=$3 forbid=$4 thr=$5 targs=$6
    # A plant with few late wake-ups of its own runs at least PLANT_MIN_SECS, --quick too:
    # in a quick run's 4 s of bursts rt-throttle gave 19-24, quota 32-46 and pagefault
    # 40-81 (since its truth follows the faults), so that one wake-up moved their recall by
    # 0.01-0.05.
    local run_secs=$(( secs > ${PLANT_MIN_SECS:-0} ? secs : ${PLANT_MIN_SECS:-0} ))
    shift 6
    if [ -n "$only" ] && [[ ",$only," != *",$name,"* ]]; then return; fi
    local d=$work/$name
    mkdir -p "$d"
    mkdir "$inst"
    echo mono > "$inst/trace_clock"
    echo 2 > "$inst/tracing_cpumask"
    echo 16384 > "$inst/buffer_size_kb"
    echo 1 > "$inst/events/sched/sched_switch/enable"
    # The timer interrupt and IPIs on the measured CPU: how much later the timer interrupt
    # comes with an IPI inside its delay (score.py's "IPI effect"), independent of tickscope.
    local v
    for v in local_timer call_function call_function_single reschedule; do
        [ -e "$inst/events/irq_vectors/${v}_entry" ] && echo 1 > "$inst/events/irq_vectors/${v}_entry/enable"
    done
    # The measured CPU's user page faults (the pagefault plant's "seen at work", score.py).
    [ -e "$inst/events/exceptions/page_fault_user" ] && echo 1 > "$inst/events/exceptions/page_fault_user/enable"
    echo 1 > "$inst/tracing_on"
    local extra=()
    [ -n "$fixtures" ] && extra=(--explain-log-events)
    [ -n "${PLANT_RT:-}" ] && { rt_prepare || echo "oracle: $name: could only set $rt_runtime/$rt_period to $(cat $rt_runtime)/$(cat $rt_period)" >&2; }
    local tcmd="tickscope run -q -a 1 -i 1ms -D ${run_secs}s $targs"
    if [ -n "${PLANT_ATTACH:-}" ]; then
        # tickscope attach to cyclictest's measuring thread (FIFO 90 on CPU 1, 1 ms, CLOCK_
        # MONOTONIC absolute sleeps) instead of a thread of its own: the path that explains
        # another program. cyclictest runs past the discovery, bounded by its own -D.
        taskset -c 1 cyclictest -q -m -a 1 -p 90 -i 1000 -D "$((run_secs + 3))" > "$d/cyclictest.txt" 2>&1 &
        local ct=$!
        pids+=("$ct")
        sleep 0.3
        tcmd="tickscope attach --pid <cyclictest -q -m -a 1 -p 90 -i 1000> --discover 1s -q -D ${run_secs}s"
        taskset -c "$all_cpus" "$bin" attach --pid "$ct" --discover 1s -q -D "${run_secs}s" --explain="$backend" --explain-threshold "$thr" \
            --explain-log "$d/late.jsonl" "${extra[@]}" --json "$d/run.json" > "$d/out.txt" 2>&1 &
    else
        # shellcheck disable=SC2086
        taskset -c "$all_cpus" "$bin" run -q -a 1 -i 1ms -D "${run_secs}s" $targs --explain="$backend" --explain-threshold "$thr" \
            --explain-log "$d/late.jsonl" "${extra[@]}" --json "$d/run.json" > "$d/out.txt" 2>&1 &
    fi
    local ts=$!
    pids+=("$ts")
    # tickscope's threads (and those of its children, e.g. when TICKSCOPE is a wrapper).
    ( while kill -0 "$ts" 2>/dev/null; do
        for p in "$ts" $(pgrep -P "$ts"); do ls "/proc/$p/task" 2>/dev/null; done
        sleep 0.2
    done ) > "$d/tids.raw" &
    local poll=$!
    if [ $# -gt 0 ]; then
        sleep 0.7
        # The measuring thread (tickscope-0): the quota plant's group shares it, the
        # pagefault plant reads its fault counters.
        local t measuring=
        for t in /proc/"$ts"/task/*; do
            [ "$(cat "$t/comm" 2>/dev/null)" = tickscope-0 ] && measuring=${t##*/}
        done
        if [ -n "${PLANT_CGROUP:-}" ] && [ -n "$measuring" ]; then
            echo "$measuring" > "$PLANT_CGROUP/tasks"
        fi
        # The RT bandwidth is the rt-throttle plant's cause: lowered only while it runs.
        # Set up on CPU 0 (allocation, mlockall); the plant pins itself to its CPU after.
        RT_PERIOD_US=20000 RT_RUNTIME_FILE=$rt_runtime RT_RUNTIME_US=4000 RT_RUNTIME_RAISED_US=19000 PAGEOUT_PID=$ts PAGEOUT_TID=$measuring taskset -c 0 "$work/plant" "$@" $((run_secs - 2)) "${PLANT_BURST}" "${PLANT_GAP}" "$d/truth.txt" ${PLANT_PRIO:-} 2> "$d/plant.err" &
        local pp=$!
        pids+=("$pp")
        wait "$pp" || { echo "oracle: plant $name failed" >&2; }
        # What the plant said (a coarser truth where a kernel file is missing, its counts)
        # goes to the terminal and, through score.py, into the report.
        cat "$d/plant.err" >&2
        [ -n "${PLANT_RT:-}" ] && rt_restore
    else
        : > "$d/truth.txt"
    fi
    wait "$ts" || true
    wait "$poll" || true
    if [ -n "${PLANT_CGROUP:-}" ]; then
        echo "oracle: $name: the group's cpu.stat: $(tr '\n' ' ' < "$PLANT_CGROUP/cpu.stat")" >&2
        cp "$PLANT_CGROUP/cpu.stat" "$d/cpu.stat"
    fi
    echo 0 > "$inst/tracing_on"
    cat "$inst/trace" > "$d/switch.txt"
    rmdir "$inst"
    [ -z "$rtla_why" ] && rtla_beside "$d" "$thr" "$targs" "$run_secs" "$@"
    if [ ! -s "$d/run.json" ]; then
        echo "oracle: $name skipped: tickscope failed: $(tail -1 "$d/out.txt")" >&2
        return
    fi
    if [ $# -eq 0 ]; then
        # The truth of a configuration plant (timer slack) is the whole run.
        echo "0 4611686018427387904" > "$d/truth.txt"
    fi
    python3 - "$d" <<'PY'
import json, sys
d = sys.argv[1]
doc = json.load(open(d + "/run.json"))
measuring = {t["tid"] for t in doc["explain"]["threads"]}
tids = {int(x) for x in open(d + "/tids.raw").read().split() if x.isdigit()} - measuring
open(d + "/tids.txt", "w").write(" ".join(map(str, sorted(tids))))
PY
    printf '{"name":"%s","comm":"%s","correct":%s,"blame_forbidden":%s,"threshold":"%s","max_latency_ns":%s,"command":"%s --explain=%s --explain-threshold %s"}\n' \
        "$name" "$comm" "$correct" "$forbid" "$thr" "${MAX_LATENCY_NS:-0}" "$tcmd" "$backend" "$thr" > "$d/plant.json"
    dirs+=("$d")
    echo "oracle: $name: $(wc -l < "$d/late.jsonl") late wake-ups, $(wc -l < "$d/truth.txt") bursts" >&2
}

dirs=()
fifo="--policy fifo -p 90"
PLANT_BURST=500 PLANT_GAP=5000 PLANT_PRIO=99 \
    run_plant fifo-hi plant-fifo '{"category":["other thread"],"detail":"plant-fifo"}' false 100us "$fifo" fifo 1
PLANT_BURST=500 PLANT_GAP=5000 PLANT_PRIO=90 \
    run_plant rr-eq plant-rr '{"category":["other thread"],"detail":"plant-rr"}' false 100us "$fifo" rr 1
PLANT_BURST=2000 PLANT_GAP=10000 PLANT_PRIO=-20 \
    run_plant other-hog plant-other '{"category":["other thread"],"detail":"plant-other"}' false 100us "--policy other" other 1
PLANT_BURST=4096 PLANT_GAP=30000 PLANT_PRIO= \
    run_plant kernel plant-kernel '{"category":["other thread"],"detail":"plant-kernel"}' false 100us "$fifo" kernel 1
if [ -w "$rps" ]; then
    echo 2 > $rps
    PLANT_BURST=300 PLANT_GAP=10000 PLANT_PRIO= \
        run_plant softirq "" '{"category":["softirq"],"detail":"NET_RX"}' false 50us "$fifo" udp 0
    echo "$rps_saved" > $rps
else
    echo "oracle: softirq skipped: $rps is not writable (no RPS on loopback)" >&2
fi
PLANT_BURST=500 PLANT_GAP=5000 PLANT_PRIO=99 \
    run_plant spin-fifo-hi plant-fifo '{"category":["other thread"],"detail":"plant-fifo"}' false 100us "$fifo --method busy" fifo 1
PLANT_BURST=500 PLANT_GAP=5000 PLANT_PRIO=99 \
    run_plant hybrid-fifo-hi plant-fifo '{"category":["other thread"],"detail":"plant-fifo"}' false 100us "$fifo --method hybrid" fifo 1
if command -v cyclictest > /dev/null; then
    PLANT_ATTACH=1 PLANT_BURST=500 PLANT_GAP=5000 PLANT_PRIO=99 \
        run_plant attach-fifo-hi plant-fifo '{"category":["other thread"],"detail":"plant-fifo"}' false 100us "" fifo 1
else
    echo "oracle: attach-fifo-hi skipped: no cyclictest (apt-get install rt-tests)" >&2
fi
PLANT_BURST=500 PLANT_GAP=5000 PLANT_PRIO=99 \
    run_plant fifo-hi-realtime plant-fifo '{"category":["other thread"],"detail":"plant-fifo"}' false 100us "$fifo --clock realtime" fifo 1
if [ -w "$rps" ]; then
    echo 2 > $rps
    PLANT_BURST=300 PLANT_GAP=10000 PLANT_PRIO= \
        run_plant spin-softirq "" '{"category":["softirq"],"detail":"NET_RX"}' false 50us "$fifo --method busy" udp 0
    echo "$rps_saved" > $rps
else
    echo "oracle: spin-softirq skipped: $rps is not writable (no RPS on loopback)" >&2
fi
PLANT_BURST=1000 PLANT_GAP=8000 PLANT_PRIO=1 \
    run_plant ipi "" '{"category":["hypervisor"],"detail":"IPI delivery"}' false 30us "$fifo" ipi 0
if [ -w $rt_runtime ] && [ -w $rt_period ]; then
    PLANT_RT=1 PLANT_MIN_SECS=12 PLANT_BURST=100000 PLANT_GAP=200000 PLANT_PRIO=1 \
        run_plant rt-throttle "" '{"category":["rt throttled"],"detail":null}' false 100us "$fifo" rt 1
else
    echo "oracle: rt-throttle skipped: $rt_runtime is not writable" >&2
fi
if [ -w /sys/fs/cgroup/cpu ] && [ -e /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]; then
    mkdir "$cg" && echo 10000 > "$cg/cpu.cfs_period_us" && echo 1000 > "$cg/cpu.cfs_quota_us"
    # The group's weight (cpu.shares) is split between CPUs by their load: with the default
    # 1024 and the plant's load on CPU 0, the measuring thread's share on CPU 1 is a few
    # units, so under load every fair task delays it — bursts or not. The maximum keeps the
    # plant's cause to its quota.
    echo 262144 > "$cg/cpu.shares"
    # CPU 1 takes its share of the group's quota in slices of this size: small, so that once
    # the plant on CPU 0 has spent the quota, the measuring thread's next slice is refused.
    [ -w $slice ] && echo 10 > $slice
    # The measuring thread joins the group first, so the group's period timer (pinned to the
    # CPU that started it, kernel/sched/fair.c start_cfs_bandwidth()) runs on CPU 1.
    PLANT_CGROUP=$cg QUOTA_STAT=$cg/cpu.stat QUOTA_TASKS=$cg/tasks QUOTA_LEAVE=/sys/fs/cgroup/cpu/tasks PLANT_MIN_SECS=12 PLANT_BURST=100000 PLANT_GAP=80000 PLANT_PRIO=-20 \
        run_plant quota "" '{"category":["cpu quota"],"detail":null}' false 100us "--policy other" quota 0
    cg_remove
    [ -n "$slice_saved" ] && echo "$slice_saved" > $slice
else
    echo "oracle: quota skipped: no cgroup v1 cpu controller at /sys/fs/cgroup/cpu (cfs_quota_us)" >&2
fi
PLANT_MIN_SECS=12 PLANT_BURST=2000 PLANT_GAP=20000 PLANT_PRIO= \
    run_plant pagefault "" '{"category":["page fault"],"detail":null,"also":[{"category":["hypervisor"],"detail":"IPI delivery"}]}' false 50us "$fifo --no-mlock" pageout 0
PLANT_BURST=0 PLANT_GAP=0 MAX_LATENCY_NS=500000 \
    run_plant slack "" '{"category":["timer slack"],"detail":null}' false 100us "--policy other --method nanosleep-rel --timer-slack 400000"
PLANT_BURST=1500 PLANT_GAP=12000 PLANT_PRIO= \
    run_plant spinner plant-other '{"category":["hypervisor","cannot tell","other thread","irq","softirq","kernel path","exit from idle","hrtimer queue","return to user"],"detail":null}' true 50us "$fifo" other 1

[ -n "$rtla_why" ] && echo "oracle: rtla timerlat -a skipped: $rtla_why" >&2
[ ${#dirs[@]} -gt 0 ] || { echo "oracle: no plant ran" >&2; exit 1; }
out_json=${json:-$work/oracle.json}
out_md=${md:-$work/oracle.md}
python3 "$here/oracle/score.py" "$out_json" "$out_md" "${dirs[@]}"
if [ -n "$fixtures" ]; then
    python3 "$here/oracle/fixtures.py" "$fixtures" "$out_json" "${dirs[@]}"
fi
