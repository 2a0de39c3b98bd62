/* itimer reference for bench/references.sh and bench/itimer-layout.sh: setitimer(ITIMER_REAL)
 * at a period of whole µs, the SIGALRM handler reads CLOCK_MONOTONIC, the measuring thread
 * waits in sigsuspend(2) with SIGALRM blocked otherwise — tickscope's `--method itimer`.
 * SCHED_FIFO at PRIORITY, mlockall, /dev/cpu_dma_latency held at 0 (as tickscope's
 * defaults). Latency of wake-up k: handler's clock read − (t0 + k·period), the grid advanced
 * past missed expiries (they merge into one SIGALRM, signal(7)).
 *
 *   itimer PERIOD_US COUNT PRIORITY [LAYOUT [HANDLER]]   prints "p50_ns p99_ns max_ns count"
 *
 * LAYOUT (default single):
 *   single        one thread, the process's first: the reference of bench/references.sh.
 *   threads       tickscope's layout: the first thread blocks SIGALRM, starts an idle second
 *                 thread (blocking it too) and the measuring thread, which is not the
 *                 thread-group leader, and waits; the kernel must pick the one thread that
 *                 accepts SIGALRM (kernel/signal.c, complete_signal()).
 *   threads-busy  threads, and the second thread wakes every 20 ms and maps, touches and
 *                 unmaps 1 MiB (a collector that frees memory: TLB shootdowns in a shared mm).
 * With threads*, the measuring thread runs on the last CPU of the process's affinity and the
 * others on the first (run it as `taskset -c 0,1`), as tickscope's housekeeping placement.
 * HANDLER (default plain): plain reads the clock only; tid calls gettid(2) and getpid(2)
 * before the clock read and compares the thread id, as tickscope's handler did before it
 * read the clock first.
 * With the environment variable DUMP=FILE, every wake-up is written to FILE as tickscope's
 * --samples CSV (expiry and wake time, ns on CLOCK_MONOTONIC), and the measuring thread's id
 * to FILE.tid.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile int64_t stamp;
static volatile pid_t target_tid;
static int tid_handler;
static long period_us, count;
static int priority, measuring_cpu = -1, other_cpu = -1;
static int64_t *lat, *expiries, *wakes;
static volatile int finished;

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void on_alarm(int sig)
{
	(void)sig;
	if (tid_handler) {
		pid_t tid = (pid_t)syscall(SYS_gettid), pid = getpid();
		if (tid == target_tid)
			stamp = now_ns();
		else
			syscall(SYS_tgkill, pid, target_tid, SIGALRM);
	} else {
		stamp = now_ns();
	}
}

static int cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static void pin(int cpu)
{
	if (cpu < 0)
		return;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof set, &set) != 0)
		perror("itimer: sched_setaffinity");
}

/* The measuring thread: policy, handler, timer, COUNT wake-ups. */
static void *measure(void *arg)
{
	(void)arg;
	pin(measuring_cpu);
	struct sched_param sp = { .sched_priority = priority };
	if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0) {
		perror("itimer: SCHED_FIFO");
		exit(2);
	}
	target_tid = (pid_t)syscall(SYS_gettid);
	sigset_t block, during;
	sigemptyset(&block);
	sigaddset(&block, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &block, &during);
	sigdelset(&during, SIGALRM);
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_RESTART };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);

	int64_t period = period_us * 1000;
	int64_t t0 = now_ns() + 10000000; /* first expiry 10 ms ahead, as tickscope */
	int64_t first = t0 - now_ns();
	struct itimerval it = {
		.it_value = { first / 1000000000, (first % 1000000000 + 999) / 1000 },
		.it_interval = { period_us / 1000000, period_us % 1000000 },
	};
	setitimer(ITIMER_REAL, &it, NULL);
	int64_t expiry = t0, seen = 0;
	for (long k = 0; k < count; k++) {
		/* A SIGALRM read before the expiry waited for reports one already counted (the
		 * kernel re-arms when the signal is dequeued, which can precede a late clock read
		 * by a grid point): wait past it, as tickscope does. */
		do {
			while (stamp == seen)
				sigsuspend(&during);
			seen = stamp;
		} while (seen < expiry);
		while (seen >= expiry + period) /* merged expiries: skip them */
			expiry += period;
		lat[k] = seen - expiry;
		expiries[k] = expiry;
		wakes[k] = seen;
		expiry += period;
	}
	struct itimerval off = { 0 };
	setitimer(ITIMER_REAL, &off, NULL);
	finished = 1;
	return NULL;
}

/* The second thread of the threads layouts: idle, or a collector that frees memory. */
static void *other(void *arg)
{
	int busy = *(const int *)arg;
	pin(other_cpu);
	while (!finished) {
		struct timespec ts = { 0, busy ? 20000000 : 100000000 };
		nanosleep(&ts, NULL);
		if (busy) {
			char *p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (p != MAP_FAILED) {
				memset(p, 1, 1 << 20);
				munmap(p, 1 << 20);
			}
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 4 || argc > 6) {
		fprintf(stderr, "usage: itimer PERIOD_US COUNT PRIORITY [single|threads|threads-busy] "
				"[plain|tid]\n");
		return 2;
	}
	period_us = atol(argv[1]);
	count = atol(argv[2]);
	priority = atoi(argv[3]);
	const char *layout = argc > 4 ? argv[4] : "single";
	const char *handler = argc > 5 ? argv[5] : "plain";
	int threads = strcmp(layout, "threads") == 0, busy = strcmp(layout, "threads-busy") == 0;
	tid_handler = strcmp(handler, "tid") == 0;
	if (period_us <= 0 || count <= 0 || priority < 1 ||
	    (!threads && !busy && strcmp(layout, "single") != 0) ||
	    (!tid_handler && strcmp(handler, "plain") != 0)) {
		fprintf(stderr, "itimer: bad arguments (see the usage in bench/ref/itimer.c)\n");
		return 2;
	}
	lat = calloc((size_t)count, sizeof *lat);
	expiries = calloc((size_t)count, sizeof *expiries);
	wakes = calloc((size_t)count, sizeof *wakes);
	if (!lat || !expiries || !wakes)
		return 2;
	mlockall(MCL_CURRENT | MCL_FUTURE);
	int qos = open("/dev/cpu_dma_latency", O_WRONLY);
	int32_t zero = 0;
	if (qos >= 0 && write(qos, &zero, sizeof zero) != sizeof zero)
		perror("itimer: /dev/cpu_dma_latency");
	if (threads || busy) {
		cpu_set_t set;
		sched_getaffinity(0, sizeof set, &set);
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set)) {
				if (other_cpu < 0)
					other_cpu = c;
				measuring_cpu = c;
			}
		/* Blocked before any thread starts: both inherit it (pthread_create(3)). */
		sigset_t block;
		sigemptyset(&block);
		sigaddset(&block, SIGALRM);
		pthread_sigmask(SIG_BLOCK, &block, NULL);
		pin(other_cpu);
		pthread_t o, m;
		if (pthread_create(&o, NULL, other, &busy) != 0 ||
		    pthread_create(&m, NULL, measure, NULL) != 0) {
			perror("itimer: pthread_create");
			return 2;
		}
		pthread_join(m, NULL);
		pthread_join(o, NULL);
	} else {
		measure(NULL);
	}
	const char *dump = getenv("DUMP");
	if (dump) {
		FILE *f = fopen(dump, "w");
		if (!f) {
			perror("itimer: DUMP");
			return 2;
		}
		fprintf(f, "run,method,thread,index,expiry_ns,woke_ns,latency_ns\n");
		for (long k = 0; k < count; k++)
			fprintf(f, "0,itimer,0,%ld,%lld,%lld,%lld\n", k, (long long)expiries[k],
				(long long)wakes[k], (long long)lat[k]);
		fclose(f);
		/* The measuring thread's id, for bench/itimer-layout.sh's trace (FILE.tid). */
		char name[4096];
		snprintf(name, sizeof name, "%s.tid", dump);
		f = fopen(name, "w");
		if (f) {
			fprintf(f, "%d\n", (int)target_tid);
			fclose(f);
		}
	}
	qsort(lat, (size_t)count, sizeof *lat, cmp);
	/* HdrHistogram's rank convention: the sample of rank ceil(q·n). */
	long r50 = (count * 50 + 99) / 100, r99 = (count * 99 + 99) / 100;
	printf("%lld %lld %lld %ld\n", (long long)lat[r50 - 1], (long long)lat[r99 - 1],
	       (long long)lat[count - 1], count);
	return 0;
}
