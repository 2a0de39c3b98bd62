//! How the `tickscope` program is linked, so that less of it becomes resident (the peak RSS
//! of a run; `bench/README.md`, "Lighter than cyclictest?"):
//!
//! - `link/startup-text.ld` places the functions a `tickscope run` executes together before
//!   the rest of the code. Linux maps up to 64 KiB of file pages around every page fault
//!   (fault-around, `mm/memory.c`), so the code that runs, scattered over the 5 MB program,
//!   made 2.6 MB of it resident; laid out together, about 1.1 MB. The script only adds an
//!   output section (`INSERT BEFORE .text`), which lld and GNU ld accept. Set
//!   `TICKSCOPE_NO_TEXT_LAYOUT=1` to link without it (for example with a linker that reads no
//!   linker scripts, such as mold).
//! - `-z pack-relative-relocs` stores the program's ~7 000 relative relocations as a bitmap
//!   (`DT_RELR`, a few KiB instead of 177 KiB that the dynamic loader reads at start-up).
//!   glibc applies `DT_RELR` from version 2.36 on, so the option is given only when the
//!   machine that builds has glibc 2.36 or later and builds for itself (then the program
//!   needs that glibc, as it already needs the one it was linked against).

use std::env;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=link/startup-text.ld");
    println!("cargo:rerun-if-env-changed=TICKSCOPE_NO_TEXT_LAYOUT");
    let var = |name: &str| env::var(name).unwrap_or_default();
    if var("CARGO_CFG_TARGET_OS") != "linux" {
        return;
    }
    if env::var_os("TICKSCOPE_NO_TEXT_LAYOUT").is_none() {
        let script = std::path::Path::new(&var("CARGO_MANIFEST_DIR")).join("link/startup-text.ld");
        println!(
            "cargo:rustc-link-arg-bin=tickscope=-Wl,-T,{}",
            script.display()
        );
    }
    if var("CARGO_CFG_TARGET_ENV") == "gnu" && var("HOST") == var("TARGET") && glibc_has_relr() {
        println!("cargo:rustc-link-arg-bin=tickscope=-Wl,-z,pack-relative-relocs");
    }
}

/// Whether this machine's glibc (`getconf GNU_LIBC_VERSION`, "glibc 2.36") is 2.36 or later,
/// the first to apply `DT_RELR` relocations. False when it cannot tell.
fn glibc_has_relr() -> bool {
    let Ok(out) = Command::new("getconf").arg("GNU_LIBC_VERSION").output() else {
        return false;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let mut version = text
        .trim()
        .trim_start_matches("glibc ")
        .split('.')
        .map(|n| n.parse::<u32>().ok());
    matches!(
        (version.next().flatten(), version.next().flatten()),
        (Some(major), Some(minor)) if (major, minor) >= (2, 36)
    )
}
