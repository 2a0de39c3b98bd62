//! A synthetic latency model with the structure real runs have — a body whose level drifts
//! from second to second, and bursts of interference that hit a few consecutive wake-ups —
//! from which `bench/gate.sh` builds its A/A and planted pairs and the CI fixtures were
//! recorded. Deterministic for a given seed.
//!
//! Per one-second window `t` of `rate` wake-ups:
//! * body: `body_ns · exp(0.05·z_t + 0.12·e)` with `z_t` an AR(1) series (`z_t = 0.8·z_(t−1) +
//!   0.6·e_t`, unit variance) — autocorrelated between windows — and `e` standard normal per
//!   wake-up;
//! * interference: a Poisson number of bursts per window with mean `bursts_per_window`,
//!   itself raised ×3 in windows where `z_t > 1` (noisy seconds cluster); each burst lifts
//!   1–5 consecutive wake-ups to `body + stall_ns · u^(−1/3)` (Pareto, shape 3), `u`
//!   uniform.
//!
//! `stall_scale` multiplies every stall: the planted interference of the power bench.

use crate::bootstrap::{rng, GateRng};
use crate::series::{Series, Window};
use hdrhistogram::Histogram;
use rand::RngExt;
use tickscope_engine::time::Nanos;

/// The model's parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// Wake-ups per window.
    pub rate: u64,
    /// Windows.
    pub windows: usize,
    /// Median of the body, ns.
    pub body_ns: f64,
    /// Mean interference bursts per window.
    pub bursts_per_window: f64,
    /// Scale of a stall, ns.
    pub stall_ns: f64,
    /// Multiplier of every stall (1 for the baseline model).
    pub stall_scale: f64,
}

impl Default for Model {
    /// 1 kHz for 20 minutes (the default run length), body 5 µs, 0.4 bursts a second of
    /// 40 µs-scale stalls.
    fn default() -> Self {
        Model {
            rate: 1000,
            windows: 1200,
            body_ns: 5_000.0,
            bursts_per_window: 0.4,
            stall_ns: 40_000.0,
            stall_scale: 1.0,
        }
    }
}

fn normal(r: &mut GateRng) -> f64 {
    // Box–Muller.
    let u1: f64 = r.random::<f64>().max(f64::MIN_POSITIVE);
    let u2: f64 = r.random();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

fn poisson(r: &mut GateRng, mean: f64) -> u32 {
    // Knuth's product of uniforms; means here are small.
    let limit = (-mean).exp();
    let (mut k, mut p) = (0, 1.0);
    loop {
        p *= r.random::<f64>();
        if p <= limit {
            return k;
        }
        k += 1;
    }
}

impl Model {
    /// One run's windows as HdrHistograms (ns, 2 significant figures like tickscope's).
    ///
    /// # Panics
    /// Never: the histogram's bounds are constants that `hdrhistogram` accepts.
    pub fn histograms(&self, seed: u64) -> Vec<Histogram<u64>> {
        let mut r = rng(seed);
        let mut z = normal(&mut r);
        let mut out = Vec::with_capacity(self.windows);
        let mut lat = vec![0.0f64; self.rate as usize];
        for _ in 0..self.windows {
            z = 0.8 * z + 0.6 * normal(&mut r);
            let level = self.body_ns * (0.05 * z).exp();
            for l in lat.iter_mut() {
                *l = level * (0.12 * normal(&mut r)).exp();
            }
            let mean = self.bursts_per_window * if z > 1.0 { 3.0 } else { 1.0 };
            for _ in 0..poisson(&mut r, mean) {
                let at = r.random_range(0..lat.len());
                let len = r.random_range(1..=5usize);
                let u: f64 = r.random::<f64>().max(1e-12);
                let stall = self.stall_ns * self.stall_scale * u.powf(-1.0 / 3.0);
                for l in lat.iter_mut().skip(at).take(len) {
                    *l += stall;
                }
            }
            let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 2)
                .expect("constant bounds");
            for &l in &lat {
                h.saturating_record(l.max(1.0) as u64);
            }
            out.push(h);
        }
        out
    }

    /// One run as a [`Series`] with window histograms, as an interval log would give it.
    pub fn series(&self, seed: u64, name: &str) -> Series {
        let windows = self
            .histograms(seed)
            .iter()
            .map(|h| Window {
                histogram: h
                    .iter_recorded()
                    .map(|v| {
                        (
                            Nanos::try_from(v.value_iterated_to()).unwrap_or(Nanos::MAX),
                            v.count_at_value(),
                        )
                    })
                    .collect(),
                ..Window::default()
            })
            .collect();
        Series::from_histogram_windows(name.to_string(), "hlog", windows, Vec::new())
    }
}
