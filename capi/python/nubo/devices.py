"""Device discovery: nubo.discover() and the report it returns.

The report is copied out of the C handle into plain dataclasses when it is made, so the objects
stay valid on their own; the handle is kept only for what the library computes on demand
(select(), to_json()) and is freed when the report is garbage collected.
"""

from __future__ import annotations

import ctypes
import os
import weakref
from dataclasses import dataclass
from typing import Optional, Union

from . import _lib
from ._abi import (nubo_device_discover_options, nubo_device_info, nubo_device_select_request,
                   nubo_diagnosis_info, nubo_driver_info, nubo_host_info, nubo_link_info,
                   nubo_nic_info)
from ._enum import OpenIntEnum
from ._lib import text
from .errors import NuboError, Status

StrPath = Union[str, "os.PathLike[str]"]

GIB = 1 << 30


class Backend(OpenIntEnum):
    """nubo_backend: what serves a device."""

    HOST = 0
    SIM = 1
    CUDA = 2


class LinkKind(OpenIntEnum):
    """nubo_link_kind: how two GPUs are connected, as `nvidia-smi topo -m` names it."""

    SELF = 0
    NVLINK = 1
    PIX = 2
    PXB = 3
    PHB = 4
    NODE = 5
    SYS = 6
    UNKNOWN = 7


class Severity(OpenIntEnum):
    """nubo_severity of a diagnosis."""

    INFO = 0
    WARNING = 1
    ERROR = 2


@dataclass(frozen=True)
class Device:
    """A GPU, real (backend CUDA) or simulated (backend SIM); the fields of nubo_device_info."""

    backend: Backend
    index: int  # nubo's index: the position in DeviceReport.devices
    ordinal: int  # the backend's own index (the CUDA device ordinal)
    name: str  # as the device reports it, e.g. "NVIDIA A100-SXM4-80GB"
    model: str  # the GPU model table's key, e.g. "A100-SXM4-80GB"; "" if unknown
    uuid: str
    pci_bus_id: str
    compute_capability: tuple[int, int]
    multiprocessors: int
    clock_mhz: int
    memory_total: int  # bytes
    memory_free: int  # bytes
    memory_bandwidth_gbs: float
    # Dense peak rates in TFLOP/s; 0 where unknown.
    peak_tflops_fp32: float
    peak_tflops_tf32: float
    peak_tflops_fp16: float
    peak_tflops_bf16: float
    peak_source: str  # "device" (its own figures), "catalog" (the GPU model table) or "unknown"
    numa_node: Optional[int]  # None: unknown
    mig_enabled: bool

    def __str__(self) -> str:
        major, minor = self.compute_capability
        return (f"{self.index}: {self.name} ({self.backend}, "
                f"{self.memory_total / GIB:.1f} GiB, cc {major}.{minor})")


@dataclass(frozen=True)
class HostCpu:
    """The host's CPUs and memory; always present."""

    model: str
    logical_cores: int
    physical_cores: int
    sockets: int
    numa_nodes: int
    memory_total: int  # bytes
    memory_available: int  # bytes
    blas: str  # the BLAS in use


@dataclass(frozen=True)
class DriverInfo:
    """The CUDA driver and runtime, as far as they could be found."""

    loaded: bool  # libcuda.so.1 could be loaded
    driver_version: int  # highest CUDA version the driver supports, e.g. 12040; 0 if none
    runtime_version: int  # CUDA runtime of the plugin, e.g. 13000; 0 if no plugin
    driver_release: str  # the kernel driver's version, e.g. "580.65.06"; may be ""


@dataclass(frozen=True)
class Link:
    """The connection between two GPUs."""

    kind: LinkKind
    nvlinks: int  # number of NVLink links when kind is NVLINK
    peer_access: bool  # direct peer-to-peer access works
    name: str  # "X", "NV12", "PIX", "PXB", "PHB", "NODE", "SYS", "?"

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Nic:
    """A network device, as nvidia-smi topo -m lists NICs."""

    name: str  # "mlx5_0", "efa_0", or the interface ("eth0")
    kind: str  # "infiniband", "efa" or "ethernet"
    interface: str  # the network interface it backs; "" when none
    pci_bus_id: str  # "0000:0c:00.0"
    numa_node: int  # -1 unknown
    rate_gbps: float  # 0: unknown or down


@dataclass(frozen=True)
class Diagnosis:
    """A finding about the machine, with a stable code (docs/devices.md lists them)."""

    code: str  # e.g. "no-driver"
    severity: Severity
    message: str  # what is wrong
    advice: str  # what to do about it


def _device(info: nubo_device_info) -> Device:
    return Device(
        backend=Backend(info.backend),
        index=info.index,
        ordinal=info.ordinal,
        name=text(info.name),
        model=text(info.model),
        uuid=text(info.uuid),
        pci_bus_id=text(info.pci_bus_id),
        compute_capability=(info.cc_major, info.cc_minor),
        multiprocessors=info.multiprocessors,
        clock_mhz=info.clock_mhz,
        memory_total=info.memory_total,
        memory_free=info.memory_free,
        memory_bandwidth_gbs=info.memory_bandwidth_gbs,
        peak_tflops_fp32=info.peak_tflops_fp32,
        peak_tflops_tf32=info.peak_tflops_tf32,
        peak_tflops_fp16=info.peak_tflops_fp16,
        peak_tflops_bf16=info.peak_tflops_bf16,
        peak_source=text(info.peak_source),
        numa_node=info.numa_node if info.numa_node >= 0 else None,
        mig_enabled=bool(info.mig_enabled),
    )


def _c_int(name: str, value: int, *, unsigned_bits: int = 0) -> int:
    """value if it fits the C field; ctypes would silently wrap it instead."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    low, high = (0, (1 << unsigned_bits) - 1) if unsigned_bits else (-(1 << 31), (1 << 31) - 1)
    if not low <= value <= high:
        raise NuboError(Status.INVALID_ARGUMENT,
                        f"{name}={value} is out of range: it must lie in [{low}, {high}]")
    return value


class DeviceReport:
    """What discover() found: the GPUs, the host, the driver, the topology and the diagnoses."""

    devices: list[Device]  # GPUs (cuda or sim), in nubo's order
    host: HostCpu
    driver: DriverInfo
    links: list[list[Link]]  # links[i][j] between devices i and j
    diagnoses: list[Diagnosis]

    def __init__(self, handle: _lib.ReportPtr) -> None:
        """Takes ownership of a nubo_device_report handle; use nubo.discover() to make one."""
        c = _lib.lib()
        self._handle = handle
        # finalize (unlike __del__) runs exactly once, also at exit, and also when the copying
        # below raises half-way.
        self._free = weakref.finalize(self, c.nubo_device_report_free, handle)

        host = nubo_host_info()
        _lib.check(c.nubo_device_report_host(handle, ctypes.byref(host)))
        self.host = HostCpu(model=text(host.model), logical_cores=host.logical_cores,
                            physical_cores=host.physical_cores, sockets=host.sockets,
                            numa_nodes=host.numa_nodes, memory_total=host.memory_total,
                            memory_available=host.memory_available, blas=text(host.blas))

        driver = nubo_driver_info()
        _lib.check(c.nubo_device_report_driver(handle, ctypes.byref(driver)))
        self.driver = DriverInfo(loaded=bool(driver.loaded),
                                 driver_version=driver.driver_version,
                                 runtime_version=driver.runtime_version,
                                 driver_release=text(driver.driver_release))

        self.devices = []
        for i in range(c.nubo_device_report_device_count(handle)):
            info = nubo_device_info()
            _lib.check(c.nubo_device_report_device(handle, i, ctypes.byref(info)))
            self.devices.append(_device(info))

        self.links = []
        for i in range(len(self.devices)):
            row = []
            for j in range(len(self.devices)):
                link = nubo_link_info()
                _lib.check(c.nubo_device_report_link(handle, i, j, ctypes.byref(link)))
                row.append(Link(kind=LinkKind(link.kind), nvlinks=link.nvlinks,
                                peer_access=bool(link.peer_access), name=text(link.name)))
            self.links.append(row)

        self.nics = []
        for i in range(c.nubo_device_report_nic_count(handle)):
            nic = nubo_nic_info()
            _lib.check(c.nubo_device_report_nic(handle, i, ctypes.byref(nic)))
            self.nics.append(Nic(name=text(nic.name), kind=text(nic.kind),
                                 interface=text(nic.interface), pci_bus_id=text(nic.pci_bus_id),
                                 numa_node=nic.numa_node, rate_gbps=nic.rate_gbps))
        # gpu_nic[i][n]: how GPU i reaches nics[n] (PIX ... SYS); preferred_nic[i]: the NIC it
        # should use (-1: none).
        self.gpu_nic = []
        for i in range(len(self.devices)):
            row = []
            for n in range(len(self.nics)):
                link = nubo_link_info()
                _lib.check(c.nubo_device_report_gpu_nic(handle, i, n, ctypes.byref(link)))
                row.append(Link(kind=LinkKind(link.kind), nvlinks=0, peer_access=False,
                                name=text(link.name)))
            self.gpu_nic.append(row)
        self.preferred_nic = [int(c.nubo_device_report_preferred_nic(handle, i))
                              for i in range(len(self.devices))]

        self.diagnoses = []
        for i in range(c.nubo_device_report_diagnosis_count(handle)):
            diagnosis = nubo_diagnosis_info()
            _lib.check(c.nubo_device_report_diagnosis(handle, i, ctypes.byref(diagnosis)))
            self.diagnoses.append(Diagnosis(code=text(diagnosis.code),
                                            severity=Severity(diagnosis.severity),
                                            message=text(diagnosis.message),
                                            advice=text(diagnosis.advice)))

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
        _lib.check(c.nubo_device_report_select(self._handle, ctypes.byref(request), indices,
                                               capacity, ctypes.byref(chosen)))
        return [self.devices[i] for i in indices[:chosen.value]]

    def to_json(self) -> str:
        """The whole report as JSON (schema: docs/device-report.schema.json in nubo)."""
        return _lib.read_text(_lib.lib().nubo_device_report_json, self._handle)


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
