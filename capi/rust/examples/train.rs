//! Trains a small classifier on Fashion-MNIST across two CPU workers, then prices the run's
//! measured profile on the cloud catalog, as `nubo-train` and `nubo-cost plan --profile` do:
//! `cargo run --offline --example train -- [EPOCHS]`.

use nubo::cost::{self, Catalog, PlanOptions, Workload};
use nubo::train::{TrainOptions, TrainProgress, Trainer};

fn main() -> Result<(), nubo::Error> {
    let epochs = match std::env::args().nth(1).map(|a| a.parse::<u32>()) {
        None => 1,
        Some(Ok(n)) if n > 0 => n,
        Some(_) => {
            eprintln!("usage: train [EPOCHS]   (a positive number, default 1)");
            std::process::exit(2);
        }
    };
    let mut trainer = Trainer::new(&TrainOptions {
        layers: vec![784, 64, 10],
        devices: Some("cpu:2".into()),
        epochs,
        subset: 4096,
        ..Default::default()
    })?;
    let mut show = |p: &TrainProgress| {
        if p.step % 8 == 0 {
            eprintln!("epoch {} step {} loss {:.3}", p.epoch, p.step, p.loss);
        }
        true // false stops after this step (with a checkpoint when there is a directory)
    };
    trainer.fit(Some(&mut show))?;
    let e = trainer.evaluate()?;
    println!(
        "test accuracy {:.3} over {} samples after {} steps",
        e.accuracy,
        e.samples,
        trainer.steps_done()
    );
    // The measured profile (its dataset is the subset trained on), priced for 100 epochs.
    let workload = Workload {
        profile_json: Some(trainer.profile_json()?),
        epochs: 100.0,
        ..Default::default()
    };
    let plan = cost::plan(&Catalog::builtin()?, &workload, &PlanOptions::default())?;
    if let Some(best) = plan.ranked.first() {
        println!(
            "100 epochs on {}: {:.3} s, {:.6} $",
            best.label, best.total_s, best.cost_total
        );
    }
    Ok(())
}
