// A 1 kHz loop with tickscope from C++: the C ABI behind a small RAII class, ending with the
// Cpp-Periodic-Task README's statistics block.
//
//   periodic_cpp [TICKS [sleep|busy|hybrid]]
//
// Build:  c++ -std=c++17 -O2 -Iinclude examples/periodic.cpp -Ltarget/release -ltickscope
//             -Wl,-rpath,$PWD/target/release -o periodic_cpp      (one line)
//   or:   c++ -std=c++17 -O2 examples/periodic.cpp $(pkg-config --cflags --libs tickscope)

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include "tickscope.h"

namespace {

// Owns a ts_periodic; ts_periodic_free runs (and restores any setting) when it goes away.
class PeriodicLoop {
  public:
    PeriodicLoop(std::uint64_t period_ns, ts_strategy strategy)
        : loop_(ts_periodic_new(period_ns, strategy), &ts_periodic_free) {
        if (!loop_) throw std::runtime_error(ts_last_error());
    }

    ts_tick wait() {
        ts_tick tick{};
        check(ts_periodic_wait(loop_.get(), &tick));
        return tick;
    }

    ts_stats stats() const {
        ts_stats s{};
        check(ts_periodic_stats(loop_.get(), &s));
        return s;
    }

    // Best effort: a setting the process may not make is reported, not fatal.
    void try_timer_slack(std::uint64_t ns) {
        if (ts_periodic_set_timer_slack(loop_.get(), ns) != 0)
            std::fprintf(stderr, "periodic: note: %s\n", ts_last_error());
    }

  private:
    static void check(int rc) {
        if (rc != 0) throw std::runtime_error(std::string(ts_last_error()));
    }
    std::unique_ptr<ts_periodic, void (*)(ts_periodic *)> loop_;
};

void print_stats_block(const std::string &title, const ts_stats &s) {
    const double period = s.period_ns / 1e3, mean = s.period_mean_ns / 1e3;
    const double dev = s.period_stddev_ns / 1e3;
    const double lo = s.period_min_ns / 1e3, hi = s.period_max_ns / 1e3;
    std::printf("============ %s ============\n", title.c_str());
    std::printf("%-13s: %15llu\n", "Sample Size",
                static_cast<unsigned long long>(s.period_samples));
    std::printf("%-13s: %15.6f us (%.3f Hz)\n", "Task Period", period, 1e6 / period);
    std::printf("%-13s: %15.6f us (%.3f Hz)\n", "mean", mean, mean > 0 ? 1e6 / mean : 0.0);
    std::printf("%-13s: %15.6f us\n", "deviation", dev);
    std::printf("%-13s: %15.6f us\n", "min", lo);
    std::printf("%-13s: %15.6f us\n", "max", hi);
    std::printf("%-13s: %15.6f us\n", "diff min max", hi - lo);
    std::printf("%-13s: %15.6f %%\n", "% deviation", dev / period * 100.0);
    std::printf("%-13s: %15.6f %%\n", "% minmax", (hi - lo) / period * 100.0);
    std::printf("------------------------------\n");
    std::printf("%-13s: %15.3f us (max %.3f us)\n", "latency p99", s.latency_p99_ns / 1e3,
                s.latency_max_ns / 1e3);
    std::printf("%-13s: %15llu\n", "overruns", static_cast<unsigned long long>(s.overruns));
    std::printf("%-13s: %15.1f %%\n", "cpu", s.cpu_percent);
}

}  // namespace

int main(int argc, char **argv) {
    const std::map<std::string, std::pair<ts_strategy, const char *>> strategies{
        {"sleep", {TS_STRATEGY_SLEEP, "SLEEP"}},
        {"busy", {TS_STRATEGY_BUSY, "BUSY WAIT"}},
        {"hybrid", {TS_STRATEGY_HYBRID, "HYBRID"}},
    };
    const unsigned long ticks = argc > 1 ? std::stoul(argv[1]) : 5000;
    const auto chosen = strategies.find(argc > 2 ? argv[2] : "sleep");
    if (ticks < 2 || chosen == strategies.end()) {
        std::fprintf(stderr, "usage: %s [TICKS>=2 [sleep|busy|hybrid]]\n", argv[0]);
        return 2;
    }
    try {
        PeriodicLoop loop(1'000'000, chosen->second.first);  // 1 ms
        loop.try_timer_slack(1);
        for (unsigned long i = 0; i < ticks; ++i) {
            const ts_tick tick = loop.wait();
            (void)tick;  // the periodic work goes here
        }
        print_stats_block(chosen->second.second, loop.stats());
    } catch (const std::exception &e) {
        std::fprintf(stderr, "periodic: %s\n", e.what());
        return 1;
    }
    return 0;
}
