//! A queue of jobs planned over reservations, on-demand and spot (docs/schedule.md): where and
//! when each runs, the costs, the fleet, the value of one more reservation, and job files for
//! SkyPilot or Slurm.
//!
//! ```no_run
//! let catalog = nubo::cost::Catalog::builtin()?;
//! let s = nubo::schedule(&catalog, nubo::QueueSource::File("queue.json".as_ref()),
//!                        &nubo::ScheduleOptions::default())?;
//! for job in &s.jobs {
//!     println!("{} {:?} from {} h: {}", job.name, job.placement, job.start_h, job.reason);
//! }
//! let (saving, _) = s.what_if(&catalog, "p4d.24xlarge=1:1y", &nubo::ScheduleOptions::default())?;
//! # Ok::<(), nubo::Error>(())
//! ```

use std::path::Path;
use std::ptr::{self, NonNull};

use crate::cost::{Catalog, Estimate};
pub use crate::enums::ScheduleMethod;
use crate::fill::Keep;
pub use crate::options::ScheduleOptions;
use crate::{c_string, check, ffi, owned, path_string, read_text, Error, Status};

/// Where a job runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// On capacity already paid for.
    Reserved,
    OnDemand,
    Spot,
    /// Nothing can run it in time: its reason says why.
    Unplaced,
}

/// The queue: a queue file, or its JSON text.
#[derive(Debug, Clone, Copy)]
pub enum QueueSource<'a> {
    File(&'a Path),
    Json(&'a str),
}

/// One job of a schedule.
#[derive(Debug, Clone, PartialEq)]
pub struct ScheduledJob {
    pub name: String,
    pub tag: String,
    pub placement: Placement,
    /// Reserved: which of the queue's reservations.
    pub reservation: usize,
    pub start_h: f64,
    pub finish_h: f64,
    pub deadline_h: f64,
    /// Expected dollars beyond what is committed.
    pub cost: f64,
    /// Why it is not on its cheapest option; "" when it is.
    pub reason: String,
    /// Where it runs, broken down; None when unplaced.
    pub estimate: Option<Estimate>,
}

/// A planned queue, copied out of the library (which keeps the queue for what-ifs, updates and
/// job files).
#[derive(Debug)]
pub struct Schedule {
    raw: NonNull<ffi::nubo_cost_schedule>,
    /// The method used: exact or heuristic.
    pub method: ScheduleMethod,
    pub optimal: bool,
    /// Dollars no schedule of the queue goes below, and this one's gap to it.
    pub bound: f64,
    pub gap: f64,
    pub solve_s: f64,
    pub slot_h: f64,
    pub horizon_h: f64,
    pub committed_used: f64,
    pub committed_idle: f64,
    pub on_demand: f64,
    pub spot: f64,
    pub total: f64,
    pub jobs: Vec<ScheduledJob>,
    /// The whole schedule as `nubo-cost schedule --json` prints it, the fleet included.
    pub json: String,
}

impl Drop for Schedule {
    fn drop(&mut self) {
        // SAFETY: the handle came from a nubo_cost_schedule_* call and is freed once.
        unsafe { ffi::nubo_cost_schedule_free(self.raw.as_ptr()) }
    }
}

impl Schedule {
    fn adopt(raw: *mut ffi::nubo_cost_schedule) -> Result<Schedule, Error> {
        let raw = NonNull::new(raw)
            .ok_or_else(|| Error::new(Status::Internal, "the library gave a NULL schedule"))?;
        let p = raw.as_ptr();
        let mut s = ffi::nubo_cost_schedule_summary::new();
        // SAFETY: a live handle and an out struct.
        check(unsafe { ffi::nubo_cost_schedule_get_summary(p, &mut s) })?;
        let mut jobs = Vec::with_capacity(s.jobs);
        for i in 0..s.jobs {
            let mut j = ffi::nubo_cost_scheduled_job_info::new();
            // SAFETY: a live handle; the strings are copied while it lives.
            unsafe {
                check(ffi::nubo_cost_schedule_job(p, i, &mut j))?;
                let placement = match j.placement {
                    ffi::NUBO_PLACEMENT_RESERVED => Placement::Reserved,
                    ffi::NUBO_PLACEMENT_ON_DEMAND => Placement::OnDemand,
                    ffi::NUBO_PLACEMENT_SPOT => Placement::Spot,
                    _ => Placement::Unplaced,
                };
                let estimate = if placement == Placement::Unplaced {
                    None
                } else {
                    let mut e = ffi::nubo_cost_estimate_info::new();
                    check(ffi::nubo_cost_schedule_job_estimate(p, i, &mut e))?;
                    Some(Estimate::from_c(&e)?)
                };
                jobs.push(ScheduledJob {
                    name: owned(j.name),
                    tag: owned(j.tag),
                    placement,
                    reservation: j.reservation,
                    start_h: j.start_h,
                    finish_h: j.finish_h,
                    deadline_h: j.deadline_h,
                    cost: j.cost,
                    reason: owned(j.reason),
                    estimate,
                });
            }
        }
        // SAFETY: a live handle; read_text hands a buffer of the size it asks for.
        let json = read_text("nubo_cost_schedule_json", |buf, capacity, needed| unsafe {
            ffi::nubo_cost_schedule_json(p, buf, capacity, needed)
        })?;
        Ok(Schedule {
            raw,
            method: if s.method == ffi::NUBO_SCHEDULE_EXACT {
                ScheduleMethod::Exact
            } else {
                ScheduleMethod::Heuristic
            },
            optimal: s.optimal != 0,
            bound: s.bound,
            gap: s.gap,
            solve_s: s.solve_s,
            slot_h: s.slot_h,
            horizon_h: s.horizon_h,
            committed_used: s.committed_used,
            committed_idle: s.committed_idle,
            on_demand: s.on_demand,
            spot: s.spot,
            total: s.total,
            jobs,
            json,
        })
    }

    /// Jobs nothing could run in time.
    pub fn unplaced(&self) -> impl Iterator<Item = &ScheduledJob> {
        self.jobs
            .iter()
            .filter(|j| j.placement == Placement::Unplaced)
    }

    /// The dollars one more reservation saves (`"p4d.24xlarge=1:1y"`, as `--reserve`), and
    /// the schedule with it.
    pub fn what_if(
        &self,
        catalog: &Catalog,
        reservation: &str,
        options: &ScheduleOptions,
    ) -> Result<(f64, Schedule), Error> {
        let (spec, o) = (
            c_string("reservation", reservation.as_bytes())?,
            options.to_raw(&mut Keep::default())?,
        );
        let (mut saving, mut raw) = (0.0, ptr::null_mut());
        // SAFETY: live handles, a NUL-terminated spec, out-pointers.
        check(unsafe {
            ffi::nubo_cost_schedule_what_if(
                catalog.raw(),
                self.raw.as_ptr(),
                spec.as_ptr(),
                &o,
                &mut saving,
                &mut raw,
            )
        })?;
        Ok((saving, Schedule::adopt(raw)?))
    }

    /// The rest of the queue re-planned from what happened since: `{"now": hours, "jobs":
    /// [{"name", "state": finished|failed|running, "started", "runtime", "progress"}]}`.
    pub fn update(
        &self,
        catalog: &Catalog,
        update_json: &str,
        options: &ScheduleOptions,
    ) -> Result<Schedule, Error> {
        let (text, o) = (
            c_string("update_json", update_json.as_bytes())?,
            options.to_raw(&mut Keep::default())?,
        );
        let mut raw = ptr::null_mut();
        // SAFETY: live handles, NUL-terminated text, an out-pointer.
        check(unsafe {
            ffi::nubo_cost_schedule_update(
                catalog.raw(),
                self.raw.as_ptr(),
                text.as_ptr(),
                &o,
                &mut raw,
            )
        })?;
        Schedule::adopt(raw)
    }

    /// One SkyPilot task (`"skypilot"`), sbatch script (`"slurm"`) or Kubernetes Job
    /// (`"kubernetes"`) per placed job in `dir`, the script that starts them all, and a README.md
    /// saying in what order.
    pub fn write_job_files(
        &self,
        catalog: &Catalog,
        format: &str,
        dir: &Path,
    ) -> Result<(), Error> {
        let (format, dir) = (
            c_string("format", format.as_bytes())?,
            path_string("dir", dir)?,
        );
        // SAFETY: live handles and NUL-terminated strings.
        check(unsafe {
            ffi::nubo_cost_schedule_write_job_files(
                catalog.raw(),
                self.raw.as_ptr(),
                format.as_ptr(),
                dir.as_ptr(),
            )
        })
    }
}

/// Plans a queue (docs/schedule.md). A malformed queue is InvalidArgument naming the job or
/// reservation and the field.
pub fn schedule(
    catalog: &Catalog,
    queue: QueueSource<'_>,
    options: &ScheduleOptions,
) -> Result<Schedule, Error> {
    let o = options.to_raw(&mut Keep::default())?;
    let mut raw = ptr::null_mut();
    let (path, json) = match queue {
        QueueSource::File(p) => (Some(path_string("queue", p)?), None),
        QueueSource::Json(t) => (None, Some(c_string("queue", t.as_bytes())?)),
    };
    // SAFETY: a live catalog, NUL-terminated strings alive for the call, an out-pointer.
    check(unsafe {
        ffi::nubo_cost_schedule_create(
            catalog.raw(),
            path.as_ref().map_or(ptr::null(), |p| p.as_ptr()),
            json.as_ref().map_or(ptr::null(), |j| j.as_ptr()),
            &o,
            &mut raw,
        )
    })?;
    Schedule::adopt(raw)
}
