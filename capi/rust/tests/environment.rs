//! The environment's check, alone in its test binary: it changes a variable, which no other
//! test thread may read meanwhile.

use nubo::Status;

#[test]
fn a_malformed_environment_is_named() {
    assert!(nubo::check_environment().is_ok());
    std::env::set_var("NUBO_SHM_DISABLE", "maybe");
    let e = nubo::check_environment().expect_err("NUBO_SHM_DISABLE=maybe accepted");
    std::env::remove_var("NUBO_SHM_DISABLE");
    assert_eq!(e.status, Status::InvalidArgument);
    assert!(e.message.contains("NUBO_SHM_DISABLE='maybe'"), "{e}");
    assert!(nubo::check_environment().is_ok());
}
