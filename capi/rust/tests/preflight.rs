//! The preflight and the health report through the safe wrapper, on simulated devices.

use nubo::{discover, DiscoverOptions, HealthOptions, PreflightOptions, Status, Verdict};

fn sim(spec: &str) -> nubo::DeviceReport {
    discover(&DiscoverOptions {
        sim_devices: Some(spec.to_string()),
        probe_cuda: false,
        ..Default::default()
    })
    .expect("discover")
}

fn fast() -> PreflightOptions {
    PreflightOptions {
        budget_seconds: Some(1.0),
        host: Some(false),
        ..Default::default()
    }
}

#[test]
fn a_gpu_trained_down_to_pcie_gen3_x8_is_degraded() {
    let report = sim("1xH100-SXM5-80GB,1xH100-SXM5-80GB:pcie=3x8");
    let check = nubo::preflight(&report, &[], &fast()).expect("preflight");
    assert_eq!(check.verdict, Verdict::Degraded);
    assert_eq!(check.exit_status, 4);
    assert!(check.json.contains("PCIe Gen3 x8"), "{}", check.json);
    let first = nubo::preflight(&report, &[0], &fast()).expect("preflight of GPU 0");
    assert_eq!(first.verdict, Verdict::Healthy);
    let err = nubo::preflight(&report, &[5], &fast()).expect_err("no GPU 5");
    assert_eq!(err.status, Status::InvalidArgument);
}

#[test]
fn a_malformed_xid_policy_is_refused_naming_its_line() {
    let dir = std::env::temp_dir().join(format!("nubo-rust-policy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let policy = dir.join("policy.txt");
    std::fs::write(&policy, "79 fail drain-node\n79 explode\n").expect("write");
    let report = sim("1xT4");
    let options = HealthOptions {
        xid_policy_file: Some(policy.clone()),
        kernel_log_file: Some("/dev/null".into()),
        ..Default::default()
    };
    let err = nubo::health(&report, &options).expect_err("a bad policy");
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(err.status, Status::InvalidArgument);
    assert!(err.message.contains("policy.txt:2"), "{}", err.message);
}

#[test]
fn simulated_gpus_reach_no_nic_through_the_pcie_tree() {
    let report = sim("2xT4");
    for gpu in 0..2 {
        assert_eq!(report.preferred_nic(gpu), None);
        for nic in 0..report.nics().len() {
            let link = report.gpu_nic(gpu, nic).expect("in range");
            assert_eq!(link.name, "?");
        }
        assert!(report.gpu_nic(gpu, report.nics().len()).is_none());
    }
}
