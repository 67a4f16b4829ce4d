//! The sharded optimizer from Rust: stage 1 in bf16 against the replicated optimizer, stage 3's
//! gather, a checkpoint resumed on one worker, the mixed-precision kernels, the memory formulas
//! and bad input, against this build's libnubo_c.so.

use std::sync::Mutex;

use nubo::{
    sharded_memory, DType, OptimizerKind, OptimizerUpdate, ShardedOptimizer, ShardedOptions,
    Status, Team,
};

const N: usize = 700;

fn train(
    stage: i32,
    world: usize,
    load: Option<&std::path::Path>,
    save: Option<&std::path::Path>,
) -> Vec<f32> {
    let team = Team::host(world).unwrap();
    let out = Mutex::new(Vec::new());
    team.run(|w| {
        let options = ShardedOptions {
            stage: Some(stage),
            lr: Some(0.01),
            ..Default::default()
        };
        let padded = ShardedOptimizer::padded_size(&options, w.size(), &[N])?;
        let mut params = w.buffer(DType::F32, padded)?;
        let init: Vec<f32> = (0..padded)
            .map(|i| if i < N { (i as f32 * 0.1).cos() } else { 0.0 })
            .collect();
        params.write(&init, 0)?;
        let mut grads = w.buffer(DType::F32, padded)?;
        let mut opt = ShardedOptimizer::new(w, &mut params, &options, &[N])?;
        if let Some(p) = load {
            opt.load(p)?;
        }
        for t in 0..3 {
            let g: Vec<f32> = (0..padded)
                .map(|i| {
                    if i < N {
                        ((i as f32 * 0.37 + t as f32).sin() * 32.0).round() / 128.0
                    } else {
                        0.0
                    }
                })
                .collect();
            grads.write(&g, 0)?;
            opt.step(Some(&mut grads))?;
        }
        if let Some(p) = save {
            opt.save(p)?;
        }
        let mine: Vec<f32> = if stage == 3 {
            let got = opt.gather(0)?;
            let v = got.to_vec::<f32>()?;
            opt.release(0)?;
            v
        } else {
            drop(opt);
            params.to_vec::<f32>()?[..N].to_vec()
        };
        if w.rank() == 0 {
            *out.lock().unwrap() = mine;
        }
        Ok(())
    })
    .unwrap();
    out.into_inner().unwrap()
}

#[test]
fn stages_end_where_the_replicated_optimizer_does_and_resume_anywhere() {
    let replicated = train(0, 2, None, None);
    assert_eq!(train(1, 2, None, None), replicated);
    assert_eq!(train(3, 2, None, None), replicated);
    let dir = std::env::temp_dir().join(format!("nubo-rust-sharded-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("opt.nubo");
    train(1, 2, None, Some(&path));
    let resumed = train(1, 1, Some(&path), None);
    assert_eq!(resumed.len(), N);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn kernels_memory_and_bad_input() {
    let m = sharded_memory(7.5e9, 2, OptimizerKind::Adam, DType::F16, 64).unwrap();
    assert!((m.total / 1e9 - 16.64).abs() < 0.01);
    let team = Team::host(1).unwrap();
    team.run(|w| {
        let mut master = w.buffer(DType::F32, 2)?;
        let mut g = w.buffer(DType::F32, 2)?;
        let mut m = w.buffer(DType::F32, 2)?;
        let mut stats = w.buffer(DType::F32, 2)?;
        let mut p16 = w.buffer(DType::Bf16, 2)?;
        w.fill(&mut master, 1.0)?;
        w.fill(&mut g, 4.0)?;
        w.fill(&mut m, 0.0)?;
        w.fill(&mut stats, 0.0)?;
        w.unscale_check(&mut g, 0.25, &mut stats)?;
        assert_eq!(stats.to_vec::<f32>()?, vec![0.0, 2.0]);
        let sgd = OptimizerUpdate {
            kind: OptimizerKind::Sgd,
            lr: 0.5,
            momentum: 0.0,
            ..Default::default()
        };
        w.optimizer_step(&sgd, &mut master, &g, &mut m, None, Some(&mut p16))?;
        assert_eq!(master.to_vec::<f32>()?, vec![0.5, 0.5]);
        let adam = OptimizerUpdate {
            kind: OptimizerKind::Adam,
            ..Default::default()
        };
        let e = w
            .optimizer_step(&adam, &mut master, &g, &mut m, None, None)
            .unwrap_err();
        assert_eq!(e.status, Status::InvalidArgument);
        let mut small = w.buffer(DType::F32, 100)?;
        let e = ShardedOptimizer::new(w, &mut small, &ShardedOptions::default(), &[100])
            .err()
            .expect("a buffer without the padding is refused");
        assert!(
            e.message.contains("params hold 100 elements"),
            "{}",
            e.message
        );
        Ok(())
    })
    .unwrap();
}
