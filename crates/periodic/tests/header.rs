//! `include/tickscope.h` is what cbindgen generates from `src/ffi.rs` and `src/ffi_executive.rs`
//! today.
//!
//! Set `TICKSCOPE_BLESS=1` to rewrite the committed header instead of comparing.

use std::path::Path;

#[test]
fn committed_header_is_up_to_date() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).unwrap();
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        .with_config(config)
        .with_src(crate_dir.join("src/ffi.rs"))
        .with_src(crate_dir.join("src/ffi_executive.rs"))
        .generate()
        .expect("cbindgen parses src/ffi.rs")
        .write(&mut generated);
    let generated = String::from_utf8(generated).unwrap();
    let header = crate_dir.join("../../include/tickscope.h");
    if std::env::var_os("TICKSCOPE_BLESS").is_some() {
        std::fs::write(&header, &generated).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&header).unwrap_or_default();
    assert!(
        committed == generated,
        "include/tickscope.h is stale: run \
         TICKSCOPE_BLESS=1 cargo test -p tickscope-periodic --test header"
    );
    for name in [
        "ts_periodic_new",
        "ts_periodic_wait",
        "ts_periodic_stats",
        "ts_periodic_free",
        "ts_last_error",
        "TS_STRATEGY_HYBRID",
        "} ts_tick;",
        "} ts_stats;",
        "ts_executive_add",
        "ts_task_fn",
        "} ts_release;",
    ] {
        assert!(generated.contains(name), "{name} missing from the header");
    }
}
