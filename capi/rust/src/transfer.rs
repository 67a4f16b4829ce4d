//! Compressed, resumable archives (docs/transfer.md): [`pack`], [`unpack`] and [`verify`] with
//! a progress callback that may cancel, and [`Archive`] to list an archive and read its files
//! at random (`nubo-xfer list` and `cat`). Paths may be local or `s3://BUCKET/KEY`.
//!
//! ```no_run
//! let summary = nubo::transfer::pack(&["data/"], "data.nubo", &Default::default(), None)?;
//! let archive = nubo::transfer::Archive::open("data.nubo", None)?;
//! for entry in archive.entries()? {
//!     println!("{} {}", entry.size, entry.path);
//! }
//! # Ok::<(), nubo::Error>(())
//! ```

use std::ffi::CString;
use std::os::raw::{c_char, c_int, c_void};
use std::path::Path;
use std::ptr::{self, NonNull};

use crate::fill::Keep;
use crate::progress::{Callback, FromRaw};
use crate::{
    c_ptr, c_string, check, ffi, optional_path, path_string, read_text, records, Error, Status,
};

pub use crate::enums::Codec;

impl Codec {
    /// A name as `--codec` spells it ("auto", "none", "lz4", "zstd"; any case), read by the
    /// library (`nubo_transfer_codec_from_name`); "zero" is refused, as no option chooses it.
    pub fn parse(name: &str) -> Result<Codec, Error> {
        let name = c_string("codec", name.as_bytes())?;
        let mut raw: ffi::nubo_codec = 0;
        // SAFETY: a NUL-terminated string and a valid out pointer, both live for the call.
        check(unsafe { ffi::nubo_transfer_codec_from_name(name.as_ptr(), &mut raw) })?;
        Codec::from_raw(raw).ok_or_else(|| {
            Error::new(
                Status::Unsupported,
                format!("codec {raw} is not one this crate knows"),
            )
        })
    }

    /// "auto", "none", "lz4", "zstd" or "zero", as the library names it.
    pub fn name(self) -> &'static str {
        // SAFETY: the library returns a static NUL-terminated string for every value.
        let name = unsafe { std::ffi::CStr::from_ptr(ffi::nubo_transfer_codec_name(self.raw())) };
        name.to_str().unwrap_or("unknown")
    }
}

/// Chunks counted by how each was stored: `summary.chunks_by_codec[Codec::Zstd]`. Indexed by
/// codec as the C summaries' `chunks_by_codec`; `Codec::Auto`, a choice, is always 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ChunkCounts(pub [u64; ffi::NUBO_CODEC_SLOTS]);

impl ChunkCounts {
    /// Every chunk counted.
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }
}

impl std::ops::Index<Codec> for ChunkCounts {
    type Output = u64;
    fn index(&self, codec: Codec) -> &u64 {
        &self.0[codec.raw() as usize]
    }
}

/// Called with each [`Progress`]; returning `false` cancels the operation, which then fails
/// with [`Status::Cancelled`] and leaves what it did resumable.
pub type ProgressFn<'a> = &'a mut dyn FnMut(&Progress) -> bool;

pub use crate::enums::EntryKind;
pub use crate::options::{PackOptions, UnpackOptions, VerifyOptions};
pub use crate::results::{CodecInfo, Entry, Progress, Summary};

/// The codecs to choose from, in the order they are offered, with their levels and help
/// (`nubo-xfer pack --help` prints the same table).
pub fn codecs() -> Result<Vec<CodecInfo>, Error> {
    // SAFETY: the library's table is static: its strings live as long as the process.
    unsafe {
        records(
            ffi::nubo_transfer_codec_count(),
            |i, c| ffi::nubo_transfer_codec_info(i, c),
            CodecInfo::from_c,
        )
    }
}

pub(crate) fn flag(value: Option<bool>, default: c_int) -> c_int {
    value.map_or(default, c_int::from)
}

impl FromRaw for Progress {
    type Raw = ffi::nubo_transfer_progress;
    unsafe fn from_raw(p: &ffi::nubo_transfer_progress) -> Result<Progress, Error> {
        Progress::from_c(p)
    }
}

/// C strings for a list of patterns or paths, and the pointer array C reads.
pub(crate) struct StringList {
    _owned: Vec<CString>,
    pointers: Vec<*const c_char>,
}

impl StringList {
    pub(crate) fn new(
        what: &str,
        items: impl Iterator<Item = Result<CString, Error>>,
    ) -> Result<Self, Error> {
        let owned = items.collect::<Result<Vec<_>, _>>().map_err(|e| Error {
            message: format!("{what}: {}", e.message),
            ..e
        })?;
        let pointers = owned.iter().map(|s| s.as_ptr()).collect();
        Ok(StringList {
            _owned: owned,
            pointers,
        })
    }
    /// rsync-style filter patterns (`exclude`, `include`).
    pub(crate) fn patterns(what: &str, patterns: &[String]) -> Result<Self, Error> {
        StringList::new(
            what,
            patterns.iter().map(|p| c_string("a pattern", p.as_bytes())),
        )
    }

    /// Paths to send or pack.
    pub(crate) fn paths<P: AsRef<Path>>(paths: &[P]) -> Result<Self, Error> {
        StringList::new(
            "a source",
            paths
                .iter()
                .map(|s| path_string("a source path", s.as_ref())),
        )
    }

    pub(crate) fn len(&self) -> usize {
        self.pointers.len()
    }

    pub(crate) fn ptr(&self) -> *const *const c_char {
        if self.pointers.is_empty() {
            ptr::null()
        } else {
            self.pointers.as_ptr()
        }
    }
}

/// Writes a fresh random key (64 hexadecimal digits, mode 0600) to `path`; never replaces an
/// existing file.
pub fn keygen(path: impl AsRef<Path>) -> Result<(), Error> {
    let path = path_string("the key file's path", path.as_ref())?;
    // SAFETY: a valid NUL-terminated string for the duration of the call.
    check(unsafe { ffi::nubo_transfer_keygen(path.as_ptr()) })
}

/// Packs `sources` (files, directories recursively, symlinks as links) into `archive`.
pub fn pack<P: AsRef<Path>>(
    sources: &[P],
    archive: impl AsRef<Path>,
    options: &PackOptions,
    progress: Option<ProgressFn<'_>>,
) -> Result<Summary, Error> {
    let sources = StringList::paths(sources)?;
    let archive = path_string("the archive's path", archive.as_ref())?;
    let mut keep = Keep::default();
    let mut o = options.to_raw(&mut keep)?;
    let mut callback = Callback::new(progress);
    (o.progress, o.progress_user) = callback.raw();
    let mut summary = ffi::nubo_transfer_summary::new();
    // SAFETY: every pointer in `o` and the lists outlives the call; `callback` too.
    let raw = unsafe {
        ffi::nubo_transfer_pack(
            sources.ptr(),
            sources.len(),
            archive.as_ptr(),
            &o,
            &mut summary,
        )
    };
    callback.finish(raw)?;
    Ok(Summary::from(&summary))
}

/// Whether `archive` is what [`pack`] of `sources` with `options` would make of them now, as
/// rsync's quick check decides (kinds, sizes, modification times, modes, link targets; the
/// chunk size; the encryption): `""` when it is, else the first difference, e.g.
/// `'src/a.txt': its size changed`. [`Status::NotFound`]: no archive there.
pub fn archive_difference<P: AsRef<Path>>(
    archive: impl AsRef<Path>,
    sources: &[P],
    options: &PackOptions,
) -> Result<String, Error> {
    let sources = StringList::paths(sources)?;
    let archive = path_string("the archive's path", archive.as_ref())?;
    let mut keep = Keep::default();
    let o = options.to_raw(&mut keep)?;
    // SAFETY: every pointer in `o` and the lists outlives the calls; read_text hands a buffer of
    // the size it asks for.
    read_text(
        "nubo_transfer_archive_difference",
        |buf, capacity, needed| unsafe {
            ffi::nubo_transfer_archive_difference(
                archive.as_ptr(),
                sources.ptr(),
                sources.len(),
                &o,
                buf,
                capacity,
                needed,
            )
        },
    )
}

/// Unpacks `archive` into `directory` (created if missing), each file verified before it takes
/// its name.
pub fn unpack(
    archive: impl AsRef<Path>,
    directory: impl AsRef<Path>,
    options: &UnpackOptions,
    progress: Option<ProgressFn<'_>>,
) -> Result<Summary, Error> {
    let archive = path_string("the archive's path", archive.as_ref())?;
    let directory = path_string("the directory", directory.as_ref())?;
    let mut keep = Keep::default();
    let mut o = options.to_raw(&mut keep)?;
    let mut callback = Callback::new(progress);
    (o.progress, o.progress_user) = callback.raw();
    let mut summary = ffi::nubo_transfer_summary::new();
    // SAFETY: the strings, what `keep` holds and `callback` outlive the call.
    let raw = unsafe {
        ffi::nubo_transfer_unpack(archive.as_ptr(), directory.as_ptr(), &o, &mut summary)
    };
    callback.finish(raw)?;
    Ok(Summary::from(&summary))
}

/// Checks every checksum of `archive`, writing nothing; [`Status::Corrupt`] names the first
/// fault.
pub fn verify(
    archive: impl AsRef<Path>,
    options: &VerifyOptions,
    progress: Option<ProgressFn<'_>>,
) -> Result<Summary, Error> {
    let archive = path_string("the archive's path", archive.as_ref())?;
    let mut keep = Keep::default();
    let mut o = options.to_raw(&mut keep)?;
    let mut callback = Callback::new(progress);
    (o.progress, o.progress_user) = callback.raw();
    let mut summary = ffi::nubo_transfer_summary::new();
    // SAFETY: the strings, what `keep` holds and `callback` outlive the call.
    let raw = unsafe { ffi::nubo_transfer_verify(archive.as_ptr(), &o, &mut summary) };
    callback.finish(raw)?;
    Ok(Summary::from(&summary))
}

/// An open archive: its entries and random access to its files. Several threads may read one
/// at once, so it is `Send` and `Sync`.
pub struct Archive {
    handle: NonNull<ffi::nubo_transfer_archive>,
}

// SAFETY: nubo_transfer.h: "several threads may read one at once"; every method takes &self
// and the handle is freed once, in Drop.
unsafe impl Send for Archive {}
unsafe impl Sync for Archive {}

impl Archive {
    /// Opens `path` (local or s3://) and reads its index; an archive encrypted with a key file
    /// needs its `key_file` (one under a KMS key needs none, or `kms:KEY`).
    pub fn open(path: impl AsRef<Path>, key_file: Option<&Path>) -> Result<Archive, Error> {
        let path = path_string("the archive's path", path.as_ref())?;
        let key = optional_path("key_file", key_file)?;
        let mut out = ptr::null_mut();
        // SAFETY: valid strings, and an out pointer the library sets.
        check(unsafe {
            ffi::nubo_transfer_archive_open_with_key(path.as_ptr(), c_ptr(&key), &mut out)
        })?;
        NonNull::new(out)
            .map(|handle| Archive { handle })
            .ok_or_else(|| {
                Error::new(
                    Status::Internal,
                    "nubo_transfer_archive_open_with_key gave no archive",
                )
            })
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        // SAFETY: a live handle.
        unsafe { ffi::nubo_transfer_archive_entry_count(self.handle.as_ptr()) }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Entry `index` (0 .. len()).
    pub fn entry(&self, index: usize) -> Result<Entry, Error> {
        let mut info = ffi::nubo_transfer_archive_entry_info::new();
        // SAFETY: a live handle and a sized struct to fill.
        check(unsafe { ffi::nubo_transfer_archive_entry(self.handle.as_ptr(), index, &mut info) })?;
        // SAFETY: the strings belong to the archive, alive while `self` is.
        unsafe { Entry::from_c(&info) }
    }

    /// Every entry, in the archive's order (`nubo-xfer list`).
    pub fn entries(&self) -> Result<Vec<Entry>, Error> {
        (0..self.len()).map(|i| self.entry(i)).collect()
    }

    /// The index of the entry at `path`, or `None`.
    pub fn find(&self, path: &str) -> Result<Option<usize>, Error> {
        let path = c_string("path", path.as_bytes())?;
        let mut index = 0usize;
        // SAFETY: a live handle, a valid string and an out value.
        let raw = unsafe {
            ffi::nubo_transfer_archive_find(self.handle.as_ptr(), path.as_ptr(), &mut index)
        };
        if raw == ffi::NUBO_ERR_NOT_FOUND {
            return Ok(None);
        }
        check(raw)?;
        Ok(Some(index))
    }

    /// Reads the file at `path` from `offset` into `buf`: the count read, fewer than
    /// `buf.len()` only at the end of the file.
    pub fn read_at(&self, path: &str, offset: u64, buf: &mut [u8]) -> Result<usize, Error> {
        let path = c_string("path", path.as_bytes())?;
        let mut read = 0usize;
        // SAFETY: `buf` is writable for its length during the call.
        check(unsafe {
            ffi::nubo_transfer_archive_read(
                self.handle.as_ptr(),
                path.as_ptr(),
                offset,
                buf.as_mut_ptr() as *mut c_void,
                buf.len(),
                &mut read,
            )
        })?;
        Ok(read)
    }

    /// The whole file at `path` (`nubo-xfer cat`).
    pub fn read(&self, path: &str) -> Result<Vec<u8>, Error> {
        let index = self.find(path)?.ok_or_else(|| {
            Error::new(
                Status::NotFound,
                format!("no entry '{path}' in the archive"),
            )
        })?;
        let size = self.entry(index)?.size;
        let size = usize::try_from(size)
            .map_err(|_| Error::new(Status::OutOfMemory, format!("'{path}' holds {size} bytes")))?;
        let mut out = vec![0u8; size];
        let mut done = 0;
        while done < size {
            let n = self.read_at(path, done as u64, &mut out[done..])?;
            if n == 0 {
                break;
            }
            done += n;
        }
        out.truncate(done);
        Ok(out)
    }
}

impl Drop for Archive {
    fn drop(&mut self) {
        // SAFETY: the handle came from nubo_transfer_archive_open_with_key and is freed once.
        unsafe { ffi::nubo_transfer_archive_free(self.handle.as_ptr()) }
    }
}
