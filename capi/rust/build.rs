//! Links libnubo_c.so from $NUBO_LIB_DIR; else from the repository's build tree
//! (../../build/lib) when it holds one; else from an installed nubo, found through pkg-config
//! (`pkg-config --variable=libdir nubo`, with PKG_CONFIG_PATH as usual). The directory is
//! recorded as an rpath so that tests, examples and binaries of this package run without
//! LD_LIBRARY_PATH.

use std::env;
use std::path::PathBuf;
use std::process::Command;

/// The libdir of the installed nubo that pkg-config knows, if any.
fn from_pkg_config() -> Option<PathBuf> {
    let output = Command::new("pkg-config")
        .args(["--variable=libdir", "nubo"])
        .output()
        .ok()?;
    let dir = String::from_utf8(output.stdout).ok()?;
    let dir = PathBuf::from(dir.trim());
    (output.status.success() && dir.join("libnubo_c.so").exists()).then_some(dir)
}

fn main() {
    println!("cargo:rerun-if-env-changed=NUBO_LIB_DIR");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    println!("cargo:rerun-if-changed=build.rs");

    let build_tree = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"))
        .join("../../build/lib");
    let dir = match env::var_os("NUBO_LIB_DIR") {
        Some(dir) => PathBuf::from(dir),
        None if build_tree.join("libnubo_c.so").exists() => build_tree,
        None => from_pkg_config().unwrap_or(build_tree),
    };
    // An absolute, normalised path: it is baked into the binaries as their rpath.
    let dir = dir.canonicalize().unwrap_or(dir);
    if !dir.join("libnubo_c.so").exists() {
        println!(
            "cargo:warning=no libnubo_c.so in {}, and pkg-config knows no installed nubo: build \
             nubo first (make), install it, or set NUBO_LIB_DIR",
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
