"""GPU health and the preflight: nubo.health() and nubo.preflight() (docs/preflight.md).

    >>> import nubo
    >>> h = nubo.health()                  # what NVML and the kernel log say of each GPU
    >>> h["status"], [f["code"] for f in h["findings"]]
    >>> check = nubo.preflight(quick=True) # each GPU and link measured against its model
    >>> check["verdict"], check["devices"]

Both return the report as a dict, as `nubo-smi health --json` and `nubo-smi check --json` print
it (docs/health.schema.json, docs/preflight.schema.json), with "exit_status": nubo-smi's exit
status for it (0 healthy, 4 degraded, 5 unusable).
"""

from __future__ import annotations

import ctypes
import json
import os
from typing import Any, Dict, Iterable, Optional, Union

from . import _lib
from ._abi import nubo_device_check, nubo_device_health_options, nubo_device_preflight_options
from ._options import filled
from .devices import DeviceReport, discover

StrPath = Union[str, "os.PathLike[str]"]


def _report_of(check: Any) -> Dict[str, Any]:
    """The check's JSON as a dict, with its exit status; frees the check."""
    c = _lib.lib()
    try:
        out = json.loads(_lib.read_text(c.nubo_device_check_json, check))
        out["exit_status"] = int(c.nubo_device_check_exit_status(check))
        return out
    finally:
        c.nubo_device_check_free(check)


def health(report: Optional[DeviceReport] = None, *, wait_seconds: Optional[float] = None,
           xid_policy_file: Optional[StrPath] = None,
           kernel_log_file: Optional[StrPath] = None) -> Dict[str, Any]:
    """The health of every GPU: XID, ECC, remapped rows, throttling, PCIe, NVLink, Fabric
    Manager and the processes on it, each finding with its status and action.
    report: from nubo.discover() (None: discovers now).
    wait_seconds: how long to wait for new XID events (None: none).
    xid_policy_file: overrides of the XID table, lines "XID STATUS ACTION".
    kernel_log_file: a saved dmesg to read XIDs from (None: /dev/kmsg).
    A machine without NVML is no error: "source" says why. Raises NuboError for a bad option or
    policy file."""
    report = report if report is not None else discover()
    o = filled(nubo_device_health_options, "nubo_device_health_options_init",
               wait_seconds=wait_seconds, xid_policy_file=xid_policy_file,
               kernel_log_file=kernel_log_file)
    check = ctypes.POINTER(nubo_device_check)()
    _lib.check(_lib.lib().nubo_device_health(report._h(), ctypes.byref(o),
                                             ctypes.byref(check)))
    return _report_of(check)


def preflight(report: Optional[DeviceReport] = None, *, devices: Iterable[int] = (),
              quick: Optional[bool] = None, budget_seconds: Optional[float] = None,
              threshold: Optional[float] = None, host: Optional[bool] = None) -> Dict[str, Any]:
    """Measures each GPU (GEMM in bf16, f16, tf32 and f32; memory bandwidth; pinned transfers),
    each pair and the host against what their models should do, within a time budget (about
    60 s; quick: about 10 s). "verdict" is healthy, degraded or unusable, per GPU and for the
    group. devices: nubo indices (empty: every GPU). A device that fails is an unusable
    verdict; a bad index or option raises NuboError."""
    report = report if report is not None else discover()
    o = filled(nubo_device_preflight_options, "nubo_device_preflight_options_init", quick=quick,
               budget_seconds=budget_seconds, threshold=threshold, host=host)
    indices = [int(i) for i in devices]
    array = (ctypes.c_int * max(len(indices), 1))(*indices)
    check = ctypes.POINTER(nubo_device_check)()
    _lib.check(_lib.lib().nubo_device_preflight(report._h(), array, len(indices),
                                                ctypes.byref(o), ctypes.byref(check)))
    return _report_of(check)
