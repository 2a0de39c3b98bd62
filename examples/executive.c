/*
 * Three periodic tasks in one thread with tickscope's executive: a 1 ms control step, a
 * 2.5 ms (400 Hz) sensor read and a 10 ms logger, each on its own exact grid.
 *
 *   gcc -std=c99 -O2 -I include examples/executive.c target/release/libtickscope.a \
 *       -lpthread -ldl -lm -o executive && ./executive [MILLISECONDS]   (default 1000)
 *
 * Prints the plan (hyperperiod, utilisation, schedulable) and two lines per task: releases,
 * overruns, deadline misses, worst release latency and response time (us); then release
 * latency, wake-up latency, response and execution percentiles and the start jitter.
 */
#include <stdio.h>
#include <stdlib.h>
#include <tickscope.h>

struct work {
    const char *name;
    volatile unsigned long spins; /* synthetic work per release */
    unsigned long releases;
};

static int step(const ts_release *r, void *user)
{
    struct work *w = user;
    for (unsigned long i = 0; i < w->spins; i++) {
        /* busy work */
    }
    w->releases++;
    (void)r;
    return 0; /* non-zero would stop the run */
}

int main(int argc, char **argv)
{
    long ms = argc > 1 ? strtol(argv[1], NULL, 10) : 1000;
    if (ms <= 0) {
        fprintf(stderr, "usage: %s [MILLISECONDS > 0]\n", argv[0]);
        return 2;
    }
    struct work tasks[3] = {
        {"control 1ms", 2000, 0}, {"imu 2.5ms", 8000, 0}, {"logger 10ms", 20000, 0}};
    const uint64_t periods[3] = {1000000, 2500000, 10000000};
    const uint64_t budgets[3] = {50000, 200000, 0};

    ts_executive *ex = ts_executive_new(TS_STRATEGY_SLEEP);
    if (!ex) {
        fprintf(stderr, "ts_executive_new: %s\n", ts_last_error());
        return 1;
    }
    /* Each release's time on the thread CPU clock, for the execution figures. */
    ts_executive_measure_execution_time(ex, 1);
    for (int i = 0; i < 3; i++) {
        ts_task_options o;
        ts_task_options_init(&o, periods[i]);
        o.budget_ns = budgets[i];
        if (ts_executive_add(ex, &o, step, &tasks[i]) != i) {
            fprintf(stderr, "ts_executive_add: %s\n", ts_last_error());
            return 1;
        }
    }
    ts_plan plan;
    ts_executive_plan(ex, &plan);
    printf("plan: hyperperiod %lld us, utilisation %.3f (Liu-Layland bound %.3f), %s, "
           "%llu coincidences\n",
           (long long)plan.hyperperiod_ns / 1000, plan.utilisation, plan.liu_layland_bound,
           plan.schedulable ? "schedulable" : "NOT schedulable",
           (unsigned long long)plan.coincidences);

    int64_t n = ts_executive_run_for(ex, (int64_t)ms * 1000000);
    if (n < 0) {
        fprintf(stderr, "ts_executive_run_for: %s\n", ts_last_error());
        ts_executive_free(ex);
        return 1;
    }
    printf("%lld releases in %ld ms\n", (long long)n, ms);
    for (int i = 0; i < 3; i++) {
        ts_task_stats s;
        ts_executive_task_stats(ex, i, &s);
        printf("task %d %-12s releases %6llu  overruns %llu  deadline misses %llu  "
               "latency max %8.1f us  response max %8.1f us\n",
               i, tasks[i].name, (unsigned long long)s.releases,
               (unsigned long long)s.overruns, (unsigned long long)s.deadline_misses,
               s.latency_max_ns / 1e3, s.response_max_ns / 1e3);
        printf("  latency p50 %.1f p99 %.1f us, wake-up max %.1f us, response p50 %.1f "
               "p99 %.1f us, execution mean %.1f p99 %.1f us, start jitter %.1f us\n",
               s.latency_p50_ns / 1e3, s.latency_p99_ns / 1e3, s.wakeup_latency_max_ns / 1e3,
               s.response_p50_ns / 1e3, s.response_p99_ns / 1e3, s.execution_mean_ns / 1e3,
               s.execution_p99_ns / 1e3, s.start_period_stddev_ns / 1e3);
    }
    ts_executive_free(ex);
    return 0;
}
