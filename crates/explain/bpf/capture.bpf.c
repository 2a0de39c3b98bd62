// SPDX-License-Identifier: GPL-2.0 OR MIT
//
// tickscope's lean capture path for `--explain` (the BPF backend).
//
// Every CPU keeps its recent trace events as compact 64-byte records in a per-CPU ring
// (a flight recorder: `rings`, RING_LEN records, overwritten in place, nothing sent).
// When a measured thread returns from its wait later than its threshold (`sys_exit`
// of a wait system call, compared with the soft expiry of the wait timer it armed itself),
// the thread is marked; when it next leaves the CPU on its own (after its clock read, so
// the copy is never inside a measured wake-up) the whole ring is copied to the BPF ring
// buffer `dumps` with BPF_RB_NO_WAKEUP: nobody is woken, the collector polls from a
// housekeeping CPU. Copies are spaced: the next one waits until half the ring is new or
// DUMP_AFTER_NS have passed since the oldest late wake-up not sent yet (its records are still
// in the ring then, and a run where every wake-up is late sends a ring per half ring, not per
// wake-up: consecutive copies overlap, user space keeps each record once), or that late
// wake-up's window already holds an eighth of the ring (busy: a burst of events in one more
// period would overwrite its start).
//
// "Late" is measured from the soft expiry (`_softexpires`, the time the thread asked for):
// with timer slack the hard expiry (`node.expires`) is up to the slack later
// (hrtimer_set_expires_range_ns, include/linux/hrtimer.h), and a wake-up that is late only
// by its slack must still send its window. A timer on CLOCK_REALTIME, CLOCK_TAI or
// CLOCK_BOOTTIME keeps its expiry on that clock: the thread's expiry is moved to
// CLOCK_MONOTONIC, the clock of every record's time, by its base's offset (expiry_on()).
//
// Programs are BTF-enabled raw tracepoints (tp_btf, "BPF_PROG_TYPE_TRACING",
// https://docs.kernel.org/bpf/libbpf/program_types.html); their arguments are the
// tracepoints' TP_PROTO (include/trace/events/{timer,sched,irq,power}.h,
// arch/x86/include/asm/trace/irq_vectors.h), and the kernel structures below are read
// through CO-RE relocations (only the fields used are declared; the loader relocates their
// offsets against /sys/kernel/btf/vmlinux). The wait's return is the `sys_exit` tracepoint,
// which runs for every system call of every task (the program returns after the CPU check,
// the process check, the call's number or the thread's slot); an fexit program on the wait
// call's kernel function would run for those calls only, but attaching fexit needs the
// kernel's function tracing, which the VM this was measured on refuses (EPERM,
// docs/explain.md).
//
// Lean on the measured CPU: between the expiry and the thread's return from its wait, a
// wake-up runs hrtimer_expire_entry, local_timer_exit, cpu_idle (idle exit: returns at once,
// only idle entries are recorded), sched_switch and sys_exit — and without sys_exit where
// user space detaches it (a run's own threads, whose samples say which wake-ups were late:
// see returned()), without cpu_idle on a virtual machine. The local timer
// vector's entry and the callbacks' hrtimer_expire_exit have no program: the entry is put
// back by the decoder at the interrupt's clock read (`now` of hrtimer_expire_entry; see
// src/bpf_records.rs, `fill_in`), and the replayed oracle attributes the same without the
// callbacks' ends (tests/oracle_replay.rs).
//
// Built with: clang -O2 -g -target bpf -c capture.bpf.c -o capture.bpf.o && llvm-strip -g
// (crates/explain/bpf/build.sh). No libbpf headers: the few helpers are declared here by
// their numbers (include/uapi/linux/bpf.h, __BPF_FUNC_MAPPER).

typedef unsigned char __u8;
typedef unsigned short __u16;
typedef unsigned int __u32;
typedef unsigned long long __u64;
typedef long long __s64;
typedef int __s32;

#define SEC(name) __attribute__((section(name), used))
#define __uint(name, val) int (*name)[val]
#define __type(name, val) typeof(val) *name
#define CORE __attribute__((preserve_access_index))
#define __always_inline inline __attribute__((always_inline))

#define BPF_MAP_TYPE_HASH 1
#define BPF_MAP_TYPE_ARRAY 2
#define BPF_MAP_TYPE_PERCPU_ARRAY 6
#define BPF_MAP_TYPE_RINGBUF 27
#define BPF_RB_NO_WAKEUP 1
#define PWR_EVENT_EXIT 0xffffffffU // cpu_idle's state when idle ends (include/trace/events/power.h)

static void *(*bpf_map_lookup_elem)(void *map, const void *key) = (void *)1;
static __u64 (*bpf_ktime_get_ns)(void) = (void *)5;
static __u32 (*bpf_get_smp_processor_id)(void) = (void *)8;
static __u64 (*bpf_get_current_pid_tgid)(void) = (void *)14;
static long (*bpf_probe_read_kernel)(void *dst, __u32 size, const void *src) = (void *)113;
static long (*bpf_ringbuf_output)(void *rb, void *data, __u64 size, __u64 flags) = (void *)130;
static struct task_struct *(*bpf_get_current_task_btf)(void) = (void *)158;
static struct pt_regs *(*bpf_task_pt_regs)(struct task_struct *task) = (void *)175;

struct timerqueue_node {
	__s64 expires;
} CORE;

// The timer's clock base: `index` 0 is HRTIMER_BASE_MONOTONIC, the hard (interrupt-context)
// CLOCK_MONOTONIC base (enum hrtimer_base_type, include/linux/hrtimer_defs.h). `offset` is
// the base's clock minus CLOCK_MONOTONIC, ns (0 for the monotonic bases; CLOCK_REALTIME's,
// CLOCK_BOOTTIME's and CLOCK_TAI's as hrtimer_update_base() last read them,
// kernel/time/hrtimer.c): a timer's expiry is on its base's clock.
struct hrtimer_clock_base {
	unsigned int index;
	__s64 offset;
} CORE;

struct hrtimer {
	struct timerqueue_node node;
	__s64 _softexpires;
	void *function;
	struct hrtimer_clock_base *base;
} CORE;

// Steal time (paravirt, CONFIG_PARAVIRT_TIME_ACCOUNTING): update_rq_clock_task()
// (kernel/sched/core.c) adds the steal clock's advance (on KVM the host's MSR_KVM_STEAL_TIME
// record, Documentation/virt/kvm/x86/msr.rst) to `rq->prev_steal_time_rq` each time it
// updates the run queue's clock, as every wake-up and every schedule() does. It is reached
// from the current task without kernel symbols: `se.cfs_rq` is set for tasks of every
// class by set_task_rq() (CONFIG_FAIR_GROUP_SCHED), and `cfs_rq->rq` is its CPU's run queue.
struct rq {
	__u64 prev_steal_time_rq;
} CORE;

struct cfs_rq {
	struct rq *rq;
} CORE;

struct sched_entity {
	struct cfs_rq *cfs_rq;
} CORE;

struct task_struct {
	int pid;
	int prio;
	char comm[16];
	struct sched_entity se;
} CORE;

struct pt_regs {
	unsigned long orig_ax;
} CORE;

// Record kinds; the user-space decoder (src/bpf_records.rs) has the same numbers.
enum kind {
	K_HRTIMER_START = 1,
	K_HRTIMER_EXPIRE_ENTRY = 2,
	K_HRTIMER_EXPIRE_EXIT = 3, // not recorded now (no program); the decoder still reads it
	K_VECTOR_ENTRY = 4,
	K_VECTOR_EXIT = 5,
	K_IRQ_ENTRY = 6,
	K_IRQ_EXIT = 7,
	K_SOFTIRQ_ENTRY = 8,
	K_SOFTIRQ_EXIT = 9,
	K_SCHED_SWITCH = 10,
	K_CPU_IDLE = 11,
	K_SYS_EXIT = 12,
	K_PAGE_FAULT = 13,
	K_STEAL = 14, // steal since the wait began, where the wait's return is not traced
};

// One event: 16 bytes of header, 48 of payload (p[2..6] hold the two comms of a switch).
struct rec {
	__u64 ts;  // CLOCK_MONOTONIC, ns: bpf_ktime_get_ns(), or a hard monotonic callback's `now`
	__u32 pid; // current task (0 = idle)
	__u16 kind;
	__u16 unused; // the CPU is the dump's
	__u64 p[6];
};

#define RING_LEN 256 // a power of two; 16 KiB per CPU
#define DUMP_AFTER_NS 5000000ULL
#define CARRY_FOR_NS 1000000000ULL
#define CARRY_MAX 8

struct ring {
	__u64 head;        // records written on this CPU since load (the "BPF hits" that record)
	__u32 dump_tid;    // the late thread of the pending/last dump
	__u32 dump_cpu;    // this CPU
	__u64 dump_expiry; // its soft expiry, ns
	__u64 dump_woke;   // its sys_exit, ns
	__u64 dumps;       // windows sent
	__u64 dumps_lost;  // windows the ring buffer had no room for
	__u64 dumped_head; // head at the last window sent
	__u32 watch_tid;   // the watched thread that last returned from its wait here (0: none)
	__u32 carries;     // carry copies sent since it became overdue (see carry())
	// When that thread, off this CPU and not back from its wait (or switched out runnable
	// or waiting uninterruptibly after it), becomes late: its soft expiry + threshold, ns;
	// 0 when it is on the CPU or back. See carry().
	__u64 overdue_at;
	// The two newest armings of a watched thread's wait timer on this CPU ([0] the newest;
	// their hrtimer_start records, also in `recs`) and their positions in the CPU's stream of
	// records. A window starts where the thread armed its timer: under a flood of interrupts
	// (the oracle's IPI plant, ~300 records a millisecond) the ring turns over within one
	// period and the arming was overwritten before the window was sent, which left those
	// wake-ups "events lost" though every record from the expiry on was there. The copies
	// here outlive it. Two: where the wait's return is not traced, the window is sent after
	// the thread armed its next timer.
	__u64 armed_seq[2];
	struct rec armed[2];
	struct rec recs[RING_LEN];
};

// The layout user space decodes (src/bpf_records.rs: RECORD_SIZE, HEADER_SIZE, ARMED_AT and
// DUMP_SIZE, which a test there checks against these lines; parse_dump_into() reads the
// header's fields at the offsets below).
_Static_assert(sizeof(struct rec) == 64, "RECORD_SIZE");
_Static_assert(__builtin_offsetof(struct ring, recs) == 216, "HEADER_SIZE");
_Static_assert(__builtin_offsetof(struct ring, armed_seq) == 72, "ARMED_AT");
_Static_assert(sizeof(struct ring) == 16600, "DUMP_SIZE");
_Static_assert(__builtin_offsetof(struct ring, dump_tid) == 8 &&
		       __builtin_offsetof(struct ring, dump_cpu) == 12 &&
		       __builtin_offsetof(struct ring, dump_expiry) == 16 &&
		       __builtin_offsetof(struct ring, dump_woke) == 24 &&
		       __builtin_offsetof(struct ring, dumps) == 32 &&
		       __builtin_offsetof(struct ring, dumps_lost) == 40,
	       "the header's fields where parse_dump_into() reads them");

struct thread {
	__s64 expiry;    // soft expiry of the newest hrtimer_start by this thread, CLOCK_MONOTONIC ns
	__s64 threshold; // late when sys_exit - expiry > threshold, ns (set by user space)
	__s64 late_expiry;
	__s64 late_woke;
	__u32 pending; // a late wake-up waits for its window to be sent
	__u32 late;    // late wake-ups seen
	__s64 pending_since; // sys_exit of the oldest late wake-up not sent yet, ns
	// Soft expiry of the wait that returned on time, until the thread next leaves the CPU
	// on its own (judged again then); negated once it was switched out runnable in between
	// (see on_sched_switch).
	__s64 returned;
	__u64 steal_at;  // rq->prev_steal_time_rq at the last reading (see read_steal), ns
	__u32 steal_cpu; // CPU + 1 of that reading (0: none yet)
	__u32 tid;       // the thread in this slot (0: a free slot; see thread_of)
	__u64 ret_head;      // its CPU's ring head after its last wait return
	__u64 ret_head_prev; // the same for the return before (where a late window starts)
	__u64 late_from;     // ret_head_prev of the oldest late wake-up not sent yet
	// The expiry grid of a thread whose sleep ends before its expiry (a margin it then
	// spins: `hybrid`), set by user space: its expiry is the first grid point at or after
	// its timer's (on_grid()). Period 0: the timer's expiry is the thread's.
	__s64 phase;  // a grid point, CLOCK_MONOTONIC ns (written before the period)
	__s64 period; // ns
};
_Static_assert(sizeof(struct thread) == 112, "THREAD_SIZE");
_Static_assert(__builtin_offsetof(struct thread, phase) == 96 &&
		       __builtin_offsetof(struct thread, period) == 104,
	       "GRID_WORDS");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ring);
} rings SEC(".maps");

// The watched threads, in slots of an array: thread `tid` is in one of the THREAD_PROBES
// slots from `tid % THREAD_SLOTS` on (user space, src/bpf.rs, places it in the first free
// one). An array lookup is inlined by the verifier (a bounds check and an add, no call),
// where a hash map's took 44 ns per lookup on this project's guest (bench/bpf-hit-cost.sh,
// docs/explain.md) — and sys_exit looks the thread up inside every measured wake-up.
//
// The array is mapped into user space too (BPF_F_MMAPABLE): a running thread's threshold
// (--explain-threshold p99, once a second) is one aligned 8-byte store there, so that it
// never overwrites what the programs write into the slot meanwhile, as writing the whole
// slot back through the bpf(2) call did. The lookup stays inlined.
#define THREAD_SLOTS 1024 // a power of two
#define THREAD_PROBES 4
#define BPF_F_MMAPABLE (1U << 10)

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, THREAD_SLOTS);
	__type(key, __u32);
	__type(value, struct thread);
} threads SEC(".maps");

// The slot of watched thread `tid`, or 0 when it is not watched (tid 0, the idle task,
// never is: free slots hold 0).
static __always_inline struct thread *thread_of(__u32 tid)
{
	if (!tid)
		return 0;
#pragma unroll
	for (__u32 i = 0; i < THREAD_PROBES; i++) {
		__u32 k = (tid + i) & (THREAD_SLOTS - 1);
		struct thread *th = bpf_map_lookup_elem(&threads, &k);
		if (th && th->tid == tid)
			return th;
	}
	return 0;
}

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 21); // 2 MiB: 127 windows; user space maps it twice (RSS)
} dumps SEC(".maps");

// The wait system calls whose return marks "running again" (-1 = unused; all -1: any), and
// the process every watched thread belongs to (0: several, or none yet): the programs that
// look a thread up by id (hrtimer_start, sys_exit, the page faults) return before that
// lookup for any other process's task, so that a CPU that records (every CPU when the threads
// are not pinned) pays one array lookup for each system call, timer start and fault of the
// rest of the machine.
//
// And the callbacks of the timers a wait can end with (0 = unused; all 0: any, when
// /proc/kallsyms hides addresses): only such a timer's start gives a thread its expiry.
// Other timers are started in a watched thread's context too — a perf cpu-clock event's
// (perf_swevent_start_hrtimer) each time the thread is switched in, between its wake-up and
// its return from the wait; CFS bandwidth's period timer (start_cfs_bandwidth) when it
// takes runtime; any periodic timer restarted by an interrupt that hit it — and their later
// expiry made a late wake-up look early.
struct config {
	__s64 wait_nr[4];
	__u32 tgid;
	__u32 unused;
	__u64 wait_fn[4];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct config);
} config SEC(".maps");

// Per CPU, set by user space: `off` = 1 where nothing is recorded (when every measured thread
// is pinned, the CPUs none of them may run on). Checked first by every program, so that the
// rest of the machine pays one array lookup per event (the verifier inlines ARRAY lookups).
// For a timer that another thread re-arms (setitimer's, re-armed by whichever thread takes
// its SIGALRM: kernel/signal.c dequeue_signal), its callback (`fired_fn`, 0: none) and the
// thread whose expiry its firing gives: kept here, on the line every program reads anyway,
// so that hrtimer_expire_entry touches no other map for it.
#define MAX_CPUS 1024

struct cpu_conf {
	__u32 off;
	__u32 fired_tid;
	__u64 fired_fn;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_CPUS);
	__type(key, __u32);
	__type(value, struct cpu_conf);
} skip SEC(".maps");

static __always_inline struct cpu_conf *cpu_conf(void)
{
	__u32 cpu = bpf_get_smp_processor_id();
	return bpf_map_lookup_elem(&skip, &cpu);
}

static __always_inline int skipped(void)
{
	struct cpu_conf *s = cpu_conf();
	return s && s->off;
}

static __always_inline struct config *get_config(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&config, &zero);
}

// The current task's id when its process may hold a watched thread, else 0; `id` is
// bpf_get_current_pid_tgid(), read once by the caller (its low half is also the records' pid).
static __always_inline __u32 watchable_tid(const struct config *c, __u64 id)
{
	if (c->tgid && (__u32)(id >> 32) != c->tgid)
		return 0;
	return (__u32)id;
}

static __always_inline struct ring *ring_lookup(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&rings, &zero);
}

static __always_inline struct ring *my_ring(void)
{
	if (skipped())
		return 0;
	return ring_lookup();
}

#define NO_STEAL (~0ULL)

// The current CPU's steal time so far (ns), read through the current task (see struct rq);
// NO_STEAL where this kernel has no such field (the relocation is then guarded off, never
// failed) or the chain is broken.
static __always_inline __u64 read_steal(void)
{
	struct task_struct *t = bpf_get_current_task_btf();
	if (!__builtin_preserve_field_info(t->se.cfs_rq, 2 /* BPF_FIELD_EXISTS */))
		return NO_STEAL;
	struct cfs_rq *q = t->se.cfs_rq;
	if (!q)
		return NO_STEAL;
	struct rq *rq = q->rq;
	if (!rq || !__builtin_preserve_field_info(rq->prev_steal_time_rq, 2))
		return NO_STEAL;
	return rq->prev_steal_time_rq;
}

// Steal since the thread's previous reading on this CPU, stored into `e->p[1]` with
// `e->p[2]` = 1, or nothing (`p[2]` = 0) when the previous reading was on another CPU or
// there was none; then this reading becomes the previous one.
static __always_inline void steal_since(struct thread *th, struct rec *e, __u32 cpu)
{
	__u64 now = read_steal();
	if (now == NO_STEAL)
		return;
	if (e) {
		if (th->steal_cpu == cpu + 1 && now >= th->steal_at) {
			e->p[1] = now - th->steal_at;
			e->p[2] = 1;
		}
	}
	th->steal_at = now;
	th->steal_cpu = cpu + 1;
}

// A new record of the current task `pid` at `ts` (ns, CLOCK_MONOTONIC).
static __always_inline struct rec *put_at(struct ring *r, __u16 kind, __u32 pid, __u64 ts)
{
	struct rec *e = &r->recs[r->head & (RING_LEN - 1)];
	r->head++;
	e->ts = ts;
	e->pid = pid;
	e->kind = kind;
	return e;
}

// A new record of the current task `pid`, now (a program that already knows the task, from
// its arguments or an earlier helper call, saves a bpf_get_current_pid_tgid() call per hit).
static __always_inline struct rec *put_pid(struct ring *r, __u16 kind, __u32 pid)
{
	return put_at(r, kind, pid, bpf_ktime_get_ns());
}

static __always_inline struct rec *put(struct ring *r, __u16 kind)
{
	return put_pid(r, kind, (__u32)bpf_get_current_pid_tgid());
}

static __always_inline void put2(__u16 kind, __u64 a, __u64 b)
{
	struct ring *r = my_ring();
	if (!r)
		return;
	struct rec *e = put(r, kind);
	e->p[0] = a;
	e->p[1] = b;
}

// Thread `th` (`tid`) is back from the wait for `expiry` (soft, ns) on this CPU: what
// `sys_exit` does when it is traced, without the judgment (see returned()).
static __always_inline void back_from(struct ring *r, struct thread *th, __u32 tid, __s64 expiry)
{
	th->ret_head_prev = th->ret_head;
	th->ret_head = r->head;
	th->returned = expiry;
	r->watch_tid = tid;
}

// Judges the wake-up thread `th` returned from and has not been judged for (`th->returned`,
// negated or not), settled at `now` (ns): late when `now` is more than its threshold past the
// expiry, and then it waits for its window to be sent (its window starts at the return before
// it, `ret_head_prev`). Either way it is judged: `returned` is cleared.
static __always_inline void judge(struct thread *th, __u64 now)
{
	__s64 ret = th->returned < 0 ? -th->returned : th->returned;
	if (ret > 0 && (__s64)now - ret > th->threshold) {
		th->late++;
		if (!th->pending) {
			th->pending_since = now;
			th->late_from = th->ret_head_prev;
		}
		th->pending = 1;
		th->late_expiry = ret;
		th->late_woke = now;
	}
	th->returned = 0;
}

// Where the wait's return is not traced (`sys_exit` detached: run and monitor, whose own
// samples say which wake-ups were late), the wake-up a thread has just served is settled,
// off its path, when it next arms its wait timer — after its clock read, before it sleeps
// again: its expiry is still the thread's (`sys_exit` would have cleared it) and has passed.
// It is then judged as an on-time return is when the thread next leaves the CPU on its own
// (on_sched_switch: late if that switch comes more than the threshold after the expiry), its
// window starts where the previous one ended, and the steal time since the wait began is a
// record of its own (K_STEAL, `now` = the arming), returned for the caller to fill
// (steal_since()); 0 where nothing was settled. With `sys_exit` traced, the expiry is 0
// here and nothing changes.
//
// A wake-up served without leaving the CPU after it is judged here, at the arming after: a
// thread back a period late arms an expiry that is due at once, and when the timer's
// interrupt comes before the wait calls schedule() (do_nanosleep(), kernel/time/hrtimer.c)
// the wait returns without a switch. Judged only at a switch, the late wake-up was overwritten
// by the next one, its window never sent (the oracle's quota plant: a 992 µs wake-up named
// "events lost", its records overwritten 40 ms later by the next late one's).
static __always_inline struct rec *returned(struct ring *r, struct thread *th, __u32 tid, __u64 now)
{
	__s64 expiry = th->expiry;
	if (expiry <= 0 || expiry > (__s64)now)
		return 0;
	if (th->returned)
		judge(th, now);
	back_from(r, th, tid, expiry);
	struct rec *e = put_at(r, K_STEAL, tid, now);
	e->p[0] = 0;
	e->p[1] = 0;
	e->p[2] = 0;
	r->overdue_at = 0;
	return e;
}

// The soft expiry of timer `t` on CLOCK_MONOTONIC, ns: on its base's clock less the base's
// offset (a CLOCK_REALTIME timer's expiry is counted from 1970; judged against a monotonic
// `now`, every wake-up of a run on that clock looked early and no window was sent). The
// records keep the timer's own values, as the text trace prints them. `base` is `t->base`,
// loaded once by the caller: each load of a pointer field through a trusted pointer (a
// `tp_btf` argument, `bpf_get_current_task_btf()`) makes the verifier look up to four
// "__safe_trusted"/"__safe_rcu" type names up in the kernel's BTF, a linear search by name
// (`check_ptr_to_btf_access()`, `btf_nested_type_is_trusted()`, kernel/bpf/verifier.c) on
// every path that reaches it; with one such load per program where there were two or three
// (`t->base` here, `t->se.cfs_rq` in read_steal() through one call of steal_since() per
// program), loading the object took ≈ 13 ms less CPU (`bpftool prog loadall`, `perf stat -e
// task-clock`, ten interleaved rounds, medians 76.7 → 63.3 ms, 2026-11-28).
static __always_inline __s64 expiry_on(struct hrtimer *t, struct hrtimer_clock_base *base)
{
	__s64 soft = t->_softexpires;
	return base ? soft - base->offset : soft;
}

// The first point at or after `at` (ns) of the grid through `phase` with `period` > 0 (ns).
// `at` is past `phase` by then (a grid point of the run, set after it started), and a
// sleep that ends a margin of a whole period or more before its expiry (a `hybrid` that is a
// busy-wait) is judged a period early: late, its window sent.
static __always_inline __s64 on_grid(__s64 at, __s64 phase, __s64 period)
{
	__u64 r = (__u64)(at - phase) % (__u64)period;
	return r ? at - (__s64)r + period : at;
}

SEC("tp_btf/hrtimer_start")
int on_hrtimer_start(__u64 *ctx)
{
	struct hrtimer *t = (void *)ctx[0];
	struct ring *r = my_ring();
	if (!r)
		return 0;
	__u64 id = bpf_get_current_pid_tgid();
	__u64 seq = r->head;
	struct rec *e = put_pid(r, K_HRTIMER_START, (__u32)id);
	__s64 soft = t->_softexpires;
	__u64 function = (__u64)t->function;
	e->p[0] = (__u64)t;
	e->p[1] = t->node.expires;
	e->p[2] = soft;
	e->p[3] = function;
	struct config *c = get_config();
	if (!c)
		return 0;
	__u32 tid = watchable_tid(c, id);
	if (!tid || (c->wait_fn[0] && function != c->wait_fn[0] && function != c->wait_fn[1] &&
		     function != c->wait_fn[2] && function != c->wait_fn[3]))
		return 0;
	struct thread *th = thread_of(tid);
	if (th) {
		__u32 cpu = bpf_get_smp_processor_id();
		// Armed by the watched thread itself before it sleeps: steal from here on is
		// what its wake-up can be charged with, and up to here what the wake-up before
		// was, when returned() judges it (its K_STEAL record).
		steal_since(th, returned(r, th, tid, e->ts), cpu);
		__s64 period = th->period;
		__s64 expiry = expiry_on(t, t->base);
		th->expiry = period > 0 ? on_grid(expiry, th->phase, period) : expiry;
		r->watch_tid = tid;
		r->armed_seq[1] = r->armed_seq[0];
		r->armed[1] = r->armed[0];
		r->armed_seq[0] = seq;
		r->armed[0] = *e;
	}
	return 0;
}

SEC("tp_btf/hrtimer_expire_entry")
int on_hrtimer_expire_entry(__u64 *ctx)
{
	struct hrtimer *t = (void *)ctx[0];
	struct cpu_conf *cc = cpu_conf();
	if (!cc || cc->off)
		return 0;
	__u32 zero = 0;
	struct ring *r = bpf_map_lookup_elem(&rings, &zero);
	if (!r)
		return 0;
	__s64 now = 0;
	bpf_probe_read_kernel(&now, sizeof(now), (void *)ctx[1]);
	__u32 pid = (__u32)bpf_get_current_pid_tgid();
	// The record's time: for a timer of the hard CLOCK_MONOTONIC base, the interrupt's own
	// clock read (`now`, ktime_get() as hrtimer_interrupt() starts, kernel/time/hrtimer.c),
	// which saves this hit — the first after every measured expiry — a clock read. The
	// attribution times the callback by `now` already (S2 ends, S3 starts there), and the
	// callbacks of that base run first in the interrupt, so no record of it comes between.
	// Another base's `now` is on another clock (or, for the soft bases, read in a softirq
	// that interrupts can enter): those read the clock.
	struct hrtimer_clock_base *base = t->base;
	__u64 ts = base && base->index == 0 && now > 0 ? (__u64)now : bpf_ktime_get_ns();
	struct rec *e = put_at(r, K_HRTIMER_EXPIRE_ENTRY, pid, ts);
	e->p[0] = (__u64)t;
	e->p[1] = now;
	// What the interrupt interrupted (p[2]): 2 = a task in user mode, 1 = a task in the
	// kernel, 0 = the idle task. The registers saved at the top of a task's kernel stack
	// (task_pt_regs) are those of its last entry from user mode: `orig_ax` is the system
	// call's number when it is inside one, an exception's error code inside a page fault,
	// and -1 when the entry was a system vector (the local timer's, arch/x86/entry/
	// entry_64.S `idtentry_sysvec`, "no syscall to restart") — this interrupt itself, taken
	// in user mode. A kernel thread's saved registers are zeroed when it is created. The
	// attribution uses it to tell a task that could not have kept the CPU (see
	// src/attribution.rs, "user mode cannot hold the switch").
	e->p[2] = 0;
	if (pid) {
		struct pt_regs *regs = bpf_task_pt_regs(bpf_get_current_task_btf());
		e->p[2] = regs->orig_ax == ~0UL ? 2 : 1;
	}
	__u64 function = (__u64)t->function;
	e->p[3] = function;
	if (cc->fired_fn && function == cc->fired_fn) {
		__u32 tid = cc->fired_tid;
		struct thread *th = thread_of(tid);
		if (th)
			th->expiry = expiry_on(t, base);
	}
	return 0;
}

// A late wake-up's window is sent when the thread next leaves the CPU on its own; while it
// is kept off the CPU (an RT run queue throttled, a CFS group throttled on its way back to
// user mode, a page it waits for, a hog that will not yield) the CPU's other work can fill
// the ring many times over, and the window would start after the expiry (seen under load:
// the quota and rt-throttle plants' wake-ups "trace silent" or missing their throttle).
// So once the thread is overdue, every switch on the CPU (but the one that brings it back)
// that finds half the ring new since the last copy, and since the thread's window began, sends
// the ring as a carry copy (no late thread: dump_tid 0); user space keeps
// each record once, and the late window, sent later, finds its start there.
static __always_inline void carry(struct ring *r, __u64 now)
{
	if (!r->overdue_at || now <= r->overdue_at || r->head - r->dumped_head < RING_LEN / 2)
		return;
	// Nor while less than half the ring was written since the thread last returned from its
	// wait or armed its timer (`ret_head`, where its window starts): nothing it needs can be
	// overwritten before it is back. A thread merely late — its timer interrupt held by the
	// host, say — is overdue in the interrupt that wakes it, and a copy there (16 KiB) would
	// sit on the path of the very wake-up being measured, for a window that is sent anyway
	// when the thread next sleeps; on a loud host that was a carry copy for nearly every late
	// wake-up (722 windows for 351 late ones in a 10 s run, 2026-11-28).
	struct thread *th = thread_of(r->watch_tid);
	if (th && r->head - th->ret_head < RING_LEN / 2)
		return;
	// The collector keeps a CPU's events for a second (BPF_WINDOW_KEEP_NS): a thread overdue
	// longer (gone elsewhere, or stopped) is no longer carried for.
	// And at most CARRY_MAX copies (a sixteenth of the ring buffer) per time it is overdue: a
	// CPU that switches hundreds of thousands of times a second would otherwise fill the
	// ring buffer (and the collector) with copies; the window's start and its end, sent
	// when the thread next leaves the CPU, are what tell why it was late.
	if (now - r->overdue_at > CARRY_FOR_NS || r->carries >= CARRY_MAX) {
		r->overdue_at = 0;
		return;
	}
	r->carries++;
	r->dumped_head = r->head;
	r->dump_tid = 0;
	r->dump_cpu = bpf_get_smp_processor_id();
	r->dump_expiry = 0;
	r->dump_woke = 0;
	r->dumps++;
	if (bpf_ringbuf_output(&dumps, r, sizeof(*r), BPF_RB_NO_WAKEUP))
		r->dumps_lost++;
}

SEC("tp_btf/sched_switch")
int on_sched_switch(__u64 *ctx)
{
	int preempt = (int)ctx[0];
	struct task_struct *prev = (void *)ctx[1];
	struct task_struct *next = (void *)ctx[2];
	__u32 prev_state = (__u32)ctx[3];
	struct ring *r = my_ring();
	if (!r)
		return 0;
	// The current task is `prev` (the tracepoint runs before the switch): its pid, read
	// here for the payload anyway, is the record's.
	__u32 prev_pid = prev->pid;
	__u32 next_pid = next->pid;
	struct rec *e = put_pid(r, K_SCHED_SWITCH, prev_pid);
	e->p[0] = (__u64)prev_pid | ((__u64)next_pid << 32);
	// The state's bits (TASK_* of include/linux/sched.h fit 16), prev's kernel priority
	// (0-139) + 1 in bits 16-23 (0: not recorded, as in records of before), preempt in 31.
	e->p[1] = (__u64)(prev_state & 0xffff) | ((__u64)(((__u32)prev->prio + 1) & 0xff) << 16) |
		  ((__u64)(preempt != 0) << 31) | ((__u64)(__u32)next->prio << 32);
	__builtin_memcpy(&e->p[2], prev->comm, 16);
	// The name of the task switched to — but not of the watched thread coming back from
	// its wait, inside its wake-up: its name is another line of its task_struct, which the
	// switch has not touched (a cache miss on a vCPU back from halt); the collector knows
	// it (its own thread, or any of its other switches). All-zero words: name not recorded.
	if (r->watch_tid != next_pid) {
		__builtin_memcpy(&e->p[4], next->comm, 16);
	} else {
		e->p[4] = 0;
		e->p[5] = 0;
		// Back on the CPU: no longer overdue (carry()).
		r->overdue_at = 0;
	}
	// Only the watched thread that last returned from its wait on this CPU can have
	// anything to judge or send: any other switch returns before the thread's lookup.
	if (r->watch_tid != prev_pid) {
		// Never in the switch that brings the watched thread back: that is inside its
		// wake-up, which a copy would make later still.
		if (r->watch_tid != next_pid)
			carry(r, e->ts);
		return 0;
	}
	struct thread *th = thread_of(prev_pid);
	if (!th)
		return 0;
	// A thread switched out runnable after its wait returned on time may be kept off the CPU
	// before its clock read: since Linux 6.18 a throttled CFS group's task is dequeued by task
	// work on its way back to user mode (throttle_cfs_rq_work(), kernel/sched/fair.c) and
	// runs again only after the refill; one that waits uninterruptibly (TASK_UNINTERRUPTIBLE,
	// 2) may be waiting for a page its code faulted on. And one that is not switched out at
	// all may still read its clock late: under an IPI flood its way back to user mode took
	// 17 µs of a 33 µs wake-up, so that sys_exit was on time. When it next leaves the CPU on
	// its own (after its clock read), that wake-up is judged again, up to then: late if past
	// its threshold (a window sent for a wake-up user space then finds on time costs a copy,
	// never an attribution).
	if (preempt || (prev_state & 2)) {
		if (th->returned > 0)
			th->returned = -th->returned;
		// Woken and not yet back (its return not traced, or not reached): overdue from the
		// expiry it is serving.
		__s64 base = th->returned < 0 ? -th->returned
			     : (th->expiry > 0 && th->expiry <= (__s64)e->ts ? th->expiry : 0);
		if (base > 0) {
			r->overdue_at = base + th->threshold;
			r->carries = 0;
		}
		return 0;
	}
	judge(th, e->ts);
	// Leaving on its own to wait: overdue from its new expiry on (its hrtimer_start came
	// first; none when it waits without a timer).
	r->overdue_at = th->expiry > 0 ? th->expiry + th->threshold : 0;
	r->carries = 0;
	// A late thread that leaves the CPU on its own has read its clock: send the window.
	// It waits (to send one copy for several late wake-ups) unless half the ring is new,
	// DUMP_AFTER_NS passed, or the oldest unsent late wake-up's window (from the thread's
	// wait return before it) holds an eighth of the ring or more: a burst in the next period
	// would overwrite its start before the next chance (under the oracle's IPI plant a
	// window is 110-150 records and the bursts start unannounced, docs/explain.md).
	if (!th->pending)
		return 0;
	if (r->head - r->dumped_head < RING_LEN / 2 && e->ts - th->pending_since < DUMP_AFTER_NS &&
	    8 * (r->head - th->late_from) < RING_LEN)
		return 0;
	th->pending = 0;
	r->dumped_head = r->head;
	r->dump_tid = prev_pid;
	r->dump_cpu = bpf_get_smp_processor_id();
	r->dump_expiry = th->late_expiry;
	r->dump_woke = th->late_woke;
	r->dumps++;
	if (bpf_ringbuf_output(&dumps, r, sizeof(*r), BPF_RB_NO_WAKEUP))
		r->dumps_lost++;
	return 0;
}

// The return from a system call: for a watched thread's wait call, recorded, and the thread
// marked late when it returns more than its threshold after the soft expiry it armed.
//
// Checks cheapest and most selective first, each map looked up once (the thread's slots up
// to THREAD_PROBES times, inlined): the CPU, the process, the system call's number (every
// other call of a watched process returns here, before the thread's lookup), then the thread.
SEC("tp_btf/sys_exit")
int on_sys_exit(__u64 *ctx)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct cpu_conf *cc = bpf_map_lookup_elem(&skip, &cpu);
	if (!cc || cc->off)
		return 0;
	struct config *c = get_config();
	if (!c)
		return 0;
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = watchable_tid(c, id);
	if (!tid)
		return 0;
	struct pt_regs *regs = (void *)ctx[0];
	__s64 nr = (__s64)regs->orig_ax;
	if (c->wait_nr[0] >= 0 && nr != c->wait_nr[0] && nr != c->wait_nr[1] &&
	    nr != c->wait_nr[2] && nr != c->wait_nr[3])
		return 0;
	struct thread *th = thread_of(tid);
	if (!th)
		return 0;
	struct ring *r = ring_lookup();
	if (!r)
		return 0;
	struct rec *e = put_pid(r, K_SYS_EXIT, tid);
	e->p[0] = nr;
	e->p[1] = 0;
	e->p[2] = 0;
	// Steal on this CPU since the thread armed its timer (or since its previous wake-up,
	// when another thread arms it): p[1] ns, p[2] = 1 when known.
	steal_since(th, e, cpu);
	__s64 expiry = th->expiry;
	th->returned = 0;
	th->ret_head_prev = th->ret_head;
	th->ret_head = r->head;
	if (expiry > 0 && (__s64)e->ts - expiry > th->threshold) {
		th->late++;
		if (!th->pending) {
			th->pending_since = e->ts;
			th->late_from = th->ret_head_prev;
		}
		th->pending = 1;
		th->late_expiry = expiry;
		th->late_woke = e->ts;
	} else if (expiry > 0) {
		th->returned = expiry;
	}
	th->expiry = 0;
	r->watch_tid = tid;
	r->overdue_at = 0;
	return 0;
}

SEC("tp_btf/irq_handler_entry")
int on_irq_entry(__u64 *ctx)
{
	put2(K_IRQ_ENTRY, (__u32)ctx[0], 0);
	return 0;
}

SEC("tp_btf/irq_handler_exit")
int on_irq_exit(__u64 *ctx)
{
	put2(K_IRQ_EXIT, (__u32)ctx[0], 0);
	return 0;
}

SEC("tp_btf/softirq_entry")
int on_softirq_entry(__u64 *ctx)
{
	put2(K_SOFTIRQ_ENTRY, (__u32)ctx[0], 0);
	return 0;
}

SEC("tp_btf/softirq_exit")
int on_softirq_exit(__u64 *ctx)
{
	put2(K_SOFTIRQ_EXIT, (__u32)ctx[0], 0);
	return 0;
}

// Only idle entries are recorded (the state entered); the exit is the first thing the CPU
// does after the interrupt that ends idle, inside a measured wake-up, and returns at once.
// The decoder puts the exit back before the next switch away from the idle task.
SEC("tp_btf/cpu_idle")
int on_cpu_idle(__u64 *ctx)
{
	__u32 state = (__u32)ctx[0];
	if (state == PWR_EVENT_EXIT)
		return 0;
	put2(K_CPU_IDLE, state, 0);
	return 0;
}

// Page faults of the measured threads only (exceptions:page_fault_user/_kernel, x86,
// TP_PROTO(unsigned long address, struct pt_regs *regs, unsigned long error_code)): a compiler
// sharing the CPU takes tens of thousands a second. Payload: the address, 1 if in user mode.
static __always_inline void page_fault(__u64 address, __u64 user)
{
	struct ring *r = my_ring();
	struct config *c = get_config();
	if (!r || !c)
		return;
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = watchable_tid(c, id);
	if (!tid || !thread_of(tid))
		return;
	struct rec *e = put_pid(r, K_PAGE_FAULT, tid);
	e->p[0] = address;
	e->p[1] = user;
}

SEC("tp_btf/page_fault_user")
int on_page_fault_user(__u64 *ctx)
{
	page_fault(ctx[0], 1);
	return 0;
}

SEC("tp_btf/page_fault_kernel")
int on_page_fault_kernel(__u64 *ctx)
{
	page_fault(ctx[0], 0);
	return 0;
}

// x86 interrupt vectors: one program per tracepoint, the vector's index in VECTORS of
// src/bpf_records.rs as payload. The local timer (index 0) has only its exit: see the top.
#define VECTOR(name, idx)                                                                          \
	SEC("tp_btf/" #name "_entry")                                                              \
	int on_##name##_entry(__u64 *ctx)                                                          \
	{                                                                                          \
		put2(K_VECTOR_ENTRY, idx, 0);                                                      \
		return 0;                                                                          \
	}                                                                                          \
	SEC("tp_btf/" #name "_exit")                                                               \
	int on_##name##_exit(__u64 *ctx)                                                           \
	{                                                                                          \
		put2(K_VECTOR_EXIT, idx, 0);                                                       \
		return 0;                                                                          \
	}

SEC("tp_btf/local_timer_exit")
int on_local_timer_exit(__u64 *ctx)
{
	struct ring *r = my_ring();
	if (!r)
		return 0;
	struct rec *e = put(r, K_VECTOR_EXIT);
	e->p[0] = 0;
	e->p[1] = 0;
	// A CPU that runs one task while a watched thread waits for it (an RT run queue
	// throttled, a hog that never yields) switches seldom: its timer interrupts carry the
	// ring too.
	carry(r, e->ts);
	return 0;
}

VECTOR(reschedule, 1)
VECTOR(call_function, 2)
VECTOR(call_function_single, 3)
VECTOR(irq_work, 4)
VECTOR(error_apic, 5)
VECTOR(spurious_apic, 6)
VECTOR(thermal_apic, 7)

char LICENSE[] SEC("license") = "Dual MIT/GPL";
