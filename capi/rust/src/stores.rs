//! Files and trees to and from object storage (docs/s3.md): [`copy`], each file one object,
//! resumable after any interruption and verified end to end. Archives in a store go through
//! [`crate::transfer`] with store URLs as paths.
//!
//! ```no_run
//! let s = nubo::copy("ckpt/", "s3://my-bucket/run1/", &Default::default(), None)?;
//! println!("{} files, {} bytes sent, {} resumed", s.files, s.bytes_sent, s.bytes_resumed);
//! nubo::copy("ckpt/", "file:///mnt/shared/run1/", &Default::default(), None)?;
//! # Ok::<(), nubo::Error>(())
//! ```
//!
//! The stores, by URL: `s3://BUCKET/KEY` (keys, region and endpoint read as the AWS CLI reads
//! them: `AWS_*` variables, `~/.aws` profiles), `gs://BUCKET/KEY` (Google Cloud Storage with an
//! HMAC key: `GS_ACCESS_KEY_ID` and `GS_SECRET_ACCESS_KEY`, or the boto file), and
//! `file:///PATH` (a shared file system mounted here).

use std::ffi::CString;
use std::os::raw::c_int;
use std::path::{Path, PathBuf};

use crate::progress::Callback;
use crate::transfer::{ProgressFn, StringList};
use crate::{c_int_of, c_ptr, check, ffi, optional_c_string, optional_path, path_string, Error};

/// What only an S3 store takes; `None` keeps the default.
#[derive(Debug, Clone, Default)]
pub struct S3Options {
    /// The AWS profile (default: `AWS_PROFILE`, else "default").
    pub profile: Option<String>,
    /// "AES256" or "aws:kms", passed to the server.
    pub server_side_encryption: Option<String>,
    /// With "aws:kms".
    pub kms_key_id: Option<String>,
}

/// Options of [`copy`]; `None` keeps the library's default.
#[derive(Debug, Clone, Default)]
pub struct CopyOptions {
    /// Parts in flight, 1..64 (default 4).
    pub streams: Option<i32>,
    /// Bytes per part, 5 MiB .. 5 GiB; default: adapted to each object.
    pub part_size: Option<u64>,
    /// A cancelled upload stays resumable instead of being aborted.
    pub keep_partial: bool,
    /// fdatasync downloads before their rename (default true).
    pub sync: Option<bool>,
    /// Uploads of a tree: rsync-style filters.
    pub exclude: Vec<String>,
    pub include: Vec<String>,
    /// Bytes per second over every part in flight (default: unlimited).
    pub rate: Option<f64>,
    /// Client-side encryption: uploads are encrypted with this key; downloads of encrypted
    /// objects need it.
    pub key_file: Option<PathBuf>,
    /// Where upload journals live (default: `~/.cache/nubo/s3`).
    pub journal_dir: Option<PathBuf>,
    /// For `s3://` URLs.
    pub s3: S3Options,
}

pub use crate::results::CopySummary;

/// Copies a file or a tree between a local path and a store URL, either way round. Run the
/// same copy again after an interruption to resume it. Errors: InvalidArgument (URLs, options,
/// missing or refused credentials), NotFound (a bucket, a directory or an object), Unavailable
/// (unreachable: call again to resume), Corrupt, Cancelled.
pub fn copy(
    from: impl AsRef<Path>,
    to: impl AsRef<Path>,
    options: &CopyOptions,
    progress: Option<ProgressFn<'_>>,
) -> Result<CopySummary, Error> {
    let from = path_string("from", from.as_ref())?;
    let to = path_string("to", to.as_ref())?;
    let profile = optional_c_string("profile", options.s3.profile.as_deref())?;
    let sse = optional_c_string(
        "server_side_encryption",
        options.s3.server_side_encryption.as_deref(),
    )?;
    let kms_key_id = optional_c_string("kms_key_id", options.s3.kms_key_id.as_deref())?;
    let exclude = StringList::patterns("exclude", &options.exclude)?;
    let include = StringList::patterns("include", &options.include)?;
    let key_file = optional_path("key_file", options.key_file.as_deref())?;
    let journal_dir = optional_path("journal_dir", options.journal_dir.as_deref())?;
    let mut s3 = ffi::nubo_transfer_s3_options::new();
    // SAFETY: `s3` is a valid struct of the size given.
    check(unsafe { ffi::nubo_transfer_s3_options_init(&mut s3, std::mem::size_of_val(&s3)) })?;
    s3.profile = c_ptr(&profile);
    s3.server_side_encryption = c_ptr(&sse);
    s3.kms_key_id = c_ptr(&kms_key_id);
    let mut o = ffi::nubo_transfer_copy_options::new();
    // SAFETY: `o` is a valid struct of the size given.
    check(unsafe { ffi::nubo_transfer_copy_options_init(&mut o, std::mem::size_of_val(&o)) })?;
    if let Some(streams) = options.streams {
        o.streams = c_int_of("streams", streams)?;
    }
    o.part_size = options.part_size.unwrap_or(o.part_size);
    o.keep_partial = c_int::from(options.keep_partial);
    o.sync = options.sync.map_or(o.sync, c_int::from);
    o.exclude = exclude.ptr();
    o.exclude_count = exclude.len();
    o.include = include.ptr();
    o.include_count = include.len();
    o.rate = options.rate.unwrap_or(o.rate);
    o.key_file = c_ptr(&key_file);
    o.journal_dir = c_ptr(&journal_dir);
    o.s3 = &s3;
    let mut callback = Callback::new(progress);
    (o.progress, o.progress_user) = callback.raw();
    let mut s = ffi::nubo_transfer_copy_summary::new();
    // SAFETY: every pointer in `o` (`s3` and its strings), the lists and `callback` outlive the
    // call.
    let raw = unsafe { ffi::nubo_transfer_copy(from.as_ptr(), to.as_ptr(), &o, &mut s) };
    callback.finish(raw)?;
    Ok(CopySummary::from(&s))
}

/// Whether `text` names a store (`s3://`, `gs://`, `file://`) rather than a local path.
pub fn is_store_url(text: &str) -> bool {
    match CString::new(text) {
        // SAFETY: `c` is a NUL-terminated string that outlives the call.
        Ok(c) => unsafe { ffi::nubo_transfer_is_store_url(c.as_ptr()) != 0 },
        Err(_) => false, // a NUL inside: no URL
    }
}
