//! How the shipped `tickscope` program is linked, so that less of it becomes resident (the
//! peak RSS of a run; `bench/README.md`, "Lighter than cyclictest?"). Only a build of the
//! `dist` profile (`scripts/dist.sh`) is linked this way; development, test and ordinary
//! release builds are linked as cargo links any program. The layout names
//! functions by their v0 symbol names, so a dist build without
//! `-C symbol-mangling-version=v0` in its RUSTFLAGS stops here with the reason, rather than
//! linking a program whose layout matches nothing (docs/dist.md).
//!
//! - `link/startup-text.ld` places the functions a `tickscope run` executes together before
//!   the rest of the code. Linux maps up to 64 KiB of file pages around every page fault
//!   (fault-around, `mm/memory.c`), so the code that runs, scattered over the 5 MB program,
//!   made 2.6 MB of it resident; laid out together, about 1.1 MB (1.4 MB with glibc's code,
//!   which the script names by archive member when glibc is linked statically). The script
//!   only adds an output section (`INSERT BEFORE .text`), which lld and GNU ld accept. Set
//!   `TICKSCOPE_NO_TEXT_LAYOUT=1` to link without it (for example with a linker that reads no
//!   linker scripts, such as mold).
//! - `-z pack-relative-relocs` stores the program's ~7 000 relative relocations as a bitmap
//!   (`DT_RELR`, a few KiB instead of 177 KiB that the dynamic loader reads at start-up).
//!   glibc applies `DT_RELR` from version 2.36 on, so the option is given only when the
//!   machine that builds has glibc 2.36 or later and builds for itself (then the program
//!   needs that glibc, as it already needs the one it was linked against).
//! - glibc is linked statically (a static PIE, `-static-pie`), when the machine that builds
//!   for itself has the static archives (`libc.a` and the rest, from libc6-dev or
//!   glibc-static, and GCC's `libgcc_eh.a`). A shared libc is mapped whole and the code a run
//!   touches in it is scattered over 1.9 MB: 1.3 MB of libc, 0.3 MB of libm, the loader and
//!   libgcc_s became resident for a run. Linked statically, only the functions the program
//!   calls are in it. The program keeps ASLR (PIE), full RELRO and the vDSO clock reads; a
//!   glibc security update reaches it only when it is built again. Set
//!   `TICKSCOPE_DYNAMIC_GLIBC=1` to link against the shared libraries instead.
//!
//! Rust's own way to link glibc statically, `-C target-feature=+crt-static`, applies to every
//! crate a build compiles for the target; without an explicit `--target` that includes the
//! procedural macros, which cannot be linked statically, and the C library `libtickscope.so`.
//! So only this binary's link is changed: `-static-pie` (GCC selects `rcrt1.o` and no dynamic
//! loader), and a directory, searched before the system's, whose `libc.a`, `libgcc_s.a`, …
//! are linker scripts naming the static archives. rustc asks for the libraries with
//! `-Bdynamic` (`-lgcc_s -lutil -lrt -lpthread -lm -ldl -lc`), and a linker takes, directory
//! by directory, whichever of `libX.so` or `libX.a` it finds first, so it finds these. The
//! result is the link that `crt-static` makes (`-lc -lgcc_eh -lgcc`); a test checks the
//! program needs no shared library.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The libraries rustc asks for when it links a Rust program for linux-gnu (the standard
/// library's `libc` and `unwind` crates), each with the static archives it stands for.
const SHADOWED: [(&str, &[&str]); 7] = [
    ("gcc_s", &["libgcc_eh.a", "libgcc.a", "libc.a"]),
    ("util", &["libutil.a"]),
    ("rt", &["librt.a"]),
    ("pthread", &["libpthread.a"]),
    ("m", &["libm.a"]),
    ("dl", &["libdl.a"]),
    ("c", &["libc.a", "libgcc_eh.a", "libgcc.a"]),
];

fn main() {
    println!("cargo:rerun-if-changed=link/startup-text.ld");
    println!("cargo:rerun-if-env-changed=TICKSCOPE_NO_TEXT_LAYOUT");
    let var = |name: &str| env::var(name).unwrap_or_default();
    // Cargo tells a build script only "debug" or "release" (PROFILE); the profile's own name
    // is the folder it builds in: OUT_DIR is `<target>[/<triple>]/dist/build/<package>/out`.
    let out_dir = var("OUT_DIR");
    let profile = Path::new(&out_dir)
        .ancestors()
        .nth(3)
        .and_then(Path::file_name);
    if profile.is_none_or(|p| p != "dist") || var("CARGO_CFG_TARGET_OS") != "linux" {
        return;
    }
    let v0 = var("CARGO_ENCODED_RUSTFLAGS")
        .split('\x1f')
        .any(|flag| flag.ends_with("symbol-mangling-version=v0"));
    if !v0 {
        eprintln!(
            "the dist profile is built without '-C symbol-mangling-version=v0' in RUSTFLAGS : the \
             start-up layout (link/startup-text.ld) would match none of the program's \
             functions. Build with scripts/dist.sh, which adds it to RUSTFLAGS."
        );
        std::process::exit(1);
    }
    if env::var_os("TICKSCOPE_NO_TEXT_LAYOUT").is_none() {
        let script = std::path::Path::new(&var("CARGO_MANIFEST_DIR")).join("link/startup-text.ld");
        println!(
            "cargo:rustc-link-arg-bin=tickscope=-Wl,-T,{}",
            script.display()
        );
    }
    let native_gnu = var("CARGO_CFG_TARGET_ENV") == "gnu" && var("HOST") == var("TARGET");
    if native_gnu && glibc_has_relr() {
        println!("cargo:rustc-link-arg-bin=tickscope=-Wl,-z,pack-relative-relocs");
    }
    println!("cargo:rerun-if-env-changed=TICKSCOPE_DYNAMIC_GLIBC");
    if native_gnu && env::var_os("TICKSCOPE_DYNAMIC_GLIBC").is_none() {
        let dir = Path::new(&var("OUT_DIR")).join("static-glibc");
        if shadow_libraries(&dir).is_some() {
            println!("cargo:rustc-link-arg-bin=tickscope=-static-pie");
            println!("cargo:rustc-link-arg-bin=tickscope=-L{}", dir.display());
        } else {
            println!(
                "cargo:warning=glibc is linked dynamically: the C compiler finds no libc.a, \
                 libgcc_eh.a or rcrt1.o (libc6-dev, glibc-static)"
            );
        }
    }
}

/// Writes into `dir` one linker script per library of [`SHADOWED`], naming its static
/// archives by the paths the C compiler finds them at. `None` (and nothing linked
/// statically) when an archive or `rcrt1.o`, the start file of a static PIE, is missing.
fn shadow_libraries(dir: &Path) -> Option<()> {
    println!("cargo:rerun-if-env-changed=CC");
    let cc = env::var("CC").unwrap_or_else(|_| "cc".into());
    let find = |name: &str| -> Option<PathBuf> {
        let out = Command::new(&cc)
            .arg(format!("-print-file-name={name}"))
            .output()
            .ok()?;
        // Found: an absolute path; not found: the name unchanged.
        let path = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
        (path.is_absolute() && path.exists()).then(|| path.canonicalize().unwrap_or(path))
    };
    find("rcrt1.o")?;
    fs::create_dir_all(dir).ok()?;
    for (lib, archives) in SHADOWED {
        let mut script =
            String::from("/* Written by crates/cli/build.rs: link statically. */\nGROUP (");
        for archive in archives {
            script.push_str(&format!(" \"{}\"", find(archive)?.display()));
        }
        script.push_str(" )\n");
        fs::write(dir.join(format!("lib{lib}.a")), script).ok()?;
    }
    Some(())
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
