#!/usr/bin/env bash
# What one BPF hit costs on this machine, part by part: five programs on `sched_switch`, run
# together on every switch of a `perf bench sched pipe` (two tasks passing a byte back and
# forth), each doing one thing more than the empty one — the clock read every record takes
# (bpf_ktime_get_ns), the task id (bpf_get_current_pid_tgid), an 8-byte probe read
# (bpf_probe_read_kernel, as hrtimer_expire_entry reads the interrupt's clock read) and a
# hash lookup by thread (as sys_exit and hrtimer_start look the watched thread up). Their ns
# per run, from the kernel's statistics (kernel.bpf_stats_enabled=1, which adds its own clock
# reads to every run: the empty program's figure is that overhead), less the empty program's,
# is what each part costs per hit (crates/explain/bpf/capture.bpf.c's programs are made of
# these parts; docs/explain.md, "What one hit costs").
#
#   [ROUNDS=3] [SECS=4] bench/bpf-hit-cost.sh
#
# Prints min / median / max over the rounds with the load average. Needs root, clang (BPF
# target), bpftool, perf, python3. Loads its programs pinned under /sys/fs/bpf (removed, and
# the statistics switch restored, on every exit).
set -euo pipefail
rounds=${ROUNDS:-3}
secs=${SECS:-4}
[ "$(id -u)" = 0 ] || { echo "bpf-hit-cost.sh: needs root (BPF, sysctl)" >&2; exit 2; }
for tool in clang bpftool perf python3; do
  command -v "$tool" >/dev/null || { echo "bpf-hit-cost.sh: missing $tool (apt-get install clang bpftool linux-perf python3)" >&2; exit 2; }
done
work=$(mktemp -d /tmp/tickscope-hitcost.XXXXXX)
pins=/sys/fs/bpf/tickscope-hitcost-$$
stats=/proc/sys/kernel/bpf_stats_enabled
saved=$(cat $stats)
cleanup() {
  echo "$saved" > $stats
  rm -rf "$pins" "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
cat > "$work/hit.c" <<'EOF'
typedef unsigned long long __u64;
typedef unsigned int __u32;
#define SEC(name) __attribute__((section(name), used))
#define __uint(name, val) int (*name)[val]
#define __type(name, val) typeof(val) *name
static void *(*bpf_map_lookup_elem)(void *map, const void *key) = (void *)1;
static __u64 (*bpf_ktime_get_ns)(void) = (void *)5;
static __u64 (*bpf_get_current_pid_tgid)(void) = (void *)14;
static long (*bpf_probe_read_kernel)(void *dst, __u32 size, const void *src) = (void *)113;
struct {
	__uint(type, 1); // BPF_MAP_TYPE_HASH
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u64);
} threads SEC(".maps");
volatile __u64 sink;
SEC("tp_btf/sched_switch") int h0_empty(__u64 *ctx) { return 0; }
SEC("tp_btf/sched_switch") int h1_clock(__u64 *ctx) { sink = bpf_ktime_get_ns(); return 0; }
SEC("tp_btf/sched_switch") int h2_task_id(__u64 *ctx) { sink = bpf_get_current_pid_tgid(); return 0; }
SEC("tp_btf/sched_switch") int h3_probe_read(__u64 *ctx)
{
	__u64 v = 0;
	bpf_probe_read_kernel(&v, sizeof(v), (void *)ctx[1]);
	sink = v;
	return 0;
}
SEC("tp_btf/sched_switch") int h4_hash_lookup(__u64 *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	sink = (__u64)bpf_map_lookup_elem(&threads, &tid);
	return 0;
}
char LICENSE[] SEC("license") = "GPL";
EOF
clang -O2 -g -target bpf -c "$work/hit.c" -o "$work/hit.o"
bpftool prog loadall "$work/hit.o" "$pins"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
# Attach (BPF_RAW_TRACEPOINT_OPEN on each pinned program; the links close with the process),
# reset nothing: each round reads the statistics before and after its own switches.
python3 - "$pins" "$rounds" "$secs" "$stats" "$load_before" <<'PY'
import ctypes, json, os, statistics, struct, subprocess, sys
pins, rounds, secs, stats, lb = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
libc = ctypes.CDLL(None, use_errno=True)
SYS_BPF = 321  # x86-64
def bpf(cmd, attr):
    buf = ctypes.create_string_buffer(attr, 128)
    fd = libc.syscall(SYS_BPF, cmd, buf, len(attr))
    if fd < 0:
        raise OSError(ctypes.get_errno(), f"bpf({cmd})")
    return fd
links = []
for name in sorted(os.listdir(pins)):
    path = ctypes.create_string_buffer(f"{pins}/{name}".encode())
    prog = bpf(7, struct.pack("=QII", ctypes.addressof(path), 0, 0))  # BPF_OBJ_GET
    links.append(bpf(17, struct.pack("=QI4x", 0, prog)))  # BPF_RAW_TRACEPOINT_OPEN
def counters():
    out = json.loads(subprocess.run(["bpftool", "prog", "show", "-j"], capture_output=True, check=True).stdout)
    return {p["name"]: (p.get("run_cnt", 0), p.get("run_time_ns", 0)) for p in out if p.get("name", "")[:1] == "h" and p.get("name", "")[1:2].isdigit()}
open(stats, "w").write("1")
per = {}
for r in range(rounds):
    before = counters()
    subprocess.run(["timeout", secs, "perf", "bench", "sched", "pipe", "-l", "100000000"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = counters()
    for n in after:
        runs = after[n][0] - before.get(n, (0, 0))[0]
        ns = after[n][1] - before.get(n, (0, 0))[1]
        per.setdefault(n, []).append((ns / runs if runs else 0.0, runs))
la = open("/proc/loadavg").read().split()[:3]
mmm = lambda v: f"{min(v):.1f}/{statistics.median(v):.1f}/{max(v):.1f}"
print(f"BPF hit cost on sched_switch: {rounds} rounds of {secs} s of perf bench sched pipe")
print(f"load average before {lb}, after {' '.join(la)}; min/median/max over rounds")
print(f"{'program':18}{'runs/round':>14}{'ns/run':>22}{'minus empty':>22}")
empty = [v[0] for v in per.get("h0_empty", [])]
for n in sorted(per):
    ns = [v[0] for v in per[n]]
    extra = [a - b for a, b in zip(ns, empty)]
    print(f"{n:18}{int(statistics.median(v[1] for v in per[n])):>14}{mmm(ns):>22}{mmm(extra):>22}")
PY
