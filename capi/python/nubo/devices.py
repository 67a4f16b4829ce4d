"""Device discovery: nubo.discover() and the report it returns.

The report is copied out of the C handle into plain dataclasses when it is made, so the objects
stay valid on their own; the handle is kept only for what the library computes on demand
(select(), to_json()) and is freed when the report is garbage collected.
"""

from __future__ import annotations

import ctypes
import os
from typing import Any, Optional, Union

from . import _lib
from ._abi import (nubo_device_discover_options, nubo_device_info, nubo_device_select_request,
                   nubo_diagnosis_info, nubo_driver_info, nubo_host_info, nubo_link_info,
                   nubo_nic_info)
from . import _results
from ._enums import Backend as Backend, LinkKind as LinkKind, Severity as Severity  # re-exported
from ._results import Diagnosis, DriverInfo, HostCpu, Nic
from .errors import NuboError, Status

StrPath = Union[str, "os.PathLike[str]"]

GIB = 1 << 30


class Device(_results.Device):
    """A GPU, real (backend CUDA) or simulated (backend SIM); the fields of nubo_device_info."""

    @property
    def compute_capability(self) -> tuple[int, int]:
        return self.cc_major, self.cc_minor

    def __str__(self) -> str:
        return (f"{self.index}: {self.name} ({self.backend}, "
                f"{self.memory_total / GIB:.1f} GiB, cc {self.cc_major}.{self.cc_minor})")


class Link(_results.Link):
    """The connection between two GPUs, named as nvidia-smi topo -m names it."""

    def __str__(self) -> str:
        return self.name


def _c_int(name: str, value: int, *, unsigned_bits: int = 0) -> int:
    """value if it fits the C field; ctypes would silently wrap it instead."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    low, high = (0, (1 << unsigned_bits) - 1) if unsigned_bits else (-(1 << 31), (1 << 31) - 1)
    if not low <= value <= high:
        raise NuboError(Status.INVALID_ARGUMENT,
                        f"{name}={value} is out of range: it must lie in [{low}, {high}]")
    return value


class DeviceReport(_lib.Handle):
    """What discover() found: the GPUs, the host, the driver, the topology and the diagnoses."""

    _what = "device report"

    devices: list[Device]  # GPUs (cuda or sim), in nubo's order
    host: HostCpu
    driver: DriverInfo
    links: list[list[Link]]  # links[i][j] between devices i and j
    diagnoses: list[Diagnosis]

    def __init__(self, handle: _lib.ReportPtr) -> None:
        """Takes ownership of a nubo_device_report handle; use nubo.discover() to make one."""
        c = _lib.lib()
        self._own(handle, c.nubo_device_report_free)

        host = nubo_host_info()
        _lib.check(c.nubo_device_report_host(handle, ctypes.byref(host)))
        self.host = HostCpu._from_c(host)
        driver = nubo_driver_info()
        _lib.check(c.nubo_device_report_driver(handle, ctypes.byref(driver)))
        self.driver = DriverInfo._from_c(driver)
        self.devices = _lib.records(Device, nubo_device_info, c.nubo_device_report_device_count,
                                    c.nubo_device_report_device, handle)
        self.nics = _lib.records(Nic, nubo_nic_info, c.nubo_device_report_nic_count,
                                 c.nubo_device_report_nic, handle)
        self.diagnoses = _lib.records(Diagnosis, nubo_diagnosis_info,
                                      c.nubo_device_report_diagnosis_count,
                                      c.nubo_device_report_diagnosis, handle)
        # links[i][j] between devices i and j; gpu_nic[i][n]: how GPU i reaches nics[n] (PIX ...
        # SYS); preferred_nic[i]: the NIC it should use (-1: none).
        gpus = range(len(self.devices))
        self.links = [[self._link(c.nubo_device_report_link, i, j) for j in gpus] for i in gpus]
        self.gpu_nic = [[self._link(c.nubo_device_report_gpu_nic, i, n)
                         for n in range(len(self.nics))] for i in gpus]
        self.preferred_nic = [int(c.nubo_device_report_preferred_nic(handle, i)) for i in gpus]

    def _link(self, get: Any, i: int, j: int) -> Link:
        link = nubo_link_info()
        _lib.check(get(self._h(), i, j, ctypes.byref(link)))
        return Link._from_c(link)

    def __repr__(self) -> str:
        codes = ", ".join(d.code for d in self.diagnoses)
        return (f"<DeviceReport: {len(self.devices)} device(s), host {self.host.model!r}, "
                f"diagnoses [{codes}]>")

    @property
    def has_gpu(self) -> bool:
        """True when at least one GPU (real or simulated) is listed."""
        return bool(self.devices)

    def link(self, i: int, j: int) -> Link:
        """The link between devices i and j (IndexError for a bad index)."""
        n = len(self.devices)
        if not (0 <= i < n and 0 <= j < n):
            raise IndexError(f"link({i}, {j}): the report has {n} device(s)")
        return self.links[i][j]

    def find_diagnosis(self, code: str) -> Optional[Diagnosis]:
        """The diagnosis with this code, or None."""
        return next((d for d in self.diagnoses if d.code == code), None)

    def select(self, count: int = 1, *, min_memory: int = 0,
               min_cc: tuple[int, int] = (0, 0)) -> list[Device]:
        """The best-connected group of `count` devices (0: all that qualify) with at least
        `min_memory` bytes each and compute capability `min_cc` or newer, in index order.

        Raises NuboError with status UNAVAILABLE, and the library's reason, when no group
        qualifies.
        """
        c = _lib.lib()
        request = nubo_device_select_request()
        _lib.check(c.nubo_device_select_request_init(ctypes.byref(request),
                                                     ctypes.sizeof(request)))
        request.count = _c_int("count", count)
        request.min_memory = _c_int("min_memory", min_memory, unsigned_bits=64)
        major, minor = min_cc
        request.min_cc_major = _c_int("min_cc major", major)
        request.min_cc_minor = _c_int("min_cc minor", minor)

        capacity = len(self.devices)  # a group never holds more than every device, so the
        # "call again with a larger capacity" answer of nubo_device_report_select cannot happen.
        indices = (ctypes.c_size_t * max(capacity, 1))()
        chosen = ctypes.c_size_t()
        _lib.check(c.nubo_device_report_select(self._h(), ctypes.byref(request), indices,
                                               capacity, ctypes.byref(chosen)))
        return [self.devices[i] for i in indices[:chosen.value]]

    def to_json(self) -> str:
        """The whole report as JSON (schema: docs/device-report.schema.json in nubo)."""
        return _lib.read_text(_lib.lib().nubo_device_report_json, self._h())


def discover(sim_devices: Optional[str] = None, sim_topology_file: Optional[StrPath] = None,
             probe_cuda: bool = True, cuda_plugin_path: Optional[StrPath] = None) -> DeviceReport:
    """Finds the devices: the GPUs, the host CPU, the driver, the topology and the diagnoses.

    sim_devices: simulated GPUs, e.g. "8xA100-SXM4-80GB" or "2xT4,1xV100-SXM2-16GB"; None reads
        NUBO_SIM_DEVICES, "" asks for none.
    sim_topology_file: a topology file for the simulated GPUs; None reads NUBO_SIM_TOPOLOGY.
    probe_cuda: look for real GPUs through the CUDA plugin.
    cuda_plugin_path: libnubo_cuda.so to use; None reads NUBO_CUDA_PLUGIN, else the one beside
        libnubo.

    A bad value (an unknown GPU model, a malformed topology file, ...) raises NuboError; a
    problem of the machine (no driver, no GPU, ...) is a diagnosis in the report instead.
    """
    c = _lib.lib()
    options = nubo_device_discover_options()
    # The size tells nubo how much of the struct this package knows; it writes no more.
    _lib.check(c.nubo_device_discover_options_init(ctypes.byref(options), ctypes.sizeof(options)))
    # Assigning bytes to a c_char_p field keeps them alive as long as `options`.
    if sim_devices is not None:
        options.sim_devices = sim_devices.encode("utf-8")
    if sim_topology_file is not None:
        options.sim_topology_file = os.fsencode(sim_topology_file)
    options.probe_cuda = 1 if probe_cuda else 0
    if cuda_plugin_path is not None:
        options.cuda_plugin_path = os.fsencode(cuda_plugin_path)

    handle = _lib.ReportPtr()
    _lib.check(c.nubo_device_discover(ctypes.byref(options), ctypes.byref(handle)))
    return DeviceReport(handle)
