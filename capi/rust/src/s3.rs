//! [`crate::copy`] under its S3 name, with the S3 options among the others: kept for existing
//! programs.
//!
//! ```no_run
//! let s = nubo::s3::copy("ckpt/", "s3://my-bucket/run1/", &Default::default(), None)?;
//! # Ok::<(), nubo::Error>(())
//! ```

use std::path::{Path, PathBuf};

use crate::stores;
use crate::transfer::ProgressFn;
use crate::Error;

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
    /// The AWS profile (default: `AWS_PROFILE`, else "default").
    pub profile: Option<String>,
    /// "AES256" or "aws:kms", passed to the server.
    pub server_side_encryption: Option<String>,
    /// With "aws:kms".
    pub kms_key_id: Option<String>,
    /// Uploads of a tree: rsync-style filters.
    pub exclude: Vec<String>,
    pub include: Vec<String>,
    /// Bytes per second over every part in flight (default: unlimited).
    pub rate: Option<f64>,
    /// Client-side encryption: uploads are encrypted with this key, or under a KMS key
    /// (`kms:KEY`); downloads of objects encrypted with a key file need it.
    pub key_file: Option<PathBuf>,
}

pub use crate::stores::CopySummary;

/// [`crate::copy`] under its S3 name, with the S3 options among the others.
pub fn copy(
    from: impl AsRef<Path>,
    to: impl AsRef<Path>,
    options: &CopyOptions,
    progress: Option<ProgressFn<'_>>,
) -> Result<CopySummary, Error> {
    let o = options.clone();
    let store_options = stores::CopyOptions {
        streams: o.streams,
        part_size: o.part_size,
        keep_partial: Some(o.keep_partial),
        sync: o.sync,
        exclude: o.exclude,
        include: o.include,
        rate: o.rate,
        key_file: o.key_file,
        journal_dir: None,
        s3: stores::S3Options {
            profile: o.profile,
            server_side_encryption: o.server_side_encryption,
            kms_key_id: o.kms_key_id,
            source_profile: None,
        },
        symlinks: None,
        follow_outside: None,
    };
    stores::copy(from, to, &store_options, progress)
}
