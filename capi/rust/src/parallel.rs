//! Data-parallel execution: a [`Team`] of workers, one per device, each running a closure on its
//! own thread; [`Buffer`]s on their devices (nubo's memory, or the application's own slices
//! borrowed without a copy); the compute a [`Worker`] does on them (GEMM, elementwise kernels);
//! its CUDA stream and events; and the collectives. `docs/parallel.md` has the whole story.
//!
//! ```no_run
//! let team = nubo::Team::host(2)?;
//! let mut grads = vec![vec![1.0f32; 1024], vec![2.0f32; 1024]];
//! let slots: Vec<std::sync::Mutex<&mut Vec<f32>>> =
//!     grads.iter_mut().map(std::sync::Mutex::new).collect();
//! team.run(|w| {
//!     let mut mine = slots[w.rank() as usize].lock().unwrap();
//!     w.all_reduce_slice(&mut mine[..], nubo::ReduceOp::Avg) // in place, no copy
//! })?;
//! # Ok::<(), nubo::Error>(())
//! ```

use std::ffi::CString;
use std::fmt;
use std::marker::PhantomData;
use std::ops::Range;
use std::os::raw::{c_int, c_void};
use std::panic::{self, AssertUnwindSafe};
use std::ptr::{self, NonNull};

use crate::fill::Keep;
use crate::{check, ffi, owned, Backend, DeviceReport, Error, Status};

/// `nubo_dtype`, the one element type of the library: buffers hold `F32` to `I64`; `Tf32` is
/// F32 storage multiplied in TensorFloat-32, a compute precision the cost model prices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DType {
    F32,
    F16,
    Bf16,
    I32,
    I64,
    Tf32,
}

impl DType {
    pub(crate) fn raw(self) -> ffi::nubo_dtype {
        match self {
            DType::Tf32 => ffi::NUBO_DTYPE_TF32,
            DType::F32 => ffi::NUBO_DTYPE_F32,
            DType::F16 => ffi::NUBO_DTYPE_F16,
            DType::Bf16 => ffi::NUBO_DTYPE_BF16,
            DType::I32 => ffi::NUBO_DTYPE_I32,
            DType::I64 => ffi::NUBO_DTYPE_I64,
        }
    }

    pub(crate) fn from_raw(raw: ffi::nubo_dtype) -> Result<DType, Error> {
        match raw {
            ffi::NUBO_DTYPE_TF32 => Ok(DType::Tf32),
            ffi::NUBO_DTYPE_F32 => Ok(DType::F32),
            ffi::NUBO_DTYPE_F16 => Ok(DType::F16),
            ffi::NUBO_DTYPE_BF16 => Ok(DType::Bf16),
            ffi::NUBO_DTYPE_I32 => Ok(DType::I32),
            ffi::NUBO_DTYPE_I64 => Ok(DType::I64),
            other => Err(Error::new(
                Status::Unsupported,
                format!("dtype {other} is not one this crate knows"),
            )),
        }
    }

    /// Bytes per element; 0 for `Tf32`, which no buffer holds.
    pub fn size(self) -> usize {
        match self {
            DType::F16 | DType::Bf16 => 2,
            DType::F32 | DType::I32 => 4,
            DType::I64 => 8,
            DType::Tf32 => 0,
        }
    }

    /// A name as users of this field spell it, in any case ("f32", "fp32", "float32", "half",
    /// "bfloat16", "int64", "tf32"), read by the library (`nubo_units_parse_dtype`).
    pub fn parse(text: &str) -> Result<DType, Error> {
        let text = crate::c_string("dtype", text.as_bytes())?;
        let mut raw: ffi::nubo_dtype = 0;
        // SAFETY: a NUL-terminated string and a valid out pointer, both live for the call.
        check(unsafe { ffi::nubo_units_parse_dtype(text.as_ptr(), &mut raw) })?;
        DType::from_raw(raw)
    }

    /// "f32", "f16", "bf16", "i32", "i64" or "tf32".
    pub fn name(self) -> &'static str {
        // SAFETY: the library returns a static NUL-terminated string for every value.
        let name = unsafe { std::ffi::CStr::from_ptr(ffi::nubo_units_dtype_name(self.raw())) };
        name.to_str().unwrap_or("unknown")
    }
}

/// IEEE binary16, as its bits (arithmetic is the application's business).
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct F16(pub u16);

/// bfloat16 (the top half of an f32), as its bits.
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Bf16(pub u16);

impl Bf16 {
    /// Rounds to nearest even, as nubo and CUDA do.
    pub fn from_f32(x: f32) -> Bf16 {
        let bits = x.to_bits();
        if x.is_nan() {
            return Bf16(((bits >> 16) | 0x40) as u16);
        }
        Bf16(((bits + 0x7fff + ((bits >> 16) & 1)) >> 16) as u16)
    }
    pub fn to_f32(self) -> f32 {
        f32::from_bits((self.0 as u32) << 16)
    }
}

/// A type whose slices a worker can use in place: the Rust side of [`DType`].
///
/// # Safety
/// `DTYPE` must describe `Self`'s size and layout exactly.
pub unsafe trait Element: Copy + 'static {
    const DTYPE: DType;
}
unsafe impl Element for f32 {
    const DTYPE: DType = DType::F32;
}
unsafe impl Element for F16 {
    const DTYPE: DType = DType::F16;
}
unsafe impl Element for Bf16 {
    const DTYPE: DType = DType::Bf16;
}
unsafe impl Element for i32 {
    const DTYPE: DType = DType::I32;
}
unsafe impl Element for i64 {
    const DTYPE: DType = DType::I64;
}

/// A reduction operator. Integer `Avg` rounds towards zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    Sum,
    Avg,
    Max,
    Min,
}

impl ReduceOp {
    pub(crate) fn raw(self) -> ffi::nubo_reduce_op {
        match self {
            ReduceOp::Sum => ffi::NUBO_REDUCE_SUM,
            ReduceOp::Avg => ffi::NUBO_REDUCE_AVG,
            ReduceOp::Max => ffi::NUBO_REDUCE_MAX,
            ReduceOp::Min => ffi::NUBO_REDUCE_MIN,
        }
    }
}

/// `C = alpha op(A) op(B) + beta C`, row-major: `op(A)` is m x k, `op(B)` k x n, C m x n. A
/// leading dimension of 0 means packed. The type is the buffers' (F32, F16 or Bf16); products
/// accumulate in f32.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gemm {
    pub trans_a: bool,
    pub trans_b: bool,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub alpha: f32,
    pub beta: f32,
    pub lda: usize,
    pub ldb: usize,
    pub ldc: usize,
}

impl Gemm {
    /// C = A B for m x k and k x n matrices, packed.
    pub fn new(m: usize, n: usize, k: usize) -> Gemm {
        Gemm {
            trans_a: false,
            trans_b: false,
            m,
            n,
            k,
            alpha: 1.0,
            beta: 0.0,
            lda: 0,
            ldb: 0,
            ldc: 0,
        }
    }
}

/// The native objects behind a worker, for the application's own CUDA work; null and -1 on
/// host and sim workers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NativeHandles {
    pub cuda_stream: *mut c_void,
    pub cublas_handle: *mut c_void,
    pub nccl_comm: *mut c_void,
    pub device_ordinal: i32,
}

// ---- Team ----------------------------------------------------------------------------------

/// Workers, one per device, each running the closure given to [`Team::run`] on its own thread.
pub struct Team {
    raw: NonNull<ffi::nubo_team>,
}

// SAFETY: a team handle may be used from any thread, one call at a time (&mut for run).
unsafe impl Send for Team {}
unsafe impl Sync for Team {}

impl Drop for Team {
    fn drop(&mut self) {
        // SAFETY: the handle came from nubo_team_create* and is freed once, here.
        unsafe { ffi::nubo_team_free(self.raw.as_ptr()) }
    }
}

pub use crate::options::TeamOptions;

/// The C options: plain values, so nothing needs keeping past the conversion.
fn options(given: &TeamOptions) -> Result<ffi::nubo_team_options, Error> {
    given.to_raw(&mut Keep::default())
}

fn team_from(raw: *mut ffi::nubo_team) -> Result<Team, Error> {
    NonNull::new(raw)
        .map(|raw| Team { raw })
        .ok_or_else(|| Error::new(Status::Internal, "nubo made no team"))
}

/// What a worker's closure gets through the C callback.
struct RunState<'f> {
    body: &'f (dyn Fn(&Worker) -> Result<(), Error> + Sync),
}

unsafe extern "C" fn run_worker(
    worker: *mut ffi::nubo_worker,
    user: *mut c_void,
) -> ffi::nubo_status {
    // SAFETY: `user` is the RunState that Team::run keeps alive during the run.
    let state = &*(user as *const RunState);
    let w = Worker {
        raw: worker,
        _run: PhantomData,
    };
    let failure = match panic::catch_unwind(AssertUnwindSafe(|| (state.body)(&w))) {
        Ok(Ok(())) => return ffi::NUBO_OK,
        Ok(Err(e)) => (e.status.raw(), e.message),
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".to_string());
            (ffi::NUBO_ERR_CANCELLED, format!("panicked: {what}"))
        }
    };
    let message = CString::new(failure.1.replace('\0', " ")).unwrap_or_default();
    ffi::nubo_worker_fail(worker, failure.0, message.as_ptr())
}

impl Team {
    /// `workers` workers on the host CPU (1 to 1024), sharing its cores.
    pub fn host(workers: usize) -> Result<Team, Error> {
        Team::host_with(workers, &TeamOptions::default())
    }

    /// The same, with options (a timeout, cpu_bind).
    pub fn host_with(workers: usize, given: &TeamOptions) -> Result<Team, Error> {
        let o = options(given)?;
        let mut raw = ptr::null_mut();
        // SAFETY: valid options and output pointer.
        check(unsafe { ffi::nubo_team_create_host(workers, &o, &mut raw) })?;
        team_from(raw)
    }

    /// One worker per device of `report` at `indices` (as [`DeviceReport::select`] gives them).
    pub fn from_report(report: &DeviceReport, indices: &[usize]) -> Result<Team, Error> {
        let o = options(&TeamOptions::default())?;
        let mut raw = ptr::null_mut();
        // SAFETY: the report is live, `indices` has `len` elements, the outputs are valid.
        check(unsafe {
            ffi::nubo_team_create(report.raw(), indices.as_ptr(), indices.len(), &o, &mut raw)
        })?;
        team_from(raw)
    }

    /// Joins the job that started this process (nubo-run, torchrun, srun, mpirun, SkyPilot)
    /// for use from the caller's own loop: [`Team::worker`] is this process's worker, called
    /// from any thread, the main thread included. Without a launcher: a team of this process
    /// alone, so the same program runs on its own.
    ///
    /// ```no_run
    /// let team = nubo::Team::join()?;
    /// let w = team.worker()?;
    /// let mut grad = vec![1.0f32; 1024];
    /// for _step in 0..10 {
    ///     w.all_reduce_slice(&mut grad, nubo::ReduceOp::Avg)?;
    /// }
    /// # Ok::<(), nubo::Error>(())
    /// ```
    pub fn join() -> Result<Team, Error> {
        Team::join_with(&TeamOptions::default())
    }

    /// The same, with options (a timeout; cpu_bind also pins the calling thread).
    pub fn join_with(given: &TeamOptions) -> Result<Team, Error> {
        let o = options(given)?;
        let mut raw = ptr::null_mut();
        // SAFETY: valid options and output pointer.
        check(unsafe { ffi::nubo_team_join(&o, &mut raw) })?;
        team_from(raw)
    }

    /// This process's worker, when it has one (a team from [`Team::join`]); usable from any
    /// thread while the team lives.
    pub fn worker(&self) -> Result<Worker<'_>, Error> {
        if self.local_size() != 1 {
            return Err(Error::new(
                Status::InvalidArgument,
                format!(
                    "this process has {} workers: take one with worker_at(i), or run a \
                     closure on each with run()",
                    self.local_size()
                ),
            ));
        }
        self.worker_at(0)
    }

    /// This process's worker number `local_rank` (0 .. local_size() - 1).
    pub fn worker_at(&self, local_rank: i32) -> Result<Worker<'_>, Error> {
        let mut raw = ptr::null_mut();
        // SAFETY: a live handle and a valid output pointer; the worker lives as long as the
        // team, which the returned Worker borrows.
        check(unsafe { ffi::nubo_team_worker(self.raw.as_ptr(), local_rank, &mut raw) })?;
        Ok(Worker {
            raw,
            _run: PhantomData,
        })
    }

    /// Joins the job nubo-run (or torchrun, srun, mpirun, SkyPilot) started; a team of this
    /// process alone without one.
    pub fn from_env() -> Result<Team, Error> {
        let o = options(&TeamOptions::default())?;
        let mut raw = ptr::null_mut();
        // SAFETY: valid options and output pointer.
        check(unsafe { ffi::nubo_team_from_env(&o, &mut raw) })?;
        team_from(raw)
    }

    /// The C handle, for a trainer that borrows the team.
    pub(crate) fn raw(&self) -> *mut ffi::nubo_team {
        self.raw.as_ptr()
    }

    /// Workers in the team, in every process.
    pub fn size(&self) -> i32 {
        // SAFETY: a live handle.
        unsafe { ffi::nubo_team_size(self.raw.as_ptr()) }
    }

    /// Workers in this process.
    pub fn local_size(&self) -> i32 {
        // SAFETY: a live handle.
        unsafe { ffi::nubo_team_local_size(self.raw.as_ptr()) }
    }

    /// What the team is made of: a line per worker of this process (device, GEMM threads and
    /// why, pinned CPUs), then the link between the processes.
    pub fn describe(&self) -> Result<String, Error> {
        // SAFETY: a live handle; read_text passes a valid buffer (or NULL and 0).
        crate::read_text("nubo_team_describe", |buf, capacity, needed| unsafe {
            ffi::nubo_team_describe(self.raw.as_ptr(), buf, capacity, needed)
        })
    }

    /// Runs `body` on every worker of this process at once, each on its own thread, and returns
    /// when all have returned. The first failure (an `Err`, or a panic, reported as Cancelled)
    /// stops the others' collectives and is returned, naming the rank.
    pub fn run<F>(&self, body: F) -> Result<(), Error>
    where
        F: Fn(&Worker) -> Result<(), Error> + Sync,
    {
        let state = RunState { body: &body };
        // SAFETY: `state` outlives the call, which returns once every worker has returned.
        check(unsafe {
            ffi::nubo_team_run(
                self.raw.as_ptr(),
                Some(run_worker),
                &state as *const RunState as *mut c_void,
            )
        })
    }
}

// ---- Worker --------------------------------------------------------------------------------

/// One member of a team: [`Team::worker`] (borrowing the team), or lent to [`Team::run`]'s
/// closure for the run. Everything it does is ordered on its stream (on CUDA: see
/// [`Worker::use_stream`] and docs/parallel.md).
pub struct Worker<'run> {
    raw: *mut ffi::nubo_worker,
    _run: PhantomData<&'run ()>,
}

// SAFETY: the library takes a worker's calls from any thread, one at a time (each call holds
// the worker); the handle stays valid for 'run, which borrows the team.
unsafe impl Send for Worker<'_> {}
unsafe impl Sync for Worker<'_> {}

impl<'run> Worker<'run> {
    fn info(&self) -> ffi::nubo_worker_info {
        let mut info = ffi::nubo_worker_info::new();
        // SAFETY: the worker is live during the run; `info` is valid.
        check(unsafe { ffi::nubo_worker_get_info(self.raw, &mut info) })
            .expect("a live worker always has its info");
        info
    }

    /// In the team: 0 .. size() - 1.
    pub fn rank(&self) -> i32 {
        self.info().rank
    }
    pub fn size(&self) -> i32 {
        self.info().size
    }
    pub fn local_rank(&self) -> i32 {
        self.info().local_rank
    }
    /// What serves its device; None for a backend newer than this crate.
    pub fn backend(&self) -> Option<Backend> {
        Backend::from_raw(self.info().backend)
    }
    pub fn device_name(&self) -> String {
        // SAFETY: the name stays valid while the team lives.
        unsafe { owned(self.info().device_name) }
    }
    /// The threads its GEMMs run on the host (its share of the cores); 0 on a GPU.
    pub fn host_threads(&self) -> i32 {
        self.info().host_threads
    }
    /// The CPUs it is pinned to while it runs (cpu_bind); empty when it floats.
    pub fn cpus(&self) -> Vec<i32> {
        let info = self.info();
        if info.cpus.is_null() {
            return Vec::new();
        }
        // SAFETY: cpu_count ints at cpus, valid while the team lives.
        unsafe { std::slice::from_raw_parts(info.cpus, info.cpu_count) }.to_vec()
    }

    /// This worker's rows of a batch of n: n / size each, the first n % size ranks one more.
    pub fn shard(&self, n: usize) -> Range<usize> {
        let (mut begin, mut count) = (0usize, 0usize);
        // SAFETY: a live worker and valid outputs.
        check(unsafe { ffi::nubo_worker_shard(self.raw, n, &mut begin, &mut count) })
            .expect("shard of a live worker");
        begin..begin + count
    }

    // ---- Memory ----------------------------------------------------------------------------

    /// `count` elements of `dtype` on this worker's device.
    pub fn buffer(&self, dtype: DType, count: usize) -> Result<Buffer<'static>, Error> {
        let mut raw = ptr::null_mut();
        // SAFETY: a live worker and a valid output.
        check(unsafe { ffi::nubo_buffer_create(self.raw, dtype.raw(), count, &mut raw) })?;
        Buffer::from_raw(raw)
    }

    /// A buffer over the application's slice, without a copy (host and sim workers): every
    /// call on the buffer works on the slice itself, which stays borrowed while the buffer
    /// lives.
    pub fn wrap<'s, T: Element>(&self, data: &'s mut [T]) -> Result<Buffer<'s>, Error> {
        let mut raw = ptr::null_mut();
        // SAFETY: the slice is valid for data.len() elements of T and outlives the buffer
        // (the buffer borrows it for 's).
        check(unsafe {
            ffi::nubo_worker_wrap(
                self.raw,
                data.as_mut_ptr() as *mut c_void,
                T::DTYPE.raw(),
                data.len(),
                &mut raw,
            )
        })?;
        Buffer::from_raw(raw)
    }

    /// A buffer over `count` elements at `data`: host memory for host and sim workers, device
    /// memory of this worker's GPU for CUDA workers (checked with the driver).
    ///
    /// # Safety
    /// `data` must stay valid for `count` elements of `dtype` while the buffer lives.
    pub unsafe fn wrap_raw(
        &self,
        data: *mut c_void,
        dtype: DType,
        count: usize,
    ) -> Result<Buffer<'static>, Error> {
        let mut raw = ptr::null_mut();
        check(ffi::nubo_worker_wrap(
            self.raw,
            data,
            dtype.raw(),
            count,
            &mut raw,
        ))?;
        Buffer::from_raw(raw)
    }

    /// A buffer over a DLPack tensor (a `DLManagedTensor*`), without a copy. On success the
    /// buffer owns the tensor and calls its deleter when freed; on error it stays the caller's.
    ///
    /// # Safety
    /// `tensor` must be a live `DLManagedTensor` (DLPack 0.6) not handed to anyone else.
    pub unsafe fn from_dlpack(&self, tensor: *mut c_void) -> Result<Buffer<'static>, Error> {
        let mut raw = ptr::null_mut();
        check(ffi::nubo_buffer_from_dlpack(self.raw, tensor, &mut raw))?;
        Buffer::from_raw(raw)
    }

    /// Device memory nubo holds on this worker's device (wrapped memory not counted).
    pub fn bytes_in_use(&self) -> usize {
        let mut out = 0usize;
        // SAFETY: a live worker and a valid output.
        check(unsafe { ffi::nubo_worker_bytes_in_use(self.raw, &mut out) })
            .expect("bytes_in_use of a live worker");
        out
    }

    // ---- Compute ---------------------------------------------------------------------------

    /// `c = alpha op(a) op(b) + beta c` (see [`Gemm`]); InvalidArgument when a buffer is too
    /// small for the shape, `c` overlaps `a` or `b`, or the types differ.
    pub fn gemm(&self, g: &Gemm, a: &Buffer, b: &Buffer, c: &mut Buffer) -> Result<(), Error> {
        let mut raw = ffi::nubo_worker_gemm_request::new();
        // SAFETY: `raw` is valid with struct_size set.
        check(unsafe {
            ffi::nubo_worker_gemm_request_init(&mut raw, std::mem::size_of_val(&raw))
        })?;
        raw.trans_a = g.trans_a as c_int;
        raw.trans_b = g.trans_b as c_int;
        raw.m = g.m;
        raw.n = g.n;
        raw.k = g.k;
        raw.alpha = g.alpha;
        raw.beta = g.beta;
        raw.lda = g.lda;
        raw.ldb = g.ldb;
        raw.ldc = g.ldc;
        // SAFETY: live worker and buffers.
        check(unsafe { ffi::nubo_worker_gemm(self.raw, &raw, a.raw(), b.raw(), c.raw()) })
    }

    /// Every element = value, converted to the buffer's type.
    pub fn fill(&self, x: &mut Buffer, value: f64) -> Result<(), Error> {
        // SAFETY: live worker and buffer.
        check(unsafe { ffi::nubo_worker_fill(self.raw, x.raw(), value) })
    }

    /// `x *= alpha` (F32, F16, Bf16).
    pub fn scale(&self, x: &mut Buffer, alpha: f32) -> Result<(), Error> {
        // SAFETY: live worker and buffer.
        check(unsafe { ffi::nubo_worker_scale(self.raw, x.raw(), alpha) })
    }

    /// `y += alpha x` (F32, F16, Bf16).
    pub fn axpy(&self, alpha: f32, x: &Buffer, y: &mut Buffer) -> Result<(), Error> {
        // SAFETY: live worker and buffers.
        check(unsafe { ffi::nubo_worker_axpy(self.raw, alpha, x.raw(), y.raw()) })
    }

    /// `out = input` converted between F32, F16 and Bf16 (the same length).
    pub fn cast(&self, input: &Buffer, out: &mut Buffer) -> Result<(), Error> {
        // SAFETY: live worker and buffers.
        check(unsafe { ffi::nubo_worker_cast(self.raw, input.raw(), out.raw()) })
    }

    /// `grads *= inv_scale`, then `stats` (2 f32) gets `stats[0] = 1` on a non-finite element
    /// and `stats[1] +=` the sum of the squares: a loss scaler's unscale and a clipper's norm.
    pub fn unscale_check(
        &self,
        grads: &mut Buffer,
        inv_scale: f32,
        stats: &mut Buffer,
    ) -> Result<(), Error> {
        // SAFETY: live worker and buffers.
        check(unsafe {
            ffi::nubo_worker_unscale_check(self.raw, grads.raw(), inv_scale, stats.raw())
        })
    }

    /// The fused update of `master` (f32) from `grads` (F32, F16 or Bf16) with the state `m`
    /// (SGD's velocity, Adam's first moment) and `v` (Adam's second; None for SGD); `params`,
    /// when given, receives the result in its own type.
    pub fn optimizer_step(
        &self,
        update: &crate::OptimizerUpdate,
        master: &mut Buffer,
        grads: &Buffer,
        m: &mut Buffer,
        v: Option<&mut Buffer>,
        params: Option<&mut Buffer>,
    ) -> Result<(), Error> {
        let raw = update.to_raw()?;
        let v = v.map_or(ptr::null_mut(), |b| b.raw());
        let p = params.map_or(ptr::null_mut(), |b| b.raw());
        // SAFETY: live worker and buffers; `raw` outlives the call.
        check(unsafe {
            ffi::nubo_worker_optimizer_step(
                self.raw,
                &raw,
                master.raw(),
                grads.raw(),
                m.raw(),
                v,
                p,
            )
        })
    }

    pub(crate) fn raw(&self) -> *mut ffi::nubo_worker {
        self.raw
    }

    /// Blocks until everything this worker queued has finished.
    pub fn synchronize(&self) -> Result<(), Error> {
        // SAFETY: a live worker.
        check(unsafe { ffi::nubo_worker_synchronize(self.raw) })
    }

    // ---- Streams and events ----------------------------------------------------------------

    pub fn native(&self) -> Result<NativeHandles, Error> {
        let mut h = ffi::nubo_worker_native_info::new();
        // SAFETY: a live worker and a valid output.
        check(unsafe { ffi::nubo_worker_native(self.raw, &mut h) })?;
        Ok(NativeHandles {
            cuda_stream: h.cuda_stream,
            cublas_handle: h.cublas_handle,
            nccl_comm: h.nccl_comm,
            device_ordinal: h.device_ordinal,
        })
    }

    /// Queue everything from now on, collectives included, on `stream` (a `cudaStream_t` of
    /// this worker's GPU; null is CUDA's default stream), after the work queued so far.
    ///
    /// # Safety
    /// `stream` must be a live CUDA stream of this worker's device (or null) and outlive its
    /// use: nubo queues work on it.
    pub unsafe fn use_stream(&self, stream: *mut c_void) -> Result<(), Error> {
        check(ffi::nubo_worker_use_stream(self.raw, stream))
    }

    pub fn use_own_stream(&self) -> Result<(), Error> {
        // SAFETY: a live worker.
        check(unsafe { ffi::nubo_worker_use_own_stream(self.raw) })
    }

    /// An event at the current end of this worker's stream.
    pub fn record_event(&self) -> Result<Event, Error> {
        let mut raw = ptr::null_mut();
        // SAFETY: a live worker and a valid output.
        check(unsafe { ffi::nubo_worker_record_event(self.raw, &mut raw) })?;
        NonNull::new(raw)
            .map(|raw| Event { raw })
            .ok_or_else(|| Error::new(Status::Internal, "nubo recorded no event"))
    }

    /// This worker's later work waits for `event`, without blocking the thread.
    pub fn wait_event(&self, event: &Event) -> Result<(), Error> {
        // SAFETY: a live worker and event.
        check(unsafe { ffi::nubo_worker_wait_event(self.raw, event.raw.as_ptr()) })
    }

    /// This worker's later work waits for a `cudaEvent_t` the application recorded.
    ///
    /// # Safety
    /// `event` must be a live CUDA event.
    pub unsafe fn wait_native_event(&self, event: *mut c_void) -> Result<(), Error> {
        check(ffi::nubo_worker_wait_native_event(self.raw, event))
    }

    // ---- Collectives: generated (src/collectives.rs) ----------------------------------------

    /// [`Worker::all_reduce`] on a slice, in place (host and sim workers).
    pub fn all_reduce_slice<T: Element>(&self, data: &mut [T], op: ReduceOp) -> Result<(), Error> {
        let mut buf = self.wrap(data)?;
        self.all_reduce(&mut buf, op)
    }
}

// ---- Buffer --------------------------------------------------------------------------------

/// Memory on a worker's device. `'a` is the borrow of the application's slice it wraps
/// (`'static` for nubo's own memory). Freed when dropped; it may outlive its team.
pub struct Buffer<'a> {
    raw: NonNull<ffi::nubo_buffer>,
    dtype: DType,
    _borrow: PhantomData<&'a mut [u8]>,
}

// SAFETY: a buffer is used from one thread at a time (&mut for changes); moving it between
// threads is fine.
unsafe impl Send for Buffer<'_> {}

impl fmt::Debug for Buffer<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Buffer")
            .field("dtype", &self.dtype)
            .field("len", &self.len())
            .field("data", &self.data_ptr())
            .finish()
    }
}

impl Drop for Buffer<'_> {
    fn drop(&mut self) {
        // SAFETY: the handle is owned and freed once, here.
        unsafe { ffi::nubo_buffer_free(self.raw.as_ptr()) }
    }
}

impl<'a> Buffer<'a> {
    pub(crate) fn from_raw(raw: *mut ffi::nubo_buffer) -> Result<Buffer<'a>, Error> {
        let raw =
            NonNull::new(raw).ok_or_else(|| Error::new(Status::Internal, "nubo made no buffer"))?;
        // Owned from here: an early return below frees it.
        let mut buffer = Buffer {
            raw,
            dtype: DType::F32,
            _borrow: PhantomData,
        };
        let mut dtype = 0;
        // SAFETY: a live buffer and a valid output.
        check(unsafe { ffi::nubo_buffer_dtype(raw.as_ptr(), &mut dtype) })?;
        buffer.dtype = DType::from_raw(dtype)?;
        Ok(buffer)
    }

    pub(crate) fn raw(&self) -> *mut ffi::nubo_buffer {
        self.raw.as_ptr()
    }

    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// Elements.
    pub fn len(&self) -> usize {
        // SAFETY: a live buffer.
        unsafe { ffi::nubo_buffer_size(self.raw()) }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The device pointer (host memory on host and sim workers).
    pub fn data_ptr(&self) -> *mut c_void {
        // SAFETY: a live buffer.
        unsafe { ffi::nubo_buffer_data(self.raw()) }
    }

    fn check_type<T: Element>(&self) -> Result<(), Error> {
        if T::DTYPE == self.dtype {
            Ok(())
        } else {
            Err(Error::new(
                Status::InvalidArgument,
                format!("the buffer holds {:?}, not {:?}", self.dtype, T::DTYPE),
            ))
        }
    }

    /// Copies `values` in from element `offset`; finished when it returns.
    pub fn write<T: Element>(&mut self, values: &[T], offset: usize) -> Result<(), Error> {
        self.check_type::<T>()?;
        let bytes = std::mem::size_of_val(values);
        // SAFETY: `values` is valid for `bytes` bytes.
        check(unsafe {
            ffi::nubo_buffer_write(
                self.raw(),
                values.as_ptr() as *const c_void,
                bytes,
                offset * self.dtype.size(),
            )
        })
    }

    /// Copies elements out from element `offset` into `out`.
    pub fn read<T: Element>(&self, out: &mut [T], offset: usize) -> Result<(), Error> {
        self.check_type::<T>()?;
        let bytes = std::mem::size_of_val(out);
        // SAFETY: `out` is valid for `bytes` bytes.
        check(unsafe {
            ffi::nubo_buffer_read(
                self.raw(),
                out.as_mut_ptr() as *mut c_void,
                bytes,
                offset * self.dtype.size(),
            )
        })
    }

    /// All elements.
    pub fn to_vec<T: Element + Default>(&self) -> Result<Vec<T>, Error> {
        let mut out = vec![T::default(); self.len()];
        self.read(&mut out, 0)?;
        Ok(out)
    }

    /// A buffer viewing elements `offset .. offset + count` of this one; it keeps nubo's memory
    /// alive, and borrows what this one borrows.
    pub fn slice(&mut self, offset: usize, count: usize) -> Result<Buffer<'a>, Error> {
        let mut raw = ptr::null_mut();
        // SAFETY: a live buffer and a valid output.
        check(unsafe { ffi::nubo_buffer_slice(self.raw(), offset, count, &mut raw) })?;
        Buffer::from_raw(raw)
    }

    /// The buffer as a DLPack tensor (`DLManagedTensor*`, one dimension), sharing its memory;
    /// the consumer calls its deleter when done.
    pub fn to_dlpack(&mut self) -> Result<*mut c_void, Error> {
        let mut out = ptr::null_mut();
        // SAFETY: a live buffer and a valid output.
        check(unsafe { ffi::nubo_buffer_to_dlpack(self.raw(), &mut out) })?;
        Ok(out)
    }
}

// ---- Pending and Event ---------------------------------------------------------------------

/// A collective in flight; dropping it waits (and drops its error).
pub struct Pending<'b> {
    raw: NonNull<ffi::nubo_pending>,
    _buffer: PhantomData<&'b mut ()>,
}

impl Pending<'_> {
    /// The Pending of a collective the library started (`raw` from its `_async` entry point).
    pub(crate) fn started<'b>(raw: *mut ffi::nubo_pending) -> Result<Pending<'b>, Error> {
        NonNull::new(raw)
            .map(|raw| Pending {
                raw,
                _buffer: PhantomData,
            })
            .ok_or_else(|| Error::new(Status::Internal, "nubo started no collective"))
    }

    /// Blocks until the collective has finished; its failure.
    pub fn wait(self) -> Result<(), Error> {
        // SAFETY: a live handle; Drop frees it after.
        check(unsafe { ffi::nubo_pending_wait(self.raw.as_ptr()) })
    }

    pub fn done(&self) -> bool {
        // SAFETY: a live handle.
        unsafe { ffi::nubo_pending_done(self.raw.as_ptr()) != 0 }
    }
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        // SAFETY: owned, freed once.
        unsafe { ffi::nubo_pending_free(self.raw.as_ptr()) }
    }
}

/// A point in a worker's stream ([`Worker::record_event`]).
pub struct Event {
    raw: NonNull<ffi::nubo_event>,
}

// SAFETY: an event may be waited on from any thread.
unsafe impl Send for Event {}
unsafe impl Sync for Event {}

impl Event {
    pub fn done(&self) -> bool {
        // SAFETY: a live event.
        unsafe { ffi::nubo_event_done(self.raw.as_ptr()) != 0 }
    }

    pub fn synchronize(&self) -> Result<(), Error> {
        // SAFETY: a live event.
        check(unsafe { ffi::nubo_event_synchronize(self.raw.as_ptr()) })
    }

    /// The `cudaEvent_t` (null on host and sim workers).
    pub fn native(&self) -> *mut c_void {
        // SAFETY: a live event.
        unsafe { ffi::nubo_event_native(self.raw.as_ptr()) }
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: owned, freed once.
        unsafe { ffi::nubo_event_free(self.raw.as_ptr()) }
    }
}
