//! Integration tests of the safe wrapper, on simulated devices (set through the options, so the
//! tests do not depend on the environment; CTest also clears the NUBO_* variables).

use nubo::{discover, DiscoverOptions, LinkKind, SelectRequest, Status};

const GIB: u64 = 1 << 30;
const A100: &str = "A100-SXM4-80GB";

fn sim(spec: &str) -> DiscoverOptions {
    DiscoverOptions {
        sim_devices: Some(spec.to_string()),
        probe_cuda: false,
        ..Default::default()
    }
}

#[test]
fn version_matches_the_crate() {
    assert_eq!(nubo::version(), env!("CARGO_PKG_VERSION"));
    assert_eq!(nubo::abi_version(), nubo::ffi::NUBO_ABI_VERSION);
}

#[test]
fn eight_a100_on_nvlink() {
    let report = discover(&sim(&format!("8x{A100}"))).expect("discover");
    assert_eq!(report.devices().len(), 8);
    for (i, d) in report.devices().iter().enumerate() {
        assert_eq!(usize::try_from(d.index), Ok(i));
        assert_eq!(d.backend, nubo::Backend::Sim);
        assert_eq!(d.model, A100);
        assert!(d.name.contains(A100), "{}", d.name);
        assert_eq!(d.memory_total, 80 * GIB);
        assert_eq!(d.compute_capability(), (8, 0));
    }
    for i in 0..8 {
        for j in 0..8 {
            let link = report.link(i, j).expect("in range");
            if i == j {
                assert_eq!((link.kind, link.name.as_str()), (LinkKind::SameDevice, "X"));
            } else {
                assert_eq!(
                    (link.kind, link.nvlinks, link.name.as_str()),
                    (LinkKind::NvLink, 12, "NV12")
                );
            }
        }
    }
    assert!(report.link(0, 8).is_none());
    assert!(
        report.find_diagnosis("no-driver").is_none(),
        "no CUDA probe, no CUDA diagnosis"
    );
}

#[test]
fn pcie_cards_are_not_nvlinked() {
    let report = discover(&sim("2xT4,1xV100-SXM2-16GB")).expect("discover");
    let models: Vec<&str> = report.devices().iter().map(|d| d.model.as_str()).collect();
    assert_eq!(models, ["T4", "T4", "V100-SXM2-16GB"]);
    for (i, row) in report.links().iter().enumerate() {
        for (j, link) in row.iter().enumerate() {
            if i != j {
                assert!(
                    matches!(link.kind, LinkKind::Phb | LinkKind::Sys),
                    "{i}-{j}: {link:?}"
                );
            }
        }
    }
}

#[test]
fn select() {
    let report = discover(&sim(&format!("8x{A100}"))).expect("discover");
    let group = report
        .select(&SelectRequest {
            count: 4,
            min_memory: 40 * GIB,
            min_compute_capability: (8, 0),
        })
        .expect("select");
    assert_eq!(group.len(), 4);
    assert_eq!(
        report
            .select(&SelectRequest {
                count: 0,
                ..Default::default()
            })
            .unwrap()
            .len(),
        8
    );

    for request in [
        SelectRequest {
            count: 9,
            ..Default::default()
        },
        SelectRequest {
            min_memory: 81 * GIB,
            ..Default::default()
        },
        SelectRequest {
            min_compute_capability: (9, 0),
            ..Default::default()
        },
    ] {
        let error = report.select(&request).expect_err("too much");
        assert_eq!(error.status, Status::Unavailable, "{request:?}");
        assert!(!error.message.is_empty());
    }
    let error = report
        .select(&SelectRequest {
            count: usize::MAX,
            ..Default::default()
        })
        .unwrap_err();
    assert_eq!(error.status, Status::InvalidArgument);
}

#[test]
fn select_takes_a_whole_island() {
    let topology = match std::env::var_os("NUBO_TEST_TOPOLOGY") {
        Some(topology) => topology,
        None => {
            eprintln!("NUBO_TEST_TOPOLOGY is not set: skipped");
            return;
        }
    };
    let options = DiscoverOptions {
        sim_topology_file: Some(topology.into()),
        ..sim(&format!("8x{A100}"))
    };
    let report = discover(&options).expect("discover");
    let group = report
        .select(&SelectRequest {
            count: 4,
            ..Default::default()
        })
        .expect("select");
    for a in &group {
        for b in &group {
            if a.index != b.index {
                assert_eq!(
                    report
                        .link(a.index as usize, b.index as usize)
                        .unwrap()
                        .kind,
                    LinkKind::NvLink
                );
            }
        }
    }
}

#[test]
fn host_and_diagnoses() {
    let report = discover(&DiscoverOptions {
        sim_devices: Some(String::new()),
        ..Default::default()
    })
    .expect("discover");
    let host = report.host();
    assert!(!host.model.is_empty());
    assert!(host.logical_cores >= host.physical_cores && host.physical_cores >= 1);
    assert!(host.memory_total > 0);
    // Without a driver there is always a diagnosis saying why (a healthy GPU machine may have
    // nothing to say).
    if !report.driver().loaded {
        assert!(!report.diagnoses().is_empty());
    }
    for d in report.diagnoses() {
        assert!(!d.code.is_empty() && !d.message.is_empty(), "{d:?}");
    }
}

#[test]
fn json() {
    let report = discover(&sim(&format!("8x{A100}"))).expect("discover");
    let json = report.to_json().expect("json");
    assert!(
        json.trim_start().starts_with('{') && json.trim_end().ends_with('}'),
        "{json}"
    );
    assert!(json.matches(A100).count() >= 8, "{json}");
}

#[test]
fn unknown_model_is_an_error_listing_the_known_ones() {
    let error = discover(&sim("2xB9000")).expect_err("unknown model");
    assert_eq!(error.status, Status::InvalidArgument);
    for expected in ["B9000", A100, "T4"] {
        assert!(
            error.message.contains(expected),
            "{expected} not in: {error}"
        );
    }
    assert_eq!(error.to_string(), error.message);
    let boxed: Box<dyn std::error::Error> = Box::new(error);
    assert!(!boxed.to_string().is_empty());
}

#[test]
fn nul_in_an_option_is_an_error() {
    let error = discover(&sim("8xA100\0")).expect_err("NUL");
    assert_eq!(error.status, Status::InvalidArgument);
    assert!(error.message.contains("NUL"));
}

#[test]
fn reports_are_shared_and_moved_across_threads() {
    // nubo.h: reports are immutable and several threads may read one at once.
    let report = discover(&sim(&format!("8x{A100}"))).expect("discover");
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                for _ in 0..20 {
                    assert_eq!(
                        report
                            .select(&SelectRequest {
                                count: 2,
                                ..Default::default()
                            })
                            .unwrap()
                            .len(),
                        2
                    );
                    assert!(report.to_json().unwrap().contains(A100));
                }
            });
        }
    });
    let moved = std::thread::spawn(move || report.to_json().map(|j| j.len()));
    assert!(moved.join().unwrap().unwrap() > 0);
}
