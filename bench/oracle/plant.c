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
 *   other  SCHED_OTHER spinning in user mode on CPU, at nice PRIO if given
 *   kernel SCHED_OTHER staying in the kernel: one big read of /dev/zero into fresh pages
 *          per burst, on CPU
 *   udp    on CPU (not the measured one): floods 127.0.0.1 with UDP datagrams; with RPS
 *          steered to the measured CPU the receive softirq runs there
 *   ipi    on CPU (not the measured one): membarrier(PRIVATE_EXPEDITED) in a loop; the
 *          kernel sends the IPI only to CPUs running this process, so a SCHED_OTHER helper
 *          thread spins on the measured CPU (PRIO) during each burst and sleeps between
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

static int helper_cpu;
static volatile int bursting;
static void *helper(void *arg) {
  (void)arg;
  pin(helper_cpu);
  prctl(PR_SET_NAME, "plant-ipi-help");
  for (;;) {
    while (!bursting) sleep_ns(50000);
    while (bursting) {}
  }
  return NULL;
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
  char name[16];
  snprintf(name, sizeof name, "plant-%s", mode);
  prctl(PR_SET_NAME, name);
  if (mlockall(MCL_CURRENT | MCL_FUTURE)) perror("mlockall");
  int sock = -1, zero = -1;
  struct sockaddr_in to = {.sin_family = AF_INET};
  char payload[1400] = {0};
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
  pin(cpu);
  if (!strcmp(mode, "fifo")) policy(SCHED_FIFO, prio);
  else if (!strcmp(mode, "rr")) policy(SCHED_RR, prio);
  else if (!strcmp(mode, "other") && argc > 7 && setpriority(PRIO_PROCESS, 0, prio)) {
    perror("setpriority");
    return 2;
  }
  else if (!strcmp(mode, "udp")) {
    sock = socket(AF_INET, SOCK_DGRAM, 0);
    int rx = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in me = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (sock < 0 || rx < 0 || bind(rx, (struct sockaddr *)&me, sizeof me)) { perror("udp"); return 3; }
    socklen_t l = sizeof to;
    getsockname(rx, (struct sockaddr *)&to, &l);
  } else if (!strcmp(mode, "kernel")) {
    zero = open("/dev/zero", O_RDONLY);
    kbytes = 64u << 20;
  }
  unsigned seed = (unsigned)now();
  while (now() < end && n < cap) {
    int64_t g = gap / 2 + (int64_t)(rand_r(&seed) % (gap + 1));
    sleep_ns(g);
    int64_t a = now(), b = a;
    if (!strcmp(mode, "kernel")) {
      /* Fresh pages each time: the read faults them in and clears them inside one call. */
      kbuf = mmap(NULL, kbytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      a = now();
      ssize_t r = read(zero, kbuf, burst / 1000 * 1024 > (int64_t)kbytes ? kbytes : (size_t)(burst / 1000 * 1024));
      (void)r;
      b = now();
      munmap(kbuf, kbytes);
    } else if (!strcmp(mode, "udp")) {
      while ((b = now()) - a < burst)
        sendto(sock, payload, sizeof payload, MSG_DONTWAIT, (struct sockaddr *)&to, sizeof to);
    } else if (!strcmp(mode, "ipi")) {
      bursting = 1;
      while ((b = now()) - a < burst)
        syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
      bursting = 0;
    } else {
      while ((b = now()) - a < burst) {}
    }
    iv[2 * n] = a;
    iv[2 * n + 1] = b;
    n++;
  }
  FILE *f = fopen(log, "w");
  if (!f) { perror(log); return 3; }
  for (size_t i = 0; i < n; i++) fprintf(f, "%lld %lld\n", (long long)iv[2 * i], (long long)iv[2 * i + 1]);
  fclose(f);
  return 0;
}
