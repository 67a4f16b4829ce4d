//! The two lines an application depending on the nubo crate adds to its build.rs: nubo's build
//! script says where libnubo_c.so is (DEP_NUBO_C_LIB_DIR), and this makes it the binary's rpath,
//! so that it starts without LD_LIBRARY_PATH.
fn main() {
    if let Ok(dir) = std::env::var("DEP_NUBO_C_LIB_DIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir);
    }
}
