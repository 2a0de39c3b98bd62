//! The font every plot is drawn with: DejaVu Sans, embedded in the program (no system
//! fonts are looked up at run time). License: `assets/DejaVuSans-LICENSE.txt`.

use plotters::style::{register_font, FontStyle};
use std::sync::Once;

/// The family name plots ask for; SVG output names it, so browsers use their own sans-serif.
pub const FAMILY: &str = "sans-serif";

static DEJAVU_SANS: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");
static REGISTER: Once = Once::new();

/// Registers the embedded font with plotters (once per process).
///
/// # Panics
/// If the embedded font cannot be parsed, which a test rules out.
pub fn ensure() {
    REGISTER.call_once(|| {
        assert!(
            register_font(FAMILY, FontStyle::Normal, DEJAVU_SANS).is_ok(),
            "the embedded DejaVu Sans font parses"
        );
    });
}
