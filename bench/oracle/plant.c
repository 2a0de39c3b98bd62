/* One planted cause of timer wake-up latency, in bursts, for bench/oracle.sh.
 *
 * plant MODE CPU SECONDS BURST_US GAP_US LOG [PRIO]
 *
 * Every burst's CLOCK_MONOTONIC start and end (ns) are logged by this process itself,
 * one "start end" line each, written to LOG at exit: the ground truth never comes from the
 * trace tickscope reads. Gaps are GAP_US ± 50 % (random), so bursts do not lock to the
 * measured period. Modes:
 *   fifo   SCHED_FIFO PRIO (default 99) spinning in user mode on CPU
 *   rr     SCHED_RR PRIO spinning in user mode on CPU
 *   rt     SCHED_FIFO PRIO spinning in user mode on CPU under a lowered RT bandwidth, until
 *          it was throttled and runs again after the refill (off the CPU >= 2 ms, then
 *          running), BURST_US the upper bound. The run queue's RT time is charged at the
 *          tick, so it overshoots the budget by up to a tick, and a refill only subtracts one
 *          budget from it (kernel/sched/rt.c, do_sched_rt_period_timer(): rt_time -=
 *          min(rt_time, overrun * runtime)): right after the refill the plant saw, the RT
 *          time left can still throttle the next RT task that runs (the measured one) until
 *          the following refill — or longer: on a host that stalls the vCPU for
 *          milliseconds while the spinner runs, the stall is charged as RT time too, and the
 *          measured thread was throttled 5-24 ms (once 120 ms) after "one period after the
 *          refill", and between spins (the lowered bandwidth alone, with a stall charged as
 *          RT time). So a thread of this plant on the other CPU reads the measured CPU's root
 *          RT run queue from the scheduler's debug file every 2 ms for the plant's whole run
 *          (rt_owing(), rt_watch(); every 0.5 ms during a spin and two periods after), and the
 *          bursts logged are the stretches in which it was
 *          throttled or owed RT time, with the stretch each spin was itself kept off its CPU
 *          (the throttle to the µs) — not the spin before it, which delays no RT thread of
 *          higher priority (since 2026-11-26 evening, before the run that judged it: the
 *          lowered bandwidth is this plant's doing, and the kernel's own run-queue state says
 *          when it throttles). Without that file: the spin plus one RT period (RT_PERIOD_US,
 *          the period the oracle set) after the refill it saw, as before.
 *   other  SCHED_OTHER spinning in user mode on CPU, at nice PRIO if given
 *   kernel SCHED_OTHER staying in the kernel: one read() per burst of BURST_US KiB of a
 *          file of its own (LOG.data, written first, so it is in the page cache; removed
 *          at exit) — filemap_read copies page after page without giving the CPU up under
 *          PREEMPT_NONE
 *   udp    on CPU (not the measured one): floods 127.0.0.1 with UDP datagrams; with RPS
 *          steered to the measured CPU the receive softirq runs there. The receiving socket
 *          carries a socket filter (BPF) that loops ~20000 times per datagram, so that
 *          receiving costs tens of µs in NET_RX on the measured CPU rather than ~2 µs, and
 *          datagrams queue up into long NET_RX runs. A burst ends when every datagram sent
 *          has been received (at most 50 ms after the sending stopped).
 *   ipi    on CPU (not the measured one): membarrier(PRIVATE_EXPEDITED) in a loop; the
 *          kernel sends the IPI only to CPUs running this process, so a SCHED_FIFO 1 helper
 *          thread spins on the measured CPU (PRIO) during each burst and sleeps between.
 *          A burst is logged as the stretches in which the calls followed each other (split
 *          where CPU 0 paused for more than IPI_GAP_NS: no IPI was sent meanwhile; since
 *          2026-11-26, before the runs that judged it)
 *   quota  SCHED_OTHER on CPU (not the measured one), in a cpu cgroup (v1) with a CFS quota
 *          shared with the measuring thread, which it joins after its setup (QUOTA_TASKS:
 *          the group's tasks file) and leaves before its exit (QUOTA_LEAVE: the parent
 *          group's tasks file); QUOTA_STAT names the group's cpu.stat. A
 *          burst spins until the group has been throttled and refilled once: it reads its
 *          own CPU time (CLOCK_THREAD_CPUTIME_ID, which makes the kernel account it, so the
 *          quota is spent exactly rather than at the next tick). Once cpu.stat's
 *          throttled_time has grown (on 6.18 it does when the group is throttled) the plant
 *          is throttled too; the burst ends when it runs again after 200 µs or more off
 *          the CPU — after the period timer refilled the quota for every CPU of the group.
 *          At nice PRIO if given (it then gets the CPU back soon after the refill).
 *          BURST_US is only the upper bound. The bursts logged are the stretches the spin
 *          was kept off its CPU while the group was throttled (see the quota branch below);
 *          a spin in which the group was never throttled logs none.
 *   pageout on CPU (not the measured one): pages out the file-backed pages that the
 *          process PAGEOUT_PID (tickscope, run with --no-mlock) maps from its own executable
 *          (/proc/PID/exe), with process_madvise(MADV_PAGEOUT) on a pidfd (Linux >= 5.10,
 *          process_madvise(2)): its measuring loop's code, which runs right after each wait
 *          returns, then faults on the next wake-up (a major fault: the clean pages left
 *          the page cache). The next wake-ups fault their code back in, and code the loop
 *          runs only now and then later (seen 8-9 ms after a page-out). So the plant reads
 *          the measuring thread's fault counters (PAGEOUT_TID: minflt + majflt of
 *          /proc/PID/task/TID/stat, proc(5); the kernel counts a fault once it has been
 *          handled, mm_account_fault() in mm/memory.c) every FAULT_POLL_NS from the first
 *          page-out on (to the next, and for one gap after the last). The truth logged is
 *          the page-out itself (its TLB-flush IPIs reach the measured CPU) and every stretch
 *          between two reads in which the counters grew: a fault ended inside it. BURST_US
 *          is only how long the plant watches before it starts counting the gap.
 *          (Until 2026-11-26 the burst was the page-out and the fixed BURST_US after it:
 *          faults later than that were scored false positives, and the host's own stalls
 *          that fell in the 2 ms, 10 % of the time, misses.) Anonymous pages (stack, heap)
 *          would need swap, and shared libraries (libc, the vDSO) are mapped by other
 *          processes and not paged out for one. A thread of the plant on the measured
 *          CPU drains that CPU's batch of pages waiting for the LRU after each burst (see
 *          drain()): without it a page faulted back in there stayed out of the page-outs'
 *          reach (since 2026-11-27).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/membarrier.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <linux/bpf.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

static int64_t now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void pin(int cpu) {
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(cpu, &s);
  if (sched_setaffinity(0, sizeof s, &s)) { perror("sched_setaffinity"); exit(2); }
}

static void policy(int pol, int prio) {
  struct sched_param p = {.sched_priority = prio};
  if (sched_setscheduler(0, pol, &p)) { perror("sched_setscheduler"); exit(2); }
}

static void sleep_ns(int64_t ns) {
  struct timespec t = {ns / 1000000000, ns % 1000000000};
  while (clock_nanosleep(CLOCK_MONOTONIC, 0, &t, &t) == EINTR) {}
}

/* A socket filter that burns time in NET_RX: r1 = N; do r0 += 1 while (--r1); return 65535. */
static int slow_filter(int loops) {
  struct bpf_insn prog[] = {
      {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0},
      {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 1, .imm = loops},
      {.code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = 0, .imm = 1},
      {.code = BPF_ALU64 | BPF_SUB | BPF_K, .dst_reg = 1, .imm = 1},
      {.code = BPF_JMP | BPF_JNE | BPF_K, .dst_reg = 1, .off = -3, .imm = 0},
      {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 65535},
      {.code = BPF_JMP | BPF_EXIT},
  };
  union bpf_attr a;
  memset(&a, 0, sizeof a);
  a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
  a.insns = (uint64_t)(uintptr_t)prog;
  a.insn_cnt = sizeof prog / sizeof prog[0];
  a.license = (uint64_t)(uintptr_t)"GPL";
  return (int)syscall(SYS_bpf, BPF_PROG_LOAD, &a, sizeof a);
}

/* throttled_time (ns) of a cgroup-v1 cpu.stat (kernel/sched/core.c, cpu_cfs_stat_show()):
 * it grows when a throttled run queue of the group is unthrottled. -1 on error. */
static long long stat_field(int fd, const char *field) {
  char buf[512];
  ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return -1;
  buf[n] = 0;
  char *p = strstr(buf, field);
  return p ? atoll(p + strlen(field)) : -1;
}

static long long throttled_time(int fd) { return stat_field(fd, "throttled_time "); }

/* The periods in which the group was throttled (cpu.stat's nr_throttled, counted by the
 * period timer that refills the quota: do_sched_cfs_period_timer(), kernel/sched/fair.c). */
static long long nr_throttled(int fd) { return stat_field(fd, "nr_throttled "); }

/* quota: a pause in the spin's clock reads longer than this is a stretch off the CPU (the
 * loop reads the clock every few µs: a read of cpu.stat each turn until the group was
 * throttled); and the quota runs out at most this long before the
 * spin's last read ahead of its throttle (the spin takes the quota in slices of
 * sched_cfs_bandwidth_slice_us, 10 µs in the oracle, so it runs out within a slice). */
#define QUOTA_GAP_NS 20000
#define QUOTA_EMPTY_NS 20000

/* ipi: a pause between two membarrier calls longer than this splits the logged burst. A
 * call takes ~11 µs here (it returns when CPU 1 has run the handler); the loop's own work
 * between calls is well under 1 µs. */
#define IPI_GAP_NS 20000

/* rt: whether CPU `cpu`'s root RT run queue is throttled or owes RT time, as the scheduler's
 * debug file (debugfs sched/debug, `fd`) shows it: its "rt_rq[CPU]:/" section's .rt_throttled,
 * .rt_time and .rt_runtime (ms; print_rt_rq(), kernel/sched/debug.c). Owing: .rt_time at or
 * above .rt_runtime, so that the next RT task to run is throttled at once (sched_rt_runtime_
 * exceeded(), kernel/sched/rt.c). 1 throttled or owing, 0 clear, -1 unreadable. */
static int rt_owing(int fd, int cpu) {
  static char buf[1 << 17];
  size_t got = 0;
  ssize_t n;
  while (got < sizeof buf - 1 && (n = pread(fd, buf + got, sizeof buf - 1 - got, (off_t)got)) > 0)
    got += (size_t)n;
  buf[got] = 0;
  char head[32];
  snprintf(head, sizeof head, "rt_rq[%d]:/\n", cpu);
  char *p = strstr(buf, head);
  if (!p) return -1;
  char *end = strstr(p, "\n\n");
  if (end) *end = 0;
  char *thr = strstr(p, ".rt_throttled"), *tm = strstr(p, ".rt_time"), *rn = strstr(p, ".rt_runtime");
  if (!thr || !tm || !rn || !(thr = strchr(thr, ':')) || !(tm = strchr(tm, ':')) || !(rn = strchr(rn, ':')))
    return -1;
  return atoi(thr + 1) != 0 || atof(tm + 1) >= atof(rn + 1);
}

/* rt: a thread on the other CPU (SCHED_OTHER) that reads rt_owing() from the plant's start
 * to its end and appends every stretch in which the measured CPU's RT run queue was
 * throttled or owing to rt_fl (start, end pairs, rt_nf of them): from the last clear read
 * before to the first clear read after. Every RT_POLL_FAST_NS while a spin runs and up to
 * rt_fast_until (two RT periods after it: throttles of a millisecond or two come then, ≈ 60 %
 * of the other CPU for ~3 % of the run), else every RT_POLL_NS (a read takes ≈ 0.29 ms). */
#define RT_POLL_NS 2000000
#define RT_POLL_FAST_NS 500000
static int64_t rt_fast_until;
static int rt_dbg_fd = -1, rt_cpu, rt_watch_cpu, rt_stop;
static pthread_t rt_watcher;
static int64_t *rt_fl;
static size_t rt_nf, rt_cap;
static void *rt_watch(void *arg) {
  (void)arg;
  pin(rt_watch_cpu);
  prctl(PR_SET_NAME, "plant-rt-watch");
  int64_t clear_at = now(), from = -1;
  while (!__atomic_load_n(&rt_stop, __ATOMIC_ACQUIRE)) {
    int o = rt_owing(rt_dbg_fd, rt_cpu);
    int64_t t = now();
    if (o > 0 && from < 0) from = clear_at;
    if (o == 0) {
      if (from >= 0 && rt_nf < rt_cap) {
        rt_fl[2 * rt_nf] = from;
        rt_fl[2 * rt_nf + 1] = t;
        rt_nf++;
      }
      from = -1;
      clear_at = t;
    }
    sleep_ns(t < __atomic_load_n(&rt_fast_until, __ATOMIC_RELAXED) ? RT_POLL_FAST_NS : RT_POLL_NS);
  }
  if (from >= 0 && rt_nf < rt_cap) {
    rt_fl[2 * rt_nf] = from;
    rt_fl[2 * rt_nf + 1] = now();
    rt_nf++;
  }
  return NULL;
}

/* rt: writes the RT runtime named by environment variable `var` (µs) to the file
 * RT_RUNTIME_FILE (the root cpu cgroup's cpu.rt_runtime_us, or sched_rt_runtime_us); 1 on
 * success. The oracle set the period, and restores both after this plant ends. */
static int rt_runtime_set(const char *var) {
  const char *path = getenv("RT_RUNTIME_FILE"), *v = getenv(var);
  FILE *f = path && v ? fopen(path, "w") : NULL;
  if (!f || fprintf(f, "%s\n", v) < 0 || fclose(f)) {
    fprintf(stderr, "plant rt: could not write %s (%s) to RT_RUNTIME_FILE (%s)\n", var,
            v ? v : "unset", path ? path : "unset");
    return 0;
  }
  return 1;
}

static int helper_cpu;
static volatile int bursting;
static void *helper(void *arg) {
  (void)arg;
  pin(helper_cpu);
  prctl(PR_SET_NAME, "plant-ipi-help");
  /* SCHED_FIFO 1 (below the measured thread): a SCHED_OTHER helper on a loaded machine got
   * the measured CPU in only part of the bursts, and the kernel sends no IPI to a CPU where
   * the plant's process is not running — the plant then caused nothing in its bursts. */
  struct sched_param sp = {.sched_priority = 1};
  pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
  for (;;) {
    while (!bursting) sleep_ns(50000);
    while (bursting) {}
  }
  return NULL;
}

/* minflt + majflt of a /proc/PID/task/TID/stat (fields 10 and 12, proc(5)); -1 on error. */
static long long faults_of(int fd) {
  char buf[1024];
  ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return -1;
  buf[n] = 0;
  char *p = strrchr(buf, ')'); /* the comm may hold spaces and parentheses */
  if (!p) return -1;
  long long f[10] = {0};
  int k = 0;
  for (char *t = strtok(p + 1, " "); t && k < 10; t = strtok(NULL, " ")) f[k++] = atoll(t);
  return k == 10 ? f[7] + f[9] : -1; /* tokens from field 3 (state) on */
}

/* 20 µs: a stretch is as wide as this plus a read (~2.5 µs here), so that a late wake-up
 * next to a fault (rather than around it) seldom overlaps one; with 100 µs, wake-ups late
 * by the host's stalls fell into stretches ~4 times as often. The plant's timer slack is
 * set to 1 ns for it (50 µs by default would stretch every sleep). */
#define FAULT_POLL_NS 20000

/* Reads the counters of `fd` every FAULT_POLL_NS until `until` (CLOCK_MONOTONIC ns); each
 * stretch between two reads in which they grew is appended to `fl` (start, end pairs; `*nf`
 * of them, at most `cap`). `*last` holds the previous reading and its time across calls. */
static void watch_faults(int fd, int64_t until, int64_t *fl, size_t *nf, size_t cap,
                         long long *last, int64_t *last_at) {
  for (;;) {
    int64_t t = now();
    long long f = faults_of(fd);
    if (f >= 0 && *last >= 0 && f > *last && *nf < cap) {
      fl[2 * *nf] = *last_at;
      fl[2 * *nf + 1] = t;
      (*nf)++;
    }
    if (f >= 0) {
      *last = f;
      *last_at = t;
    }
    if (t >= until) return;
    sleep_ns(until - t < FAULT_POLL_NS ? until - t : FAULT_POLL_NS);
  }
}

/* pageout: a thread on the measured CPU that empties that CPU's per-CPU batch of pages
 * waiting to join the LRU lists (lru_add_drain(), which madvise(MADV_COLD) runs first on
 * its own CPU: madvise_cold(), mm/madvise.c) each time a byte arrives on drain_pipe. A page
 * the measuring thread faults back in is added to its CPU's batch (folio_add_lru(),
 * mm/swap.c) and joins the LRU only when the batch is full or drained; until then
 * MADV_PAGEOUT cannot isolate it (folio_isolate_lru() fails) and leaves it mapped, and the
 * page-out drains only the batch of the CPU it runs on. On a quiet CPU 1 the batch filled
 * seldom: after the first seconds, 1 page-out in 3-5 gave the measuring thread a fault
 * (87-177 fault stretches for ~445 page-outs, 2026-11-27 afternoon), and the plant's
 * strength varied with whatever else ran there (988 stretches on a loud host the same
 * day). Drained in each gap, right after the burst's watch: outside the logged bursts. */
static int drain_cpu, drain_pipe[2] = {-1, -1};
static pthread_t drainer;
static void *drain(void *arg) {
  (void)arg;
  pin(drain_cpu);
  prctl(PR_SET_NAME, "plant-lru-drain");
  char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  /* Not locked (the plant's mlockall(MCL_FUTURE) locks it): madvise() refuses a locked
   * range before it drains (can_madv_lru_vma()). */
  if (page == MAP_FAILED || munlock(page, 4096)) {
    perror("plant pageout: the drain thread's page");
    return NULL;
  }
  page[0] = 1;
  char c;
  int said = 0;
  while (read(drain_pipe[0], &c, 1) == 1)
    if (madvise(page, 4096, MADV_COLD) && !said++) perror("plant pageout: madvise(MADV_COLD)");
  return NULL;
}

/* The executable's mappings of process `pid` as iovecs (at most `cap`); their count. */
static int exe_ranges(int pid, struct iovec *v, int cap) {
  char path[64], exe[4096], line[4096 + 128];
  snprintf(path, sizeof path, "/proc/%d/exe", pid);
  ssize_t k = readlink(path, exe, sizeof exe - 1);
  if (k <= 0) return -1;
  exe[k] = 0;
  snprintf(path, sizeof path, "/proc/%d/maps", pid);
  FILE *m = fopen(path, "r");
  if (!m) return -1;
  int n = 0;
  while (n < cap && fgets(line, sizeof line, m)) {
    unsigned long lo, hi;
    char *name = strchr(line, '/');
    if (!name || sscanf(line, "%lx-%lx", &lo, &hi) != 2) continue;
    name[strcspn(name, "\n")] = 0;
    if (strcmp(name, exe)) continue;
    v[n].iov_base = (void *)lo;
    v[n].iov_len = hi - lo;
    n++;
  }
  fclose(m);
  return n;
}

int main(int argc, char **argv) {
  if (argc < 7) {
    fprintf(stderr, "usage: plant MODE CPU SECONDS BURST_US GAP_US LOG [PRIO]\n");
    return 2;
  }
  const char *mode = argv[1];
  int cpu = atoi(argv[2]);
  int64_t end = now() + (int64_t)(atof(argv[3]) * 1e9);
  int64_t burst = atoll(argv[4]) * 1000, gap = atoll(argv[5]) * 1000;
  const char *log = argv[6];
  int prio = argc > 7 ? atoi(argv[7]) : 99;
  size_t cap = 1 << 20, n = 0;
  int64_t *iv = calloc(2 * cap, sizeof *iv);
  /* rt: per burst, the stretch this spinner was kept off its CPU (the throttle as the plant
   * itself saw it), logged to LOG.held for the oracle's "seen at work"; 0 0 when none. */
  int64_t *held = calloc(2 * cap, sizeof *held);
  /* quota: the spins in which the group was never seen throttled (not logged as bursts),
   * to LOG.quiet: the oracle reports any "cpu quota" named inside one, the truth unchanged. */
  int64_t *quiet = calloc(2 * cap, sizeof *quiet);
  size_t nq = 0;
  /* quota: the periods the group was throttled during this plant's spins (logged or quiet);
   * the rest of cpu.stat's nr_throttled came while it slept (written to LOG.quiet's first
   * line as "# throttled_in_spins N"). */
  long long spin_throttles = 0;
  /* quota: the throttles logged as stretches of the plant's own, and the spins logged whole
   * because the period timer counted a throttle the plant did not see (said at exit). */
  size_t quota_stretches = 0, quota_whole = 0;
  /* pageout: the stretches in which the measuring thread's fault counters grew. */
  int64_t *fl = calloc(2 * cap, sizeof *fl);
  size_t nf = 0;
  int faults_fd = -1;
  long long faults_last = -1;
  int64_t faults_at = 0;
  char name[16];
  snprintf(name, sizeof name, "plant-%s", mode);
  prctl(PR_SET_NAME, name);
  if (mlockall(MCL_CURRENT | MCL_FUTURE)) perror("mlockall");
  int sock = -1, file = -1, rxs = -1, stat = -1, pidfd = -1, target = 0;
  static struct iovec ranges[64];
  char data[4096];
  struct sockaddr_in to = {.sin_family = AF_INET};
  static char payload[1400];
  size_t kbytes = 0;
  char *kbuf = NULL;
  if (!strcmp(mode, "ipi")) {
    helper_cpu = atoi(argc > 7 ? argv[7] : "1");
    pthread_t h;
    pthread_create(&h, NULL, helper, NULL);
    if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0)) {
      perror("membarrier register");
      return 3;
    }
    usleep(100000);
  }
  if (!strcmp(mode, "kernel")) {
    /* Written before this plant moves to its CPU: writing 4 MiB is kernel work that would
     * hold the measured CPU outside every logged burst (seen: 1.7 and 3.4 ms, 2026-11-26). */
    kbytes = (size_t)(burst / 1000) * 1024;
    snprintf(data, sizeof data, "%s.data", log);
    file = open(data, O_RDWR | O_CREAT | O_TRUNC, 0600);
    kbuf = malloc(kbytes);
    if (file < 0 || !kbuf) { perror(data); return 3; }
    memset(kbuf, 7, kbytes);
    if (write(file, kbuf, kbytes) != (ssize_t)kbytes) { perror("write"); return 3; }
  }
  pin(cpu);
  const char *rtp = getenv("RT_PERIOD_US");
  int64_t rt_period = rtp ? atoll(rtp) * 1000 : 0;
  if (!strcmp(mode, "rt") && rt_period <= 0) {
    fprintf(stderr, "plant rt: RT_PERIOD_US must give the RT period set (us)\n");
    return 3;
  }
  if (!strcmp(mode, "rt")) {
    /* Where the scheduler's debug file shows the run queue, a burst lasts until it is clear;
     * else the spin plus one RT period (as before 2026-11-26 evening). */
    rt_dbg_fd = open("/sys/kernel/debug/sched/debug", O_RDONLY);
    rt_cpu = cpu;
    rt_watch_cpu = cpu == 0 ? 1 : 0;
    if (rt_dbg_fd >= 0 && rt_owing(rt_dbg_fd, cpu) >= 0) {
      rt_fl = fl;
      rt_cap = cap;
      pthread_create(&rt_watcher, NULL, rt_watch, NULL);
    } else {
      fprintf(stderr, "plant rt: no RT run queue in /sys/kernel/debug/sched/debug: bursts end one RT period after the refill\n");
      if (rt_dbg_fd >= 0) close(rt_dbg_fd);
      rt_dbg_fd = -1;
    }
  }
  if (!strcmp(mode, "fifo") || !strcmp(mode, "rt")) policy(SCHED_FIFO, prio);
  else if (!strcmp(mode, "rr")) policy(SCHED_RR, prio);
  else if ((!strcmp(mode, "other") || !strcmp(mode, "quota")) && argc > 7 &&
           setpriority(PRIO_PROCESS, 0, prio)) {
    perror("setpriority");
    return 2;
  }
  else if (!strcmp(mode, "udp")) {
    sock = socket(AF_INET, SOCK_DGRAM, 0);
    int rx = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in me = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (sock < 0 || rx < 0 || bind(rx, (struct sockaddr *)&me, sizeof me)) { perror("udp"); return 3; }
    int filter = slow_filter(20000), big = 64 << 20;
    if (filter < 0 || setsockopt(rx, SOL_SOCKET, SO_ATTACH_BPF, &filter, sizeof filter)) {
      perror("udp: socket filter");
      return 3;
    }
    setsockopt(rx, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof big);
    rxs = rx;
    socklen_t l = sizeof to;
    getsockname(rx, (struct sockaddr *)&to, &l);

  } else if (!strcmp(mode, "quota")) {
    const char *path = getenv("QUOTA_STAT"), *tasks = getenv("QUOTA_TASKS");
    stat = path ? open(path, O_RDONLY) : -1;
    if (stat < 0 || throttled_time(stat) < 0) {
      fprintf(stderr, "plant quota: QUOTA_STAT must name a readable cpu.stat\n");
      return 3;
    }
    /* Join the group only now: the setup above (allocation, mlockall) would spend its quota
     * outside any logged burst. */
    FILE *t = tasks ? fopen(tasks, "w") : NULL;
    if (!t || fprintf(t, "%ld\n", (long)syscall(SYS_gettid)) < 0 || fclose(t)) {
      fprintf(stderr, "plant quota: could not join QUOTA_TASKS\n");
      return 3;
    }
  } else if (!strcmp(mode, "pageout")) {
    const char *t = getenv("PAGEOUT_PID");
    target = t ? atoi(t) : 0;
    pidfd = target > 0 ? (int)syscall(SYS_pidfd_open, target, 0) : -1;
    if (pidfd < 0 || exe_ranges(target, ranges, 64) <= 0) {
      fprintf(stderr, "plant pageout: PAGEOUT_PID must name a running process (pidfd_open, maps)\n");
      return 3;
    }
    const char *tid = getenv("PAGEOUT_TID");
    if (tid && *tid) {
      char path[64];
      snprintf(path, sizeof path, "/proc/%d/task/%d/stat", target, atoi(tid));
      faults_fd = open(path, O_RDONLY);
    }
    if (faults_fd < 0 || faults_of(faults_fd) < 0) {
      fprintf(stderr, "plant pageout: PAGEOUT_TID must name the measuring thread of PAGEOUT_PID\n");
      return 3;
    }
    prctl(PR_SET_TIMERSLACK, 1UL);
    drain_cpu = cpu == 0 ? 1 : 0;
    if (pipe(drain_pipe) || pthread_create(&drainer, NULL, drain, NULL)) {
      perror("plant pageout: the drain thread");
      return 3;
    }
  }
  unsigned seed = (unsigned)now();
  /* rt: the RT bandwidth is lowered here, with the watcher already reading the run queue,
   * and raised back below before the watcher stops: every throttle it causes is logged. */
  if (!strcmp(mode, "rt") && !rt_runtime_set("RT_RUNTIME_US")) return 3;
  while (now() < end && n < cap) {
    int64_t g = gap / 2 + (int64_t)(rand_r(&seed) % (gap + 1));
    if (faults_fd >= 0 && n > 0)
      watch_faults(faults_fd, now() + g, fl, &nf, cap, &faults_last, &faults_at);
    else
      sleep_ns(g);
    int64_t a = now(), b = a;
    if (!strcmp(mode, "kernel")) {
      ssize_t r = pread(file, kbuf, kbytes, 0);
      (void)r;
      b = now();
    } else if (!strcmp(mode, "udp")) {
      long sent = 0, got = 0;
      while (now() - a < burst)
        sent += sendto(sock, payload, sizeof payload, MSG_DONTWAIT, (struct sockaddr *)&to, sizeof to) > 0;
      b = now();
      /* Until the measured CPU has received every datagram (at most 50 ms). */
      while (got < sent && now() - b < 50000000)
        got += recv(rxs, payload, sizeof payload, MSG_DONTWAIT) > 0;
      b = now();
    } else if (!strcmp(mode, "quota")) {
      long long t0 = throttled_time(stat), n0 = nr_throttled(stat), at_gap = t0;
      struct timespec cpu_time;
      int throttled = 0;
      int64_t last = a;
      size_t first = n;
      for (; (b = now()) - a < burst; last = b) {
        if (b - last > QUOTA_GAP_NS) {
          /* Off the CPU: throttled when the kernel added to throttled_time meanwhile — it
           * does so as it unthrottles the group at the refill (unthrottle_cfs_rq(),
           * kernel/sched/fair.c), before this process runs again. */
          long long t = throttled_time(stat);
          if (t > at_gap && n < cap) {
            iv[2 * n] = last - QUOTA_EMPTY_NS;
            iv[2 * n + 1] = b;
            n++;
          }
          if (t >= 0) at_gap = t;
          /* Off the CPU for 200 µs after the group was throttled: this process was
           * throttled too, and runs again because the period timer refilled the quota. */
          if (throttled && b - last > 200000) break;
        }
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu_time);
        throttled = throttled || throttled_time(stat) > t0;
      }
      /* The logged bursts are the stretches this process was kept off its CPU while the
       * group was throttled, each from its last clock read before (less QUOTA_EMPTY_NS) to
       * its first after; none if the group was never throttled. The quota runs out for the
       * whole group at once: the measuring thread on CPU 1 can be throttled only from then
       * (at its next need of runtime) to the refill, which ends this process's stretch too.
       * The spin before the quota runs out delays nobody on CPU 1. (Was, until 2026-11-27:
       * the whole spin, to this process's first run after the refill — its unthrottled
       * part let the host's stalls of CPU 1 into the truth, 2-12 `hypervisor` misses per
       * run, each a wake-up that ran at once after its interrupt, see docs/explain.md;
       * before 2026-11-26: only the stretch that ended the spin.) */
      long long n1 = nr_throttled(stat);
      if (n0 >= 0 && n1 >= n0) spin_throttles += n1 - n0;
      int counted = n0 >= 0 && n1 > n0; /* throttled periods during the spin */
      if (n == first && !throttled && !counted) {
        if (nq < cap) {
          quiet[2 * nq] = a;
          quiet[2 * nq + 1] = b;
          nq++;
        }
        continue;
      }
      /* A throttle this process did not see as a stretch of its own (the period timer
       * counted more throttled periods during the spin than stretches were logged): the
       * whole spin, as before 2026-11-27. Seen under load (stress-ng on both CPUs): 3 of 124
       * throttles unlogged in one run of seven, and the measuring thread's wake-ups they
       * held scored as 33 false positives. */
      if (n > first && (n0 < 0 || n1 < 0 || (long long)(n - first) >= n1 - n0)) {
        quota_stretches += n - first;
        continue;
      }
      n = first; /* replaced by the spin, below */
      quota_whole++;
    } else if (!strcmp(mode, "pageout")) {
      int n = exe_ranges(target, ranges, 64);
      if (n > 0 && syscall(SYS_process_madvise, pidfd, ranges, (size_t)n, 21 /* MADV_PAGEOUT */, 0) < 0) {
        perror("plant pageout: process_madvise");
        return 3;
      }
      b = now();
      if (faults_last < 0) faults_last = faults_of(faults_fd), faults_at = a;
      watch_faults(faults_fd, a + burst, fl, &nf, cap, &faults_last, &faults_at);
      /* The pages just faulted back in join the LRU now, so the next page-out finds them. */
      if (write(drain_pipe[1], "d", 1) != 1) perror("plant pageout: drain");
    } else if (!strcmp(mode, "rt")) {
      __atomic_store_n(&rt_fast_until, a + burst + 2 * rt_period, __ATOMIC_RELAXED);
      int64_t last = a;
      for (; (b = now()) - a < burst; last = b)
        if (b - last >= 2000000) { /* throttled, and running again after the refill */
          held[2 * n] = last;
          held[2 * n + 1] = b;
          break;
        }
      /* With the watcher: the stretch this spinner was kept off its CPU (the throttle, to the
       * µs, from its own clock reads), and the throttled stretches the watcher saw (merged at
       * exit) — not the spin before the throttle, which delays no higher-priority RT thread
       * (it preempts a user-mode spinner at once), nor a spin the bound ended unthrottled.
       * Without the watcher: the spin plus one RT period. */
      if (rt_dbg_fd < 0) {
        b += rt_period;
      } else if (held[2 * n + 1]) {
        __atomic_store_n(&rt_fast_until, b + 2 * rt_period, __ATOMIC_RELAXED);
        a = held[2 * n];
        b = held[2 * n + 1];
      } else {
        continue;
      }
    } else if (!strcmp(mode, "ipi")) {
      /* Logged as the stretches in which the calls followed each other: where CPU 0 did not
       * call for IPI_GAP_NS (the host stalled it, or a task of CPU 0 ran), no IPI was sent
       * to CPU 1, and a wake-up late there is not this plant's doing. A call itself counts
       * however long it takes: it waits until CPU 1 has run the IPI's handler. */
      bursting = 1;
      int64_t from = a, last = a;
      while ((b = now()) - a < burst) {
        if (b - last > IPI_GAP_NS && n < cap) {
          iv[2 * n] = from;
          iv[2 * n + 1] = last;
          n++;
          from = b;
        }
        syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
        last = now();
      }
      bursting = 0;
      a = from;
      b = last;
    } else {
      while ((b = now()) - a < burst) {}
    }
    if (n >= cap) break; /* the ipi branch may have filled the log */
    iv[2 * n] = a;
    iv[2 * n + 1] = b;
    n++;
  }
  if (!strcmp(mode, "quota")) {
    /* Leave the group before exiting: freeing the locked log would spend its quota after
     * the last logged burst. */
    const char *out = getenv("QUOTA_LEAVE");
    FILE *t = out ? fopen(out, "w") : NULL;
    if (!t || fprintf(t, "%ld\n", (long)syscall(SYS_gettid)) < 0 || fclose(t))
      fprintf(stderr, "plant quota: could not leave the group through QUOTA_LEAVE\n");
  }
  if (!strcmp(mode, "rt") && !rt_runtime_set("RT_RUNTIME_RAISED_US")) return 3;
  if (rt_dbg_fd >= 0) {
    /* The run queue's last throttled stretches (the RT time owed) end within a period or
     * two of the raise. */
    sleep_ns(2 * rt_period);
    __atomic_store_n(&rt_stop, 1, __ATOMIC_RELEASE);
    pthread_join(rt_watcher, NULL);
    nf = rt_nf;
  }
  /* The teardown (the data file unlinked, the log written, the locked memory freed at
   * exit) is kernel work too: off the plant's CPU, onto CPU 0, the oracle's housekeeping
   * CPU (seen: plant-kernel holding the measured CPU 6-15 ms after its last burst). */
  if (cpu != 0) pin(0);
  if (file >= 0) unlink(data);
  /* pageout: the faults of the last page-out come in for a while after it. */
  if (faults_fd >= 0 && n > 0)
    watch_faults(faults_fd, now() + gap, fl, &nf, cap, &faults_last, &faults_at);
  if (drain_pipe[1] >= 0) {
    close(drain_pipe[1]);
    pthread_join(drainer, NULL);
  }
  FILE *f = fopen(log, "w");
  if (!f) { perror(log); return 3; }
  /* The bursts and the fault stretches (both in time order), merged where they overlap. */
  size_t i = 0, j = 0;
  int64_t lo = 0, hi = -1;
  while (i < n || j < nf) {
    int64_t *x = (j >= nf || (i < n && iv[2 * i] <= fl[2 * j])) ? &iv[2 * i++] : &fl[2 * j++];
    if (hi >= 0 && x[0] <= hi) {
      if (x[1] > hi) hi = x[1];
      continue;
    }
    if (hi >= 0) fprintf(f, "%lld %lld\n", (long long)lo, (long long)hi);
    lo = x[0];
    hi = x[1];
  }
  if (hi >= 0) fprintf(f, "%lld %lld\n", (long long)lo, (long long)hi);
  fclose(f);
  if (faults_fd >= 0)
    fprintf(stderr, "plant pageout: %zu page-outs, %zu stretches with faults of the measuring thread\n", n, nf);
  if (!strcmp(mode, "quota")) {
    fprintf(stderr, "plant quota: %lld throttled periods during the spins, %zu throttles logged as the plant's own stretches off its CPU, %zu spins logged whole (a throttle the plant did not see)\n",
            spin_throttles, quota_stretches, quota_whole);
    char path[4096];
    snprintf(path, sizeof path, "%s.quiet", log);
    FILE *q = fopen(path, "w");
    if (!q) { perror(path); return 3; }
    fprintf(q, "# throttled_in_spins %lld\n", spin_throttles);
    for (size_t i = 0; i < nq; i++)
      fprintf(q, "%lld %lld\n", (long long)quiet[2 * i], (long long)quiet[2 * i + 1]);
    fclose(q);
  }
  if (!strcmp(mode, "rt")) {
    char path[4096];
    snprintf(path, sizeof path, "%s.held", log);
    FILE *h = fopen(path, "w");
    if (!h) { perror(path); return 3; }
    for (size_t i = 0; i < n; i++)
      if (held[2 * i + 1]) fprintf(h, "%lld %lld\n", (long long)held[2 * i], (long long)held[2 * i + 1]);
    fclose(h);
  }
  return 0;
}
