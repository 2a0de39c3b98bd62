/*
 * Why was my loop late? A 1 ms loop that asks the library to explain its wake-ups later
 * than 50 us (root, or CAP_BPF and CAP_PERFMON; the library built with its `explain`
 * feature), runs 2 s and prints the causes.
 *
 *   cargo build --release -p tickscope --features explain
 *   cc -I include examples/explain.c target/release/libtickscope.a -lpthread -ldl -lm -o explain
 *   sudo ./explain
 */
#include <errno.h>
#include <stdio.h>
#include "tickscope.h"

int main(void) {
    ts_periodic *loop = ts_periodic_new(1000000, TS_STRATEGY_SLEEP);
    ts_tick tick;
    ts_explanation why;
    int rc, i;
    uint32_t k;
    if (loop == NULL) {
        fprintf(stderr, "cannot create the loop: %s\n", ts_last_error());
        return 1;
    }
    rc = ts_periodic_explain(loop, 50000);
    if (rc == -EPERM || rc == -ENOTSUP) {
        /* One line, and the loop runs on unexplained. */
        printf("explain: off (%s)\n", ts_last_error());
    } else if (rc != 0) {
        fprintf(stderr, "explain: %s\n", ts_last_error());
        ts_periodic_free(loop);
        return 1;
    }
    for (i = 0; i < 2000; i++) {
        if (ts_periodic_wait(loop, &tick) != 0) {
            fprintf(stderr, "wait: %s\n", ts_last_error());
            break;
        }
        /* ... the periodic work ... */
    }
    if (rc == 0 && ts_periodic_explanation(loop, &why) == 0) {
        printf("explain: %s, %llu late wake-ups (%llu pending, %llu dropped)\n", why.backend,
               (unsigned long long)why.late, (unsigned long long)why.pending,
               (unsigned long long)why.dropped);
        for (k = 0; k < why.n_causes; k++) {
            printf("  %-20s %6llu  mean %lld ns  max %lld ns\n", why.causes[k].cause,
                   (unsigned long long)why.causes[k].count,
                   (long long)(why.causes[k].total_ns / (int64_t)why.causes[k].count),
                   (long long)why.causes[k].max_ns);
        }
    }
    ts_periodic_free(loop);
    return 0;
}
