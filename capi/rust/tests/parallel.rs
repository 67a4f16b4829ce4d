//! Teams from Rust: collectives and compute on the application's own slices without a copy,
//! nubo's buffers, DLPack both ways, streams and events on host workers, and the errors bad
//! calls get, against this build's libnubo_c.so.

use std::sync::Mutex;

use nubo::{Bf16, DType, Gemm, ReduceOp, Status, Team, TeamOptions};

fn invalid(result: Result<impl std::fmt::Debug, nubo::Error>, says: &str) {
    let e = result.expect_err("the call should fail");
    assert_eq!(e.status, Status::InvalidArgument, "{}", e.message);
    assert!(
        e.message.contains(says),
        "{:?} does not say {:?}",
        e.message,
        says
    );
}

#[test]
fn slices_are_reduced_in_place_without_a_buffer_of_nubos() {
    let team = Team::host(2).unwrap();
    assert_eq!(team.size(), 2);
    let mut arrays = [vec![1.0f32; 4096], vec![2.0f32; 4096]];
    let addresses: Vec<usize> = arrays.iter().map(|a| a.as_ptr() as usize).collect();
    let slots: Vec<Mutex<&mut Vec<f32>>> = arrays.iter_mut().map(Mutex::new).collect();
    let grown = Mutex::new(vec![usize::MAX; 2]);
    team.run(|w| {
        let mut mine = slots[w.rank() as usize].lock().unwrap();
        let before = w.bytes_in_use();
        w.all_reduce_slice(&mut mine[..], ReduceOp::Sum)?;
        let mut buf = w.wrap(&mut mine[..])?;
        w.scale(&mut buf, 0.5)?;
        grown.lock().unwrap()[w.rank() as usize] = w.bytes_in_use() - before;
        Ok(())
    })
    .unwrap();
    assert_eq!(*grown.lock().unwrap(), vec![0, 0]);
    for (a, address) in arrays.iter().zip(addresses) {
        assert_eq!(a.as_ptr() as usize, address);
        assert!(a.iter().all(|&v| v == 1.5));
    }
}

#[test]
fn gemm_and_elementwise_kernels_on_buffers() {
    let team = Team::host(1).unwrap();
    team.run(|w| {
        let mut a = w.buffer(DType::F32, 6)?;
        let mut b = w.buffer(DType::F32, 6)?;
        let mut c = w.buffer(DType::F32, 4)?;
        a.write(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], 0)?;
        b.write(&[1.0f32, 0.0, 0.0, 1.0, 1.0, 1.0], 0)?;
        w.gemm(&Gemm::new(2, 2, 3), &a, &b, &mut c)?;
        assert_eq!(c.to_vec::<f32>()?, vec![4.0, 5.0, 10.0, 11.0]);
        let mut y = w.buffer(DType::F32, 4)?;
        w.fill(&mut y, 1.0)?;
        w.axpy(2.0, &c, &mut y)?;
        assert_eq!(y.to_vec::<f32>()?, vec![9.0, 11.0, 21.0, 23.0]);
        // bf16 on the CPU, from the application's slice.
        let mut x16 = [Bf16::from_f32(1.5); 8];
        let mut wrapped = w.wrap(&mut x16[..])?;
        w.scale(&mut wrapped, 2.0)?;
        drop(wrapped);
        assert!(x16.iter().all(|v| v.to_f32() == 3.0));
        Ok(())
    })
    .unwrap();
}

#[test]
fn slices_and_dlpack_share_memory() {
    let team = Team::host(1).unwrap();
    team.run(|w| {
        let mut data = [0i64; 10];
        let mut buf = w.wrap(&mut data[..])?;
        let mut tail = buf.slice(8, 2)?;
        w.fill(&mut tail, 7.0)?;
        let tensor = tail.to_dlpack()?;
        // SAFETY: a live DLManagedTensor nubo just made, handed over once.
        let back = unsafe { w.from_dlpack(tensor)? };
        assert_eq!(back.data_ptr(), tail.data_ptr());
        assert_eq!(back.to_vec::<i64>()?, vec![7, 7]);
        drop(back);
        drop(tail);
        drop(buf);
        assert_eq!(&data[7..], &[0, 7, 7]);
        Ok(())
    })
    .unwrap();
}

#[test]
fn bad_calls_get_clear_errors() {
    let team = Team::host(1).unwrap();
    team.run(|w| {
        let a = w.buffer(DType::F32, 6)?;
        let b = w.buffer(DType::F32, 6)?;
        let mut c = w.buffer(DType::F32, 4)?;
        invalid(
            w.gemm(&Gemm::new(3, 2, 3), &a, &b, &mut c),
            "A holds 6 elements but the shape",
        );
        invalid(w.buffer(DType::Tf32, 4), "compute precision");
        let mut ints = w.buffer(DType::I32, 4)?;
        invalid(w.scale(&mut ints, 2.0), "x holds i32");
        invalid(w.fill(&mut ints, 0.5), "not a whole number");
        invalid(c.write(&[1i32, 2], 0), "holds F32, not I32");
        invalid(c.slice(3, 2), "outside the buffer");
        // SAFETY: null is never dereferenced: nubo refuses it first.
        invalid(
            unsafe { w.from_dlpack(std::ptr::null_mut()) },
            "tensor is NULL",
        );
        let mut not_a_stream = 0u8;
        // SAFETY: a host worker never uses the pointer: it refuses any stream.
        invalid(
            unsafe { w.use_stream(&mut not_a_stream as *mut u8 as *mut std::os::raw::c_void) },
            "without streams",
        );
        Ok(())
    })
    .unwrap();
}

#[test]
fn host_workers_have_no_streams_and_their_events_are_done() {
    let team = Team::host(2).unwrap();
    team.run(|w| {
        let h = w.native()?;
        assert!(h.cuda_stream.is_null() && h.cublas_handle.is_null() && h.nccl_comm.is_null());
        assert_eq!(h.device_ordinal, -1);
        let e = w.record_event()?;
        assert!(e.done());
        e.synchronize()?;
        assert!(e.native().is_null());
        w.wait_event(&e)?;
        let mut buf = w.buffer(DType::F32, 3)?;
        w.fill(&mut buf, f64::from(w.rank()))?;
        w.all_reduce_async(&mut buf, ReduceOp::Max)?.wait()?;
        assert_eq!(buf.to_vec::<f32>()?, vec![1.0; 3]);
        w.synchronize()
    })
    .unwrap();
}

#[test]
fn a_failing_worker_fails_the_run_naming_its_rank() {
    let team = Team::host(2).unwrap();
    let e = team
        .run(|w| {
            if w.rank() == 1 {
                panic!("no data for my shard");
            }
            w.barrier()
        })
        .expect_err("the run should fail");
    assert!(
        e.message.contains("rank 1") && e.message.contains("no data for my shard"),
        "{}",
        e.message
    );
}

#[test]
fn host_workers_share_the_cores_and_bind_when_asked() {
    let options = TeamOptions {
        cpu_bind: Some(true),
        ..TeamOptions::default()
    };
    let team = Team::host_with(2, &options).unwrap();
    let text = team.describe().unwrap();
    assert!(
        text.contains("rank 1: ") && text.contains("GEMM thread"),
        "{text}"
    );
    assert!(text.contains("pinned to CPUs"), "{text}");
    team.run(|w| {
        assert!(w.host_threads() >= 1);
        assert!(!w.cpus().is_empty());
        Ok(())
    })
    .unwrap();
    let loose = Team::host(1).unwrap();
    loose
        .run(|w| {
            assert!(w.cpus().is_empty());
            Ok(())
        })
        .unwrap();
}

#[test]
fn one_dtype_read_by_the_library() {
    assert_eq!(DType::parse("fp32").unwrap(), DType::F32);
    assert_eq!(DType::parse("BFloat16").unwrap(), DType::Bf16);
    assert_eq!(DType::parse("tf32").unwrap(), DType::Tf32);
    assert_eq!(DType::parse("int64").unwrap(), DType::I64);
    assert_eq!(DType::Tf32.name(), "tf32");
    assert_eq!(DType::F16.name(), "f16");
    invalid(DType::parse("int8"), "unknown dtype 'int8'");
    invalid(DType::parse("f\u{0}32"), "NUL byte");
}

#[test]
fn a_joined_worker_is_called_from_the_programs_own_threads() {
    // No launcher in the test's environment: a job of this process alone.
    let team = Team::join().unwrap();
    let w = team.worker().unwrap();
    assert_eq!((w.rank(), w.size()), (0, 1));
    let mut grad = vec![3.0f32; 256];
    w.all_reduce_slice(&mut grad, ReduceOp::Sum).unwrap();
    let mut buf = w.buffer(DType::F32, 64).unwrap();
    w.fill(&mut buf, 2.0).unwrap();
    std::thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| {
                let mut mine = vec![1i64; 32];
                for _ in 0..20 {
                    w.all_reduce_slice(&mut mine, ReduceOp::Max).unwrap();
                    w.barrier().unwrap();
                }
            });
        }
    });
    assert!(grad.iter().all(|&g| g == 3.0));
    assert_eq!(buf.to_vec::<f32>().unwrap(), vec![2.0f32; 64]);
}

#[test]
fn worker_needs_a_process_of_one_worker() {
    let team = Team::host(2).unwrap();
    invalid(team.worker().map(|_| ()), "this process has 2 workers");
    invalid(team.worker_at(2).map(|_| ()), "worker 2 is out of range");
    assert_eq!(team.worker_at(1).unwrap().rank(), 1);
}

#[test]
fn all_to_all_sends_each_rank_its_block() {
    let team = Team::host(3).unwrap();
    let outs = Mutex::new(vec![Vec::new(); 3]);
    team.run(|w| {
        let rank = w.rank();
        let mut input: Vec<i32> = (0..6).map(|j| 10 * rank + j).collect();
        let mut out = vec![0i32; 6];
        {
            let sent = w.wrap(&mut input[..])?;
            let mut received = w.wrap(&mut out[..])?;
            w.all_to_all(&sent, &mut received)?;
            let mut short = [0i32; 5];
            let mut wrong = w.wrap(&mut short[..])?;
            invalid(w.all_to_all(&sent, &mut wrong), "one block");
        }
        outs.lock().unwrap()[rank as usize] = out;
        Ok(())
    })
    .unwrap();
    // Rank 1 gets block 1 (elements 2 and 3) of every rank's input, rank j's at block j.
    assert_eq!(outs.lock().unwrap()[1], vec![2, 3, 12, 13, 22, 23]);
}

#[test]
fn every_collective_has_an_asynchronous_form_that_borrows_its_buffers() {
    let team = Team::host(2).unwrap();
    let seen = Mutex::new(vec![Vec::new(); 2]);
    team.run(|w| {
        let rank = w.rank();
        let mut mine = [rank + 1; 2];
        let mut root = vec![if rank == 0 { 7 } else { 0 }; 2];
        let mut gathered = vec![0i32; 4];
        let mut scattered = vec![0i32; 1];
        let mut exchanged = vec![0i32; 2];
        {
            let input = w.wrap(&mut mine[..])?;
            let mut b = w.wrap(&mut root[..])?;
            w.broadcast_async(&mut b, 0)?.wait()?;
            let mut g = w.wrap(&mut gathered[..])?;
            w.all_gather_async(&input, &mut g)?.wait()?;
            let mut s = w.wrap(&mut scattered[..])?;
            w.reduce_scatter_async(&input, &mut s, ReduceOp::Sum)?
                .wait()?;
            let mut x = w.wrap(&mut exchanged[..])?;
            w.all_to_all_async(&input, &mut x)?.wait()?;
            w.barrier_async()?.wait()?;
            let mut short = [0i32; 3];
            let mut wrong = w.wrap(&mut short[..])?;
            invalid(
                w.all_gather_async(&input, &mut wrong).map(|_| ()),
                "out holds 3 elements",
            );
        }
        let mut all = root;
        all.extend(gathered);
        all.extend(scattered);
        all.extend(exchanged);
        seen.lock().unwrap()[rank as usize] = all;
        Ok(())
    })
    .unwrap();
    let seen = seen.lock().unwrap();
    // Broadcast 7s, gather [1 1 2 2], this rank's sum of a column (3), then block r of each rank.
    assert_eq!(seen[0], vec![7, 7, 1, 1, 2, 2, 3, 1, 2]);
    assert_eq!(seen[1], vec![7, 7, 1, 1, 2, 2, 3, 1, 2]);
}
