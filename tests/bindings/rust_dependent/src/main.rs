//! A training loop of the application's own: each process a launcher started (nubo-run -n 2,
//! torchrun, srun, mpirun) joins with one call and all-reduces its gradient from the main
//! thread, then from a thread of its own; no closure handed to nubo.

fn main() -> Result<(), nubo::Error> {
    let team = nubo::Team::join()?;
    let w = team.worker()?;
    let (rank, size) = (w.rank(), w.size());
    // A buffer on the worker's device: a GPU's memory, or host memory on the CPU (where
    // all_reduce_slice would reduce the Vec itself, without the copies).
    let mut buf = w.buffer(nubo::DType::F32, 4096)?;
    let mut grad = vec![0.0f32; 4096];
    for step in 0..5 {
        grad.iter_mut().for_each(|g| *g = (rank + step) as f32);
        buf.write(&grad, 0)?;
        w.all_reduce(&mut buf, nubo::ReduceOp::Avg)?;
    }
    // The worker may be called from any thread: one of this program's own takes the last step.
    std::thread::scope(|s| {
        s.spawn(|| w.all_reduce(&mut buf, nubo::ReduceOp::Max))
            .join()
            .expect("the reducing thread panicked")
    })?;
    buf.read(&mut grad, 0)?;
    let want = 4.0 + (size - 1) as f32 / 2.0;
    if grad.iter().any(|&g| g != want) {
        eprintln!("rank {rank}: {} where {want} was expected", grad[0]);
        std::process::exit(1);
    }
    println!("rank {rank} of {size}: 6 all-reduces from the program's own threads, mean {want}");
    Ok(())
}
