/* Bad arguments through the C ABI come back as errors: never a crash, never an abort. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tickscope.h"

static int failures, checks;

#define CHECK(cond)                                                            \
    do {                                                                       \
        checks++;                                                              \
        if (!(cond)) {                                                         \
            failures++;                                                        \
            printf("FAILED line %d: %s (last error: %s)\n", __LINE__, #cond,   \
                   ts_last_error());                                           \
        }                                                                      \
    } while (0)

/* The call failed and left a reason that mentions `word`. */
#define REFUSED_WITH(word) CHECK(strstr(ts_last_error(), (word)) != NULL)

int main(void)
{
    ts_periodic *p;
    ts_tick tick;
    ts_stats stats;
    ts_options opts;

    CHECK(ts_last_error() != NULL && ts_last_error()[0] == '\0');

    CHECK(ts_periodic_new(0, TS_STRATEGY_SLEEP) == NULL);
    REFUSED_WITH("period");
    CHECK(ts_periodic_new(UINT64_MAX, TS_STRATEGY_SLEEP) == NULL);
    REFUSED_WITH("period");
    CHECK(ts_periodic_new(1000000, 3) == NULL);
    REFUSED_WITH("unknown strategy 3");
    CHECK(ts_periodic_new(1000000, -1) == NULL);
    REFUSED_WITH("unknown strategy -1");
    CHECK(ts_periodic_new(1000000, (ts_strategy)0x7fffffff) == NULL);

    CHECK(ts_periodic_new_with(NULL) == NULL);
    REFUSED_WITH("NULL");
    CHECK(ts_options_init(NULL, 1000000, TS_STRATEGY_SLEEP) == -EINVAL);
    CHECK(ts_options_init(&opts, 1000000, TS_STRATEGY_SLEEP) == 0);
    opts.overrun = 2;
    CHECK(ts_periodic_new_with(&opts) == NULL);
    REFUSED_WITH("overrun");
    opts.overrun = TS_OVERRUN_SKIP;
    opts.clock = 42;
    CHECK(ts_periodic_new_with(&opts) == NULL);
    REFUSED_WITH("clock");
    CHECK(ts_options_init(&opts, 1000000, TS_STRATEGY_HYBRID) == 0);
    opts.hybrid_margin_ns = -5;
    CHECK(ts_periodic_new_with(&opts) == NULL);
    REFUSED_WITH("margin");
    opts.hybrid_margin_ns = 1000001; /* more than the period */
    CHECK(ts_periodic_new_with(&opts) == NULL);
    REFUSED_WITH("margin");

    CHECK(ts_periodic_wait(NULL, &tick) == -EINVAL);
    CHECK(ts_periodic_stats(NULL, &stats) == -EINVAL);
    CHECK(ts_periodic_reset_stats(NULL) == -EINVAL);
    CHECK(ts_periodic_set_policy(NULL, TS_POLICY_OTHER, 0) == -EINVAL);
    CHECK(ts_periodic_set_affinity(NULL, 0) == -EINVAL);
    CHECK(ts_periodic_lock_memory(NULL) == -EINVAL);
    CHECK(ts_periodic_set_timer_slack(NULL, 1) == -EINVAL);
    ts_periodic_free(NULL);

    p = ts_periodic_new(200000, TS_STRATEGY_SLEEP);
    CHECK(p != NULL);
    if (p == NULL)
        return 1;
    CHECK(ts_periodic_wait(p, NULL) == -EINVAL);
    REFUSED_WITH("tick");
    CHECK(ts_periodic_stats(p, NULL) == -EINVAL);
    CHECK(ts_periodic_set_policy(p, 9, 1) == -EINVAL);
    REFUSED_WITH("unknown policy 9");
    CHECK(ts_periodic_set_policy(p, TS_POLICY_FIFO, 0) == -EINVAL);
    CHECK(ts_periodic_set_policy(p, TS_POLICY_RR, 100) == -EINVAL);
    CHECK(ts_periodic_set_policy(p, TS_POLICY_OTHER, 20) == -EINVAL);
    CHECK(ts_periodic_set_policy(p, TS_POLICY_IDLE, 1) == -EINVAL);
    CHECK(ts_periodic_set_affinity(p, -1) == -EINVAL);
    CHECK(ts_periodic_set_affinity(p, 1 << 20) == -EINVAL);

    /* The loop still works after all that. */
    CHECK(ts_periodic_wait(p, &tick) == 0 && tick.index == 0);
    CHECK(ts_periodic_wait(p, &tick) == 0 && tick.latency_ns == tick.woke_ns - tick.expiry_ns);
    CHECK(ts_periodic_stats(p, &stats) == 0 && stats.samples == 2 && stats.period_ns == 200000);
    ts_periodic_free(p);

    printf("%d passed, %d failed\n", checks - failures, failures);
    return failures != 0;
}
