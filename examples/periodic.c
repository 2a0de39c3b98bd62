/*
 * A 1 kHz loop with tickscope from C, ending with the statistics block that the
 * Cpp-Periodic-Task README prints, so the two can be compared line by line.
 *
 *   periodic_c [TICKS [sleep|busy|hybrid [FIFO_PRIORITY]]]
 *
 * TICKS defaults to 5000 (5 s); FIFO_PRIORITY (1..99, default none) asks for SCHED_FIFO.
 * Build:  cc -O2 -Iinclude examples/periodic.c target/release/libtickscope.a \
 *            -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc -o periodic_c
 *   or:   cc -O2 examples/periodic.c $(pkg-config --cflags --libs tickscope) -o periodic_c
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tickscope.h"

#define PERIOD_NS 1000000u /* 1 ms: 1 kHz */

static int strategy_named(const char *name, ts_strategy *out)
{
    static const struct {
        const char *name;
        ts_strategy value;
    } known[] = {
        {"sleep", TS_STRATEGY_SLEEP},
        {"busy", TS_STRATEGY_BUSY},
        {"hybrid", TS_STRATEGY_HYBRID},
    };
    size_t i;
    for (i = 0; i < sizeof known / sizeof known[0]; i++) {
        if (strcmp(name, known[i].name) == 0) {
            *out = known[i].value;
            return 0;
        }
    }
    return -1;
}

/* The Cpp-Periodic-Task statistics block: period statistics in microseconds, deviations in % of the period. */
static void print_block(const char *title, const ts_stats *s)
{
    double us = 1e3, period = (double)s->period_ns / us;
    double mean = s->period_mean_ns / us, sd = s->period_stddev_ns / us;
    double min = (double)s->period_min_ns / us, max = (double)s->period_max_ns / us;

    printf("============ %s ============\n", title);
    printf("Sample Size  : %15llu\n", (unsigned long long)s->period_samples);
    printf("Task Period  : %15.6f us (%.3f Hz)\n", period, 1e6 / period);
    printf("mean         : %15.6f us (%.3f Hz)\n", mean, mean > 0 ? 1e6 / mean : 0.0);
    printf("deviation    : %15.6f us\n", sd);
    printf("min          : %15.6f us\n", min);
    printf("max          : %15.6f us\n", max);
    printf("diff min max : %15.6f us\n", max - min);
    printf("%% deviation  : %15.6f %%\n", 100.0 * sd / period);
    printf("%% minmax     : %15.6f %%\n", 100.0 * (max - min) / period);
    printf("------------------------------\n");
    /* What Cpp-Periodic-Task does not print: lateness against the grid, misses and CPU. */
    printf("latency p99  : %15.3f us (max %.3f us)\n", (double)s->latency_p99_ns / us,
           (double)s->latency_max_ns / us);
    printf("overruns     : %15llu\n", (unsigned long long)s->overruns);
    printf("cpu          : %15.1f %%\n", s->cpu_percent);
}

int main(int argc, char **argv)
{
    unsigned long ticks = argc > 1 ? strtoul(argv[1], NULL, 10) : 5000;
    const char *name = argc > 2 ? argv[2] : "sleep";
    int fifo = argc > 3 ? atoi(argv[3]) : 0;
    ts_strategy strategy;
    ts_periodic *loop;
    ts_stats stats;
    char title[32];
    unsigned long i;
    size_t k;
    int rc;

    if (ticks < 2 || strategy_named(name, &strategy) != 0) {
        fprintf(stderr, "usage: %s [TICKS>=2 [sleep|busy|hybrid [FIFO_PRIORITY]]]\n", argv[0]);
        return 2;
    }
    loop = ts_periodic_new(PERIOD_NS, strategy);
    if (loop == NULL) {
        fprintf(stderr, "periodic: %s\n", ts_last_error());
        return 1;
    }
    /* Optional setup, each undone by ts_periodic_free. */
    if (ts_periodic_set_timer_slack(loop, 1) != 0)
        fprintf(stderr, "periodic: note: %s\n", ts_last_error());
    if (fifo > 0 && ts_periodic_set_policy(loop, TS_POLICY_FIFO, fifo) != 0)
        fprintf(stderr, "periodic: note: %s\n", ts_last_error());

    for (i = 0; i < ticks; i++) {
        ts_tick tick;
        rc = ts_periodic_wait(loop, &tick);
        if (rc != 0) {
            fprintf(stderr, "periodic: wait: %s (%d)\n", ts_last_error(), rc);
            ts_periodic_free(loop);
            return 1;
        }
        /* The periodic work would go here; tick.latency_ns says how late it starts. */
    }

    rc = ts_periodic_stats(loop, &stats);
    ts_periodic_free(loop);
    if (rc != 0) {
        fprintf(stderr, "periodic: stats: %s\n", ts_last_error());
        return 1;
    }
    for (k = 0; name[k] != '\0' && k + 1 < sizeof title; k++)
        title[k] = (char)(name[k] >= 'a' && name[k] <= 'z' ? name[k] - 'a' + 'A' : name[k]);
    title[k] = '\0';
    print_block(title, &stats);
    return 0;
}
