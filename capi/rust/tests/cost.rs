//! nubo::cost against libnubo_c.so: the built-in catalog, plans with deadlines and exclusions,
//! one estimate, Young/Daly, rent or own, the meter, and bad input of every kind.

use std::io::Write;

use nubo::cost::{
    checkpoint_interval, estimate, plan, rent_vs_own, serve, Catalog, InferenceWorkload, Meter,
    Optimizer, OwnRequest, PlanOptions, Pricing, UpdateOptions, Workload,
};
use nubo::{ffi, Status};

fn workload() -> Workload {
    Workload {
        total_flops: 3e18,
        ..Default::default()
    }
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("nubo-rust-cost-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn builtin_catalog_has_priced_gpu_instances() {
    let catalog = Catalog::builtin().unwrap();
    let instances = catalog.instances().unwrap();
    assert!(instances.len() > 10, "{} instances", instances.len());
    let p4d = instances
        .iter()
        .find(|i| i.name == "p4d.24xlarge")
        .expect("p4d.24xlarge in the built-in catalog");
    assert_eq!(p4d.gpus, 8);
    assert!(
        p4d.on_demand > 0.0 && p4d.gpu_model.contains("A100"),
        "{p4d:?}"
    );
    assert!(instances.iter().any(|i| i.spot.is_some()));
}

#[test]
fn plan_ranks_cheapest_first_and_explains_exclusions() {
    let catalog = Catalog::builtin().unwrap();
    let options = PlanOptions {
        pricings: vec![Pricing::OnDemand, Pricing::Spot],
        limit: 5,
        ..Default::default()
    };
    let p = plan(&catalog, &workload(), &options).unwrap();
    assert!(p.feasible > 0 && p.considered >= p.feasible, "{p:?}");
    assert!(!p.ranked.is_empty() && p.ranked.len() <= 5);
    for pair in p.ranked.windows(2) {
        assert!(
            pair[0].cost_total <= pair[1].cost_total,
            "not cheapest first"
        );
    }
    let best = &p.ranked[0];
    let parts = best.compute_s
        + best.communication_s
        + best.staging_s
        + best.checkpoint_s
        + best.rework_s
        + best.restart_s;
    assert!(
        (parts - best.total_s).abs() <= 1e-6 * best.total_s,
        "{best:?}"
    );
    assert!(!p.frontier.is_empty() && p.frontier.iter().all(|e| e.pareto));
    assert!(p.json.starts_with('{') && p.json.contains(&best.instance));

    // A deadline nothing meets: no plan, and every exclusion says why.
    let impossible = PlanOptions {
        deadline_s: Some(1.0),
        ..Default::default()
    };
    let none = plan(&catalog, &workload(), &impossible).unwrap();
    assert!(none.ranked.is_empty());
    assert!(none
        .exclusions
        .iter()
        .any(|x| x.reason.contains("deadline")));
}

#[test]
fn estimate_one_option_and_its_errors() {
    let catalog = Catalog::builtin().unwrap();
    let options = PlanOptions::default();
    let e = estimate(
        &catalog,
        &workload(),
        "p4d.24xlarge",
        None,
        2,
        Pricing::Spot,
        &options,
    )
    .unwrap();
    assert_eq!((e.nodes, e.pricing), (2, Pricing::Spot));
    // Every GPU of both nodes, for the whole run.
    let gpu_hours = e.total_s / 3600.0 * f64::from(e.gpus_per_node * e.nodes);
    assert!((e.gpu_hours - gpu_hours).abs() <= 1e-9 * gpu_hours, "{e:?}");
    assert!(
        e.expected_interruptions > 0.0 && e.cost_total > 0.0,
        "{e:?}"
    );

    let missing = estimate(
        &catalog,
        &workload(),
        "no-such-instance",
        None,
        1,
        Pricing::OnDemand,
        &options,
    )
    .unwrap_err();
    assert_eq!(missing.status, Status::NotFound);
    assert!(missing.message.contains("no-such-instance"), "{missing}");
    let nul = estimate(
        &catalog,
        &workload(),
        "p4d\0",
        None,
        1,
        Pricing::OnDemand,
        &options,
    )
    .unwrap_err();
    assert_eq!(nul.status, Status::InvalidArgument);
    let too_many = estimate(
        &catalog,
        &workload(),
        "p4d.24xlarge",
        None,
        u32::MAX,
        Pricing::OnDemand,
        &options,
    )
    .unwrap_err();
    assert!(too_many.message.contains("nodes"), "{too_many}");
}

#[test]
fn bad_workloads_and_options_name_what_is_wrong() {
    let catalog = Catalog::builtin().unwrap();
    let negative = Workload {
        total_flops: -1.0,
        ..Default::default()
    };
    let e = plan(&catalog, &negative, &PlanOptions::default()).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument);
    let nan = Workload {
        total_flops: f64::NAN,
        ..Default::default()
    };
    assert_eq!(
        plan(&catalog, &nan, &PlanOptions::default())
            .unwrap_err()
            .status,
        Status::InvalidArgument
    );
    let reversed = PlanOptions {
        min_nodes: 4,
        max_nodes: 2,
        ..Default::default()
    };
    assert_eq!(
        plan(&catalog, &workload(), &reversed).unwrap_err().status,
        Status::InvalidArgument
    );
    let profile = Workload {
        profile_json: Some("{not json".into()),
        ..Default::default()
    };
    let e = plan(&catalog, &profile, &PlanOptions::default()).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{e}");
}

#[test]
fn catalog_files_load_or_say_why_not() {
    let mut catalog = Catalog::builtin().unwrap();
    let before = catalog.instances().unwrap().len();
    let missing = catalog.load(scratch("missing.csv"), false).unwrap_err();
    assert_eq!(missing.status, Status::NotFound);
    let bad = scratch("bad.json");
    std::fs::File::create(&bad)
        .unwrap()
        .write_all(b"{\"instances\": [{\"name\": 1e400}]}")
        .unwrap();
    let e = catalog.load(&bad, false).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument);
    assert!(e.message.contains("bad.json"), "{e}");
    assert_eq!(
        catalog.instances().unwrap().len(),
        before,
        "a failed load changed the catalog"
    );
    assert_eq!(
        catalog.set_reserved_discounts(1.5, 0.2).unwrap_err().status,
        Status::InvalidArgument
    );
    catalog.set_reserved_discounts(0.3, 0.5).unwrap();
}

#[test]
fn checkpoint_interval_follows_young_and_daly() {
    let c = checkpoint_interval(24.0 * 3600.0, 60.0, 6.0 * 3600.0, 120.0).unwrap();
    let young = (2.0f64 * 60.0 * 6.0 * 3600.0).sqrt();
    assert!((c.young_interval_s - young).abs() < 1e-6 * young, "{c:?}");
    assert!(
        c.daly_interval_s > 0.0 && c.daly_interval_s < young,
        "{c:?}"
    );
    assert!(c.expected_wall_s > 24.0 * 3600.0 && c.overhead_fraction > 0.0);
    for (work, write, mtbi) in [
        (-1.0, 60.0, 3600.0),
        (3600.0, f64::NAN, 3600.0),
        (3600.0, 60.0, 0.0),
    ] {
        let e = checkpoint_interval(work, write, mtbi, 0.0).unwrap_err();
        assert_eq!(e.status, Status::InvalidArgument, "{work} {write} {mtbi}");
    }
}

#[test]
fn rent_or_own() {
    // Years, utilisation, power price and PUE left to the library's defaults.
    let request = OwnRequest {
        hardware_price: Some(250_000.0),
        power_kw: Some(6.5),
        cloud_hourly: Some(32.77),
        ..Default::default()
    };
    let r = rent_vs_own(&request).unwrap();
    assert!(
        r.break_even_utilisation > 0.0 && r.own_cost > 0.0 && r.cloud_cost > 0.0,
        "{r:?}"
    );
    let bad = OwnRequest {
        hardware_price: Some(-1.0),
        ..request
    };
    assert_eq!(
        rent_vs_own(&bad).unwrap_err().status,
        Status::InvalidArgument
    );
}

#[test]
fn meter_projects_the_final_cost() {
    let mut meter = Meter::new(10.0, 5.0).unwrap();
    let (spent, projected) = meter.update(1800.0, 0.25).unwrap();
    assert!(
        (spent - 10.0).abs() < 1e-9,
        "half an hour at $10/h plus nothing yet: {spent}"
    );
    assert!(projected > spent, "{projected}");
    assert_eq!(
        meter.line().unwrap(),
        format!("${spent:.2} spent, ~${projected:.2} projected")
    );
    assert_eq!(
        meter.update(10.0, 1.5).unwrap_err().status,
        Status::InvalidArgument
    );

    let catalog = Catalog::builtin().unwrap();
    let mut p4d = Meter::for_instance(&catalog, "p4d.24xlarge", Pricing::OnDemand, 2).unwrap();
    assert!(p4d.update(3600.0, 0.5).unwrap().0 > 0.0);
    let e = Meter::for_instance(&catalog, "nope", Pricing::OnDemand, 1)
        .err()
        .unwrap();
    assert_eq!(e.status, Status::NotFound);
    assert_eq!(
        Meter::new(-1.0, 0.0).err().unwrap().status,
        Status::InvalidArgument
    );
}

#[test]
fn raw_abi_refuses_null_handles_and_unknown_enums() {
    // What the safe wrapper cannot express, straight through the C ABI.
    unsafe {
        assert_eq!(ffi::nubo_cost_catalog_instance_count(std::ptr::null()), 0);
        let mut plan = std::ptr::null_mut();
        assert_eq!(
            ffi::nubo_cost_plan_create(
                std::ptr::null(),
                std::ptr::null(),
                std::ptr::null(),
                &mut plan
            ),
            ffi::NUBO_ERR_INVALID_ARGUMENT
        );
        let mut catalog = std::ptr::null_mut();
        assert_eq!(ffi::nubo_cost_catalog_builtin(&mut catalog), ffi::NUBO_OK);
        let name = std::ffi::CString::new("p4d.24xlarge").unwrap();
        let mut meter = std::ptr::null_mut();
        assert_eq!(
            ffi::nubo_cost_meter_for_instance(catalog, name.as_ptr(), 99, 1, &mut meter),
            ffi::NUBO_ERR_INVALID_ARGUMENT
        );
        assert!(meter.is_null());
        ffi::nubo_cost_catalog_free(catalog);
        ffi::nubo_cost_catalog_free(std::ptr::null_mut());
        ffi::nubo_cost_meter_free(std::ptr::null_mut());
    }
}

#[test]
fn handles_cross_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Catalog>();
    send_sync::<Meter>();
    let catalog = Catalog::builtin().unwrap();
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| plan(&catalog, &workload(), &PlanOptions::default()).unwrap());
        }
    });
}

#[test]
fn a_model_described_workload_fits_only_where_it_holds() {
    let mut catalog = Catalog::builtin().unwrap();
    let fixed = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/data/fixed_instances.csv"
    );
    catalog.load(fixed, true).unwrap();
    let workload = Workload {
        parameters: nubo::cost::parse_count("7B", "parameters").unwrap(),
        tokens: 2e9,
        sharding: -1,
        optimizer: Optimizer::Adam,
        ..Default::default()
    };
    let sharded = plan(
        &catalog,
        &workload,
        &PlanOptions {
            limit: 0,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(!sharded.ranked.is_empty());
    for e in &sharded.ranked {
        assert!(
            e.memory_needed_bytes <= e.memory_per_gpu_bytes,
            "{}",
            e.label
        );
        assert!(e.sharding >= 1);
        assert_eq!(e.price_date, "2026-11");
        assert!(e.price_source.contains("fixed_instances.csv"));
    }
    let plain = Workload {
        sharding: 0,
        ..workload
    };
    let none = plan(&catalog, &plain, &PlanOptions::default()).unwrap();
    assert!(none.ranked.is_empty());
    assert!(none
        .exclusions
        .iter()
        .any(|x| x.reason.contains("ZeRO-3 (--zero 3)")));
    assert!(nubo::cost::parse_count("7Q", "parameters").is_err());
}

#[test]
fn sources_are_listed_imported_and_refreshed() {
    let catalog = Catalog::builtin().unwrap();
    let sources = catalog.sources().unwrap();
    assert!(sources
        .iter()
        .any(|s| s.name == "skypilot-aws" && s.rows > 0));
    assert!(catalog.instances().unwrap().len() >= 400);
    let azure = catalog
        .sources()
        .unwrap()
        .into_iter()
        .find(|s| s.name == "skypilot-azure")
        .unwrap();
    assert!(azure
        .corrected
        .iter()
        .any(|k| k.contains("NC24ads_A100_v4") && k.contains("A100-PCIE-80GB")));
    let mut mine = Catalog::builtin().unwrap();
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/cost/fixtures");
    mine.import_file(
        format!("{fixtures}/skypilot_malformed.csv"),
        "skypilot",
        "aws",
    )
    .unwrap();
    let last = mine.sources().unwrap().pop().unwrap();
    assert_eq!((last.records, last.skipped.len()), (10, 9));
    let err = mine
        .import_file(
            format!("{fixtures}/skypilot_no_price.csv"),
            "skypilot",
            "aws",
        )
        .unwrap_err();
    assert!(err.to_string().contains("missing column 'Price'"));
    assert!(nubo::cost::gpu_model_matches("H200-SXM-141GB", "H200"));
    assert!(!nubo::cost::gpu_model_matches("GH200-96GB", "H200"));
    let dir = std::env::temp_dir().join(format!("nubo-rust-update-{}", std::process::id()));
    let updates = nubo::cost::update_catalog(&UpdateOptions {
        cache_dir: Some(dir.clone()),
        sources: vec!["skypilot-aws".into()],
        urls: vec![("skypilot-aws".into(), "http://127.0.0.1:1/x".into())],
        timeout_s: Some(2.0),
        ..Default::default()
    })
    .unwrap();
    assert_eq!(updates.len(), 1);
    assert_eq!(updates[0].status, "failed");
    assert!(
        Catalog::current(Some(&dir))
            .unwrap()
            .instances()
            .unwrap()
            .len()
            >= 400
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_meter_keeps_the_price_in_force() {
    let mut catalog = Catalog::builtin().unwrap();
    let fixed = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/data/fixed_instances.csv"
    );
    catalog.load(fixed, true).unwrap();
    let meter = Meter::for_instance(&catalog, "p4d.24xlarge", Pricing::OnDemand, 1).unwrap();
    let (hourly, date, source) = meter.price().unwrap();
    assert!((hourly - 32.77).abs() < 1e-9);
    assert_eq!(date, "2026-11");
    assert!(source.contains("fixed_instances.csv"));
}

#[test]
fn serving_a_small_model_on_one_t4() {
    let mut catalog = Catalog::builtin().unwrap();
    let fixed = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/data/fixed_instances.csv"
    );
    catalog.load(fixed, true).unwrap();
    let serving = InferenceWorkload {
        parameters: Some(1e9),
        dtype: Some(nubo::DType::F16),
        tokens_per_s: Some(100.0),
        latency_s: Some(0.1),
        ..Default::default()
    };
    let only_t4 = PlanOptions {
        gpu: Some("T4".into()),
        ..Default::default()
    };
    let plan = serve(&catalog, &serving, &only_t4).unwrap();
    let best = &plan.options[0];
    assert_eq!((best.gpu_model.as_str(), best.instances), ("T4", 1));
    assert!(best.token_latency_s <= 0.1);
    let bf16 = InferenceWorkload {
        dtype: Some(nubo::DType::Bf16),
        ..serving
    };
    let none = serve(&catalog, &bf16, &only_t4).unwrap();
    assert!(none
        .exclusions
        .iter()
        .any(|x| x.reason.contains("no bf16 support")));
    assert!(serve(&catalog, &InferenceWorkload::default(), &only_t4).is_err());
}

#[test]
fn a_preflight_report_prices_the_gpus_it_measured() {
    let report = nubo::discover(&nubo::DiscoverOptions {
        sim_devices: Some("1xA100-SXM4-80GB,1xA100-SXM4-80GB:gemm=0.5".to_string()),
        probe_cuda: false,
        ..Default::default()
    })
    .unwrap();
    let check = nubo::preflight(
        &report,
        &[],
        &nubo::PreflightOptions {
            budget_seconds: Some(1.0),
            host: Some(false),
            ..Default::default()
        },
    )
    .unwrap();
    let path = scratch("check.json");
    std::fs::write(&path, &check.json).unwrap();
    let catalog = Catalog::builtin().unwrap();
    let options = PlanOptions {
        gpu: Some("A100-SXM4-80GB".to_string()),
        preflight_file: Some(path.clone()),
        ..Default::default()
    };
    let p = plan(&catalog, &workload(), &options).unwrap();
    let best = &p.ranked;
    assert!(!best.is_empty());
    assert!(
        best[0]
            .notes
            .iter()
            .any(|n| n.contains("as the preflight measured them")),
        "{:?}",
        best[0].notes
    );
    let missing = PlanOptions {
        preflight_file: Some(scratch("no-such-check.json")),
        ..Default::default()
    };
    let err = plan(&catalog, &workload(), &missing).unwrap_err();
    assert!(
        err.message.contains("no-such-check.json"),
        "{}",
        err.message
    );
}
