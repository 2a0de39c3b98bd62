/* Single-threaded references for bench/references.sh: one periodic loop per wake-up method,
 * written from the man pages and independent of tickscope's code, with tickscope's
 * settings — SCHED_FIFO at PRIORITY, pinned to CPU, mlockall, /dev/cpu_dma_latency held
 * at 0, timer slack 1 ns, CLOCK_MONOTONIC, the first expiry 10 ms ahead, expiries on the grid
 * t0 + k·period, a late wake-up skips the expiries it passed (for the kernel's periodic timers,
 * timerfd and posix-timer, a wake-up answers the latest of the expiries the kernel says it
 * reports). Latency of a wake-up: the clock read right after the wait returned − that expiry.
 *
 *   wait METHOD PERIOD_US COUNT PRIORITY CPU [MARGIN_US]   prints "p50_ns p99_ns max_ns count"
 *
 * METHOD (each as its man page describes the call):
 *   nanosleep-abs  clock_nanosleep(2) TIMER_ABSTIME until the expiry
 *   nanosleep-rel  clock_nanosleep(2) for expiry − previous wake time (a relative sleep)
 *   select         pselect(2), no descriptors, timeout expiry − previous wake time
 *   poll           ppoll(2), no descriptors, the same timeout
 *   epoll          epoll_pwait2(2) on an empty epoll set, the same timeout
 *   timerfd        timerfd_create(2) armed once (absolute first expiry, interval), read(2)
 *   posix-timer    timer_create(2) with SIGEV_THREAD_ID to this thread, armed once
 *                  (TIMER_ABSTIME, interval), the signal blocked and taken by sigwaitinfo(2)
 *   busy           read the clock until it reaches the expiry
 *   hybrid         clock_nanosleep TIMER_ABSTIME until expiry − MARGIN_US, then read the
 *                  clock until the expiry
 * (itimer has its own program, itimer.c: its signal is the process's.)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_epoll_pwait2
#define SYS_epoll_pwait2 441
#endif

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static struct timespec ts_of(int64_t ns)
{
	if (ns < 0)
		ns = 0;
	struct timespec ts = { ns / 1000000000, ns % 1000000000 };
	return ts;
}

static int cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static void die(const char *what)
{
	perror(what);
	exit(2);
}

int main(int argc, char **argv)
{
	if (argc < 6) {
		fprintf(stderr, "usage: wait METHOD PERIOD_US COUNT PRIORITY CPU [MARGIN_US]\n");
		return 2;
	}
	const char *m = argv[1];
	int64_t period = atoll(argv[2]) * 1000;
	long count = atol(argv[3]);
	struct sched_param sp = { .sched_priority = atoi(argv[4]) };
	int64_t margin = (argc > 6 ? atoll(argv[6]) : 100) * 1000;
	if (period <= 0 || count <= 0)
		die("wait: PERIOD_US and COUNT must be positive");
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(atoi(argv[5]), &set);
	if (sched_setaffinity(0, sizeof set, &set) != 0)
		die("wait: sched_setaffinity");
	if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0)
		die("wait: SCHED_FIFO");
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	int64_t *lat = calloc((size_t)count, sizeof *lat);
	if (!lat)
		die("wait: calloc");
	memset(lat, 0, (size_t)count * sizeof *lat);
	mlockall(MCL_CURRENT | MCL_FUTURE);
	int qos = open("/dev/cpu_dma_latency", O_WRONLY);
	int32_t zero = 0;
	if (qos >= 0 && write(qos, &zero, sizeof zero) != sizeof zero)
		perror("wait: /dev/cpu_dma_latency");

	int64_t t0 = now_ns() + 10000000;
	int fd = -1;
	timer_t timer;
	sigset_t rt;
	sigemptyset(&rt);
	if (!strcmp(m, "timerfd")) {
		fd = timerfd_create(CLOCK_MONOTONIC, 0);
		struct itimerspec it = { ts_of(period), ts_of(t0) };
		if (fd < 0 || timerfd_settime(fd, TFD_TIMER_ABSTIME, &it, NULL) != 0)
			die("wait: timerfd");
	} else if (!strcmp(m, "posix-timer")) {
		sigaddset(&rt, SIGRTMIN);
		sigprocmask(SIG_BLOCK, &rt, NULL);
		struct sigevent ev;
		memset(&ev, 0, sizeof ev);
		ev.sigev_notify = SIGEV_THREAD_ID;
		ev.sigev_signo = SIGRTMIN;
		ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
		struct itimerspec it = { ts_of(period), ts_of(t0) };
		if (timer_create(CLOCK_MONOTONIC, &ev, &timer) != 0 ||
		    timer_settime(timer, TIMER_ABSTIME, &it, NULL) != 0)
			die("wait: timer_create");
	} else if (!strcmp(m, "epoll")) {
		fd = epoll_create1(0);
		if (fd < 0)
			die("wait: epoll_create1");
	} else if (strcmp(m, "nanosleep-abs") && strcmp(m, "nanosleep-rel") &&
		   strcmp(m, "select") && strcmp(m, "poll") && strcmp(m, "busy") &&
		   strcmp(m, "hybrid")) {
		fprintf(stderr, "wait: unknown method %s\n", m);
		return 2;
	}

	int kernel_periodic = !strcmp(m, "timerfd") || !strcmp(m, "posix-timer");
	int64_t expiry = t0, last = now_ns();
	/* timerfd, posix-timer: the last expiry the kernel has reported, and how many the latest
	 * notification reported. */
	int64_t reported = t0 - period;
	uint64_t expired = 1;
	for (long k = 0; k < count; k++) {
		struct timespec abs = ts_of(expiry), rel = ts_of(expiry - last);
		if (!strcmp(m, "nanosleep-abs")) {
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &abs, NULL);
		} else if (!strcmp(m, "nanosleep-rel")) {
			clock_nanosleep(CLOCK_MONOTONIC, 0, &rel, NULL);
		} else if (!strcmp(m, "select")) {
			pselect(0, NULL, NULL, NULL, &rel, NULL);
		} else if (!strcmp(m, "poll")) {
			ppoll(NULL, 0, &rel, NULL);
		} else if (!strcmp(m, "epoll")) {
			struct epoll_event e;
			if (syscall(SYS_epoll_pwait2, fd, &e, 1, &rel, NULL, 0) < 0)
				die("wait: epoll_pwait2");
		} else if (!strcmp(m, "timerfd")) {
			if (read(fd, &expired, sizeof expired) != sizeof expired)
				die("wait: read timerfd");
		} else if (!strcmp(m, "posix-timer")) {
			if (sigwaitinfo(&rt, NULL) < 0)
				die("wait: sigwaitinfo");
		} else if (!strcmp(m, "hybrid")) {
			struct timespec early = ts_of(expiry - margin);
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &early, NULL);
			while (now_ns() < expiry)
				;
		} else { /* busy */
			while (now_ns() < expiry)
				;
		}
		int64_t woke = now_ns();
		if (kernel_periodic) {
			/* The kernel says how many expiries this notification answers (timerfd: the
			 * count read, timerfd_create(2); posix-timer: 1 + the overrun count,
			 * timer_getoverrun(2)): it answers the latest of them. Counting them, rather
			 * than taking the latest grid point before the clock read, stays right when the
			 * clock read comes a grid point after the notification. */
			if (!strcmp(m, "posix-timer")) {
				int over = timer_getoverrun(timer);
				expired = 1 + (over > 0 ? (uint64_t)over : 0);
			}
			reported += (int64_t)expired * period;
			lat[k] = woke - reported;
			last = woke;
			continue;
		}
		lat[k] = woke - expiry;
		last = woke;
		expiry += period;
		while (expiry <= woke) /* skip the expiries the wake-up passed */
			expiry += period;
	}
	qsort(lat, (size_t)count, sizeof *lat, cmp);
	/* HdrHistogram's rank convention: the sample of rank ceil(q·n). */
	long r50 = (count * 50 + 99) / 100, r99 = (count * 99 + 99) / 100;
	printf("%lld %lld %lld %ld\n", (long long)lat[r50 - 1], (long long)lat[r99 - 1],
	       (long long)lat[count - 1], count);
	return 0;
}
