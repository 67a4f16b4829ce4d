//! nubo::schedule against libnubo_c.so: a queue over a catalog of round numbers, where the one
//! reservation goes to the job dearer on demand; the what-if, an update, job files, bad input.

use nubo::cost::Catalog;
use nubo::{schedule, Placement, QueueSource, ScheduleMethod, ScheduleOptions, Status};

fn scratch() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("nubo-rust-schedule-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

// One box (8 x A100-80GB) does 998.4 TFLOP/s of bf16 work at 40% MFU.
const HOUR: f64 = 8.0 * 312e12 * 0.4 * 3600.0;

fn catalog(dir: &std::path::Path) -> Catalog {
    let rows = dir.join("box.csv");
    std::fs::write(
        &rows,
        "provider,instance,region,gpu_model,gpus,interconnect,vcpus,memory_gib,network_gbps,\
         on_demand,spot\naws,box,r1,A100-SXM4-80GB,8,nvswitch,96,1152,400,10,1\n",
    )
    .unwrap();
    let mut c = Catalog::builtin().unwrap();
    c.load(&rows, true).unwrap();
    c
}

#[test]
fn the_reservation_goes_to_the_job_dearer_on_demand() {
    let dir = scratch();
    let catalog = catalog(&dir);
    let queue = format!(
        r#"{{"horizon": 10, "reservations": [{{"instance": "box", "region": "r1", "hourly": 6}}],
            "jobs": [{{"name": "a", "workload": {{"flops": {}}}, "deadline": 5}},
                     {{"name": "b", "workload": {{"flops": {}}}, "deadline": 5,
                       "command": "python b.py"}}]}}"#,
        4.0 * HOUR,
        3.0 * HOUR
    );
    let options = ScheduleOptions {
        method: Some(ScheduleMethod::Exact),
        slot_h: Some(1.0),
        ..Default::default()
    };
    let s = schedule(&catalog, QueueSource::Json(&queue), &options).unwrap();
    assert!(s.optimal);
    assert_eq!(s.jobs[0].placement, Placement::Reserved);
    assert_eq!(s.jobs[1].placement, Placement::OnDemand);
    assert!((s.jobs[1].cost - 30.0).abs() < 0.5, "{}", s.jobs[1].cost);
    assert!(
        s.jobs[1].reason.contains("taken by a"),
        "{}",
        s.jobs[1].reason
    );
    assert_eq!(s.jobs[1].estimate.as_ref().unwrap().instance, "box");
    assert!(s.json.contains("\"fleet\""));
    let (saving, more) = s.what_if(&catalog, "box@r1=1:1y", &options).unwrap();
    assert_eq!(more.jobs[1].placement, Placement::Reserved);
    assert!((saving - (s.total - more.total)).abs() < 1e-6);
    let later = s
        .update(
            &catalog,
            r#"{"now": 1, "jobs": [{"name": "a", "state": "finished"}]}"#,
            &options,
        )
        .unwrap();
    assert_eq!(later.jobs.len(), 1);
    s.write_job_files(&catalog, "slurm", &dir.join("jobs"))
        .unwrap();
    let script = std::fs::read_to_string(dir.join("jobs").join("b.sbatch")).unwrap();
    assert!(script.contains("srun bash -c 'python b.py'"), "{}", script);

    let bad = schedule(
        &catalog,
        QueueSource::Json(r#"{"jobs": [{"name": "x", "workload": {"flops": 1e18}, "nodes": 0}]}"#),
        &options,
    )
    .unwrap_err();
    assert_eq!(bad.status, Status::InvalidArgument);
    assert!(bad.message.contains("job 'x': nodes"), "{}", bad.message);
    let format = s.write_job_files(&catalog, "nomad", &dir).unwrap_err();
    assert!(
        format.message.contains("skypilot, slurm or kubernetes"),
        "{}",
        format.message
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
