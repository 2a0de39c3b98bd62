//! Gives `libtickscope.so` a SONAME, `libtickscope.so.<major>`, so programs linked against it
//! record which ABI they need and the dynamic loader can keep several majors side by side
//! (ld.so(8); "Program Library HOWTO", D. Wheeler, section 3.1.1, <https://tldp.org/HOWTO/Program-Library-HOWTO/shared-libraries.html>).
//! Installed, the file is `libtickscope.so.<major>` with a `libtickscope.so` link for the
//! linker (docs/library.md, "C and C++").

fn main() {
    let major = std::env::var("CARGO_PKG_VERSION_MAJOR").unwrap_or_else(|_| "0".into());
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libtickscope.so.{major}");
    println!("cargo:rerun-if-changed=build.rs");
}
