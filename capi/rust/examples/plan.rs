//! Prices a training run on the built-in catalog, as `nubo-cost plan` does, and the checkpoint
//! interval for its spot option: `cargo run --offline --example plan -- FLOPS [DEADLINE_HOURS]`.

use nubo::cost::{self, Catalog, PlanOptions, Pricing, Workload};

fn main() -> Result<(), nubo::Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let number = |i: usize, default: Option<f64>| match args.get(i) {
        Some(text) => text.parse::<f64>().ok(),
        None => default,
    };
    let (flops, hours) = match (number(0, None), number(1, Some(24.0))) {
        (Some(flops), Some(hours)) => (flops, hours),
        _ => {
            eprintln!("usage: plan FLOPS [DEADLINE_HOURS]   (e.g. plan 3e18 12)");
            std::process::exit(2);
        }
    };
    let catalog = Catalog::builtin()?;
    let workload = Workload {
        total_flops: flops,
        checkpoint_bytes: 20e9,
        ..Default::default()
    };
    let options = PlanOptions {
        pricings: vec![Pricing::OnDemand, Pricing::Spot],
        max_nodes: 4,
        deadline_s: Some(hours * 3600.0),
        limit: 5,
        ..Default::default()
    };
    let plan = cost::plan(&catalog, &workload, &options)?;
    println!(
        "{} of {} options meet the {hours} h deadline; the cheapest:",
        plan.feasible, plan.considered
    );
    for e in &plan.ranked {
        println!(
            "  {:<36} {:>7.1} h {:>10.2} $",
            e.label,
            e.total_s / 3600.0,
            e.cost_total
        );
    }
    if plan.ranked.is_empty() {
        for x in plan.exclusions.iter().take(5) {
            println!("  excluded {}: {}", x.subject, x.reason);
        }
    }
    if let Some(spot) = plan.ranked.iter().find(|e| e.pricing == Pricing::Spot) {
        let interval = cost::checkpoint_interval(spot.compute_s, 60.0, 6.0 * 3600.0, 300.0)?;
        println!(
            "{}: checkpoint every {:.0} s (Daly), {:.1}% overhead",
            spot.label,
            interval.daly_interval_s,
            100.0 * interval.overhead_fraction
        );
    }
    Ok(())
}
