//! Lists what nubo finds: the GPUs, the host, the topology and the diagnoses.
//!
//!     cargo run --example devices                        # this machine
//!     cargo run --example devices -- 8xA100-SXM4-80GB    # simulated GPUs
//!     cargo run --example devices -- 8xA100-SXM4-80GB topology.txt

use std::process::ExitCode;

fn gib(bytes: u64) -> f64 {
    bytes as f64 / (1u64 << 30) as f64
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let options = nubo::DiscoverOptions {
        sim_devices: args.next(),
        sim_topology_file: args.next().map(Into::into),
        ..Default::default()
    };
    let report = match nubo::discover(&options) {
        Ok(report) => report,
        Err(e) => {
            eprintln!("nubo: {e} ({})", e.status);
            return ExitCode::FAILURE;
        }
    };

    println!("nubo {}", nubo::version());
    let host = report.host();
    println!(
        "host: {} ({} cores / {} threads, {:.1} GiB, BLAS {})",
        host.model,
        host.physical_cores,
        host.logical_cores,
        gib(host.memory_total),
        host.blas
    );
    let driver = report.driver();
    if driver.loaded {
        println!(
            "driver: {} (CUDA {}), runtime {}",
            driver.driver_release, driver.driver_version, driver.runtime_version
        );
    }

    let width = report
        .devices()
        .iter()
        .map(|d| d.name.len())
        .max()
        .unwrap_or(0)
        .max(4);
    println!(
        "\n{:>3}  {:<width$} {:>9} {:>5} {:>10}  backend",
        "gpu", "name", "memory", "cc", "bf16 TF/s"
    );
    for d in report.devices() {
        let (major, minor) = d.compute_capability();
        println!(
            "{:>3}  {:<width$} {:>5.1} GiB {:>3}.{} {:>10.1}  {}",
            d.index,
            d.name,
            gib(d.memory_total),
            major,
            minor,
            d.peak_tflops_bf16,
            d.backend
        );
    }
    if !report.has_gpu() {
        println!("(no GPU)");
    }

    // The matrix the way `nvidia-smi topo -m` prints it.
    if report.has_gpu() {
        print!("\n{:>6}", "");
        for j in 0..report.devices().len() {
            print!("{:>6}", format!("GPU{j}"));
        }
        println!();
        for (i, row) in report.links().iter().enumerate() {
            print!("{:>6}", format!("GPU{i}"));
            for link in row {
                print!("{:>6}", link.name);
            }
            println!();
        }
    }

    println!();
    for d in report.diagnoses() {
        println!("[{}] {}: {}", d.severity, d.code, d.message);
        if !d.advice.is_empty() {
            println!("    {}", d.advice);
        }
    }
    ExitCode::SUCCESS
}
