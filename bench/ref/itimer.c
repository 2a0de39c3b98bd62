/* Single-threaded itimer reference for bench/itimer.sh: setitimer(ITIMER_REAL) at a period
 * of whole µs, the SIGALRM handler reads CLOCK_MONOTONIC, the one thread waits in
 * sigsuspend(2) with SIGALRM blocked otherwise — tickscope's `--method itimer` without any
 * other thread. SCHED_FIFO at PRIORITY, mlockall, /dev/cpu_dma_latency held at 0 (as
 * tickscope's defaults). Latency of wake-up k: handler's clock read − (t0 + k·period), the
 * grid advanced past missed expiries (they merge into one SIGALRM, signal(7)).
 *
 *   itimer PERIOD_US COUNT PRIORITY      prints "p50_ns p99_ns max_ns count"
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile int64_t stamp;

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void on_alarm(int sig)
{
	(void)sig;
	stamp = now_ns();
}

static int cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: itimer PERIOD_US COUNT PRIORITY\n");
		return 2;
	}
	long period_us = atol(argv[1]), count = atol(argv[2]);
	struct sched_param sp = { .sched_priority = atoi(argv[3]) };
	if (period_us <= 0 || count <= 0 || sched_setscheduler(0, SCHED_FIFO, &sp) != 0) {
		perror("itimer: arguments or SCHED_FIFO");
		return 2;
	}
	int64_t *lat = calloc((size_t)count, sizeof *lat);
	mlockall(MCL_CURRENT | MCL_FUTURE);
	int qos = open("/dev/cpu_dma_latency", O_WRONLY);
	int32_t zero = 0;
	if (qos >= 0 && write(qos, &zero, sizeof zero) != sizeof zero)
		perror("itimer: /dev/cpu_dma_latency");
	sigset_t block, during;
	sigemptyset(&block);
	sigaddset(&block, SIGALRM);
	sigprocmask(SIG_BLOCK, &block, &during);
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
		while (stamp == seen)
			sigsuspend(&during);
		seen = stamp;
		while (seen >= expiry + period) /* merged expiries: skip them */
			expiry += period;
		lat[k] = seen - expiry;
		expiry += period;
	}
	struct itimerval off = { 0 };
	setitimer(ITIMER_REAL, &off, NULL);
	qsort(lat, (size_t)count, sizeof *lat, cmp);
	/* HdrHistogram's rank convention: the sample of rank ceil(q·n). */
	long r50 = (count * 50 + 99) / 100, r99 = (count * 99 + 99) / 100;
	printf("%lld %lld %lld %ld\n", (long long)lat[r50 - 1], (long long)lat[r99 - 1],
	       (long long)lat[count - 1], count);
	return 0;
}
