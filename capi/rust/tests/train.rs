//! nubo::train against libnubo_c.so: a small run (one epoch of a subset on two CPU workers),
//! progress, evaluate, the profile, save and load, stop from a progress callback or another
//! thread, resume from a checkpoint directory, and bad input of every kind.

use std::fs;
use std::path::PathBuf;

use nubo::train::{CheckpointEvery, TrainOptions, TrainProgress, Trainer};
use nubo::{ffi, Status, Team};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir()
        .join(format!("nubo-rust-train-{}", std::process::id()))
        .join(name);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// 512 samples in batches of 64: 8 steps an epoch.
fn small() -> TrainOptions {
    TrainOptions {
        layers: vec![784, 32, 10],
        devices: Some("cpu:2".into()),
        epochs: 1,
        batch: 64,
        subset: 512,
        bucket_bytes: 16 << 10,
        autotune: false,
        dataset_dir: std::env::var_os("NUBO_TEST_DATASET_DIR").map(PathBuf::from),
        ..Default::default()
    }
}

#[test]
fn fit_evaluate_save_and_load() {
    let dir = scratch("fit");
    let mut seen = Vec::new();
    let mut trainer = Trainer::new(&small()).unwrap();
    let mut record = |p: &TrainProgress| {
        seen.push(*p);
        true
    };
    trainer.fit(Some(&mut record)).unwrap();
    assert_eq!(seen.len(), 8);
    assert_eq!(seen.last().unwrap().step, 8);
    assert!(seen.last().unwrap().loss > 0.0);
    let e = trainer.evaluate().unwrap();
    assert!(
        e.samples == 512 && e.accuracy > 0.2 && e.accuracy <= 1.0,
        "{e:?}"
    );
    assert!(trainer.profile_json().unwrap().contains("samples_per_s"));
    assert_eq!(trainer.resumed_from().unwrap(), None);
    let path = dir.join("model.nubo");
    trainer.save(&path).unwrap();

    let mut again = Trainer::new(&TrainOptions {
        epochs: 2,
        ..small()
    })
    .unwrap();
    again.load(&path).unwrap();
    assert_eq!(again.steps_done(), 8);
    let mut stop = |p: &TrainProgress| p.step < 10;
    assert_eq!(
        again.fit(Some(&mut stop)).unwrap_err().status,
        Status::Cancelled
    );
    assert_eq!(again.steps_done(), 10);
    again.fit(None).unwrap();
    assert_eq!(again.steps_done(), 16);

    // A damaged checkpoint is refused and the trainer stays as it was.
    let damaged = dir.join("damaged.nubo");
    let mut bytes = fs::read(&path).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    fs::write(&damaged, &bytes).unwrap();
    assert_eq!(again.load(&damaged).unwrap_err().status, Status::Corrupt);
    assert_eq!(again.steps_done(), 16);
    let other = Trainer::new(&TrainOptions {
        layers: vec![784, 16, 10],
        ..small()
    });
    assert_eq!(
        other.unwrap().load(&path).unwrap_err().status,
        Status::InvalidArgument
    );
}

#[test]
fn a_checkpoint_directory_resumes_and_a_stop_handle_stops() {
    let dir = scratch("resume");
    let options = TrainOptions {
        epochs: 1000,
        checkpoint_dir: Some(dir.clone()),
        checkpoint_every: CheckpointEvery::Steps(4),
        ..small()
    };
    let mut trainer = Trainer::new(&options).unwrap();
    let stop = trainer.stop_handle();
    let mut steps = 0;
    let mut count = |_: &TrainProgress| {
        steps += 1;
        if steps == 6 {
            // From another thread, as an interruption watcher would.
            let stop = stop.clone();
            std::thread::spawn(move || stop.request_stop())
                .join()
                .unwrap();
        }
        true
    };
    assert_eq!(
        trainer.fit(Some(&mut count)).unwrap_err().status,
        Status::Cancelled
    );
    let done = trainer.steps_done();
    assert!((6..1000 * 8).contains(&done), "{done}");
    let handle = trainer.stop_handle();
    drop(trainer);
    handle.request_stop(); // the trainer is gone: nothing happens

    let resumed = Trainer::new(&options).unwrap();
    assert!(resumed.resumed_from().unwrap().is_some());
    assert_eq!(resumed.steps_done(), done);
    let fresh = Trainer::new(&TrainOptions {
        fresh: true,
        ..options
    })
    .unwrap();
    assert_eq!(fresh.steps_done(), 0);
}

#[test]
fn a_borrowed_team_trains() {
    let team = Team::host(2).unwrap();
    let mut trainer = Trainer::with_team(&team, &small()).unwrap();
    trainer.fit(None).unwrap();
    assert_eq!(trainer.steps_done(), 8);
}

#[test]
fn bad_options_name_what_is_wrong() {
    let cases = [
        (
            TrainOptions {
                layers: vec![5, 10],
                ..small()
            },
            Status::InvalidArgument,
        ),
        (
            TrainOptions {
                devices: Some("gpu:x".into()),
                ..small()
            },
            Status::InvalidArgument,
        ),
        (
            TrainOptions {
                dataset_dir: Some("/nonexistent/fashion".into()),
                ..small()
            },
            Status::NotFound,
        ),
        (
            TrainOptions {
                batch: 0,
                ..small()
            },
            Status::InvalidArgument,
        ),
        (
            TrainOptions {
                checkpoint_every: CheckpointEvery::Auto { mtbi_s: -1.0 },
                checkpoint_dir: Some(scratch("auto")),
                ..small()
            },
            Status::InvalidArgument,
        ),
    ];
    for (options, status) in cases {
        let e = Trainer::new(&options).err().unwrap();
        assert_eq!(e.status, status, "{options:?}: {e}");
        assert!(!e.message.is_empty());
    }
    let nul = Trainer::new(&TrainOptions {
        devices: Some("cpu\0".into()),
        ..small()
    })
    .err()
    .unwrap();
    assert_eq!(nul.status, Status::InvalidArgument);
    let mut trainer = Trainer::new(&small()).unwrap();
    assert_eq!(
        trainer.load("/nonexistent/x.nubo").unwrap_err().status,
        Status::NotFound
    );
    unsafe {
        assert_eq!(ffi::nubo_trainer_steps_done(std::ptr::null()), 0);
        ffi::nubo_trainer_request_stop(std::ptr::null_mut());
        assert_eq!(
            ffi::nubo_trainer_fit(std::ptr::null_mut(), None, std::ptr::null_mut()),
            ffi::NUBO_ERR_INVALID_ARGUMENT
        );
        ffi::nubo_trainer_free(std::ptr::null_mut());
    }
}

#[test]
fn trainer_is_send() {
    fn send<T: Send>() {}
    send::<Trainer<'static>>();
    let mut trainer = Trainer::new(&small()).unwrap();
    std::thread::spawn(move || trainer.fit(None).unwrap())
        .join()
        .unwrap();
}
