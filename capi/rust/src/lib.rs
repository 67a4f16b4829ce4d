//! nubo: find, use and price the GPUs of cloud machines.
//!
//! A small safe wrapper over nubo's stable C ABI (`libnubo_c.so`); the raw declarations are in
//! [`ffi`]. Devices: [`discover`] and [`DeviceReport`]. Data-parallel work: [`Team`], whose
//! [`Worker`]s compute on [`Buffer`]s (nubo's memory, or the application's slices without a
//! copy) and combine them with collectives. Archives: [`transfer`]; the network: [`net`];
//! object storage: [`s3`]; the trainer: [`train`]; spot notices: [`interruption`]; time and
//! money: [`cost`].
//! Every call checks the returned status and turns a failure into an [`Error`] that
//! carries the library's own message. Results are copied out of the C report into owned Rust
//! values, so they outlive the report they came from.
//!
//! ```no_run
//! let options = nubo::DiscoverOptions { sim_devices: Some("8xA100-SXM4-80GB".into()),
//!                                       ..Default::default() };
//! let report = nubo::discover(&options)?;
//! for device in report.devices() {
//!     println!("{device}");
//! }
//! let group = report.select(&nubo::SelectRequest { count: 4, ..Default::default() })?;
//! # Ok::<(), nubo::Error>(())
//! ```

mod collectives;
pub mod cost;
mod enums;
pub mod ffi;
mod fill;
pub mod health;
pub mod interruption;
pub mod net;
mod optimizer;
mod options;
mod parallel;
mod progress;
mod results;
pub mod s3;
mod schedule;
pub mod stores;
pub mod train;
pub mod transfer;

pub use health::{health, preflight, DeviceCheck, HealthOptions, PreflightOptions, Verdict};
pub use optimizer::{
    sharded_memory, LossScaling, OptimizerKind, OptimizerUpdate, ShardSlice, ShardedMemory,
    ShardedOptimizer, ShardedOptions, StepResult,
};
pub use parallel::{
    Bf16, Buffer, DType, Element, Event, Gemm, NativeHandles, Pending, ReduceOp, Team, TeamOptions,
    Worker, F16,
};
pub use schedule::{
    schedule, Placement, QueueSource, Schedule, ScheduleMethod, ScheduleOptions, ScheduledJob,
};
pub use stores::{access_policy, copy, is_store_url, sync, CopySummary, SyncSummary};

use std::ffi::{CStr, CString};
use std::fmt;
use std::os::raw::{c_char, c_int};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::ptr::{self, NonNull};

// ---- Errors --------------------------------------------------------------------------------

/// Why a nubo call failed: `nubo_status` without `NUBO_OK`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    InvalidArgument,
    NotFound,
    Unavailable,
    Io,
    Corrupt,
    Timeout,
    Cancelled,
    Unsupported,
    OutOfMemory,
    Internal,
    /// A status this crate does not know (from a newer library): its raw value.
    Other(i32),
}

impl Status {
    fn from_raw(raw: ffi::nubo_status) -> Status {
        match raw {
            ffi::NUBO_ERR_INVALID_ARGUMENT => Status::InvalidArgument,
            ffi::NUBO_ERR_NOT_FOUND => Status::NotFound,
            ffi::NUBO_ERR_UNAVAILABLE => Status::Unavailable,
            ffi::NUBO_ERR_IO => Status::Io,
            ffi::NUBO_ERR_CORRUPT => Status::Corrupt,
            ffi::NUBO_ERR_TIMEOUT => Status::Timeout,
            ffi::NUBO_ERR_CANCELLED => Status::Cancelled,
            ffi::NUBO_ERR_UNSUPPORTED => Status::Unsupported,
            ffi::NUBO_ERR_OUT_OF_MEMORY => Status::OutOfMemory,
            ffi::NUBO_ERR_INTERNAL => Status::Internal,
            other => Status::Other(other),
        }
    }

    /// The `nubo_status` value.
    pub fn raw(self) -> i32 {
        match self {
            Status::InvalidArgument => ffi::NUBO_ERR_INVALID_ARGUMENT,
            Status::NotFound => ffi::NUBO_ERR_NOT_FOUND,
            Status::Unavailable => ffi::NUBO_ERR_UNAVAILABLE,
            Status::Io => ffi::NUBO_ERR_IO,
            Status::Corrupt => ffi::NUBO_ERR_CORRUPT,
            Status::Timeout => ffi::NUBO_ERR_TIMEOUT,
            Status::Cancelled => ffi::NUBO_ERR_CANCELLED,
            Status::Unsupported => ffi::NUBO_ERR_UNSUPPORTED,
            Status::OutOfMemory => ffi::NUBO_ERR_OUT_OF_MEMORY,
            Status::Internal => ffi::NUBO_ERR_INTERNAL,
            Status::Other(raw) => raw,
        }
    }
}

impl fmt::Display for Status {
    /// The library's short name for the status, e.g. "invalid argument".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // SAFETY: nubo_status_string returns a static string for any value, never NULL.
        f.write_str(&unsafe { owned(ffi::nubo_status_string(self.raw())) })
    }
}

/// A failed nubo call: what kind of failure, and the library's message saying what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub status: Status,
    pub message: String,
}

impl Error {
    fn new(status: Status, message: impl Into<String>) -> Error {
        Error {
            status,
            message: message.into(),
        }
    }

    /// The error of the call that just returned `raw` on this thread.
    fn last(raw: ffi::nubo_status) -> Error {
        let status = Status::from_raw(raw);
        // SAFETY: nubo_last_error never returns NULL; its string stays valid until this
        // thread's next failing call, and it is copied before any other call.
        let message = unsafe { owned(ffi::nubo_last_error()) };
        let message = if message.is_empty() {
            status.to_string()
        } else {
            message
        };
        Error { status, message }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// Text from an entry point that writes it into the caller's buffer (nubo_device_report_json and
/// the like): asked first with no buffer, which the library answers with INVALID_ARGUMENT and
/// the size it needs (any other answer is a real error), then with a buffer of that size.
pub(crate) fn read_text(
    function: &str,
    call: impl Fn(*mut c_char, usize, *mut usize) -> ffi::nubo_status,
) -> Result<String, Error> {
    let mut needed = 0usize;
    let raw = call(ptr::null_mut(), 0, &mut needed);
    if raw != ffi::NUBO_ERR_INVALID_ARGUMENT || needed == 0 {
        check(raw)?;
        return Err(Error::new(
            Status::Internal,
            format!("{function} gave no size"),
        ));
    }
    let mut buffer = vec![0u8; needed];
    check(call(
        buffer.as_mut_ptr() as *mut c_char,
        buffer.len(),
        &mut needed,
    ))?;
    // Up to the NUL the library wrote.
    let end = buffer.iter().position(|&b| b == 0).unwrap_or(buffer.len());
    buffer.truncate(end);
    String::from_utf8(buffer)
        .map_err(|e| Error::new(Status::Corrupt, format!("{function} wrote no UTF-8: {e}")))
}

pub(crate) fn check(raw: ffi::nubo_status) -> Result<(), Error> {
    if raw == ffi::NUBO_OK {
        Ok(())
    } else {
        Err(Error::last(raw))
    }
}

/// Copies a C string from nubo; NULL becomes "" (nubo's strings are UTF-8, but a bad byte must
/// not panic: it is replaced).
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string that stays valid during the call.
unsafe fn owned(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        CStr::from_ptr(p).to_string_lossy().into_owned()
    }
}

/// A C list of lines ("one per line") as its non-empty lines.
///
/// # Safety
/// As `owned`.
unsafe fn owned_lines(p: *const c_char) -> Vec<String> {
    owned(p)
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

/// A C map ("key=value, one per line").
///
/// # Safety
/// As `owned`.
unsafe fn owned_pairs(p: *const c_char) -> std::collections::BTreeMap<String, String> {
    owned_lines(p)
        .iter()
        .map(|l| match l.split_once('=') {
            Some((k, v)) => (k.to_string(), v.to_string()),
            None => (l.clone(), String::new()),
        })
        .collect()
}

/// Every record of a handle's info accessor, copied out while the handle lives: `read(i, c)`
/// fills record `i` of `count`, and `convert` makes its owned value.
///
/// # Safety
/// The handle `read` reads is alive for the whole call.
unsafe fn records<C: Default, T>(
    count: usize,
    read: impl Fn(usize, &mut C) -> ffi::nubo_status,
    convert: unsafe fn(&C) -> Result<T, Error>,
) -> Result<Vec<T>, Error> {
    (0..count)
        .map(|i| {
            let mut c = C::default();
            check(read(i, &mut c))?;
            convert(&c)
        })
        .collect()
}

fn c_string(what: &str, bytes: &[u8]) -> Result<CString, Error> {
    CString::new(bytes).map_err(|_| {
        Error::new(
            Status::InvalidArgument,
            format!("{what} contains a NUL byte"),
        )
    })
}

/// An optional text as C takes it: None stays absent (NULL once passed through [`c_ptr`]).
fn optional_c_string(what: &str, value: Option<&str>) -> Result<Option<CString>, Error> {
    value.map(|v| c_string(what, v.as_bytes())).transpose()
}

/// A path as C takes it.
fn path_string(what: &str, path: &std::path::Path) -> Result<CString, Error> {
    c_string(what, path.as_os_str().as_bytes())
}

/// An optional path as C takes it.
fn optional_path(what: &str, path: Option<&std::path::Path>) -> Result<Option<CString>, Error> {
    path.map(|p| path_string(what, p)).transpose()
}

/// The pointer C reads for an optional string: NULL for None. Valid while `value` lives.
fn c_ptr(value: &Option<CString>) -> *const c_char {
    value.as_ref().map_or(ptr::null(), |v| v.as_ptr())
}

fn c_int_of<T: TryInto<c_int> + Copy + fmt::Display>(what: &str, value: T) -> Result<c_int, Error> {
    value.try_into().map_err(|_| {
        Error::new(
            Status::InvalidArgument,
            format!("{what}={value} does not fit a C int"),
        )
    })
}

// ---- Versions ------------------------------------------------------------------------------

/// The version of the loaded libnubo_c.so, "MAJOR.MINOR.PATCH".
pub fn version() -> String {
    // SAFETY: nubo_version returns a static string.
    unsafe { owned(ffi::nubo_version()) }
}

/// Parses every environment variable nubo reads (docs/env.md) that is set; an error
/// ([`Status::InvalidArgument`]) names the first malformed one. Call it first, so that a typo
/// stops the program before any work.
pub fn check_environment() -> Result<(), Error> {
    // SAFETY: no arguments, no preconditions.
    check(unsafe { ffi::nubo_check_environment() })
}

/// `NUBO_ABI_VERSION` of the loaded library; [`ffi::NUBO_ABI_VERSION`] is the one this crate
/// was written for.
pub fn abi_version() -> i32 {
    // SAFETY: no arguments, no preconditions.
    unsafe { ffi::nubo_abi_version() }
}

// ---- Devices -------------------------------------------------------------------------------

pub use enums::{Backend, LinkKind, Severity};
pub use results::{Device, Diagnosis, DriverInfo, HostCpu, Link, Nic};

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Backend::Host => "host",
            Backend::Sim => "sim",
            Backend::Cuda => "cuda",
        })
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

impl Device {
    /// (major, minor), as CUDA numbers it.
    pub fn compute_capability(&self) -> (i32, i32) {
        (self.cc_major, self.cc_minor)
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} ({}, {:.1} GiB, cc {}.{})",
            self.index,
            self.name,
            self.backend,
            self.memory_total as f64 / GIB as f64,
            self.cc_major,
            self.cc_minor
        )
    }
}

const GIB: u64 = 1 << 30;

/// What [`discover`] should look at. `None` fields fall back to the environment variable named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiscoverOptions {
    /// Simulated GPUs, e.g. "8xA100-SXM4-80GB"; `None`: `NUBO_SIM_DEVICES`; "": none.
    pub sim_devices: Option<String>,
    /// A topology file for the simulated GPUs; `None`: `NUBO_SIM_TOPOLOGY`.
    pub sim_topology_file: Option<PathBuf>,
    /// Look for real GPUs through the CUDA plugin (default true).
    pub probe_cuda: bool,
    /// The libnubo_cuda.so to use; `None`: `NUBO_CUDA_PLUGIN`, else the one beside libnubo.
    pub cuda_plugin_path: Option<PathBuf>,
}

impl Default for DiscoverOptions {
    fn default() -> Self {
        DiscoverOptions {
            sim_devices: None,
            sim_topology_file: None,
            probe_cuda: true,
            cuda_plugin_path: None,
        }
    }
}

/// What a group of GPUs must offer; see [`DeviceReport::select`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SelectRequest {
    /// How many devices; 0: every device that qualifies.
    pub count: usize,
    /// Bytes of total memory each device must have.
    pub min_memory: u64,
    /// The oldest compute capability accepted, e.g. (8, 0).
    pub min_compute_capability: (i32, i32),
}

impl Default for SelectRequest {
    fn default() -> Self {
        SelectRequest {
            count: 1,
            min_memory: 0,
            min_compute_capability: (0, 0),
        }
    }
}

/// The C report, freed on drop.
struct Handle(NonNull<ffi::nubo_device_report>);

impl Drop for Handle {
    fn drop(&mut self) {
        // SAFETY: the handle came from nubo_device_discover and is freed exactly once, here.
        unsafe { ffi::nubo_device_report_free(self.0.as_ptr()) }
    }
}

// SAFETY: the C report is a heap object with no tie to the thread that made it, so it may be
// used and freed from another thread; and nubo.h promises that reports are immutable and that
// several threads may read one at once.
unsafe impl Send for Handle {}
unsafe impl Sync for Handle {}

/// What [`discover`] found: the GPUs, the host, the driver, the topology and the diagnoses.
///
/// Owns the C report, which is freed on drop; everything it lists is copied out when it is made,
/// the report itself serves [`select`](Self::select) and [`to_json`](Self::to_json).
pub struct DeviceReport {
    handle: Handle,
    devices: Vec<Device>,
    host: HostCpu,
    driver: DriverInfo,
    links: Vec<Vec<Link>>,
    diagnoses: Vec<Diagnosis>,
    nics: Vec<Nic>,
    gpu_nic: Vec<Vec<Link>>,
    preferred_nic: Vec<Option<usize>>,
}

impl fmt::Debug for DeviceReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeviceReport")
            .field("devices", &self.devices)
            .field("host", &self.host)
            .field("driver", &self.driver)
            .field("links", &self.links)
            .field("diagnoses", &self.diagnoses)
            .finish()
    }
}

/// Finds the devices: the GPUs, the host CPU, the driver, the topology and the diagnoses.
///
/// A bad option (an unknown GPU model, a malformed topology file, ...) is an [`Error`]; a
/// problem of the machine (no driver, no GPU, ...) is a [`Diagnosis`] in the report instead.
pub fn discover(options: &DiscoverOptions) -> Result<DeviceReport, Error> {
    // The CStrings must outlive the call: they are bound here, and the raw struct only borrows.
    let sim_devices = optional_c_string("sim_devices", options.sim_devices.as_deref())?;
    let topology = optional_path("sim_topology_file", options.sim_topology_file.as_deref())?;
    let plugin = optional_path("cuda_plugin_path", options.cuda_plugin_path.as_deref())?;

    let mut raw = ffi::nubo_device_discover_options::new();
    // The size tells nubo how much of the struct this crate knows; it writes no more.
    // SAFETY: raw is a valid, writable nubo_device_discover_options of that size.
    check(unsafe {
        ffi::nubo_device_discover_options_init(
            &mut raw,
            std::mem::size_of::<ffi::nubo_device_discover_options>(),
        )
    })?;
    raw.sim_devices = c_ptr(&sim_devices);
    raw.sim_topology_file = c_ptr(&topology);
    raw.probe_cuda = c_int::from(options.probe_cuda);
    raw.cuda_plugin_path = c_ptr(&plugin);

    let mut handle: *mut ffi::nubo_device_report = ptr::null_mut();
    // SAFETY: raw and the strings it points to are valid for the call; handle is writable.
    check(unsafe { ffi::nubo_device_discover(&raw, &mut handle) })?;
    let handle = NonNull::new(handle).ok_or_else(|| {
        Error::new(
            Status::Internal,
            "nubo_device_discover succeeded without a report",
        )
    })?;
    DeviceReport::from_handle(Handle(handle))
}

impl DeviceReport {
    fn from_handle(handle: Handle) -> Result<DeviceReport, Error> {
        // `handle` frees the report if an error below returns early.
        let report = handle.0.as_ptr() as *const ffi::nubo_device_report;

        // SAFETY (every call in this function): `report` is live while `handle` is, each `out`
        // struct is valid with struct_size set, and the strings it receives belong to the
        // report, which outlives the copies made right away.
        unsafe {
            let mut host = ffi::nubo_host_info::new();
            check(ffi::nubo_device_report_host(report, &mut host))?;
            let host = HostCpu::from_c(&host)?;
            let mut driver = ffi::nubo_driver_info::new();
            check(ffi::nubo_device_report_driver(report, &mut driver))?;
            let driver = DriverInfo::from_c(&driver)?;
            let devices = records(
                ffi::nubo_device_report_device_count(report),
                |i, c| ffi::nubo_device_report_device(report, i, c),
                Device::from_c,
            )?;
            let nics = records(
                ffi::nubo_device_report_nic_count(report),
                |i, c| ffi::nubo_device_report_nic(report, i, c),
                Nic::from_c,
            )?;
            let diagnoses = records(
                ffi::nubo_device_report_diagnosis_count(report),
                |i, c| ffi::nubo_device_report_diagnosis(report, i, c),
                Diagnosis::from_c,
            )?;
            let (count, nic_count) = (devices.len(), nics.len());
            let links = (0..count)
                .map(|i| {
                    records(
                        count,
                        |j, c| ffi::nubo_device_report_link(report, i, j, c),
                        Link::from_c,
                    )
                })
                .collect::<Result<Vec<_>, Error>>()?;
            let gpu_nic = (0..count)
                .map(|i| {
                    records(
                        nic_count,
                        |n, c| ffi::nubo_device_report_gpu_nic(report, i, n, c),
                        Link::from_c,
                    )
                })
                .collect::<Result<Vec<_>, Error>>()?;
            let preferred_nic = (0..count)
                .map(|i| usize::try_from(ffi::nubo_device_report_preferred_nic(report, i)).ok())
                .collect();
            Ok(DeviceReport {
                handle,
                devices,
                host,
                driver,
                links,
                diagnoses,
                nics,
                gpu_nic,
                preferred_nic,
            })
        }
    }

    pub(crate) fn raw(&self) -> *const ffi::nubo_device_report {
        self.handle.0.as_ptr()
    }

    /// The GPUs (cuda or sim), in nubo's order.
    pub fn devices(&self) -> &[Device] {
        &self.devices
    }

    pub fn host(&self) -> &HostCpu {
        &self.host
    }

    pub fn driver(&self) -> &DriverInfo {
        &self.driver
    }

    /// The link matrix: `links()[i][j]` connects devices i and j.
    pub fn links(&self) -> &[Vec<Link>] {
        &self.links
    }

    /// The link between devices i and j; `None` for a bad index.
    pub fn link(&self, i: usize, j: usize) -> Option<&Link> {
        self.links.get(i)?.get(j)
    }

    pub fn diagnoses(&self) -> &[Diagnosis] {
        &self.diagnoses
    }

    /// The machine's network devices.
    pub fn nics(&self) -> &[Nic] {
        &self.nics
    }

    /// How GPU `gpu` reaches NIC `nic` in the PCIe tree (PIX ... SYS); `None` for a bad index.
    pub fn gpu_nic(&self, gpu: usize, nic: usize) -> Option<&Link> {
        self.gpu_nic.get(gpu)?.get(nic)
    }

    /// The index of the NIC GPU `gpu` should use (the closest, then the fastest).
    pub fn preferred_nic(&self, gpu: usize) -> Option<usize> {
        self.preferred_nic.get(gpu).copied().flatten()
    }

    /// The diagnosis with this code, if any.
    pub fn find_diagnosis(&self, code: &str) -> Option<&Diagnosis> {
        self.diagnoses.iter().find(|d| d.code == code)
    }

    /// True when at least one GPU (real or simulated) is listed.
    pub fn has_gpu(&self) -> bool {
        !self.devices.is_empty()
    }

    /// The best-connected group meeting the request, in index order. When no group qualifies
    /// the error has status [`Status::Unavailable`] and the library's reason.
    pub fn select(&self, request: &SelectRequest) -> Result<Vec<Device>, Error> {
        let mut raw = ffi::nubo_device_select_request::new();
        // SAFETY: raw is a valid, writable nubo_device_select_request of that size.
        check(unsafe {
            ffi::nubo_device_select_request_init(
                &mut raw,
                std::mem::size_of::<ffi::nubo_device_select_request>(),
            )
        })?;
        raw.count = c_int_of("count", request.count)?;
        raw.min_memory = request.min_memory;
        raw.min_cc_major = request.min_compute_capability.0;
        raw.min_cc_minor = request.min_compute_capability.1;

        // A group never holds more than every device, so the "call again with a larger
        // capacity" answer cannot happen; the buffer is kept non-empty so that its pointer is
        // never dangling, even for a report without devices.
        let capacity = self.devices.len();
        let mut indices = vec![0usize; capacity.max(1)];
        let mut chosen = 0usize;
        // SAFETY: indices has room for `capacity` entries; raw and chosen are valid.
        check(unsafe {
            ffi::nubo_device_report_select(
                self.raw(),
                &raw,
                indices.as_mut_ptr(),
                capacity,
                &mut chosen,
            )
        })?;
        indices
            .iter()
            .take(chosen.min(capacity))
            .map(|&i| {
                self.devices.get(i).cloned().ok_or_else(|| {
                    Error::new(
                        Status::Internal,
                        format!("nubo_device_report_select gave index {i}"),
                    )
                })
            })
            .collect()
    }

    /// The whole report as JSON (schema: docs/device-report.schema.json in nubo).
    pub fn to_json(&self) -> Result<String, Error> {
        // SAFETY: the report is live; read_text passes a valid buffer (or NULL and 0).
        read_text("nubo_device_report_json", |buf, capacity, needed| unsafe {
            ffi::nubo_device_report_json(self.raw(), buf, capacity, needed)
        })
    }
}
