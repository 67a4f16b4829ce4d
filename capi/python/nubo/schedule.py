"""A queue of jobs planned over reservations, on-demand and spot (docs/schedule.md).

    >>> s = nubo.schedule("queue.json")                 # the embedded catalog
    >>> for job in s.jobs: print(job.name, job.placement, job.start_h, job.reason)
    >>> s.what_if("p4d.24xlarge=1:1y")                  # dollars saved by one more reservation
    >>> s.write_job_files("skypilot", "jobs/")
    >>> later = s.update({"now": 30, "jobs": [{"name": "a", "state": "finished"}]})
"""
from __future__ import annotations

import ctypes
import json
import os
from ctypes import POINTER, c_double
from dataclasses import dataclass
from typing import Any, Optional, Union

from . import _lib
from ._abi import (nubo_cost_estimate_info, nubo_cost_schedule, nubo_cost_schedule_options,
                   nubo_cost_schedule_summary, nubo_cost_scheduled_job_info)
from ._lib import text
from .cost import Catalog, Estimate
from .errors import NuboError, Status

StrPath = Union[str, "os.PathLike[str]"]
SchedulePtr = POINTER(nubo_cost_schedule)
_METHODS = {"auto": 0, "exact": 1, "heuristic": 2}
_PLACEMENTS = ("reserved", "on-demand", "spot", "unplaced")


@dataclass(frozen=True)
class ScheduledJob:
    name: str
    tag: str
    placement: str            # "reserved", "on-demand", "spot" or "unplaced"
    reservation: int          # reserved: which of the queue's reservations
    start_h: float
    finish_h: float
    deadline_h: float
    cost: float               # expected $ beyond what is committed
    reason: str               # why it is not on its cheapest option; "" when it is
    estimate: Optional[Estimate]  # None when unplaced


class Schedule(_lib.Handle):
    """A planned queue: every job's place, the costs, the bound and gap, the fleet (json())."""

    _what = "schedule"

    def __init__(self, handle: Any, catalog: Catalog, options: nubo_cost_schedule_options) -> None:
        c = _lib.lib()
        self._catalog, self._options = catalog, options
        self._own(handle, c.nubo_cost_schedule_free)
        s = nubo_cost_schedule_summary()
        _lib.check(c.nubo_cost_schedule_get_summary(handle, ctypes.byref(s)))
        self.method = ("auto", "exact", "heuristic")[s.method]
        self.optimal, self.bound, self.gap = bool(s.optimal), s.bound, s.gap
        self.solve_s, self.slot_h, self.horizon_h = s.solve_s, s.slot_h, s.horizon_h
        self.costs = {"committed_used": s.committed_used, "committed_idle": s.committed_idle,
                      "on_demand": s.on_demand, "spot": s.spot, "total": s.total}
        self.jobs: list[ScheduledJob] = []
        for i in range(s.jobs):
            j = nubo_cost_scheduled_job_info()
            _lib.check(c.nubo_cost_schedule_job(handle, i, ctypes.byref(j)))
            estimate = None
            if j.placement != 3:
                info = nubo_cost_estimate_info()
                _lib.check(c.nubo_cost_schedule_job_estimate(handle, i, ctypes.byref(info)))
                estimate = Estimate._from_c(info)
            self.jobs.append(ScheduledJob(
                text(j.name), text(j.tag), _PLACEMENTS[j.placement], j.reservation, j.start_h,
                j.finish_h, j.deadline_h, j.cost, text(j.reason), estimate))

    @property
    def unplaced(self) -> list[ScheduledJob]:
        return [j for j in self.jobs if j.placement == "unplaced"]

    def json(self) -> dict:
        """The whole schedule (docs/schedule.md), the fleet per slot included."""
        return json.loads(_lib.read_text(_lib.lib().nubo_cost_schedule_json, self._h()))

    def what_if(self, reservation: str) -> tuple[float, "Schedule"]:
        """(dollars saved, the schedule) with one more reservation, "INSTANCE=COUNT:1y|3y"."""
        saving, handle = c_double(), SchedulePtr()
        _lib.check(_lib.lib().nubo_cost_schedule_what_if(
            self._catalog._h(), self._h(), reservation.encode(),
            ctypes.byref(self._options), ctypes.byref(saving), ctypes.byref(handle)))
        return saving.value, Schedule(handle, self._catalog, self._options)

    def update(self, update: Union[dict, str]) -> "Schedule":
        """The rest of the queue re-planned from what happened since: {"now": hours, "jobs":
        [{"name", "state": finished|failed|running, "started", "runtime", "progress"}]}."""
        body = update if isinstance(update, str) else json.dumps(update)
        handle = SchedulePtr()
        _lib.check(_lib.lib().nubo_cost_schedule_update(
            self._catalog._h(), self._h(), body.encode(), ctypes.byref(self._options),
            ctypes.byref(handle)))
        return Schedule(handle, self._catalog, self._options)

    def write_job_files(self, format: str, directory: StrPath) -> None:
        """One SkyPilot task ("skypilot"), sbatch script ("slurm") or Kubernetes Job
        ("kubernetes") per placed job, the script that starts them all, and a README.md saying
        in what order."""
        _lib.check(_lib.lib().nubo_cost_schedule_write_job_files(
            self._catalog._h(), self._h(), format.encode(), os.fsencode(directory)))


def schedule(queue: Union[StrPath, dict], catalog: Optional[Catalog] = None, *,
             method: str = "auto", exact_up_to: Optional[int] = None,
             time_limit_s: Optional[float] = None, slot_h: Optional[float] = None,
             spot_mtbi_s: Optional[float] = None, restart_s: Optional[float] = None) -> Schedule:
    """Plans a queue: a queue file's path, or the queue as a dict (docs/schedule.md). Raises
    NuboError (INVALID_ARGUMENT naming the job or reservation and the field)."""
    c = _lib.lib()
    catalog = catalog or Catalog()
    o = nubo_cost_schedule_options()
    _lib.check(c.nubo_cost_schedule_options_init(ctypes.byref(o), ctypes.sizeof(o)))
    if method not in _METHODS:
        raise NuboError(Status.INVALID_ARGUMENT,
                        f"method must be auto, exact or heuristic, not {method!r}")
    o.method = _METHODS[method]
    if exact_up_to is not None:
        o.exact_up_to = exact_up_to
    for name, value in (("time_limit_s", time_limit_s), ("slot_h", slot_h),
                        ("spot_mtbi_s", spot_mtbi_s), ("restart_s", restart_s)):
        if value is not None:
            setattr(o, name, float(value))
    handle = SchedulePtr()
    if isinstance(queue, dict):
        _lib.check(c.nubo_cost_schedule_create(catalog._h(), None, json.dumps(queue).encode(),
                                               ctypes.byref(o), ctypes.byref(handle)))
    else:
        _lib.check(c.nubo_cost_schedule_create(catalog._h(), os.fsencode(queue), None,
                                               ctypes.byref(o), ctypes.byref(handle)))
    return Schedule(handle, catalog, o)
