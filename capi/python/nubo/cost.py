"""Cost estimation and planning: nubo.cost over nubo_cost.h.

    >>> from nubo import cost
    >>> catalog = cost.Catalog.builtin()
    >>> plan = cost.plan(catalog, cost.Workload(total_flops=3e18), deadline="24h",
    ...                  pricings=("on-demand", "spot"), nodes=(1, 4))
    >>> best = plan.ranked[0]
    >>> best.label, best.total_s, best.cost_total

Estimates are copied out of the C handles into dataclasses, so they stay valid on their own.
docs/cost.md in nubo explains every figure.
"""

from __future__ import annotations

import ctypes
import os
from ctypes import POINTER, c_double, c_size_t
from dataclasses import dataclass, field
from typing import Iterable, Optional, Union

from . import _lib, units
from ._abi import (nubo_cost_catalog, nubo_cost_checkpoint_info, nubo_cost_estimate_info,
                   nubo_cost_exclusion_info, nubo_cost_instance_info, nubo_cost_meter,
                   nubo_cost_meter_info, nubo_cost_own_info, nubo_cost_own_request,
                   nubo_cost_plan, nubo_cost_plan_options, nubo_cost_serving,
                   nubo_cost_serving_info, nubo_cost_serving_plan, nubo_cost_source_info,
                   nubo_cost_update, nubo_cost_update_info, nubo_cost_update_options,
                   nubo_cost_workload)
from ._enums import Optimizer, Pricing
from ._lib import text
from ._results import (CatalogSource, CatalogUpdate, CheckpointPlan, Estimate, Exclusion,
                       Instance, OwnResult, ServingOption)
from .errors import NuboError, Status
from .units import DType

StrPath = Union[str, "os.PathLike[str]"]
Seconds = Union[float, int, str]  # 3600, or "1h", "90m", "2d"
Bytes = Union[float, int, str]    # 14e9, or "14G", "14GB"
Count = Union[float, int, str]    # 7e9, or "7B", "70M"


_PRICING_NAMES = {"on-demand": Pricing.ON_DEMAND, "spot": Pricing.SPOT,
                  "reserved-1y": Pricing.RESERVED_1Y, "reserved-3y": Pricing.RESERVED_3Y}

# ---- Handles (the structs are _abi.py's, generated from nubo_cost.h) ------------------

CatalogPtr = POINTER(nubo_cost_catalog)
PlanPtr = POINTER(nubo_cost_plan)
MeterPtr = POINTER(nubo_cost_meter)


# ---- Units ------------------------------------------------------------------------------

def seconds(value: Seconds, name: str = "duration") -> float:
    """3600 or "1h" (as nubo.units.parse_duration reads it) as seconds; NuboError for anything
    else."""
    if isinstance(value, bool):
        raise TypeError(f"{name} must be a number of seconds or a string like '24h'")
    if isinstance(value, (int, float)):
        if not 0 <= value < float("inf"):
            raise NuboError(Status.INVALID_ARGUMENT,
                            f"{name}: must be >= 0 and finite, got {value!r}")
        return float(value)
    if isinstance(value, str):
        return units.parse_duration(value, name)
    raise TypeError(f"{name} must be a number of seconds or a string like '24h'")


def size(value: Bytes, name: str = "size") -> float:
    """14e9 or "14G" (as nubo.units.parse_bytes reads it) as bytes; NuboError naming `name`."""
    return _number(value, name, units.parse_bytes, "bytes or a string like '14G'")


def count(value: Count, name: str = "count") -> float:
    """7e9 or "7B" (as nubo.units.parse_count reads it); NuboError naming `name`."""
    return _number(value, name, units.parse_count, "a number or a string like '7B'")


def _number(value: Union[float, int, str], name: str, parse, shown: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise NuboError(Status.INVALID_ARGUMENT, f"{name} must be {shown}, not {value!r}")
    if isinstance(value, str):
        return float(parse(value, name))
    if not 0 <= value < float("inf"):
        raise NuboError(Status.INVALID_ARGUMENT, f"{name}: must be >= 0 and finite, got {value!r}")
    return float(value)


def _optimizer(value: Union[str, int, Optimizer]) -> Optimizer:
    if isinstance(value, str):
        names = {"adam": Optimizer.ADAM, "adamw": Optimizer.ADAM, "sgd": Optimizer.SGD}
        try:
            return names[value.lower()]
        except KeyError:
            raise NuboError(Status.INVALID_ARGUMENT,
                            f"unknown optimizer {value!r}: use adam (or adamw) or sgd") from None
    return Optimizer(value)


def _pricing(value: Union[str, int, Pricing]) -> Pricing:
    if isinstance(value, str):
        try:
            return _PRICING_NAMES[value.lower()]
        except KeyError:
            raise NuboError(Status.INVALID_ARGUMENT, f"unknown pricing {value!r}: use "
                            "on-demand, spot, reserved-1y or reserved-3y") from None
    return Pricing(value)


# ---- Results: generated from nubo_cost.h (nubo/_results.py) ----------------------------

@dataclass
class Workload:
    """An analytic workload (parameters with tokens, total_flops, or flops_per_sample x samples x
    epochs) or a measured one (profile: the path of a nubo-train profile). Sizes take bytes or
    "14G", counts 7e9 or "7B", durations seconds or "1h"; a bad value fails here, naming the
    field. See nubo_cost_workload."""

    # None keeps the library's default (nubo_cost_workload_init): stated once, in C++.
    parameters: Optional[Count] = None
    tokens: Optional[Count] = None
    sequence_length: Optional[float] = None
    micro_batch: Optional[float] = None
    optimizer: Optional[Union[str, Optimizer]] = None
    sharding: Optional[int] = None  # ZeRO stage 0-3; -1 (default): the least that fits
    total_flops: Optional[float] = None
    flops_per_sample: Optional[float] = None
    samples: Optional[float] = None
    epochs: Optional[float] = None
    global_batch: Optional[float] = None
    dtype: Optional[Union[str, DType]] = None
    mfu: Optional[float] = None  # 0 (default): calibrated by GPU and model size
    profile: Optional[StrPath] = None
    parameter_bytes: Optional[float] = None
    memory_per_gpu_bytes: Optional[float] = None
    dataset_bytes: Optional[float] = None
    compression_ratio: Optional[float] = None
    checkpoint_bytes: Optional[float] = None
    checkpoint_write_mbps: Optional[float] = None
    checkpoint_interval: Optional[Seconds] = None
    overlap: Optional[float] = None  # -1 (default): communication hidden behind backward
    egress_bytes: Optional[float] = None
    storage_months_after: Optional[float] = None
    tags: dict[str, str] = field(default_factory=dict)

    _SIZES = ("parameter_bytes", "memory_per_gpu_bytes", "dataset_bytes", "checkpoint_bytes",
              "egress_bytes")
    _COUNTS = ("parameters", "tokens")
    _NUMBERS = ("total_flops", "flops_per_sample", "samples", "epochs", "global_batch", "mfu",
                "sequence_length", "micro_batch", "compression_ratio", "checkpoint_write_mbps",
                "overlap", "storage_months_after")

    def __post_init__(self) -> None:
        # Units read now, so a bad value fails at construction, naming its field.
        for name in self._SIZES:
            if getattr(self, name) is not None:
                setattr(self, name, size(getattr(self, name), name))
        for name in self._COUNTS:
            if getattr(self, name) is not None:
                setattr(self, name, count(getattr(self, name), name))
        for name in self._NUMBERS:
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or
                                      not isinstance(value, (int, float))):
                raise NuboError(Status.INVALID_ARGUMENT,
                                f"workload {name} must be a number, not {value!r}")
        if self.checkpoint_interval is not None:
            self.checkpoint_interval = seconds(self.checkpoint_interval, "checkpoint_interval")
        if self.optimizer is not None:
            self.optimizer = _optimizer(self.optimizer)
        if self.dtype is not None:
            self.dtype = units.parse_dtype(self.dtype, "workload dtype")

    def _struct(self) -> nubo_cost_workload:
        c = _lib.lib()
        w = nubo_cost_workload()
        _lib.check(c.nubo_cost_workload_init(ctypes.byref(w), ctypes.sizeof(w)))
        for name in self._SIZES + self._COUNTS + self._NUMBERS:
            if getattr(self, name) is not None:
                setattr(w, name, float(getattr(self, name)))
        if self.dtype is not None:
            w.dtype = int(units.parse_dtype(self.dtype, "workload dtype"))
        if self.optimizer is not None:
            w.optimizer = int(_optimizer(self.optimizer))
        if self.sharding is not None:
            w.sharding = int(self.sharding)
        if self.checkpoint_interval is not None:
            w.checkpoint_interval_s = seconds(self.checkpoint_interval, "checkpoint_interval")
        if self.profile is not None:
            w.profile_path = os.fsencode(self.profile)
        for key, value in self.tags.items():
            if not key or any(ch in f"{key}{value}" for ch in ",="):
                raise NuboError(Status.INVALID_ARGUMENT,
                                f"tags: {key!r}={value!r} may not be empty or hold ',' or '='")
        if self.tags:
            w.tags = ",".join(f"{k}={v}" for k, v in self.tags.items()).encode("utf-8")
        return w


# ---- Catalog ----------------------------------------------------------------------------


class Catalog(_lib.Handle):
    """Instances with prices, and storage and network prices; the embedded ones to start."""

    _what = "catalog"

    def __init__(self) -> None:
        c = _lib.lib()
        handle = CatalogPtr()
        _lib.check(c.nubo_cost_catalog_builtin(ctypes.byref(handle)))
        self._adopt(handle)

    def _adopt(self, handle: CatalogPtr) -> None:
        self._own(handle, _lib.lib().nubo_cost_catalog_free)

    @classmethod
    def current(cls, cache_dir: Optional[StrPath] = None) -> "Catalog":
        """The embedded snapshot as refreshed by update_catalog() (and SkyPilot's local
        catalogs): what nubo-cost plans with. It never fetches anything itself."""
        handle = CatalogPtr()
        _lib.check(_lib.lib().nubo_cost_catalog_current(
            os.fsencode(cache_dir) if cache_dir is not None else None, ctypes.byref(handle)))
        catalog = cls.__new__(cls)
        catalog._adopt(handle)
        return catalog

    def import_file(self, path: StrPath, format: str, provider: str) -> None:
        """Adds the rows of a file in a public format ("skypilot", "gpuhunt", "spot-advisor",
        "aws-price-list", "azure-retail"); bad rows are skipped and listed in sources."""
        _lib.check(_lib.lib().nubo_cost_catalog_import(self._h(), os.fsencode(path),
                                                       format.encode(), provider.encode()))

    @property
    def sources(self) -> list[CatalogSource]:
        c = _lib.lib()
        return _lib.records(CatalogSource, nubo_cost_source_info, c.nubo_cost_catalog_source_count,
                            c.nubo_cost_catalog_source, self._h())

    @classmethod
    def builtin(cls, one_year: Optional[float] = None,
                three_year: Optional[float] = None) -> "Catalog":
        """The embedded catalog; one_year/three_year override the reserved discounts."""
        catalog = cls()
        if one_year is not None or three_year is not None:
            catalog.set_reserved_discounts(0.40 if one_year is None else one_year,
                                           0.60 if three_year is None else three_year)
        return catalog

    def load(self, path: StrPath, replace: bool = False) -> None:
        """Adds (or with replace=True, replaces) rows from a CSV or JSON catalog file."""
        _lib.check(_lib.lib().nubo_cost_catalog_load(self._h(), os.fsencode(path),
                                                     1 if replace else 0))

    def set_reserved_discounts(self, one_year: float, three_year: float) -> None:
        _lib.check(_lib.lib().nubo_cost_catalog_set_reserved_discounts(
            self._h(), float(one_year), float(three_year)))

    @property
    def instances(self) -> list[Instance]:
        c = _lib.lib()
        return _lib.records(Instance, nubo_cost_instance_info,
                            c.nubo_cost_catalog_instance_count, c.nubo_cost_catalog_instance,
                            self._h())

    def find(self, name: str, region: Optional[str] = None) -> Optional[Instance]:
        """By name and, when given, region; without one, where it is cheapest on demand."""
        rows = [i for i in self.instances if i.name.lower() == name.lower() and
                (region is None or i.region.lower() == region.lower())]
        return min(rows, key=lambda i: i.on_demand, default=None)


def gpu_model_matches(model: str, gpu_filter: str) -> bool:
    """Whether a GPU filter names a model: "H200" matches H200-SXM-141GB, not GH200-96GB."""
    return bool(_lib.lib().nubo_cost_gpu_model_matches(model.encode(), gpu_filter.encode()))


def update_catalog(*, cache_dir: Optional[StrPath] = None, sources: Iterable[str] = (),
                   urls: Optional[dict[str, str]] = None, timeout: Seconds = 30,
                   total_timeout: Seconds = 600, max_skipped: float = 0.5) -> list[CatalogUpdate]:
    """Fetches each public source into the cache (`nubo-cost catalog update`); a source whose
    new version fails keeps its last good one, which its entry says."""
    c = _lib.lib()
    o = nubo_cost_update_options()
    _lib.check(c.nubo_cost_update_options_init(ctypes.byref(o), ctypes.sizeof(o)))
    if cache_dir is not None:
        o.cache_dir = os.fsencode(cache_dir)
    names = list(sources)
    if names:
        o.sources = " ".join(names).encode()
    if urls:
        o.urls = " ".join(f"{k}={v}" for k, v in urls.items()).encode()
    o.timeout_s = seconds(timeout, "timeout")
    o.total_timeout_s = seconds(total_timeout, "total_timeout")
    o.max_skipped = float(max_skipped)
    handle = POINTER(nubo_cost_update)()
    _lib.check(c.nubo_cost_catalog_update(ctypes.byref(o), ctypes.byref(handle)))
    try:
        return _lib.records(CatalogUpdate, nubo_cost_update_info, c.nubo_cost_update_count,
                            c.nubo_cost_update_entry, handle)
    finally:
        c.nubo_cost_update_free(handle)


# ---- Planning ---------------------------------------------------------------------------


class Plan(_lib.Handle):
    """A plan: ranked estimates, the Pareto frontier and every exclusion, copied out."""

    _what = "plan"

    def __init__(self, handle: PlanPtr) -> None:
        c = _lib.lib()
        self._own(handle, c.nubo_cost_plan_free)
        considered, feasible = c_size_t(), c_size_t()
        _lib.check(c.nubo_cost_plan_counts(handle, ctypes.byref(considered),
                                           ctypes.byref(feasible)))
        self.considered, self.feasible = considered.value, feasible.value
        self.ranked = _lib.records(Estimate, nubo_cost_estimate_info,
                                   c.nubo_cost_plan_ranked_count, c.nubo_cost_plan_ranked, handle)
        self.frontier = _lib.records(Estimate, nubo_cost_estimate_info,
                                     c.nubo_cost_plan_frontier_count, c.nubo_cost_plan_frontier,
                                     handle)
        self.exclusions = _lib.records(Exclusion, nubo_cost_exclusion_info,
                                       c.nubo_cost_plan_exclusion_count,
                                       c.nubo_cost_plan_exclusion, handle)

    @property
    def excluded(self) -> int:
        return self.considered - self.feasible

    def to_json(self) -> str:
        return _lib.read_text(_lib.lib().nubo_cost_plan_json, self._h())


def _options(pricings: Iterable[Union[str, Pricing]], nodes: tuple[int, int],
             deadline: Optional[Seconds], budget: Optional[float], gpu: Optional[str],
             provider: Optional[str], region: Optional[str], rank: str, limit: int,
             spot_mtbi: Optional[Seconds], restart: Optional[Seconds],
             comm_efficiency: float, preflight_file: Optional[str] = None
             ) -> nubo_cost_plan_options:
    c = _lib.lib()
    o = nubo_cost_plan_options()
    _lib.check(c.nubo_cost_plan_options_init(ctypes.byref(o), ctypes.sizeof(o)))
    mask = 0
    for p in pricings:
        mask |= 1 << int(_pricing(p))
    o.pricings = mask
    o.min_nodes, o.max_nodes = (int(nodes[0]), int(nodes[1]))
    if deadline is not None:
        o.deadline_s = seconds(deadline, "deadline")
    if budget is not None:
        o.budget = float(budget)
    o.gpu = gpu.encode() if gpu else None
    o.provider = provider.encode() if provider else None
    o.region = region.encode() if region else None
    if rank not in ("cost", "time"):
        raise NuboError(Status.INVALID_ARGUMENT, f"rank must be 'cost' or 'time', not {rank!r}")
    o.rank_by_time = 1 if rank == "time" else 0
    if limit < 0:
        raise NuboError(Status.INVALID_ARGUMENT, f"limit must be >= 0, not {limit}")
    o.limit = limit
    if spot_mtbi is not None:
        o.spot_mtbi_s = seconds(spot_mtbi, "spot_mtbi")
    if restart is not None:
        o.restart_s = seconds(restart, "restart")
    o.comm_efficiency = float(comm_efficiency)
    o.preflight_file = os.fsencode(preflight_file) if preflight_file else None
    return o


def plan(catalog: Catalog, workload: Workload, *,
         pricings: Iterable[Union[str, Pricing]] = ("on-demand",),
         nodes: tuple[int, int] = (1, 1), deadline: Optional[Seconds] = None,
         budget: Optional[float] = None, gpu: Optional[str] = None,
         provider: Optional[str] = None, region: Optional[str] = None, rank: str = "cost",
         limit: int = 10, spot_mtbi: Optional[Seconds] = None,
         restart: Optional[Seconds] = None, comm_efficiency: float = 1.0,
         preflight_file: Optional[str] = None) -> Plan:
    """Plans a workload over instance x node count x pricing (see nubo_cost_plan_create).
    preflight_file: a `nubo-smi check --out` report; the GPU models it checked are priced at
    the rates it measured when below what the model should do."""
    c = _lib.lib()
    w = workload._struct()
    o = _options(pricings, nodes, deadline, budget, gpu, provider, region, rank, limit,
                 spot_mtbi, restart, comm_efficiency, preflight_file)
    handle = PlanPtr()
    _lib.check(c.nubo_cost_plan_create(catalog._h(), ctypes.byref(w), ctypes.byref(o),
                                       ctypes.byref(handle)))
    return Plan(handle)


def estimate(catalog: Catalog, workload: Workload, instance: str, *, nodes: int = 1,
             pricing: Union[str, Pricing] = "on-demand", region: Optional[str] = None,
             spot_mtbi: Optional[Seconds] = None, restart: Optional[Seconds] = None,
             comm_efficiency: float = 1.0) -> Estimate:
    """One option, fully broken down, whatever its deadline or budget."""
    c = _lib.lib()
    w = workload._struct()
    o = _options(("on-demand",), (1, 1), None, None, None, None, None, "cost", 1, spot_mtbi,
                 restart, comm_efficiency)
    handle = PlanPtr()
    _lib.check(c.nubo_cost_estimate(catalog._h(), ctypes.byref(w), instance.encode("utf-8"),
                                    region.encode("utf-8") if region else None, int(nodes),
                                    int(_pricing(pricing)), ctypes.byref(o),
                                    ctypes.byref(handle)))
    return Plan(handle).ranked[0]


@dataclass(frozen=True)
class ServingPlan:
    options: list[ServingOption]  # cheapest per hour first
    exclusions: list[Exclusion]


def serve(catalog: Catalog, parameters: Count, *, rate: Optional[Count] = None,
          requests: Optional[Count] = None, tokens_per_request: Optional[Count] = None,
          latency: Optional[Seconds] = None, context: Count = 4096,
          dtype: Union[str, DType] = DType.BF16, bytes_per_parameter: float = 0,
          kv_bytes_per_token: Bytes = 0, pricings: Iterable[Union[str, Pricing]] = ("on-demand",),
          gpu: Optional[str] = None, provider: Optional[str] = None,
          region: Optional[str] = None, limit: int = 10) -> ServingPlan:
    """The cheapest instances that generate `rate` tokens/s (or `requests` x
    `tokens_per_request`) within `latency` per token (docs/cost.md, "Serving")."""
    c = _lib.lib()
    s = nubo_cost_serving()
    _lib.check(c.nubo_cost_serving_init(ctypes.byref(s), ctypes.sizeof(s)))
    s.parameters = count(parameters, "parameters")
    s.dtype = int(units.parse_dtype(dtype, "dtype"))
    s.bytes_per_parameter = float(bytes_per_parameter)
    if rate is not None:
        s.tokens_per_s = count(rate, "rate")
    if requests is not None:
        s.requests_per_s = count(requests, "requests")
        s.tokens_per_request = count(tokens_per_request or 0, "tokens_per_request")
    if latency is not None:
        s.latency_s = seconds(latency, "latency")
    s.context_tokens = count(context, "context")
    s.kv_bytes_per_token = size(kv_bytes_per_token, "kv_bytes_per_token")
    o = _options(pricings, (1, 1), None, None, gpu, provider, region, "cost", limit, None, None,
                 1.0)
    handle = POINTER(nubo_cost_serving_plan)()
    _lib.check(c.nubo_cost_serving_plan_create(catalog._h(), ctypes.byref(s),
                                               ctypes.byref(o), ctypes.byref(handle)))
    try:
        return ServingPlan(
            _lib.records(ServingOption, nubo_cost_serving_info, c.nubo_cost_serving_plan_count,
                         c.nubo_cost_serving_plan_option, handle),
            _lib.records(Exclusion, nubo_cost_exclusion_info,
                         c.nubo_cost_serving_plan_exclusion_count,
                         c.nubo_cost_serving_plan_exclusion, handle))
    finally:
        c.nubo_cost_serving_plan_free(handle)


def checkpoint_plan(work: Seconds, write: Seconds, mtbi: Seconds,
                    restart: Seconds = 600) -> CheckpointPlan:
    """Young/Daly: the checkpoint interval and the expected overhead of spot interruptions."""
    info = nubo_cost_checkpoint_info()
    _lib.check(_lib.lib().nubo_cost_checkpoint_plan(
        seconds(work, "work"), seconds(write, "write"), seconds(mtbi, "mtbi"),
        seconds(restart, "restart"), ctypes.byref(info)))
    return CheckpointPlan._from_c(info)


def rent_vs_own(hardware_price: float, power_kw: float, cloud_hourly: float, *,
                years: float = 3, utilisation: float = 0.5, kwh_price: float = 0.12,
                pue: float = 1.5, maintenance_per_year: float = 0.0) -> OwnResult:
    """Rent or own: the break-even utilisation and the costs over the years."""
    c = _lib.lib()
    r = nubo_cost_own_request()
    _lib.check(c.nubo_cost_own_request_init(ctypes.byref(r), ctypes.sizeof(r)))
    r.hardware_price, r.power_kw, r.cloud_hourly = hardware_price, power_kw, cloud_hourly
    r.years, r.utilisation, r.kwh_price, r.pue = years, utilisation, kwh_price, pue
    r.maintenance_per_year = maintenance_per_year
    info = nubo_cost_own_info()
    _lib.check(c.nubo_cost_rent_vs_own(ctypes.byref(r), ctypes.byref(info)))
    return OwnResult._from_c(info)


def totals_by_tag(estimates: Iterable[Estimate], key: str) -> dict[str, float]:
    """Total cost by the value of tag `key`; estimates without it count under ""."""
    totals: dict[str, float] = {}
    for e in estimates:
        value = e.tags.get(key, "")
        totals[value] = totals.get(value, 0.0) + e.cost_total
    return totals


class CostMeter(_lib.Handle):
    """A running job's money so far and projected total, from the price and progress."""

    _what = "meter"

    def __init__(self, hourly: float, fixed: float = 0.0) -> None:
        c = _lib.lib()
        handle = MeterPtr()
        _lib.check(c.nubo_cost_meter_create(float(hourly), float(fixed), ctypes.byref(handle)))
        self._adopt(handle)

    def _adopt(self, handle: MeterPtr) -> None:
        self._own(handle, _lib.lib().nubo_cost_meter_free)
        self.spent = 0.0
        self.projected = 0.0

    @classmethod
    def for_instance(cls, catalog: Catalog, instance: str,
                     pricing: Union[str, Pricing] = "on-demand", nodes: int = 1) -> "CostMeter":
        handle = MeterPtr()
        _lib.check(_lib.lib().nubo_cost_meter_for_instance(
            catalog._h(), instance.encode("utf-8"), int(_pricing(pricing)), int(nodes),
            ctypes.byref(handle)))
        meter = cls.__new__(cls)
        meter._adopt(handle)
        return meter

    def update(self, elapsed_s: float, progress: float) -> tuple[float, float]:
        """Records progress in [0, 1] after elapsed_s; returns (spent, projected) in $."""
        spent, projected = c_double(), c_double()
        _lib.check(_lib.lib().nubo_cost_meter_update(self._h(), float(elapsed_s),
                                                     float(progress), ctypes.byref(spent),
                                                     ctypes.byref(projected)))
        self.spent, self.projected = spent.value, projected.value
        return self.spent, self.projected

    def line(self) -> str:
        """"$12.34 spent, ~$56.78 projected", as nubo-train and nubo-cost print it."""
        return _lib.read_text(_lib.lib().nubo_cost_meter_line, self._h())

    @property
    def price(self) -> tuple[float, str, str]:
        """(hourly, price_date, price_source): the price in force when the meter was made from
        a catalog row, so a report of the run prices it at what it cost then."""
        info = nubo_cost_meter_info()
        _lib.check(_lib.lib().nubo_cost_meter_price(self._h(), ctypes.byref(info)))
        return info.hourly, text(info.price_date), text(info.price_source)
