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

use std::ffi::{CStr, CString};
use std::os::raw::{c_char, c_void};
use std::path::Path;

use crate::fill::Keep;
use crate::progress::Callback;
use crate::transfer::{ProgressFn, StringList};
use crate::{ffi, path_string, Error};

pub use crate::enums::Symlinks;
pub use crate::options::{CopyOptions, S3Options, SyncOptions};
pub use crate::results::{CopySummary, SyncSummary};

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
    let mut keep = Keep::default();
    let mut o = options.to_raw(&mut keep)?;
    let mut callback = Callback::new(progress);
    (o.progress, o.progress_user) = callback.raw();
    let mut s = ffi::nubo_transfer_copy_summary::new();
    // SAFETY: every pointer in `o` (what `keep` holds) and `callback` outlive the call.
    let raw = unsafe { ffi::nubo_transfer_copy(from.as_ptr(), to.as_ptr(), &o, &mut s) };
    callback.finish(raw)?;
    Ok(CopySummary::from(&s))
}

/// Makes `to` hold what `from` holds, copying only what is new or changed (by size and
/// checksum, not by time alone): a local directory or a store `PREFIX/` each, at least one a
/// store. With `delete_extra`, what `to` has and `from` does not is deleted once every copy has
/// succeeded; with `dry_run` nothing changes and the counts say what would be done.
///
/// ```no_run
/// let options = nubo::stores::SyncOptions {
///     delete_extra: Some(true),
///     ..Default::default()
/// };
/// let s = nubo::sync("s3://ckpt/", "s3://ckpt-dr/", &options)?;
/// println!("{} copied, {} unchanged, {} deleted", s.copied, s.unchanged, s.deleted);
/// # Ok::<(), nubo::Error>(())
/// ```
///
/// Errors as [`copy`]'s, and InvalidArgument for two local directories, an object where a
/// prefix is needed, places that are the same or lie one inside the other however spelled, a
/// `delete_extra` whose source holds nothing (unless `allow_empty_source`), or more deletions
/// than `max_delete`: each refused before anything changes.
pub fn sync(
    from: impl AsRef<Path>,
    to: impl AsRef<Path>,
    options: &SyncOptions,
) -> Result<SyncSummary, Error> {
    let from = path_string("from", from.as_ref())?;
    let to = path_string("to", to.as_ref())?;
    let mut keep = Keep::default();
    let o = options.to_raw(&mut keep)?;
    let mut s = ffi::nubo_transfer_sync_summary::new();
    // SAFETY: every pointer in `o` (what `keep` holds) outlives the call.
    let raw = unsafe { ffi::nubo_transfer_sync(from.as_ptr(), to.as_ptr(), &o, &mut s) };
    crate::check(raw)?;
    Ok(SyncSummary::from(&s))
}

/// As [`sync`], calling `on_change` with each change (`"copy PATH"`, `"delete PATH"`) once all
/// are decided, before any is made: with `dry_run`, the list of what would be done.
///
/// ```no_run
/// let o = nubo::stores::SyncOptions { dry_run: Some(true), ..Default::default() };
/// let mut changes = Vec::new();
/// nubo::stores::sync_with("ckpt/", "s3://backups/ckpt/", &o, |c| changes.push(c.to_string()))?;
/// # Ok::<(), nubo::Error>(())
/// ```
pub fn sync_with(
    from: impl AsRef<Path>,
    to: impl AsRef<Path>,
    options: &SyncOptions,
    mut on_change: impl FnMut(&str),
) -> Result<SyncSummary, Error> {
    unsafe extern "C" fn trampoline(change: *const c_char, user: *mut c_void) {
        // SAFETY: `user` is the `&mut dyn FnMut(&str)` below, alive for the call; `change` a
        // NUL-terminated string alive during this call. A panic must not unwind into C.
        let f = unsafe { &mut *(user as *mut &mut dyn FnMut(&str)) };
        let text = unsafe { CStr::from_ptr(change) }.to_string_lossy();
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&text)));
    }
    let from = path_string("from", from.as_ref())?;
    let to = path_string("to", to.as_ref())?;
    let mut keep = Keep::default();
    let mut o = options.to_raw(&mut keep)?;
    let mut f: &mut dyn FnMut(&str) = &mut on_change;
    o.change = Some(trampoline);
    o.change_user = &mut f as *mut &mut dyn FnMut(&str) as *mut c_void;
    let mut s = ffi::nubo_transfer_sync_summary::new();
    // SAFETY: every pointer in `o` (what `keep` holds, and `f`) outlives the call.
    let raw = unsafe { ffi::nubo_transfer_sync(from.as_ptr(), to.as_ptr(), &o, &mut s) };
    crate::check(raw)?;
    Ok(SyncSummary::from(&s))
}

/// Whether `text` names a store (`s3://`, `gs://`, `file://`) rather than a local path.
pub fn is_store_url(text: &str) -> bool {
    match CString::new(text) {
        // SAFETY: `c` is a NUL-terminated string that outlives the call.
        Ok(c) => unsafe { ffi::nubo_transfer_is_store_url(c.as_ptr()) != 0 },
        Err(_) => false, // a NUL inside: no URL
    }
}

/// The IAM policy (JSON) that `operations` need on `places` and nothing more (docs/s3.md,
/// "Least privilege"). `places`: `s3://BUCKET/PREFIX` URLs; `operations`: `pack`, `unpack`
/// (also list, cat, verify), `cp`, `checkpoint`, and `kms:KEY-ARN` for a key their server-side
/// encryption uses. The S3 client checks every request it makes for those operations against
/// the same table.
///
/// ```no_run
/// let policy = nubo::access_policy(&["s3://my-bucket/run1/".into()], &["checkpoint".into()])?;
/// # Ok::<(), nubo::Error>(())
/// ```
///
/// Errors: InvalidArgument naming a URL that is not `s3://`, an unknown operation or a
/// malformed ARN.
pub fn access_policy(places: &[String], operations: &[String]) -> Result<String, Error> {
    let places = StringList::patterns("places", places)?;
    let operations = StringList::patterns("operations", operations)?;
    // SAFETY: the lists' pointers and counts stay valid for the call; read_text passes a valid
    // buffer (or NULL and 0).
    crate::read_text(
        "nubo_transfer_access_policy",
        |buf, capacity, needed| unsafe {
            ffi::nubo_transfer_access_policy(
                places.ptr(),
                places.len(),
                operations.ptr(),
                operations.len(),
                buf,
                capacity,
                needed,
            )
        },
    )
}
