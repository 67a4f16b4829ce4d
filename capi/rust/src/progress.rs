//! The progress callback handed to C by every long call (pack, unpack, verify, send): one
//! trampoline, generic over the progress struct the call reports.

use std::os::raw::{c_int, c_void};
use std::panic::{self, AssertUnwindSafe};
use std::ptr;

use crate::{check, Error};

/// A progress value copied out of its C struct (which is valid during the callback only); an
/// error (a value newer than this crate) cancels the call, which then fails with it.
pub(crate) trait FromRaw: Sized {
    type Raw;
    /// # Safety
    /// `raw` is the struct the library passed to the callback, with its strings alive.
    unsafe fn from_raw(raw: &Self::Raw) -> Result<Self, Error>;
}

/// The C callback type for progress `P`.
pub(crate) type RawCallback<P> =
    Option<unsafe extern "C" fn(progress: *const <P as FromRaw>::Raw, user: *mut c_void) -> c_int>;

/// What a call's callback carries across C: the Rust closure, and a panic it raised (resumed
/// once the C call has returned, never unwound through C).
pub(crate) struct Callback<'a, P: FromRaw> {
    user: Option<&'a mut dyn FnMut(&P) -> bool>,
    panic: Option<Box<dyn std::any::Any + Send + 'static>>,
    error: Option<Error>, // a progress value that could not be read
}

impl<'a, P: FromRaw> Callback<'a, P> {
    pub(crate) fn new(user: Option<&'a mut dyn FnMut(&P) -> bool>) -> Self {
        Callback {
            user,
            panic: None,
            error: None,
        }
    }

    /// The callback and user pointer for the options struct; valid while `self` is.
    pub(crate) fn raw(&mut self) -> (RawCallback<P>, *mut c_void) {
        if self.user.is_none() {
            return (None, ptr::null_mut());
        }
        (Some(trampoline::<P>), self as *mut Self as *mut c_void)
    }

    /// The call's result, after resuming a panic of the callback.
    pub(crate) fn finish(self, raw: crate::ffi::nubo_status) -> Result<(), Error> {
        if let Some(payload) = self.panic {
            panic::resume_unwind(payload);
        }
        match self.error {
            Some(e) => Err(e),
            None => check(raw),
        }
    }
}

unsafe extern "C" fn trampoline<P: FromRaw>(progress: *const P::Raw, user: *mut c_void) -> c_int {
    // SAFETY: `user` is the Callback that raw() handed to the same call, alive until it
    // returns; the library calls back from one thread at a time.
    let callback = &mut *(user as *mut Callback<'_, P>);
    if callback.panic.is_some() || callback.error.is_some() {
        return 0;
    }
    let seen = match P::from_raw(&*progress) {
        Ok(seen) => seen,
        Err(e) => {
            callback.error = Some(e);
            return 0;
        }
    };
    let user = match callback.user.as_mut() {
        Some(user) => user,
        None => return 1,
    };
    match panic::catch_unwind(AssertUnwindSafe(|| user(&seen))) {
        Ok(go_on) => c_int::from(go_on),
        Err(payload) => {
            callback.panic = Some(payload);
            0
        }
    }
}
