//! Links libnubo_c.so from $NUBO_LIB_DIR, else from the repository's build tree (../../build/lib),
//! and records that directory as an rpath so that tests, examples and binaries of this package
//! run without LD_LIBRARY_PATH.

use std::env;
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=NUBO_LIB_DIR");
    println!("cargo:rerun-if-changed=build.rs");

    let dir = match env::var_os("NUBO_LIB_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"))
            .join("../../build/lib"),
    };
    // An absolute, normalised path: it is baked into the binaries as their rpath.
    let dir = dir.canonicalize().unwrap_or(dir);
    if !dir.join("libnubo_c.so").exists() {
        println!(
            "cargo:warning=no libnubo_c.so in {}: build nubo first (make), or set NUBO_LIB_DIR",
            dir.display()
        );
    }

    println!("cargo:rustc-link-search=native={}", dir.display());
    println!("cargo:rustc-link-lib=dylib=nubo_c");
    // rustc-link-arg reaches only this package's own binaries, tests and examples; a crate that
    // depends on nubo gets the directory as DEP_NUBO_C_LIB_DIR to set its own rpath.
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
    println!("cargo:lib_dir={}", dir.display());
}
