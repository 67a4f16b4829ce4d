//! Cloud interruption notices (docs/spot.md): a [`Watcher`] polls the instance metadata service
//! of the cloud it runs on (AWS IMDSv2 `spot/instance-action`, GCP `instance/preempted`, Azure
//! Scheduled Events; `NUBO_METADATA_URL` overrides the address) and calls back once when the
//! machine is about to go, so that the job can checkpoint before the SIGTERM.
//!
//! ```no_run
//! let watcher = nubo::interruption::Watcher::start(2.0, |notice| {
//!     eprintln!("{} {}: {:?} s left", notice.cloud, notice.action, notice.seconds_left);
//! })?;
//! println!("watching {}", if watcher.cloud()?.is_empty() { "nothing" } else { "the cloud" });
//! # Ok::<(), nubo::Error>(())
//! ```
//!
//! A [`Watcher`] is `Send` and `Sync`; the callback runs on the watcher's own thread.

use std::os::raw::c_void;
use std::panic::{self, AssertUnwindSafe};
use std::ptr::{self, NonNull};

pub use crate::results::InterruptionNotice;
use crate::{check, ffi, read_text, Error, Status};

type Handler = Box<dyn FnMut(&InterruptionNotice) + Send + 'static>;

/// Polls the metadata service from its own thread until dropped.
pub struct Watcher {
    raw: NonNull<ffi::nubo_interruption_watcher>,
    // Boxed twice so the C side holds a thin pointer; freed after the watcher's thread stops.
    _handler: Box<Handler>,
}

// SAFETY: the C watcher runs on its own thread and its cloud() may be read from any; the
// handler it calls is Send.
unsafe impl Send for Watcher {}
unsafe impl Sync for Watcher {}

unsafe extern "C" fn on_notice(notice: *const ffi::nubo_interruption_notice, user: *mut c_void) {
    // SAFETY: `user` is the Handler that start() boxed, alive until the watcher is freed, which
    // waits for this thread; the notice and its strings are valid during the call.
    let handler = &mut *(user as *mut Handler);
    let seen = match InterruptionNotice::from_c(&*notice) {
        Ok(seen) => seen,
        Err(e) => return eprintln!("nubo: an interruption notice could not be read: {e}"),
    };
    // A panic may not unwind into C, and nobody waits on this thread to take it: say so.
    if panic::catch_unwind(AssertUnwindSafe(|| handler(&seen))).is_err() {
        eprintln!("nubo: the interruption handler panicked; the notice was: {seen:?}");
    }
}

impl Watcher {
    /// Probes the metadata service (at most 100 ms), then polls it every `poll_seconds` (> 0;
    /// 2 is the usual). Where no service answers the watcher is off (`cloud()` is "").
    pub fn start<F>(poll_seconds: f64, on: F) -> Result<Watcher, Error>
    where
        F: FnMut(&InterruptionNotice) + Send + 'static,
    {
        let mut handler: Box<Handler> = Box::new(Box::new(on));
        let user = &mut *handler as *mut Handler as *mut c_void;
        let mut raw = ptr::null_mut();
        // SAFETY: the handler outlives the watcher (dropped after it in Drop).
        check(unsafe {
            ffi::nubo_interruption_watcher_create(Some(on_notice), user, poll_seconds, &mut raw)
        })?;
        let raw = NonNull::new(raw).ok_or_else(|| {
            Error::new(
                Status::Internal,
                "nubo_interruption_watcher_create gave NULL",
            )
        })?;
        Ok(Watcher {
            raw,
            _handler: handler,
        })
    }

    /// The cloud found ("aws", "gcp", "azure"), or "" when the watcher is off.
    pub fn cloud(&self) -> Result<String, Error> {
        let w = self.raw.as_ptr();
        // SAFETY: a live watcher; read_text hands a buffer of the size it asks for.
        read_text(
            "nubo_interruption_watcher_cloud",
            |buf, capacity, needed| unsafe {
                ffi::nubo_interruption_watcher_cloud(w, buf, capacity, needed)
            },
        )
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        // SAFETY: created once, freed once; this waits for the watcher's thread, so the handler
        // (dropped after this) is no longer in use.
        unsafe { ffi::nubo_interruption_watcher_free(self.raw.as_ptr()) }
    }
}
