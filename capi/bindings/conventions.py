"""The naming rules of nubo's C ABI (docs/abi.md), checked on the headers by generate.py and
on the library's exported symbols by CTest's abi_exports.

- Every function begins with its capability's prefix (CAPABILITY_PREFIXES), or is one of the
  few CORE_FUNCTIONS every capability shares.
- nubo_status's constants are NUBO_OK and NUBO_ERR_*; every other enum's constants share a
  prefix (NUBO_CODEC_, NUBO_PRICING_, ...) that no other enum's constants begin with.
- A struct a function fills for the caller ends in _info (what something is) or _summary (what
  an operation did); one a callback is lent ends in _progress or _notice.
"""

from __future__ import annotations

from c_header import Abi, Callback, Enum, HeaderError

# Capability -> the prefixes of its functions. A capability owns the handles it defines
# (a team, a worker, a buffer), so their names may stand for it.
CAPABILITY_PREFIXES: dict[str, tuple[str, ...]] = {
    "device": ("nubo_device_",),
    "parallel": ("nubo_team_", "nubo_worker_", "nubo_buffer_", "nubo_pending_", "nubo_event_",
                 "nubo_sharded_", "nubo_optimizer_"),
    "transfer": ("nubo_transfer_",),
    "net": ("nubo_net_",),
    "s3": ("nubo_s3_",),
    "train": ("nubo_train_", "nubo_trainer_"),
    "interruption": ("nubo_interruption_",),
    "cost": ("nubo_cost_",),
    "units": ("nubo_units_",),
}
CORE_FUNCTIONS = ("nubo_status_string", "nubo_last_error", "nubo_version", "nubo_abi_version",
                  "nubo_check_environment")
OUT_SUFFIXES = ("_info", "_summary")
LENT_SUFFIXES = ("_progress", "_notice")


def capability_of(symbol: str) -> str | None:
    """The capability a function name belongs to ("core" for the shared ones), else None."""
    if symbol in CORE_FUNCTIONS:
        return "core"
    return next((c for c, prefixes in CAPABILITY_PREFIXES.items()
                 if symbol.startswith(prefixes)), None)


def _enum_prefix(enum: Enum) -> str:
    """The longest prefix, up to an underscore, that all of the enum's constants share."""
    names = [name for name, _ in enum.constants]
    common = names[0]
    for name in names[1:]:
        while not name.startswith(common):
            common = common[:-1]
    return common[:common.rfind("_") + 1]


def check_conventions(abi: Abi) -> None:
    faults = [f"{f.header}: {f.name} has no capability prefix (conventions.py)"
              for f in abi.functions if capability_of(f.name) is None]
    constants = [(e.name, name) for e in abi.enums for name, _ in e.constants]
    for enum in abi.enums:
        if enum.name == "nubo_status" or not enum.constants:
            continue
        prefix = _enum_prefix(enum)
        if prefix in ("", "NUBO_"):
            faults.append(f"{enum.header}: {enum.name}'s constants share no prefix of their own")
            continue
        for other, name in constants:
            if other != enum.name and name.startswith(prefix):
                faults.append(f"{enum.header}: {name} of {other} begins with {prefix}, the "
                              f"prefix of {enum.name}'s constants")
    structs = {s.name for s in abi.structs}
    for f in abi.functions:
        if f.name.endswith("_init"):
            continue  # fills the caller's options or request with defaults
        for p in f.parameters:
            t = p.type
            if len(t.pointers) == 1 and not t.const and t.base in structs and \
                    not t.base.endswith(OUT_SUFFIXES):
                faults.append(f"{f.header}: {f.name} fills a {t.base}: a struct nubo fills "
                              f"ends in {' or '.join(OUT_SUFFIXES)}")
    for c in (d for d in abi.order if isinstance(d, Callback)):
        for p in c.parameters:
            if p.type.pointers and p.type.base in structs and \
                    not p.type.base.endswith(LENT_SUFFIXES):
                faults.append(f"{c.header}: callback {c.name} is lent a {p.type.base}: a "
                              f"struct lent to a callback ends in {' or '.join(LENT_SUFFIXES)}")
    if faults:
        raise HeaderError("the headers break the ABI's naming rules:\n  " + "\n  ".join(faults))
