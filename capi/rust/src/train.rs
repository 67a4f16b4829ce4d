//! The data-parallel trainer (docs/train.md): an MLP classifier on Fashion-MNIST, trained
//! across a team of workers, with checkpoints that a restarted job continues from.
//!
//! ```no_run
//! use nubo::train::{TrainOptions, Trainer};
//! let mut trainer = Trainer::new(&TrainOptions {
//!     devices: Some("cpu:2".into()),
//!     epochs: 2,
//!     checkpoint_dir: Some("ckpt".into()),
//!     ..Default::default()
//! })?;
//! let mut show = |p: &nubo::train::TrainProgress| {
//!     println!("step {} loss {:.3}", p.step, p.loss);
//!     true // false stops after this step, with a checkpoint
//! };
//! trainer.fit(Some(&mut show))?;
//! println!("accuracy {:.3}", trainer.evaluate()?.accuracy);
//! # Ok::<(), nubo::Error>(())
//! ```
//!
//! A [`Trainer`] is `Send` (one thread at a time, as the C ABI says); [`StopHandle`] asks it to
//! stop from any thread, as an interruption watcher or a signal handler would.

use std::marker::PhantomData;
use std::os::raw::c_int;
use std::path::{Path, PathBuf};
use std::ptr::{self, NonNull};
use std::sync::{Arc, Mutex};

use crate::progress::{Callback, FromRaw};
pub use crate::results::{Evaluation, TrainProgress};
use crate::{
    c_int_of, c_ptr, check, ffi, optional_c_string, optional_path, path_string, read_text, Error,
    Status, Team,
};

/// The optimizer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Optimizer {
    /// SGD with momentum (PyTorch's convention).
    Sgd,
    Adam,
}

/// When fit checkpoints (with a checkpoint_dir).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CheckpointEvery {
    /// Only at the end and when stopped.
    End,
    /// Every N steps.
    Steps(u64),
    /// Daly's interval, from the measured write time and this mean time between interruptions
    /// in seconds (`nubo-train --checkpoint-every auto --mtbi`).
    Auto { mtbi_s: f64 },
}

/// What to train and where. `Default` holds the library's defaults (layers 784-256-128-10, SGD,
/// lr 0.05, momentum 0.9, batch 128, 10 epochs, seed 1, on the CPU).
#[derive(Debug, Clone, PartialEq)]
pub struct TrainOptions {
    /// Layer widths, input first, classes last; empty: the default.
    pub layers: Vec<usize>,
    pub optimizer: Optimizer,
    pub lr: f64,
    pub momentum: f64,
    /// Samples per step, all workers together.
    pub batch: usize,
    /// What fit trains to, in all.
    pub epochs: u32,
    /// Initial parameters and the per-epoch shuffle.
    pub seed: u64,
    /// Gradient bucket size; 0: one all-reduce after backward.
    pub bucket_bytes: usize,
    /// Tune bucket_bytes (cached; NUBO_AUTOTUNE=0 turns it off).
    pub autotune: bool,
    /// "cpu", "cpu:N", "sim:N" or "cuda:I[,J...]"; None: the CPU. Ignored with a team.
    pub devices: Option<String>,
    /// The Fashion-MNIST IDX files; None: /usr/share/datasets/fashion-mnist.
    pub dataset_dir: Option<PathBuf>,
    /// 0: every row; N: the first N rows of the train and test sets.
    pub subset: usize,
    pub checkpoint_dir: Option<PathBuf>,
    pub checkpoint_every: CheckpointEvery,
    /// Refuse a checkpoint written by another team (device kind or worker count).
    pub strict_resume: bool,
    /// Stop training while each checkpoint is written (default: written in the background).
    pub sync_checkpoints: bool,
    /// Start afresh even when checkpoint_dir holds a checkpoint.
    pub fresh: bool,
    /// 0 replicated, 1 optimizer state sharded, 2 and gradients, 3 and parameters.
    pub zero_stage: i32,
    /// F32, Bf16 or F16 (fp32 master weights; F16 with loss scaling).
    pub precision: crate::DType,
    /// F32 gradients carried as Bf16 or F16 (F32: not compressed).
    pub grad_compression: crate::DType,
    /// With grad_compression: each worker's rounding error added to its next step.
    pub error_feedback: bool,
    /// Micro-batches per step.
    pub accumulate: i32,
    /// Clip to this global L2 norm; 0: no clipping.
    pub max_grad_norm: f64,
}

fn train_defaults() -> Result<ffi::nubo_train_options, Error> {
    let mut raw = ffi::nubo_train_options::new();
    // SAFETY: a struct of the size given.
    check(unsafe { ffi::nubo_train_options_init(&mut raw, std::mem::size_of_val(&raw)) })?;
    Ok(raw)
}

impl Default for TrainOptions {
    fn default() -> TrainOptions {
        let raw = train_defaults().expect("nubo_train_options_init refused its own struct");
        TrainOptions {
            layers: Vec::new(),
            optimizer: if raw.optimizer == ffi::NUBO_TRAIN_ADAM {
                Optimizer::Adam
            } else {
                Optimizer::Sgd
            },
            lr: raw.lr,
            momentum: raw.momentum,
            batch: raw.batch,
            epochs: raw.epochs.max(0) as u32,
            seed: raw.seed,
            bucket_bytes: raw.bucket_bytes,
            autotune: raw.autotune != 0,
            devices: None,
            dataset_dir: None,
            subset: raw.subset,
            checkpoint_dir: None,
            checkpoint_every: match raw.checkpoint_every {
                0 => CheckpointEvery::End,
                n => CheckpointEvery::Steps(n),
            },
            strict_resume: raw.strict_resume != 0,
            sync_checkpoints: raw.sync_checkpoints != 0,
            fresh: raw.fresh != 0,
            zero_stage: raw.zero_stage,
            precision: crate::DType::from_raw(raw.precision).unwrap_or(crate::DType::F32),
            grad_compression: crate::DType::from_raw(raw.grad_compression)
                .unwrap_or(crate::DType::F32),
            error_feedback: raw.error_feedback != 0,
            accumulate: raw.accumulate,
            max_grad_norm: raw.max_grad_norm,
        }
    }
}

impl FromRaw for TrainProgress {
    type Raw = ffi::nubo_train_progress;
    unsafe fn from_raw(p: &ffi::nubo_train_progress) -> Result<TrainProgress, Error> {
        Ok(TrainProgress::from(p))
    }
}

/// Called after each step; returning `false` stops after it (with a checkpoint when there is a
/// checkpoint_dir), and fit fails with [`Status::Cancelled`].
pub type TrainProgressFn<'a> = &'a mut dyn FnMut(&TrainProgress) -> bool;

/// The trainer's handle as a [`StopHandle`] sees it: cleared when the trainer is dropped.
struct Shared(Mutex<*mut ffi::nubo_trainer>);

// SAFETY: the pointer is only used under the mutex, for nubo_trainer_request_stop, which the C
// ABI allows from any thread.
unsafe impl Send for Shared {}
unsafe impl Sync for Shared {}

/// Asks a trainer's fit to stop after the step in progress, with a checkpoint; from any thread.
/// After the trainer is dropped it does nothing.
#[derive(Clone)]
pub struct StopHandle(Arc<Shared>);

impl StopHandle {
    pub fn request_stop(&self) {
        let trainer = self.0 .0.lock().unwrap_or_else(|e| e.into_inner());
        if !trainer.is_null() {
            // SAFETY: non-null while the trainer lives (its Drop clears it under this lock).
            unsafe { ffi::nubo_trainer_request_stop(*trainer) }
        }
    }
}

/// A trainer: its data, its team (its own, or a borrowed [`Team`] for `'team`) and its model.
pub struct Trainer<'team> {
    raw: NonNull<ffi::nubo_trainer>,
    shared: Arc<Shared>,
    _team: PhantomData<&'team Team>,
}

// SAFETY: the C trainer is used by one thread at a time, which &mut self ensures; it may move.
unsafe impl Send for Trainer<'_> {}

impl Trainer<'static> {
    /// Loads the data, builds a team from `options.devices` and the model, and (with a
    /// checkpoint_dir, unless fresh) continues from the newest checkpoint there that verifies.
    /// A missing dataset is NotFound, a damaged one Corrupt, layers that do not fit the data or
    /// a bad devices spec InvalidArgument.
    pub fn new(options: &TrainOptions) -> Result<Trainer<'static>, Error> {
        Trainer::create(options, ptr::null_mut())
    }
}

impl<'team> Trainer<'team> {
    /// The same, training on `team` (which must outlive the trainer).
    pub fn with_team(team: &'team Team, options: &TrainOptions) -> Result<Trainer<'team>, Error> {
        Trainer::create(options, team.raw())
    }

    fn create(options: &TrainOptions, team: *mut ffi::nubo_team) -> Result<Trainer<'team>, Error> {
        let devices = optional_c_string("devices", options.devices.as_deref())?;
        let dataset = optional_path("dataset_dir", options.dataset_dir.as_deref())?;
        let checkpoints = optional_path("checkpoint_dir", options.checkpoint_dir.as_deref())?;
        let mut o = train_defaults()?;
        if !options.layers.is_empty() {
            o.layers = options.layers.as_ptr();
            o.layer_count = options.layers.len();
        }
        o.optimizer = match options.optimizer {
            Optimizer::Sgd => ffi::NUBO_TRAIN_SGD,
            Optimizer::Adam => ffi::NUBO_TRAIN_ADAM,
        };
        o.lr = options.lr;
        o.momentum = options.momentum;
        o.batch = options.batch;
        o.epochs = c_int_of("epochs", options.epochs)?;
        o.seed = options.seed;
        o.bucket_bytes = options.bucket_bytes;
        o.autotune = c_int::from(options.autotune);
        o.devices = c_ptr(&devices);
        o.team = team;
        o.dataset_dir = c_ptr(&dataset);
        o.subset = options.subset;
        o.checkpoint_dir = c_ptr(&checkpoints);
        match options.checkpoint_every {
            CheckpointEvery::End => o.checkpoint_every = 0,
            CheckpointEvery::Steps(n) => o.checkpoint_every = n,
            CheckpointEvery::Auto { mtbi_s } => {
                o.checkpoint_auto = 1;
                o.mtbi_s = mtbi_s;
            }
        }
        o.strict_resume = c_int::from(options.strict_resume);
        o.sync_checkpoints = c_int::from(options.sync_checkpoints);
        o.fresh = c_int::from(options.fresh);
        o.zero_stage = options.zero_stage;
        o.precision = options.precision.raw();
        o.grad_compression = options.grad_compression.raw();
        o.error_feedback = c_int::from(options.error_feedback);
        o.accumulate = options.accumulate;
        o.max_grad_norm = options.max_grad_norm;
        let mut raw = ptr::null_mut();
        // SAFETY: the options, the layers and the strings outlive the call (create copies
        // them); the team, when given, outlives the trainer through 'team.
        check(unsafe { ffi::nubo_trainer_create(&o, &mut raw) })?;
        let raw = NonNull::new(raw)
            .ok_or_else(|| Error::new(Status::Internal, "nubo_trainer_create gave NULL"))?;
        Ok(Trainer {
            raw,
            shared: Arc::new(Shared(Mutex::new(raw.as_ptr()))),
            _team: PhantomData,
        })
    }

    /// Trains until `epochs` epochs are done in all. `progress` (None: none) is called on this
    /// thread after each step; a panic in it is resumed once fit has returned.
    pub fn fit(&mut self, progress: Option<TrainProgressFn<'_>>) -> Result<(), Error> {
        let mut callback = Callback::new(progress);
        let (function, user) = callback.raw();
        // SAFETY: a live trainer used by this thread only; `callback` outlives the call.
        let raw = unsafe { ffi::nubo_trainer_fit(self.raw.as_ptr(), function, user) };
        callback.finish(raw)
    }

    pub fn evaluate(&mut self) -> Result<Evaluation, Error> {
        let mut e = ffi::nubo_train_evaluation_info::new();
        // SAFETY: a live trainer and an out-struct of the size it says.
        check(unsafe { ffi::nubo_trainer_evaluate(self.raw.as_ptr(), &mut e) })?;
        Ok(Evaluation::from(&e))
    }

    /// A checkpoint, written atomically (a nubo archive).
    pub fn save(&mut self, path: impl AsRef<Path>) -> Result<(), Error> {
        let path = path_string("path", path.as_ref())?;
        // SAFETY: a live trainer and a NUL-terminated path.
        check(unsafe { ffi::nubo_trainer_save(self.raw.as_ptr(), path.as_ptr()) })
    }

    /// Restores a checkpoint: a damaged file is Corrupt, one of another model InvalidArgument,
    /// and the trainer is unchanged then.
    pub fn load(&mut self, path: impl AsRef<Path>) -> Result<(), Error> {
        let path = path_string("path", path.as_ref())?;
        // SAFETY: a live trainer and a NUL-terminated path.
        check(unsafe { ffi::nubo_trainer_load(self.raw.as_ptr(), path.as_ptr()) })
    }

    pub fn steps_done(&self) -> u64 {
        // SAFETY: a live trainer.
        unsafe { ffi::nubo_trainer_steps_done(self.raw.as_ptr()) }
    }

    /// A handle that asks fit to stop from another thread.
    pub fn stop_handle(&self) -> StopHandle {
        StopHandle(self.shared.clone())
    }

    /// The checkpoint the trainer continued from when it was made.
    pub fn resumed_from(&self) -> Result<Option<PathBuf>, Error> {
        let p = self.raw.as_ptr();
        // SAFETY: a live trainer; read_text hands a buffer of the size it asks for.
        let text = read_text(
            "nubo_trainer_resumed_from",
            |buf, capacity, needed| unsafe {
                ffi::nubo_trainer_resumed_from(p, buf, capacity, needed)
            },
        )?;
        Ok((!text.is_empty()).then(|| PathBuf::from(text)))
    }

    /// The run's profile (docs/profile.schema.json), as `nubo-cost plan --profile` reads it and
    /// as [`crate::cost::Workload::profile_json`] takes it.
    pub fn profile_json(&self) -> Result<String, Error> {
        let p = self.raw.as_ptr();
        // SAFETY: as in resumed_from.
        read_text(
            "nubo_trainer_profile_json",
            |buf, capacity, needed| unsafe {
                ffi::nubo_trainer_profile_json(p, buf, capacity, needed)
            },
        )
    }
}

impl Drop for Trainer<'_> {
    fn drop(&mut self) {
        let mut shared = self.shared.0.lock().unwrap_or_else(|e| e.into_inner());
        *shared = ptr::null_mut();
        // SAFETY: the handle came from nubo_trainer_create and is freed once; no StopHandle
        // can reach it any more.
        unsafe { ffi::nubo_trainer_free(self.raw.as_ptr()) }
    }
}
