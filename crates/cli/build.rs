//! Links the `tickscope` program with `link/startup-text.ld`, which places the functions a
//! `tickscope run` executes together before the rest of the code.
//!
//! Linux maps up to 64 KiB of file pages around every page fault (fault-around,
//! `mm/memory.c`), so code that runs, scattered over the 5 MB program, made 2.6 MB of it
//! resident; laid out together, about 1.2 MB (`bench/README.md`, "Peak RSS"). The script only
//! adds an output section (`INSERT BEFORE .text`), which lld and GNU ld accept. Set
//! `TICKSCOPE_NO_TEXT_LAYOUT=1` to link without it (for example with a linker that reads no
//! linker scripts, such as mold).

fn main() {
    println!("cargo:rerun-if-changed=link/startup-text.ld");
    println!("cargo:rerun-if-env-changed=TICKSCOPE_NO_TEXT_LAYOUT");
    let linux = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    if !linux || std::env::var_os("TICKSCOPE_NO_TEXT_LAYOUT").is_some() {
        return;
    }
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let script = std::path::Path::new(&dir).join("link/startup-text.ld");
    println!(
        "cargo:rustc-link-arg-bin=tickscope=-Wl,-T,{}",
        script.display()
    );
}
