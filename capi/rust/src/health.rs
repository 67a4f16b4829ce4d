//! GPU health and the preflight (docs/preflight.md): [`health`] reads what NVML and the kernel
//! log say of each GPU, [`preflight`] measures each GPU, each pair and the host against what
//! their models should do.
//!
//! ```no_run
//! let report = nubo::discover(&Default::default())?;
//! let check = nubo::preflight(&report, &[], &nubo::PreflightOptions { quick: Some(true), ..Default::default() })?;
//! if check.verdict != nubo::Verdict::Healthy {
//!     eprintln!("{}", check.json);
//! }
//! # Ok::<(), nubo::Error>(())
//! ```

use std::ptr;

use crate::fill::Keep;
use crate::{check, ffi, read_text, DeviceReport, Error, Status};

pub use crate::options::{HealthOptions, PreflightOptions};

/// A verdict: health's ok, warn and fail are Healthy, Degraded and Unusable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Healthy,
    Degraded,
    Unusable,
}

/// What [`health`] or [`preflight`] found.
#[derive(Debug, Clone)]
pub struct DeviceCheck {
    pub verdict: Verdict,
    /// nubo-smi's exit status for it: 0 healthy, 4 degraded, 5 unusable.
    pub exit_status: i32,
    /// The whole report as JSON (docs/health.schema.json, docs/preflight.schema.json).
    pub json: String,
}

/// Reads the check and frees it, whatever happens.
fn take(raw: *mut ffi::nubo_device_check) -> Result<DeviceCheck, Error> {
    struct Owned(*mut ffi::nubo_device_check);
    impl Drop for Owned {
        fn drop(&mut self) {
            // SAFETY: the check came from the library and is freed once.
            unsafe { ffi::nubo_device_check_free(self.0) }
        }
    }
    let owned = Owned(raw);
    // SAFETY: `owned.0` is a live check for the whole block.
    let (verdict, exit_status) = unsafe {
        (
            ffi::nubo_device_check_verdict(owned.0),
            ffi::nubo_device_check_exit_status(owned.0),
        )
    };
    let json = read_text("nubo_device_check_json", |buf, capacity, needed| unsafe {
        ffi::nubo_device_check_json(owned.0, buf, capacity, needed)
    })?;
    let verdict = match verdict {
        0 => Verdict::Healthy,
        1 => Verdict::Degraded,
        2 => Verdict::Unusable,
        other => {
            return Err(Error::new(
                Status::Internal,
                format!("nubo_device_check_verdict gave {other}"),
            ))
        }
    };
    Ok(DeviceCheck {
        verdict,
        exit_status,
        json,
    })
}

/// The health of every GPU of the machine: XID, ECC, remapped rows, throttling, PCIe, NVLink,
/// Fabric Manager and processes, each finding with its status and action. A machine without
/// NVML is no error (the report's "source" says why). Errors: InvalidArgument (a bad option or
/// policy file, naming the line).
pub fn health(report: &DeviceReport, options: &HealthOptions) -> Result<DeviceCheck, Error> {
    let mut keep = Keep::default();
    let o = options.to_raw(&mut keep)?;
    let mut out: *mut ffi::nubo_device_check = ptr::null_mut();
    // SAFETY: the report's handle, `o` and what `keep` holds outlive the call.
    check(unsafe { ffi::nubo_device_health(report.raw(), &o, &mut out) })?;
    take(out)
}

/// Measures `devices` of the report (empty: every GPU), each pair of them and the host against
/// what their models should do, within the options' time budget. A device that fails is an
/// Unusable verdict. Errors: InvalidArgument (a bad index or option), Cancelled.
pub fn preflight(
    report: &DeviceReport,
    devices: &[i32],
    options: &PreflightOptions,
) -> Result<DeviceCheck, Error> {
    let mut keep = Keep::default();
    let o = options.to_raw(&mut keep)?;
    let mut out: *mut ffi::nubo_device_check = ptr::null_mut();
    // SAFETY: `devices` holds devices.len() ints; the rest as in health.
    check(unsafe {
        ffi::nubo_device_preflight(report.raw(), devices.as_ptr(), devices.len(), &o, &mut out)
    })?;
    take(out)
}
