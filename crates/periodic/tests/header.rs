//! `include/tickscope.h` is what cbindgen generates from `src/ffi.rs` and `src/ffi_executive.rs`
//! today.
//!
//! Set `TICKSCOPE_BLESS=1` to rewrite the committed header instead of comparing.

use std::path::Path;

/// cbindgen closes its C++ guards with `// …` comments, which C89 does not have (gcc
/// `-std=c89 -pedantic` warns "extra tokens at end of #endif directive"); the header keeps
/// to `/* … */` so that it compiles cleanly under every C standard.
fn c89_comments(header: &str) -> String {
    header
        .lines()
        .map(|line| match line.split_once("//") {
            Some((code, comment)) if line.starts_with('#') || line.starts_with('}') => {
                format!("{}/* {} */", code, comment.trim())
            }
            _ => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

#[test]
fn header_compiles_as_c89_without_warnings() {
    let gcc = std::process::Command::new("gcc").arg("--version").output();
    if gcc.is_err() {
        eprintln!("skipped: gcc is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("c89.c");
    std::fs::write(
        &src,
        "#include \"tickscope.h\"\nint main(void) { return 0; }\n",
    )
    .unwrap();
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../include");
    let out = std::process::Command::new("gcc")
        .args([
            "-std=c89",
            "-pedantic",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-fsyntax-only",
            "-I",
        ])
        .arg(&include)
        .arg(&src)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

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
    let generated = c89_comments(&String::from_utf8(generated).unwrap());
    let header = crate_dir.join("../../include/tickscope.h");
    if std::env::var_os("TICKSCOPE_BLESS").is_some() {
        std::fs::write(&header, &generated).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&header).unwrap_or_default();
    assert!(
        committed == generated,
        "include/tickscope.h is stale: run \
         TICKSCOPE_BLESS=1 cargo test -p tickscope --test header"
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
