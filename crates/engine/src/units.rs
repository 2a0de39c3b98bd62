//! Nanoseconds in units that read well: `850 ns`, `12.3 µs`, `1.02 ms`, `2.50 s`.

/// Formats a duration in ns with a unit chosen by its magnitude and 3 significant digits
/// (whole ns below 1 µs).
pub fn ns(v: f64) -> String {
    let a = v.abs();
    let (scaled, unit) = if a < 1e3 {
        return format!("{v:.0} ns");
    } else if a < 1e6 {
        (v / 1e3, "µs")
    } else if a < 1e9 {
        (v / 1e6, "ms")
    } else {
        (v / 1e9, "s")
    };
    let s = scaled.abs();
    let decimals = if s < 10.0 {
        2
    } else if s < 100.0 {
        1
    } else {
        0
    };
    format!("{scaled:.decimals$} {unit}")
}

/// [`ns`] for an integer ns value.
pub fn ns_i(v: i64) -> String {
    ns(v as f64)
}

/// A value in µs with one decimal, no unit (for columns labelled `[µs]`).
pub fn us(v: f64) -> String {
    format!("{:.1}", v / 1e3)
}

/// A period given in ns as a human interval (`1 ms`, `11.8 ms (85.0 Hz)`): the frequency is
/// added when the period is not a round number of µs.
pub fn interval(period_ns: i64) -> String {
    if period_ns % 1000 == 0 {
        ns_i(period_ns)
    } else {
        format!("{} ({:.1} Hz)", ns_i(period_ns), 1e9 / period_ns as f64)
    }
}

/// A signed percentage with `decimals` decimals and a unit: `+0.52 %`, `−3.10 %` (with the
/// minus sign U+2212, as the terminal summary writes it), `0.00 %` when it rounds to zero.
/// The sign comes from the value alone, so a deviation the other way than usual (a shortest
/// period longer than the nominal one) reads `+…`, never a double sign.
pub fn signed_percent(v: f64, decimals: usize) -> String {
    let magnitude = format!("{:.decimals$}", v.abs());
    let sign = if magnitude.bytes().all(|b| b == b'0' || b == b'.') {
        ""
    } else if v < 0.0 {
        "−"
    } else if v > 0.0 {
        "+"
    } else {
        "" // NaN
    };
    format!("{sign}{magnitude} %")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_units() {
        assert_eq!(ns(850.0), "850 ns");
        assert_eq!(ns(12_345.0), "12.3 µs");
        assert_eq!(ns(1_020_000.0), "1.02 ms");
        assert_eq!(ns(2_500_000_000.0), "2.50 s");
        assert_eq!(ns(-3_000.0), "-3.00 µs");
        assert_eq!(ns(187_000.0), "187 µs");
        assert_eq!(interval(1_000_000), "1.00 ms");
        assert_eq!(interval(11_764_706), "11.8 ms (85.0 Hz)");
    }

    #[test]
    fn signed_percentages_have_exactly_one_sign() {
        assert_eq!(signed_percent(-0.5, 2), "−0.50 %");
        assert_eq!(signed_percent(0.52, 2), "+0.52 %");
        assert_eq!(signed_percent(300_900.0, 2), "+300900.00 %");
        assert_eq!(signed_percent(-300_900.0, 2), "−300900.00 %");
        assert_eq!(signed_percent(0.0, 2), "0.00 %");
        assert_eq!(signed_percent(-0.001, 2), "0.00 %");
        assert_eq!(signed_percent(f64::NAN, 2), "NaN %");
    }
}
