//! Axes with linear or base-10 logarithmic scales, drawn on plain linear coordinates: a
//! value is mapped into axis space (its log10 on a log axis), ticks are placed at round
//! values (1, 2, 5 × 10^k) and labelled with the real value. One code path for every chart.

/// How values are laid out along an axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Evenly.
    Linear,
    /// By powers of ten (values must be > 0).
    Log10,
}

/// One axis: scale, range (real values), description and label format.
#[derive(Debug, Clone)]
pub struct Axis {
    /// Linear or logarithmic.
    pub scale: Scale,
    /// Lowest real value shown.
    pub lo: f64,
    /// Highest real value shown.
    pub hi: f64,
    /// The axis title, with its unit (`wake-up latency [µs]`).
    pub desc: String,
    /// Formats a tick's real value.
    pub format: fn(f64) -> String,
}

/// The largest round value (1, 2 or 5 × 10^k) at most `x` (> 0).
pub fn round_down(x: f64) -> f64 {
    let p = 10f64.powf(x.log10().floor());
    [5.0, 2.0, 1.0]
        .into_iter()
        .map(|m| m * p)
        .find(|v| *v <= x * (1.0 + 1e-9))
        .unwrap_or(p)
}

/// The smallest round value (1, 2 or 5 × 10^k) at least `x` (> 0).
pub fn round_up(x: f64) -> f64 {
    let p = 10f64.powf(x.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * p)
        .find(|v| *v >= x * (1.0 - 1e-9))
        .unwrap_or(10.0 * p)
}

/// A number as a tick label: at most 3 significant digits, no trailing zeros.
pub fn number(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let digits = (2 - v.abs().log10().floor() as i32).clamp(0, 6) as usize;
    let s = format!("{v:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

impl Axis {
    /// A latency axis in µs for `values_us`: logarithmic when the positive values span more
    /// than a factor of 20 (values at or below zero — a wake-up right at or before its
    /// expiry — are then drawn on the bottom edge), else linear from 0 (or below, for early
    /// wake-ups).
    pub fn latency(values_us: impl IntoIterator<Item = f64>, desc: &str) -> Axis {
        let (mut lo, mut hi, mut lo_pos) = (f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY);
        for v in values_us {
            lo = lo.min(v);
            hi = hi.max(v);
            if v > 0.0 {
                lo_pos = lo_pos.min(v);
            }
        }
        if !lo.is_finite() || !hi.is_finite() {
            (lo, hi) = (0.0, 1.0);
        }
        if lo_pos.is_finite() && hi / lo_pos > 20.0 {
            return Axis {
                scale: Scale::Log10,
                lo: round_down(lo_pos * 0.9),
                hi: round_up(hi * 1.1),
                desc: desc.into(),
                format: number,
            };
        }
        let hi = if hi > lo { hi } else { lo + 1.0 };
        let pad = (hi - lo.min(0.0)) * 0.05;
        Axis {
            scale: Scale::Linear,
            lo: if lo >= 0.0 { 0.0 } else { lo - pad },
            hi: hi + pad,
            desc: desc.into(),
            format: number,
        }
    }

    /// A latency axis in µs for `values_us` that is always logarithmic (values at or below
    /// zero drawn on the bottom edge): the rule of the per-second plots, so that the plots
    /// of two runs read the same way whatever their spread.
    pub fn latency_log(values_us: impl IntoIterator<Item = f64>, desc: &str) -> Axis {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for v in values_us.into_iter().filter(|v| *v > 0.0) {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        if !lo.is_finite() {
            (lo, hi) = (1.0, 10.0);
        }
        Axis {
            scale: Scale::Log10,
            lo: round_down(lo * 0.9),
            hi: round_up((hi * 1.1).max(lo * 10.0)),
            desc: desc.into(),
            format: number,
        }
    }

    /// The same axis with the top `fraction` (0 ..= 0.9) of its height left free above the
    /// data, for a legend.
    pub fn with_headroom(mut self, fraction: f64) -> Axis {
        let keep = 1.0 - fraction.clamp(0.0, 0.9);
        self.hi = match self.scale {
            Scale::Log10 => {
                let (lo, hi) = (self.lo.log10(), self.hi.log10());
                round_up(10f64.powf(lo + (hi - lo) / keep))
            }
            Scale::Linear => self.lo + (self.hi - self.lo) / keep,
        };
        self
    }

    /// Maps a real value into axis space.
    pub fn map(&self, v: f64) -> f64 {
        match self.scale {
            Scale::Linear => v,
            // Values below the axis (zero, negative) sit on its bottom edge.
            Scale::Log10 => v.max(self.lo).log10(),
        }
    }

    /// The range in axis space.
    pub fn range(&self) -> std::ops::Range<f64> {
        self.map(self.lo)..self.map(self.hi)
    }

    /// Tick positions in axis space: round values; on a log axis 1, 2, 5 × 10^k, or only
    /// the powers of ten when those would be too many.
    pub fn ticks(&self) -> Vec<f64> {
        match self.scale {
            Scale::Linear => {
                let step = round_up((self.hi - self.lo) / 8.0).max(f64::MIN_POSITIVE);
                let first = (self.lo / step).ceil() as i64;
                let last = (self.hi / step).floor() as i64;
                (first..=last).map(|k| k as f64 * step).collect()
            }
            Scale::Log10 => {
                let (a, b) = (
                    self.lo.log10().floor() as i32,
                    self.hi.log10().ceil() as i32,
                );
                let within = |v: &f64| *v >= self.lo * (1.0 - 1e-9) && *v <= self.hi * (1.0 + 1e-9);
                let decades: Vec<f64> = (a..=b).map(|e| 10f64.powi(e)).filter(within).collect();
                let all: Vec<f64> = (a..=b)
                    .flat_map(|e| [1.0, 2.0, 5.0].map(|m| m * 10f64.powi(e)))
                    .filter(within)
                    .collect();
                let chosen = if all.len() <= 12 { all } else { decades };
                chosen.into_iter().map(|v| v.log10()).collect()
            }
        }
    }

    /// The label of a tick given in axis space.
    pub fn label(&self, axis_value: f64) -> String {
        let real = match self.scale {
            Scale::Linear => axis_value,
            Scale::Log10 => 10f64.powf(axis_value),
        };
        (self.format)(real)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_to_1_2_5() {
        assert_eq!(round_up(3.0), 5.0);
        assert_eq!(round_up(0.011), 0.02);
        assert_eq!(round_down(7.0), 5.0);
        assert_eq!(round_down(1.0), 1.0);
        assert_eq!(round_up(200.0), 200.0);
    }

    #[test]
    fn labels_are_short() {
        assert_eq!(number(1000.0), "1000");
        assert_eq!(number(2.5), "2.5");
        assert_eq!(number(0.05), "0.05");
        assert_eq!(number(12.34), "12.3");
    }

    #[test]
    fn latency_axes_pick_their_scale() {
        let log = Axis::latency([5.0, 6000.0], "x");
        assert_eq!(log.scale, Scale::Log10);
        let labels: Vec<String> = log.ticks().iter().map(|t| log.label(*t)).collect();
        assert_eq!(
            labels,
            ["2", "5", "10", "20", "50", "100", "200", "500", "1000", "2000", "5000", "10000"]
        );
        let lin = Axis::latency([-3.0, 40.0], "x");
        assert_eq!(lin.scale, Scale::Linear);
        assert!(lin.ticks().contains(&0.0));
        // A busy wait: 0 ns at best, 3.5 ms at worst — still logarithmic, 0 on the edge.
        let busy = Axis::latency([0.0, 0.025, 3470.0], "x");
        assert_eq!(busy.scale, Scale::Log10);
        assert_eq!(busy.map(0.0), busy.range().start);
    }
}
