//! The sharded optimizer (docs/sharded.md): SGD, Adam and AdamW over a flat buffer of parameters
//! the application owns, with the state sharded across the team (ZeRO stages 1 to 3), fp32
//! master weights for Bf16/F16 parameters, fp16's dynamic loss scaling, clipping, 16-bit
//! gradients on the wire, and checkpoints that resume on any world size.
//!
//! ```no_run
//! # fn main() -> Result<(), nubo::Error> {
//! let team = nubo::Team::host(2)?;
//! team.run(|w| {
//!     let options = nubo::ShardedOptions { precision: Some(nubo::DType::Bf16), ..Default::default() };
//!     let padded = nubo::ShardedOptimizer::padded_size(&options, w.size(), &[1000])?;
//!     let mut params = w.buffer(nubo::DType::Bf16, padded)?;
//!     let mut grads = w.buffer(nubo::DType::Bf16, padded)?;
//!     w.fill(&mut params, 0.5)?;
//!     let mut opt = nubo::ShardedOptimizer::new(w, &mut params, &options, &[1000])?;
//!     w.fill(&mut grads, 0.25)?; // backward's gradients
//!     opt.step(Some(&mut grads))?;
//!     Ok(())
//! })?;
//! # Ok(())
//! # }
//! ```

use std::marker::PhantomData;
use std::ptr::{self, NonNull};

use crate::{check, ffi, Buffer, Error, Status, Worker};

pub use crate::enums::{LossScaling, OptimizerKind};
pub use crate::options::ShardedOptions;
pub use crate::results::{ShardedMemory, StepResult};

/// One update's hyperparameters for [`Worker::optimizer_step`]. `Default` is the library's
/// (AdamW, lr 1e-3, step 1, grad_scale 1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OptimizerUpdate {
    pub kind: OptimizerKind,
    pub lr: f32,
    pub momentum: f32,
    pub beta1: f32,
    pub beta2: f32,
    pub eps: f32,
    pub weight_decay: f32,
    /// Adam's t, from 1.
    pub step: i64,
    /// Every gradient is multiplied by it first (1: exact).
    pub grad_scale: f32,
}

impl Default for OptimizerUpdate {
    fn default() -> OptimizerUpdate {
        let mut raw = ffi::nubo_optimizer_update::new();
        // SAFETY: a struct of the size given.
        check(unsafe { ffi::nubo_optimizer_update_init(&mut raw, std::mem::size_of_val(&raw)) })
            .expect("nubo_optimizer_update_init refused its own struct");
        OptimizerUpdate {
            kind: OptimizerKind::from_raw(raw.kind).unwrap_or(OptimizerKind::Adamw),
            lr: raw.lr,
            momentum: raw.momentum,
            beta1: raw.beta1,
            beta2: raw.beta2,
            eps: raw.eps,
            weight_decay: raw.weight_decay,
            step: raw.step,
            grad_scale: raw.grad_scale,
        }
    }
}

impl OptimizerUpdate {
    pub(crate) fn to_raw(self) -> Result<ffi::nubo_optimizer_update, Error> {
        let mut raw = ffi::nubo_optimizer_update::new();
        // SAFETY: a struct of the size given.
        check(unsafe { ffi::nubo_optimizer_update_init(&mut raw, std::mem::size_of_val(&raw)) })?;
        raw.kind = self.kind.raw();
        raw.lr = self.lr;
        raw.momentum = self.momentum;
        raw.beta1 = self.beta1;
        raw.beta2 = self.beta2;
        raw.eps = self.eps;
        raw.weight_decay = self.weight_decay;
        raw.step = self.step;
        raw.grad_scale = self.grad_scale;
        Ok(raw)
    }
}

/// Slice i of the layout: its parameters, where it starts in the flat buffer, the elements it
/// takes there (padded), and each rank's shard of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShardSlice {
    pub size: usize,
    pub offset: usize,
    pub padded: usize,
    pub shard: usize,
    pub shard_offset: usize,
}

/// Bytes per worker of a model of `parameters` at a ZeRO stage (docs/sharded.md's formulas).
pub fn sharded_memory(
    parameters: f64,
    stage: i32,
    kind: OptimizerKind,
    precision: crate::DType,
    world: i32,
) -> Result<ShardedMemory, Error> {
    let mut out = ffi::nubo_sharded_memory_info::new();
    // SAFETY: a valid output with struct_size set.
    check(unsafe {
        ffi::nubo_sharded_memory_per_worker(
            parameters,
            stage,
            kind.raw(),
            precision.raw(),
            world,
            &mut out,
        )
    })?;
    Ok(ShardedMemory::from(&out))
}

/// SGD, Adam or AdamW over a worker's flat parameters; `'p` borrows the parameter buffer, which
/// stages 0 to 2 write every update into.
pub struct ShardedOptimizer<'p> {
    raw: NonNull<ffi::nubo_sharded_optimizer>,
    _params: PhantomData<&'p mut ()>,
}

// SAFETY: the optimizer is driven through its worker, which takes calls from any thread one at a
// time; &mut self serialises this handle's calls.
unsafe impl Send for ShardedOptimizer<'_> {}

impl Drop for ShardedOptimizer<'_> {
    fn drop(&mut self) {
        // SAFETY: owned, freed once here.
        unsafe { ffi::nubo_sharded_optimizer_free(self.raw.as_ptr()) }
    }
}

impl<'p> ShardedOptimizer<'p> {
    /// The elements the flat parameter and gradient buffers must hold for these options in a
    /// team of `world` workers, for slices of these sizes (at least one).
    pub fn padded_size(
        options: &ShardedOptions,
        world: i32,
        slices: &[usize],
    ) -> Result<usize, Error> {
        let mut keep = crate::fill::Keep::default();
        let o = options.to_raw(&mut keep)?;
        let mut out = 0usize;
        // SAFETY: valid options, sizes and output for the call.
        check(unsafe {
            ffi::nubo_sharded_padded_size(&o, world, slices.as_ptr(), slices.len(), &mut out)
        })?;
        Ok(out)
    }

    /// Collective: every rank creates its optimizer together. `params`: this worker's flat
    /// parameters (the padded size, of the precision), rank 0's values broadcast to all;
    /// `slices` empty: one slice of the whole buffer.
    pub fn new(
        worker: &Worker,
        params: &'p mut Buffer,
        options: &ShardedOptions,
        slices: &[usize],
    ) -> Result<ShardedOptimizer<'p>, Error> {
        let mut keep = crate::fill::Keep::default();
        let o = options.to_raw(&mut keep)?;
        let mut raw = ptr::null_mut();
        // SAFETY: a live worker and buffer; the options and sizes outlive the call.
        check(unsafe {
            ffi::nubo_sharded_optimizer_create(
                worker.raw(),
                params.raw(),
                &o,
                slices.as_ptr(),
                slices.len(),
                &mut raw,
            )
        })?;
        let raw = NonNull::new(raw)
            .ok_or_else(|| Error::new(Status::Internal, "nubo made no optimizer"))?;
        Ok(ShardedOptimizer {
            raw,
            _params: PhantomData,
        })
    }

    fn raw(&self) -> *mut ffi::nubo_sharded_optimizer {
        self.raw.as_ptr()
    }

    pub fn slices(&self) -> Result<Vec<ShardSlice>, Error> {
        let mut count = 0usize;
        // SAFETY: a live optimizer and a valid output.
        check(unsafe { ffi::nubo_sharded_optimizer_slice_count(self.raw(), &mut count) })?;
        (0..count)
            .map(|i| {
                let mut s = ffi::nubo_shard_slice_info::new();
                // SAFETY: as above.
                check(unsafe { ffi::nubo_sharded_optimizer_slice(self.raw(), i, &mut s) })?;
                Ok(ShardSlice {
                    size: s.size,
                    offset: s.offset,
                    padded: s.padded,
                    shard: s.shard,
                    shard_offset: s.shard_offset,
                })
            })
            .collect()
    }

    /// Multiply the loss by it before backward (1 without loss scaling).
    pub fn loss_scale(&self) -> Result<f32, Error> {
        let mut out = 0f32;
        // SAFETY: a live optimizer and a valid output.
        check(unsafe { ffi::nubo_sharded_optimizer_loss_scale(self.raw(), &mut out) })?;
        Ok(out)
    }

    /// Updates applied.
    pub fn steps(&self) -> Result<u64, Error> {
        let mut out = 0u64;
        // SAFETY: a live optimizer and a valid output.
        check(unsafe { ffi::nubo_sharded_optimizer_steps(self.raw(), &mut out) })?;
        Ok(out)
    }

    /// Bytes this worker has sent so far, as ring algorithms send them.
    pub fn bytes_communicated(&self) -> Result<u64, Error> {
        let mut out = 0u64;
        // SAFETY: a live optimizer and a valid output.
        check(unsafe { ffi::nubo_sharded_optimizer_bytes_communicated(self.raw(), &mut out) })?;
        Ok(out)
    }

    pub fn set_lr(&mut self, lr: f32) -> Result<(), Error> {
        // SAFETY: a live optimizer.
        check(unsafe { ffi::nubo_sharded_optimizer_set_lr(self.raw(), lr) })
    }

    /// Slice i's gradients combined across the team, started now so that they overlap the rest
    /// of backward; the buffer must not be touched until [`step`](Self::step) returns.
    pub fn reduce(&mut self, slice: usize, grads: &mut Buffer) -> Result<(), Error> {
        // SAFETY: a live optimizer and buffer.
        check(unsafe { ffi::nubo_sharded_optimizer_reduce(self.raw(), slice, grads.raw()) })
    }

    /// The update: from the whole gradient buffer, or (None) the slices reduced before.
    pub fn step(&mut self, grads: Option<&mut Buffer>) -> Result<StepResult, Error> {
        let mut out = ffi::nubo_sharded_step_summary::new();
        let g = grads.map_or(ptr::null_mut(), |b| b.raw());
        // SAFETY: a live optimizer, buffer and output.
        check(unsafe { ffi::nubo_sharded_optimizer_step(self.raw(), g, &mut out) })?;
        Ok(StepResult::from(&out))
    }

    /// Stage 3: slice i's parameters gathered from the team, valid until [`release`](Self::release).
    pub fn gather(&mut self, slice: usize) -> Result<Buffer<'static>, Error> {
        let mut raw = ptr::null_mut();
        // SAFETY: a live optimizer and a valid output.
        check(unsafe { ffi::nubo_sharded_optimizer_gather(self.raw(), slice, &mut raw) })?;
        Buffer::from_raw(raw)
    }

    pub fn prefetch(&mut self, slice: usize) -> Result<(), Error> {
        // SAFETY: a live optimizer.
        check(unsafe { ffi::nubo_sharded_optimizer_prefetch(self.raw(), slice) })
    }

    pub fn release(&mut self, slice: usize) -> Result<(), Error> {
        // SAFETY: a live optimizer.
        check(unsafe { ffi::nubo_sharded_optimizer_release(self.raw(), slice) })
    }

    /// The state as one file whatever the world size (collective).
    pub fn save(&mut self, path: &std::path::Path) -> Result<(), Error> {
        let p = crate::path_string("path", path)?;
        // SAFETY: a live optimizer and a C string that outlives the call.
        check(unsafe { ffi::nubo_sharded_optimizer_save(self.raw(), p.as_ptr()) })
    }

    pub fn load(&mut self, path: &std::path::Path) -> Result<(), Error> {
        let p = crate::path_string("path", path)?;
        // SAFETY: as save.
        check(unsafe { ffi::nubo_sharded_optimizer_load(self.raw(), p.as_ptr()) })
    }
}
