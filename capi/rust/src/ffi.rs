//! Raw declarations of `capi/nubo.h`, written by hand (no bindgen, so no build dependency).
//!
//! Keep this file in step with the header, in the header's order. The unit test at the bottom
//! compares every struct, field and constant with what the C compiler makes of nubo.h (the
//! `nubo_bindings_layout` program), so a change that this file misses fails a test.
//!
//! C enums are declared as `c_int` plus constants rather than as Rust enums: a newer library may
//! return a value this file does not know, which would be undefined behaviour in a Rust enum.

#![allow(non_camel_case_types)]

use std::marker::{PhantomData, PhantomPinned};
use std::os::raw::{c_char, c_double, c_float, c_int, c_uint, c_void};

/// `NUBO_ABI_VERSION` of the nubo.h these declarations copy.
pub const NUBO_ABI_VERSION: c_int = 1;

// ---- Errors and versions -------------------------------------------------------------------

pub type nubo_status = c_int;
pub const NUBO_OK: nubo_status = 0;
pub const NUBO_ERR_INVALID_ARGUMENT: nubo_status = 1;
pub const NUBO_ERR_NOT_FOUND: nubo_status = 2;
pub const NUBO_ERR_UNAVAILABLE: nubo_status = 3;
pub const NUBO_ERR_IO: nubo_status = 4;
pub const NUBO_ERR_CORRUPT: nubo_status = 5;
pub const NUBO_ERR_TIMEOUT: nubo_status = 6;
pub const NUBO_ERR_CANCELLED: nubo_status = 7;
pub const NUBO_ERR_UNSUPPORTED: nubo_status = 8;
pub const NUBO_ERR_OUT_OF_MEMORY: nubo_status = 9;
pub const NUBO_ERR_INTERNAL: nubo_status = 10;

// ---- Devices -------------------------------------------------------------------------------

pub type nubo_backend = c_int;
pub const NUBO_BACKEND_HOST: nubo_backend = 0;
pub const NUBO_BACKEND_SIM: nubo_backend = 1;
pub const NUBO_BACKEND_CUDA: nubo_backend = 2;

pub type nubo_link_kind = c_int;
pub const NUBO_LINK_SELF: nubo_link_kind = 0;
pub const NUBO_LINK_NVLINK: nubo_link_kind = 1;
pub const NUBO_LINK_PIX: nubo_link_kind = 2;
pub const NUBO_LINK_PXB: nubo_link_kind = 3;
pub const NUBO_LINK_PHB: nubo_link_kind = 4;
pub const NUBO_LINK_NODE: nubo_link_kind = 5;
pub const NUBO_LINK_SYS: nubo_link_kind = 6;
pub const NUBO_LINK_UNKNOWN: nubo_link_kind = 7;

pub type nubo_severity = c_int;
pub const NUBO_SEVERITY_INFO: nubo_severity = 0;
pub const NUBO_SEVERITY_WARNING: nubo_severity = 1;
pub const NUBO_SEVERITY_ERROR: nubo_severity = 2;

/// Opaque report handle (the pattern the Rustonomicon recommends for opaque C types: not
/// constructible, not Send/Sync/Unpin by itself).
#[repr(C)]
pub struct nubo_report {
    _private: [u8; 0],
    _marker: PhantomData<(*mut u8, PhantomPinned)>,
}

/// Declares `#[repr(C)]` structs that begin with `uint32_t struct_size`, each with a `new()`
/// that zeroes it (a valid value: integers, doubles and NULL pointers) and sets `struct_size`,
/// which is how nubo knows how many fields the caller has.
macro_rules! sized_structs {
    ($($(#[$meta:meta])* pub struct $name:ident { $(pub $field:ident: $ty:ty,)* })*) => {$(
        $(#[$meta])*
        #[repr(C)]
        #[derive(Debug, Clone, Copy)]
        pub struct $name { $(pub $field: $ty,)* }

        impl $name {
            pub fn new() -> Self {
                // SAFETY: every field is an integer, a double or a raw pointer, for which all
                // bits zero is a valid value (0, 0.0, NULL).
                let mut value: Self = unsafe { std::mem::zeroed() };
                value.struct_size = std::mem::size_of::<Self>() as u32;
                value
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self::new()
            }
        }
    )*};
}

sized_structs! {
    pub struct nubo_discover_options {
        pub struct_size: u32,
        pub sim_devices: *const c_char,
        pub sim_topology_file: *const c_char,
        pub probe_cuda: c_int,
        pub cuda_plugin_path: *const c_char,
    }

    pub struct nubo_device_info {
        pub struct_size: u32,
        pub backend: nubo_backend,
        pub index: c_int,
        pub ordinal: c_int,
        pub name: *const c_char,
        pub model: *const c_char,
        pub uuid: *const c_char,
        pub pci_bus_id: *const c_char,
        pub cc_major: c_int,
        pub cc_minor: c_int,
        pub multiprocessors: c_int,
        pub clock_mhz: c_int,
        pub memory_total: u64,
        pub memory_free: u64,
        pub memory_bandwidth_gbs: f64,
        pub peak_tflops_fp32: f64,
        pub peak_tflops_tf32: f64,
        pub peak_tflops_fp16: f64,
        pub peak_tflops_bf16: f64,
        pub peak_source: *const c_char,
        pub numa_node: c_int,
        pub mig_enabled: c_int,
    }

    pub struct nubo_host_info {
        pub struct_size: u32,
        pub model: *const c_char,
        pub logical_cores: c_int,
        pub physical_cores: c_int,
        pub sockets: c_int,
        pub numa_nodes: c_int,
        pub memory_total: u64,
        pub memory_available: u64,
        pub blas: *const c_char,
    }

    pub struct nubo_driver_info {
        pub struct_size: u32,
        pub loaded: c_int,
        pub driver_version: c_int,
        pub runtime_version: c_int,
        pub driver_release: *const c_char,
    }

    pub struct nubo_link_info {
        pub struct_size: u32,
        pub kind: nubo_link_kind,
        pub nvlinks: c_int,
        pub peer_access: c_int,
        pub name: *const c_char,
    }

    pub struct nubo_diagnosis_info {
        pub struct_size: u32,
        pub code: *const c_char,
        pub severity: nubo_severity,
        pub message: *const c_char,
        pub advice: *const c_char,
    }

    pub struct nubo_select_request {
        pub struct_size: u32,
        pub count: c_int,
        pub min_memory: u64,
        pub min_cc_major: c_int,
        pub min_cc_minor: c_int,
    }
}

// `size_t` is `usize` on every platform Rust and nubo share.
// ---- Parallel (nubo_parallel.h) --------------------------------------------------------------

pub type nubo_dtype = c_int;
pub const NUBO_DTYPE_F32: nubo_dtype = 0;
pub const NUBO_DTYPE_F16: nubo_dtype = 1;
pub const NUBO_DTYPE_BF16: nubo_dtype = 2;
pub const NUBO_DTYPE_I32: nubo_dtype = 3;
pub const NUBO_DTYPE_I64: nubo_dtype = 4;

pub type nubo_reduce_op = c_int;
pub const NUBO_REDUCE_SUM: nubo_reduce_op = 0;
pub const NUBO_REDUCE_AVG: nubo_reduce_op = 1;
pub const NUBO_REDUCE_MAX: nubo_reduce_op = 2;
pub const NUBO_REDUCE_MIN: nubo_reduce_op = 3;

pub type nubo_transpose = c_int;
pub const NUBO_TRANSPOSE_NO: nubo_transpose = 0;
pub const NUBO_TRANSPOSE_YES: nubo_transpose = 1;

macro_rules! opaque {
    ($($name:ident),*) => {$(
        #[repr(C)]
        pub struct $name {
            _private: [u8; 0],
            _marker: PhantomData<(*mut u8, PhantomPinned)>,
        }
    )*};
}
opaque!(
    nubo_team,
    nubo_worker,
    nubo_buffer,
    nubo_pending,
    nubo_event
);

sized_structs! {
    pub struct nubo_team_options {
        pub struct_size: u32,
        pub timeout_seconds: c_double,
        pub cpu_bind: c_int,
    }

    pub struct nubo_worker_info {
        pub struct_size: u32,
        pub rank: c_int,
        pub size: c_int,
        pub local_rank: c_int,
        pub local_size: c_int,
        pub backend: nubo_backend,
        pub device_index: c_int,
        pub device_name: *const c_char,
        pub host_threads: c_int,
        pub cpus: *const c_int,
        pub cpu_count: usize,
    }

    pub struct nubo_gemm {
        pub struct_size: u32,
        pub trans_a: nubo_transpose,
        pub trans_b: nubo_transpose,
        pub m: usize,
        pub n: usize,
        pub k: usize,
        pub alpha: c_float,
        pub beta: c_float,
        pub lda: usize,
        pub ldb: usize,
        pub ldc: usize,
    }

    pub struct nubo_native_handles {
        pub struct_size: u32,
        pub cuda_stream: *mut c_void,
        pub cublas_handle: *mut c_void,
        pub nccl_comm: *mut c_void,
        pub device_ordinal: c_int,
    }
}

pub type nubo_worker_fn =
    unsafe extern "C" fn(worker: *mut nubo_worker, user: *mut c_void) -> nubo_status;

extern "C" {
    pub fn nubo_team_options_init(
        options: *mut nubo_team_options,
        struct_size: usize,
    ) -> nubo_status;
    pub fn nubo_team_create(
        report: *const nubo_report,
        indices: *const usize,
        count: usize,
        options: *const nubo_team_options,
        out: *mut *mut nubo_team,
    ) -> nubo_status;
    pub fn nubo_team_create_host(
        workers: usize,
        options: *const nubo_team_options,
        out: *mut *mut nubo_team,
    ) -> nubo_status;
    pub fn nubo_team_from_env(
        options: *const nubo_team_options,
        out: *mut *mut nubo_team,
    ) -> nubo_status;
    pub fn nubo_team_free(team: *mut nubo_team);
    pub fn nubo_team_size(team: *const nubo_team) -> c_int;
    pub fn nubo_team_local_size(team: *const nubo_team) -> c_int;
    pub fn nubo_team_describe(
        team: *const nubo_team,
        buf: *mut c_char,
        capacity: usize,
        needed: *mut usize,
    ) -> nubo_status;
    pub fn nubo_team_run(
        team: *mut nubo_team,
        f: Option<nubo_worker_fn>,
        user: *mut c_void,
    ) -> nubo_status;
    pub fn nubo_worker_fail(
        worker: *mut nubo_worker,
        status: nubo_status,
        message: *const c_char,
    ) -> nubo_status;
    pub fn nubo_worker_get_info(
        worker: *const nubo_worker,
        out: *mut nubo_worker_info,
    ) -> nubo_status;
    pub fn nubo_worker_shard(
        worker: *const nubo_worker,
        n: usize,
        begin: *mut usize,
        count: *mut usize,
    ) -> nubo_status;

    pub fn nubo_buffer_create(
        worker: *mut nubo_worker,
        dtype: nubo_dtype,
        count: usize,
        out: *mut *mut nubo_buffer,
    ) -> nubo_status;
    pub fn nubo_buffer_free(buffer: *mut nubo_buffer);
    pub fn nubo_buffer_size(buffer: *const nubo_buffer) -> usize;
    pub fn nubo_buffer_bytes(buffer: *const nubo_buffer) -> usize;
    pub fn nubo_buffer_dtype(buffer: *const nubo_buffer, out: *mut nubo_dtype) -> nubo_status;
    pub fn nubo_buffer_write(
        buffer: *mut nubo_buffer,
        host: *const c_void,
        bytes: usize,
        offset: usize,
    ) -> nubo_status;
    pub fn nubo_buffer_read(
        buffer: *const nubo_buffer,
        host: *mut c_void,
        bytes: usize,
        offset: usize,
    ) -> nubo_status;

    pub fn nubo_all_reduce(
        worker: *mut nubo_worker,
        buf: *mut nubo_buffer,
        op: nubo_reduce_op,
    ) -> nubo_status;
    pub fn nubo_broadcast(
        worker: *mut nubo_worker,
        buf: *mut nubo_buffer,
        root: c_int,
    ) -> nubo_status;
    pub fn nubo_all_gather(
        worker: *mut nubo_worker,
        input: *const nubo_buffer,
        out: *mut nubo_buffer,
    ) -> nubo_status;
    pub fn nubo_reduce_scatter(
        worker: *mut nubo_worker,
        input: *const nubo_buffer,
        out: *mut nubo_buffer,
        op: nubo_reduce_op,
    ) -> nubo_status;
    pub fn nubo_barrier(worker: *mut nubo_worker) -> nubo_status;
    pub fn nubo_all_reduce_async(
        worker: *mut nubo_worker,
        buf: *mut nubo_buffer,
        op: nubo_reduce_op,
        out: *mut *mut nubo_pending,
    ) -> nubo_status;
    pub fn nubo_pending_wait(pending: *mut nubo_pending) -> nubo_status;
    pub fn nubo_pending_done(pending: *const nubo_pending) -> c_int;
    pub fn nubo_pending_free(pending: *mut nubo_pending);

    pub fn nubo_worker_wrap(
        worker: *mut nubo_worker,
        data: *mut c_void,
        dtype: nubo_dtype,
        count: usize,
        out: *mut *mut nubo_buffer,
    ) -> nubo_status;
    pub fn nubo_buffer_slice(
        buffer: *mut nubo_buffer,
        offset: usize,
        count: usize,
        out: *mut *mut nubo_buffer,
    ) -> nubo_status;
    pub fn nubo_buffer_data(buffer: *mut nubo_buffer) -> *mut c_void;
    pub fn nubo_worker_bytes_in_use(worker: *const nubo_worker, out: *mut usize) -> nubo_status;
    /// `out` receives a `DLManagedTensor*` (dlpack/dlpack.h).
    pub fn nubo_buffer_to_dlpack(buffer: *mut nubo_buffer, out: *mut *mut c_void) -> nubo_status;
    pub fn nubo_buffer_from_dlpack(
        worker: *mut nubo_worker,
        tensor: *mut c_void,
        out: *mut *mut nubo_buffer,
    ) -> nubo_status;

    pub fn nubo_gemm_init(gemm: *mut nubo_gemm, struct_size: usize) -> nubo_status;
    pub fn nubo_worker_gemm(
        worker: *mut nubo_worker,
        gemm: *const nubo_gemm,
        a: *const nubo_buffer,
        b: *const nubo_buffer,
        c: *mut nubo_buffer,
    ) -> nubo_status;
    pub fn nubo_worker_fill(
        worker: *mut nubo_worker,
        x: *mut nubo_buffer,
        value: c_double,
    ) -> nubo_status;
    pub fn nubo_worker_scale(
        worker: *mut nubo_worker,
        x: *mut nubo_buffer,
        alpha: c_float,
    ) -> nubo_status;
    pub fn nubo_worker_axpy(
        worker: *mut nubo_worker,
        alpha: c_float,
        x: *const nubo_buffer,
        y: *mut nubo_buffer,
    ) -> nubo_status;
    pub fn nubo_worker_synchronize(worker: *mut nubo_worker) -> nubo_status;

    pub fn nubo_worker_native(
        worker: *const nubo_worker,
        out: *mut nubo_native_handles,
    ) -> nubo_status;
    pub fn nubo_worker_use_stream(
        worker: *mut nubo_worker,
        cuda_stream: *mut c_void,
    ) -> nubo_status;
    pub fn nubo_worker_use_own_stream(worker: *mut nubo_worker) -> nubo_status;
    pub fn nubo_worker_record_event(
        worker: *mut nubo_worker,
        out: *mut *mut nubo_event,
    ) -> nubo_status;
    pub fn nubo_worker_wait_event(
        worker: *mut nubo_worker,
        event: *const nubo_event,
    ) -> nubo_status;
    pub fn nubo_worker_wait_native_event(
        worker: *mut nubo_worker,
        cuda_event: *mut c_void,
    ) -> nubo_status;
    pub fn nubo_event_synchronize(event: *const nubo_event) -> nubo_status;
    pub fn nubo_event_done(event: *const nubo_event) -> c_int;
    pub fn nubo_event_native(event: *const nubo_event) -> *mut c_void;
    pub fn nubo_event_free(event: *mut nubo_event);
}

extern "C" {
    pub fn nubo_status_string(status: nubo_status) -> *const c_char;
    pub fn nubo_last_error() -> *const c_char;
    pub fn nubo_version() -> *const c_char;
    pub fn nubo_abi_version() -> c_int;

    pub fn nubo_discover_options_init(
        options: *mut nubo_discover_options,
        struct_size: usize,
    ) -> nubo_status;
    pub fn nubo_discover(
        options: *const nubo_discover_options,
        out: *mut *mut nubo_report,
    ) -> nubo_status;
    pub fn nubo_report_free(report: *mut nubo_report);

    pub fn nubo_select_request_init(
        request: *mut nubo_select_request,
        struct_size: usize,
    ) -> nubo_status;

    pub fn nubo_report_device_count(report: *const nubo_report) -> usize;
    pub fn nubo_report_device(
        report: *const nubo_report,
        index: usize,
        out: *mut nubo_device_info,
    ) -> nubo_status;
    pub fn nubo_report_host(report: *const nubo_report, out: *mut nubo_host_info) -> nubo_status;
    pub fn nubo_report_driver(
        report: *const nubo_report,
        out: *mut nubo_driver_info,
    ) -> nubo_status;
    pub fn nubo_report_link(
        report: *const nubo_report,
        i: usize,
        j: usize,
        out: *mut nubo_link_info,
    ) -> nubo_status;
    pub fn nubo_report_diagnosis_count(report: *const nubo_report) -> usize;
    pub fn nubo_report_diagnosis(
        report: *const nubo_report,
        index: usize,
        out: *mut nubo_diagnosis_info,
    ) -> nubo_status;
    pub fn nubo_report_json(
        report: *const nubo_report,
        buf: *mut c_char,
        capacity: usize,
        needed: *mut usize,
    ) -> nubo_status;
    pub fn nubo_report_select(
        report: *const nubo_report,
        request: *const nubo_select_request,
        indices: *mut usize,
        capacity: usize,
        count: *mut usize,
    ) -> nubo_status;
}

// ---- nubo_transfer.h --------------------------------------------------------------------

pub type nubo_codec = c_int;
pub const NUBO_CODEC_AUTO: nubo_codec = 0;
pub const NUBO_CODEC_NONE: nubo_codec = 1;
pub const NUBO_CODEC_LZ4: nubo_codec = 2;
pub const NUBO_CODEC_ZSTD: nubo_codec = 3;

pub type nubo_entry_kind = c_int;
pub const NUBO_ENTRY_FILE: nubo_entry_kind = 0;
pub const NUBO_ENTRY_DIRECTORY: nubo_entry_kind = 1;
pub const NUBO_ENTRY_SYMLINK: nubo_entry_kind = 2;

pub type nubo_progress_callback = Option<
    unsafe extern "C" fn(progress: *const nubo_transfer_progress, user: *mut c_void) -> c_int,
>;

sized_structs! {
    pub struct nubo_transfer_progress {
        pub struct_size: u32,
        pub bytes_done: u64,
        pub bytes_total: u64,
        pub bytes_written: u64,
        pub bytes_skipped: u64,
        pub rate: f64,
        pub eta_seconds: f64,
        pub elapsed_seconds: f64,
        pub current_file: *const c_char,
        pub files_done: u64,
        pub files_total: u64,
    }

    pub struct nubo_pack_options {
        pub struct_size: u32,
        pub codec: nubo_codec,
        pub level: c_int,
        pub chunk_size: u64,
        pub threads: c_int,
        pub memory_limit: u64,
        pub target_rate: f64,
        pub resume: c_int,
        pub sync: c_int,
        pub progress: nubo_progress_callback,
        pub progress_user: *mut c_void,
        pub exclude: *const *const c_char,
        pub exclude_count: usize,
        pub include: *const *const c_char,
        pub include_count: usize,
        pub key_file: *const c_char,
    }

    pub struct nubo_unpack_options {
        pub struct_size: u32,
        pub threads: c_int,
        pub memory_limit: u64,
        pub resume: c_int,
        pub sync: c_int,
        pub progress: nubo_progress_callback,
        pub progress_user: *mut c_void,
        pub preserve_special_modes: c_int,
        pub key_file: *const c_char,
    }

    pub struct nubo_verify_options {
        pub struct_size: u32,
        pub threads: c_int,
        pub memory_limit: u64,
        pub progress: nubo_progress_callback,
        pub progress_user: *mut c_void,
        pub key_file: *const c_char,
    }

    pub struct nubo_transfer_summary {
        pub struct_size: u32,
        pub files: u64,
        pub directories: u64,
        pub symlinks: u64,
        pub bytes: u64,
        pub bytes_stored: u64,
        pub bytes_skipped: u64,
        pub chunks: u64,
        pub chunks_none: u64,
        pub chunks_lz4: u64,
        pub chunks_zstd: u64,
        pub chunks_zero: u64,
        pub seconds: f64,
        pub resumed: c_int,
        pub bytes_transferred: u64,
    }

    pub struct nubo_archive_entry_info {
        pub struct_size: u32,
        pub kind: nubo_entry_kind,
        pub path: *const c_char,
        pub size: u64,
        pub mode: u32,
        pub mtime_ns: i64,
        pub link_target: *const c_char,
        pub hash: *const c_char,
        pub stored_size: u64,
        pub chunks: u64,
    }
}

/// Opaque open archive.
#[repr(C)]
pub struct nubo_archive {
    _private: [u8; 0],
    _marker: PhantomData<(*mut u8, PhantomPinned)>,
}

extern "C" {
    pub fn nubo_transfer_keygen(path: *const c_char) -> nubo_status;
    pub fn nubo_pack_options_init(options: *mut nubo_pack_options, size: usize) -> nubo_status;
    pub fn nubo_unpack_options_init(options: *mut nubo_unpack_options, size: usize) -> nubo_status;
    pub fn nubo_verify_options_init(options: *mut nubo_verify_options, size: usize) -> nubo_status;
    pub fn nubo_pack(
        sources: *const *const c_char,
        source_count: usize,
        archive: *const c_char,
        options: *const nubo_pack_options,
        summary: *mut nubo_transfer_summary,
    ) -> nubo_status;
    pub fn nubo_unpack(
        archive: *const c_char,
        directory: *const c_char,
        options: *const nubo_unpack_options,
        summary: *mut nubo_transfer_summary,
    ) -> nubo_status;
    pub fn nubo_verify(
        archive: *const c_char,
        options: *const nubo_verify_options,
        summary: *mut nubo_transfer_summary,
    ) -> nubo_status;
    pub fn nubo_archive_open_with_key(
        path: *const c_char,
        key_file: *const c_char,
        out: *mut *mut nubo_archive,
    ) -> nubo_status;
    pub fn nubo_archive_free(archive: *mut nubo_archive);
    pub fn nubo_archive_entry_count(archive: *const nubo_archive) -> usize;
    pub fn nubo_archive_entry(
        archive: *const nubo_archive,
        index: usize,
        out: *mut nubo_archive_entry_info,
    ) -> nubo_status;
    pub fn nubo_archive_find(
        archive: *const nubo_archive,
        path: *const c_char,
        index: *mut usize,
    ) -> nubo_status;
    pub fn nubo_archive_read(
        archive: *const nubo_archive,
        path: *const c_char,
        offset: u64,
        buf: *mut c_void,
        capacity: usize,
        read: *mut usize,
    ) -> nubo_status;
}

// ---- Net (capi/nubo_net.h) -------------------------------------------------------------------

opaque!(nubo_net_server);

pub type nubo_net_progress_callback =
    Option<unsafe extern "C" fn(progress: *const nubo_net_progress, user: *mut c_void) -> c_int>;

sized_structs! {
    pub struct nubo_net_progress {
        pub struct_size: u32,
        pub bytes_done: u64,
        pub bytes_total: u64,
        pub bytes_written: u64,
        pub bytes_skipped: u64,
        pub rate: c_double,
        pub eta_seconds: c_double,
        pub elapsed_seconds: c_double,
        pub current_file: *const c_char,
        pub files_done: u64,
        pub files_total: u64,
        pub wire_bytes: u64,
        pub link_rate: c_double,
        pub bytes_resumed: u64,
    }

    pub struct nubo_net_send_options {
        pub struct_size: u32,
        pub codec: nubo_codec,
        pub level: c_int,
        pub chunk_size: u64,
        pub threads: c_int,
        pub memory_limit: u64,
        pub streams: c_int,
        pub rate: c_double,
        pub token: *const c_char,
        pub timeout_seconds: c_double,
        pub progress: nubo_net_progress_callback,
        pub progress_user: *mut c_void,
        pub encrypt: c_int,
        pub ca_file: *const c_char,
        pub server_name: *const c_char,
        pub exclude: *const *const c_char,
        pub exclude_count: usize,
        pub include: *const *const c_char,
        pub include_count: usize,
    }

    pub struct nubo_net_send_summary {
        pub struct_size: u32,
        pub files: u64,
        pub directories: u64,
        pub symlinks: u64,
        pub bytes: u64,
        pub bytes_sent: u64,
        pub bytes_skipped: u64,
        pub bytes_resumed: u64,
        pub wire_bytes: u64,
        pub chunks_sent: u64,
        pub chunks_none: u64,
        pub chunks_lz4: u64,
        pub chunks_zstd: u64,
        pub chunks_zero: u64,
        pub streams: c_int,
        pub seconds: c_double,
        pub bytes_deduplicated: u64,
    }

    pub struct nubo_net_server_options {
        pub struct_size: u32,
        pub listen: *const c_char,
        pub dest: *const c_char,
        pub token: *const c_char,
        pub timeout_seconds: c_double,
        pub max_connections: c_int,
        pub sync: c_int,
        pub cert_file: *const c_char,
        pub key_file: *const c_char,
        pub require_encryption: c_int,
        pub handshake_seconds: c_double,
        pub max_pending: c_int,
        pub max_pending_per_address: c_int,
        pub mkdir: c_int,
        pub preserve_special_modes: c_int,
    }

    pub struct nubo_net_server_stats_info {
        pub struct_size: u32,
        pub connections: u64,
        pub refused: u64,
        pub sessions: u64,
        pub files: u64,
        pub bytes: u64,
    }
}

extern "C" {
    pub fn nubo_net_send_options_init(
        options: *mut nubo_net_send_options,
        struct_size: usize,
    ) -> nubo_status;
    pub fn nubo_net_send(
        sources: *const *const c_char,
        source_count: usize,
        destination: *const c_char,
        options: *const nubo_net_send_options,
        summary: *mut nubo_net_send_summary,
    ) -> nubo_status;
    pub fn nubo_net_server_options_init(
        options: *mut nubo_net_server_options,
        struct_size: usize,
    ) -> nubo_status;
    pub fn nubo_net_server_start(
        options: *const nubo_net_server_options,
        out: *mut *mut nubo_net_server,
    ) -> nubo_status;
    pub fn nubo_net_server_port(server: *const nubo_net_server) -> u16;
    pub fn nubo_net_server_stats(
        server: *const nubo_net_server,
        out: *mut nubo_net_server_stats_info,
    ) -> nubo_status;
    pub fn nubo_net_server_stop(server: *mut nubo_net_server) -> nubo_status;
    pub fn nubo_net_server_free(server: *mut nubo_net_server);
}

// ---- Object storage (capi/nubo_s3.h) -------------------------------------------------------

sized_structs! {
    pub struct nubo_s3_copy_options {
        pub struct_size: u32,
        pub streams: c_int,
        pub part_size: u64,
        pub keep_partial: c_int,
        pub sync: c_int,
        pub profile: *const c_char,
        pub server_side_encryption: *const c_char,
        pub kms_key_id: *const c_char,
        pub exclude: *const *const c_char,
        pub exclude_count: usize,
        pub include: *const *const c_char,
        pub include_count: usize,
        pub progress: nubo_progress_callback,
        pub progress_user: *mut c_void,
        pub rate: c_double,
        pub key_file: *const c_char,
    }

    pub struct nubo_s3_copy_summary {
        pub struct_size: u32,
        pub files: u64,
        pub bytes: u64,
        pub bytes_sent: u64,
        pub bytes_resumed: u64,
        pub parts: u64,
        pub seconds: c_double,
    }
}

extern "C" {
    pub fn nubo_s3_copy_options_init(
        options: *mut nubo_s3_copy_options,
        struct_size: usize,
    ) -> nubo_status;
    pub fn nubo_s3_copy(
        from: *const c_char,
        to: *const c_char,
        options: *const nubo_s3_copy_options,
        summary: *mut nubo_s3_copy_summary,
    ) -> nubo_status;
}

// ---- Training (capi/nubo_train.h) ----------------------------------------------------------

pub type nubo_train_optimizer = c_int;
pub const NUBO_TRAIN_SGD: nubo_train_optimizer = 0;
pub const NUBO_TRAIN_ADAM: nubo_train_optimizer = 1;

opaque!(nubo_trainer);

pub type nubo_train_progress_callback =
    Option<unsafe extern "C" fn(progress: *const nubo_train_progress, user: *mut c_void) -> c_int>;

sized_structs! {
    pub struct nubo_train_options {
        pub struct_size: u32,
        pub layers: *const usize,
        pub layer_count: usize,
        pub optimizer: nubo_train_optimizer,
        pub lr: c_double,
        pub momentum: c_double,
        pub batch: usize,
        pub epochs: c_int,
        pub seed: u64,
        pub bucket_bytes: usize,
        pub autotune: c_int,
        pub devices: *const c_char,
        pub team: *mut nubo_team,
        pub dataset_dir: *const c_char,
        pub subset: usize,
        pub checkpoint_dir: *const c_char,
        pub checkpoint_every: u64,
        pub strict_resume: c_int,
        pub sync_checkpoints: c_int,
        pub checkpoint_auto: c_int,
        pub mtbi_s: c_double,
        pub fresh: c_int,
    }

    pub struct nubo_train_progress {
        pub struct_size: u32,
        pub epoch: c_int,
        pub epochs: c_int,
        pub step: u64,
        pub steps_per_epoch: u64,
        pub total_steps: u64,
        pub loss: c_double,
        pub accuracy: c_double,
        pub samples_per_s: c_double,
        pub eta_s: c_double,
        pub elapsed_s: c_double,
        pub checkpointed: c_int,
        pub checkpoint_interval_s: c_double,
    }

    pub struct nubo_train_evaluation {
        pub struct_size: u32,
        pub loss: c_double,
        pub accuracy: c_double,
        pub samples: usize,
    }
}

extern "C" {
    pub fn nubo_train_options_init(
        options: *mut nubo_train_options,
        struct_size: usize,
    ) -> nubo_status;
    pub fn nubo_trainer_create(
        options: *const nubo_train_options,
        out: *mut *mut nubo_trainer,
    ) -> nubo_status;
    pub fn nubo_trainer_free(trainer: *mut nubo_trainer);
    pub fn nubo_trainer_fit(
        trainer: *mut nubo_trainer,
        progress: nubo_train_progress_callback,
        user: *mut c_void,
    ) -> nubo_status;
    pub fn nubo_trainer_evaluate(
        trainer: *mut nubo_trainer,
        out: *mut nubo_train_evaluation,
    ) -> nubo_status;
    pub fn nubo_trainer_save(trainer: *mut nubo_trainer, path: *const c_char) -> nubo_status;
    pub fn nubo_trainer_load(trainer: *mut nubo_trainer, path: *const c_char) -> nubo_status;
    pub fn nubo_trainer_request_stop(trainer: *mut nubo_trainer);
    pub fn nubo_trainer_steps_done(trainer: *const nubo_trainer) -> u64;
    pub fn nubo_trainer_resumed_from(
        trainer: *const nubo_trainer,
        buf: *mut c_char,
        capacity: usize,
        needed: *mut usize,
    ) -> nubo_status;
    pub fn nubo_trainer_profile_json(
        trainer: *const nubo_trainer,
        buf: *mut c_char,
        capacity: usize,
        needed: *mut usize,
    ) -> nubo_status;
}

// ---- Cost (capi/nubo_cost.h) -----------------------------------------------------------------

pub type nubo_cost_pricing = c_int;
pub const NUBO_COST_ON_DEMAND: nubo_cost_pricing = 0;
pub const NUBO_COST_SPOT: nubo_cost_pricing = 1;
pub const NUBO_COST_RESERVED_1Y: nubo_cost_pricing = 2;
pub const NUBO_COST_RESERVED_3Y: nubo_cost_pricing = 3;

pub type nubo_cost_dtype = c_int;
pub const NUBO_COST_FP32: nubo_cost_dtype = 0;
pub const NUBO_COST_TF32: nubo_cost_dtype = 1;
pub const NUBO_COST_FP16: nubo_cost_dtype = 2;
pub const NUBO_COST_BF16: nubo_cost_dtype = 3;

opaque!(nubo_cost_catalog, nubo_cost_plan, nubo_cost_meter);

sized_structs! {
    pub struct nubo_cost_instance_info {
        pub struct_size: u32,
        pub provider: *const c_char,
        pub name: *const c_char,
        pub region: *const c_char,
        pub gpu_model: *const c_char,
        pub gpus: c_int,
        pub interconnect: *const c_char,
        pub vcpus: c_int,
        pub memory_gib: c_double,
        pub network_gbps: c_double,
        pub on_demand: c_double,
        pub spot: c_double,
        pub reserved_1y: c_double,
        pub reserved_3y: c_double,
        pub reserved_1y_derived: c_int,
        pub reserved_3y_derived: c_int,
        pub gpu_link_gbs: c_double,
        pub price_date: *const c_char,
        pub spot_date: *const c_char,
        pub source: *const c_char,
    }

    pub struct nubo_cost_workload {
        pub struct_size: u32,
        pub total_flops: c_double,
        pub flops_per_sample: c_double,
        pub samples: c_double,
        pub epochs: c_double,
        pub global_batch: c_double,
        pub dtype: nubo_cost_dtype,
        pub mfu: c_double,
        pub profile_path: *const c_char,
        pub profile_json: *const c_char,
        pub parameter_bytes: c_double,
        pub memory_per_gpu_bytes: c_double,
        pub dataset_bytes: c_double,
        pub compression_ratio: c_double,
        pub checkpoint_bytes: c_double,
        pub checkpoint_write_mbps: c_double,
        pub checkpoint_interval_s: c_double,
        pub overlap: c_double,
        pub egress_bytes: c_double,
        pub storage_months_after: c_double,
        pub tags: *const c_char,
    }

    pub struct nubo_cost_plan_options {
        pub struct_size: u32,
        pub pricings: c_uint,
        pub min_nodes: c_int,
        pub max_nodes: c_int,
        pub deadline_s: c_double,
        pub budget: c_double,
        pub gpu: *const c_char,
        pub provider: *const c_char,
        pub region: *const c_char,
        pub rank_by_time: c_int,
        pub limit: usize,
        pub spot_mtbi_s: c_double,
        pub restart_s: c_double,
        pub comm_efficiency: c_double,
    }

    pub struct nubo_cost_estimate_info {
        pub struct_size: u32,
        pub label: *const c_char,
        pub provider: *const c_char,
        pub instance: *const c_char,
        pub region: *const c_char,
        pub gpu_model: *const c_char,
        pub gpus_per_node: c_int,
        pub nodes: c_int,
        pub pricing: nubo_cost_pricing,
        pub hourly: c_double,
        pub price_derived: c_int,
        pub compute_s: c_double,
        pub communication_s: c_double,
        pub staging_s: c_double,
        pub checkpoint_s: c_double,
        pub rework_s: c_double,
        pub restart_s: c_double,
        pub total_s: c_double,
        pub steps: c_double,
        pub step_s: c_double,
        pub cost_instances: c_double,
        pub cost_storage: c_double,
        pub cost_egress: c_double,
        pub cost_total: c_double,
        pub checkpoint_interval_s: c_double,
        pub expected_interruptions: c_double,
        pub memory_needed_bytes: c_double,
        pub memory_per_gpu_bytes: c_double,
        pub reserved_break_even: c_double,
        pub pareto: c_int,
        pub notes: *const c_char,
    }

    pub struct nubo_cost_exclusion_info {
        pub struct_size: u32,
        pub subject: *const c_char,
        pub reason: *const c_char,
        pub options: usize,
    }

    pub struct nubo_cost_checkpoint_info {
        pub struct_size: u32,
        pub young_interval_s: c_double,
        pub daly_interval_s: c_double,
        pub expected_wall_s: c_double,
        pub write_s: c_double,
        pub lost_work_s: c_double,
        pub restart_s: c_double,
        pub interruptions: c_double,
        pub overhead_fraction: c_double,
    }

    pub struct nubo_cost_own_request {
        pub struct_size: u32,
        pub hardware_price: c_double,
        pub power_kw: c_double,
        pub years: c_double,
        pub cloud_hourly: c_double,
        pub utilisation: c_double,
        pub kwh_price: c_double,
        pub pue: c_double,
        pub maintenance_per_year: c_double,
    }

    pub struct nubo_cost_own_info {
        pub struct_size: u32,
        pub break_even_utilisation: c_double,
        pub own_cost: c_double,
        pub cloud_cost: c_double,
        pub cloud_saving: c_double,
        pub utilisation_for_70: c_double,
    }
}

extern "C" {
    pub fn nubo_cost_catalog_builtin(out: *mut *mut nubo_cost_catalog) -> nubo_status;
    pub fn nubo_cost_catalog_load(
        catalog: *mut nubo_cost_catalog,
        path: *const c_char,
        replace: c_int,
    ) -> nubo_status;
    pub fn nubo_cost_catalog_set_reserved_discounts(
        catalog: *mut nubo_cost_catalog,
        one_year: c_double,
        three_year: c_double,
    ) -> nubo_status;
    pub fn nubo_cost_catalog_free(catalog: *mut nubo_cost_catalog);
    pub fn nubo_cost_catalog_instance_count(catalog: *const nubo_cost_catalog) -> usize;
    pub fn nubo_cost_catalog_instance(
        catalog: *const nubo_cost_catalog,
        index: usize,
        out: *mut nubo_cost_instance_info,
    ) -> nubo_status;
    pub fn nubo_cost_workload_init(workload: *mut nubo_cost_workload, size: usize) -> nubo_status;
    pub fn nubo_cost_plan_options_init(
        options: *mut nubo_cost_plan_options,
        size: usize,
    ) -> nubo_status;
    pub fn nubo_cost_plan_create(
        catalog: *const nubo_cost_catalog,
        workload: *const nubo_cost_workload,
        options: *const nubo_cost_plan_options,
        out: *mut *mut nubo_cost_plan,
    ) -> nubo_status;
    pub fn nubo_cost_estimate(
        catalog: *const nubo_cost_catalog,
        workload: *const nubo_cost_workload,
        instance: *const c_char,
        region: *const c_char,
        nodes: c_int,
        pricing: nubo_cost_pricing,
        options: *const nubo_cost_plan_options,
        out: *mut *mut nubo_cost_plan,
    ) -> nubo_status;
    pub fn nubo_cost_plan_free(plan: *mut nubo_cost_plan);
    pub fn nubo_cost_plan_counts(
        plan: *const nubo_cost_plan,
        considered: *mut usize,
        feasible: *mut usize,
    ) -> nubo_status;
    pub fn nubo_cost_plan_ranked_count(plan: *const nubo_cost_plan) -> usize;
    pub fn nubo_cost_plan_frontier_count(plan: *const nubo_cost_plan) -> usize;
    pub fn nubo_cost_plan_exclusion_count(plan: *const nubo_cost_plan) -> usize;
    pub fn nubo_cost_plan_ranked(
        plan: *const nubo_cost_plan,
        index: usize,
        out: *mut nubo_cost_estimate_info,
    ) -> nubo_status;
    pub fn nubo_cost_plan_frontier(
        plan: *const nubo_cost_plan,
        index: usize,
        out: *mut nubo_cost_estimate_info,
    ) -> nubo_status;
    pub fn nubo_cost_plan_exclusion(
        plan: *const nubo_cost_plan,
        index: usize,
        out: *mut nubo_cost_exclusion_info,
    ) -> nubo_status;
    pub fn nubo_cost_plan_json(
        plan: *const nubo_cost_plan,
        buf: *mut c_char,
        capacity: usize,
        needed: *mut usize,
    ) -> nubo_status;
    pub fn nubo_cost_checkpoint_plan(
        work_s: c_double,
        write_s: c_double,
        mtbi_s: c_double,
        restart_s: c_double,
        out: *mut nubo_cost_checkpoint_info,
    ) -> nubo_status;
    pub fn nubo_cost_own_request_init(
        request: *mut nubo_cost_own_request,
        size: usize,
    ) -> nubo_status;
    pub fn nubo_cost_rent_vs_own(
        request: *const nubo_cost_own_request,
        out: *mut nubo_cost_own_info,
    ) -> nubo_status;
    pub fn nubo_cost_meter_create(
        hourly: c_double,
        fixed: c_double,
        out: *mut *mut nubo_cost_meter,
    ) -> nubo_status;
    pub fn nubo_cost_meter_for_instance(
        catalog: *const nubo_cost_catalog,
        instance: *const c_char,
        pricing: nubo_cost_pricing,
        nodes: c_int,
        out: *mut *mut nubo_cost_meter,
    ) -> nubo_status;
    pub fn nubo_cost_meter_update(
        meter: *mut nubo_cost_meter,
        elapsed_s: c_double,
        progress: c_double,
        spent: *mut c_double,
        projected: *mut c_double,
    ) -> nubo_status;
    pub fn nubo_cost_meter_free(meter: *mut nubo_cost_meter);
}

#[cfg(test)]
mod tests {
    //! Compares the declarations above with the C compiler's view of nubo.h, printed by the
    //! program that $NUBO_TEST_LAYOUT names (generated from the headers); skipped without it.

    use super::*;
    use std::collections::HashMap;
    use std::mem::{size_of, MaybeUninit};

    fn pointee_size<T>(_: *const T) -> usize {
        size_of::<T>()
    }

    /// (offset, size) of a field, without offset_of! (Rust 1.77) to keep the MSRV.
    macro_rules! field {
        ($map:ident, $t:ident, $f:ident) => {{
            let value = MaybeUninit::<$t>::uninit();
            let base = value.as_ptr();
            // SAFETY: addr_of! takes the field's address without reading it or making a
            // reference, which is sound on uninitialised memory.
            let field = unsafe { std::ptr::addr_of!((*base).$f) };
            let offset = field as usize - base as usize;
            $map.insert(
                format!("{} {}", stringify!($t), stringify!($f)),
                (offset, pointee_size(field)),
            );
        }};
    }

    macro_rules! layout {
        ($($t:ident { $($f:ident),* })*) => {{
            let mut structs = HashMap::new();
            let mut fields = HashMap::new();
            $(
                structs.insert(stringify!($t).to_string(), size_of::<$t>());
                $(field!(fields, $t, $f);)*
            )*
            (structs, fields)
        }};
    }

    macro_rules! constants {
        ($($c:ident),*) => {{
            let mut map = HashMap::new();
            $(map.insert(stringify!($c).to_string(), $c as i64);)*
            map
        }};
    }

    /// Every struct, field and constant of the C headers against the program that
    /// $NUBO_TEST_LAYOUT names (generated from the headers by capi/bindings/generate.py):
    /// a struct, field or constant that C has and this file lacks fails, as does any difference.
    #[test]
    fn layout_matches_c() {
        let program = match std::env::var_os("NUBO_TEST_LAYOUT") {
            Some(program) => program,
            None => {
                eprintln!("NUBO_TEST_LAYOUT is not set: layout check skipped");
                return;
            }
        };
        let output = std::process::Command::new(&program)
            .output()
            .expect("run the layout program");
        assert!(output.status.success(), "{:?} failed", program);

        let (mut structs, fields) = layout! {
            nubo_discover_options { struct_size, sim_devices, sim_topology_file, probe_cuda,
                                    cuda_plugin_path }
            nubo_device_info { struct_size, backend, index, ordinal, name, model, uuid,
                               pci_bus_id, cc_major, cc_minor, multiprocessors, clock_mhz,
                               memory_total, memory_free, memory_bandwidth_gbs, peak_tflops_fp32,
                               peak_tflops_tf32, peak_tflops_fp16, peak_tflops_bf16, peak_source,
                               numa_node, mig_enabled }
            nubo_host_info { struct_size, model, logical_cores, physical_cores, sockets,
                             numa_nodes, memory_total, memory_available, blas }
            nubo_driver_info { struct_size, loaded, driver_version, runtime_version,
                               driver_release }
            nubo_link_info { struct_size, kind, nvlinks, peer_access, name }
            nubo_diagnosis_info { struct_size, code, severity, message, advice }
            nubo_select_request { struct_size, count, min_memory, min_cc_major, min_cc_minor }
            nubo_cost_instance_info { struct_size, provider, name, region, gpu_model, gpus,
                                      interconnect, vcpus, memory_gib, network_gbps, on_demand,
                                      spot, reserved_1y, reserved_3y, reserved_1y_derived,
                                      reserved_3y_derived, gpu_link_gbs, price_date, spot_date,
                                      source }
            nubo_cost_workload { struct_size, total_flops, flops_per_sample, samples, epochs,
                                 global_batch, dtype, mfu, profile_path, profile_json,
                                 parameter_bytes, memory_per_gpu_bytes, dataset_bytes,
                                 compression_ratio, checkpoint_bytes, checkpoint_write_mbps,
                                 checkpoint_interval_s, overlap, egress_bytes,
                                 storage_months_after, tags }
            nubo_cost_plan_options { struct_size, pricings, min_nodes, max_nodes, deadline_s,
                                     budget, gpu, provider, region, rank_by_time, limit,
                                     spot_mtbi_s, restart_s, comm_efficiency }
            nubo_cost_estimate_info { struct_size, label, provider, instance, region, gpu_model,
                                      gpus_per_node, nodes, pricing, hourly, price_derived,
                                      compute_s, communication_s, staging_s, checkpoint_s,
                                      rework_s, restart_s, total_s, steps, step_s,
                                      cost_instances, cost_storage, cost_egress, cost_total,
                                      checkpoint_interval_s, expected_interruptions,
                                      memory_needed_bytes, memory_per_gpu_bytes,
                                      reserved_break_even, pareto, notes }
            nubo_cost_exclusion_info { struct_size, subject, reason, options }
            nubo_cost_checkpoint_info { struct_size, young_interval_s, daly_interval_s,
                                        expected_wall_s, write_s, lost_work_s, restart_s,
                                        interruptions, overhead_fraction }
            nubo_cost_own_request { struct_size, hardware_price, power_kw, years, cloud_hourly,
                                    utilisation, kwh_price, pue, maintenance_per_year }
            nubo_cost_own_info { struct_size, break_even_utilisation, own_cost, cloud_cost,
                                 cloud_saving, utilisation_for_70 }
            nubo_transfer_progress { struct_size, bytes_done, bytes_total, bytes_written,
                                     bytes_skipped, rate, eta_seconds, elapsed_seconds,
                                     current_file, files_done, files_total }
            nubo_pack_options { struct_size, codec, level, chunk_size, threads, memory_limit,
                                target_rate, resume, sync, progress, progress_user, exclude,
                                exclude_count, include, include_count, key_file }
            nubo_unpack_options { struct_size, threads, memory_limit, resume, sync, progress,
                                  progress_user, preserve_special_modes, key_file }
            nubo_verify_options { struct_size, threads, memory_limit, progress, progress_user,
                                  key_file }
            nubo_transfer_summary { struct_size, files, directories, symlinks, bytes,
                                    bytes_stored, bytes_skipped, chunks, chunks_none, chunks_lz4,
                                    chunks_zstd, chunks_zero, seconds, resumed, bytes_transferred }
            nubo_archive_entry_info { struct_size, kind, path, size, mode, mtime_ns, link_target,
                                      hash, stored_size, chunks }
            nubo_net_progress { struct_size, bytes_done, bytes_total, bytes_written,
                                bytes_skipped, rate, eta_seconds, elapsed_seconds, current_file,
                                files_done, files_total, wire_bytes, link_rate, bytes_resumed }
            nubo_net_send_options { struct_size, codec, level, chunk_size, threads, memory_limit,
                                    streams, rate, token, timeout_seconds, progress,
                                    progress_user, encrypt, ca_file, server_name, exclude,
                                    exclude_count, include, include_count }
            nubo_net_send_summary { struct_size, files, directories, symlinks, bytes, bytes_sent,
                                    bytes_skipped, bytes_resumed, wire_bytes, chunks_sent,
                                    chunks_none, chunks_lz4, chunks_zstd, chunks_zero, streams,
                                    seconds, bytes_deduplicated }
            nubo_net_server_options { struct_size, listen, dest, token, timeout_seconds,
                                      max_connections, sync, cert_file, key_file,
                                      require_encryption, handshake_seconds, max_pending,
                                      max_pending_per_address, mkdir, preserve_special_modes }
            nubo_net_server_stats_info { struct_size, connections, refused, sessions, files,
                                         bytes }
            nubo_team_options { struct_size, timeout_seconds, cpu_bind }
            nubo_worker_info { struct_size, rank, size, local_rank, local_size, backend,
                               device_index, device_name, host_threads, cpus, cpu_count }
            nubo_gemm { struct_size, trans_a, trans_b, m, n, k, alpha, beta, lda, ldb, ldc }
            nubo_native_handles { struct_size, cuda_stream, cublas_handle, nccl_comm,
                                  device_ordinal }
            nubo_s3_copy_options { struct_size, streams, part_size, keep_partial, sync, profile,
                                   server_side_encryption, kms_key_id, exclude, exclude_count,
                                   include, include_count, progress, progress_user, rate,
                                   key_file }
            nubo_s3_copy_summary { struct_size, files, bytes, bytes_sent, bytes_resumed, parts,
                                   seconds }
            nubo_train_options { struct_size, layers, layer_count, optimizer, lr, momentum,
                                 batch, epochs, seed, bucket_bytes, autotune, devices, team,
                                 dataset_dir, subset, checkpoint_dir, checkpoint_every,
                                 strict_resume, sync_checkpoints, checkpoint_auto, mtbi_s, fresh }
            nubo_train_progress { struct_size, epoch, epochs, step, steps_per_epoch, total_steps,
                                  loss, accuracy, samples_per_s, eta_s, elapsed_s, checkpointed,
                                  checkpoint_interval_s }
            nubo_train_evaluation { struct_size, loss, accuracy, samples }
        };
        // Enums travel as C ints.
        for name in [
            "nubo_status",
            "nubo_backend",
            "nubo_link_kind",
            "nubo_severity",
            "nubo_cost_pricing",
            "nubo_cost_dtype",
            "nubo_codec",
            "nubo_entry_kind",
            "nubo_dtype",
            "nubo_reduce_op",
            "nubo_transpose",
            "nubo_train_optimizer",
        ] {
            structs.insert(name.to_string(), size_of::<c_int>());
        }
        // Not in Rust yet: the interruption watcher (its notice struct).
        let not_mirrored = ["nubo_interruption_notice"];
        let constants = constants!(
            NUBO_ABI_VERSION,
            NUBO_OK,
            NUBO_ERR_INVALID_ARGUMENT,
            NUBO_ERR_NOT_FOUND,
            NUBO_ERR_UNAVAILABLE,
            NUBO_ERR_IO,
            NUBO_ERR_CORRUPT,
            NUBO_ERR_TIMEOUT,
            NUBO_ERR_CANCELLED,
            NUBO_ERR_UNSUPPORTED,
            NUBO_ERR_OUT_OF_MEMORY,
            NUBO_ERR_INTERNAL,
            NUBO_BACKEND_HOST,
            NUBO_BACKEND_SIM,
            NUBO_BACKEND_CUDA,
            NUBO_LINK_SELF,
            NUBO_LINK_NVLINK,
            NUBO_LINK_PIX,
            NUBO_LINK_PXB,
            NUBO_LINK_PHB,
            NUBO_LINK_NODE,
            NUBO_LINK_SYS,
            NUBO_LINK_UNKNOWN,
            NUBO_SEVERITY_INFO,
            NUBO_SEVERITY_WARNING,
            NUBO_SEVERITY_ERROR,
            NUBO_COST_ON_DEMAND,
            NUBO_COST_SPOT,
            NUBO_COST_RESERVED_1Y,
            NUBO_COST_RESERVED_3Y,
            NUBO_COST_FP32,
            NUBO_COST_TF32,
            NUBO_COST_FP16,
            NUBO_COST_BF16,
            NUBO_CODEC_AUTO,
            NUBO_CODEC_NONE,
            NUBO_CODEC_LZ4,
            NUBO_CODEC_ZSTD,
            NUBO_ENTRY_FILE,
            NUBO_ENTRY_DIRECTORY,
            NUBO_ENTRY_SYMLINK,
            NUBO_DTYPE_F32,
            NUBO_DTYPE_F16,
            NUBO_DTYPE_BF16,
            NUBO_DTYPE_I32,
            NUBO_DTYPE_I64,
            NUBO_REDUCE_SUM,
            NUBO_REDUCE_AVG,
            NUBO_REDUCE_MAX,
            NUBO_REDUCE_MIN,
            NUBO_TRANSPOSE_NO,
            NUBO_TRANSPOSE_YES,
            NUBO_TRAIN_SGD,
            NUBO_TRAIN_ADAM
        );

        let text = String::from_utf8(output.stdout).expect("UTF-8");
        let mut checked = 0;
        for line in text.lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            let number = |i: usize| -> i64 { words[i].parse().expect("a number") };
            if words.len() > 1 && not_mirrored.contains(&words[1]) {
                continue;
            }
            match words[0] {
                "struct" => {
                    let size = structs
                        .get(words[1])
                        .unwrap_or_else(|| panic!("{line}: not mirrored"));
                    assert_eq!(*size as i64, number(2), "{line}");
                }
                "field" => {
                    let key = format!("{} {}", words[1], words[2]);
                    let (offset, size) = fields
                        .get(&key)
                        .unwrap_or_else(|| panic!("{line}: not mirrored"));
                    assert_eq!(
                        (*offset as i64, *size as i64),
                        (number(3), number(4)),
                        "{line}"
                    );
                }
                "const" => {
                    let value = constants
                        .get(words[1])
                        .unwrap_or_else(|| panic!("{line}: not mirrored"));
                    assert_eq!(*value, number(2), "{line}");
                }
                other => panic!("unexpected line kind {other:?}"),
            }
            checked += 1;
        }
        assert!(
            checked > 400,
            "only {checked} lines from the layout program"
        );
    }
}
