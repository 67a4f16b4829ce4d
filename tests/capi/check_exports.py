"""nm -D: libnubo_c.so exports exactly the functions the C headers declare (capi/nubo.h and
the headers it includes, read by the bindings' reader), nothing else (the version script and
-fvisibility=hidden), and each with its capability's prefix (capi/bindings/conventions.py,
docs/abi.md). Run by CTest (abi_exports) as: check_exports.py LIBRARY."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "capi" / "bindings"))

from c_header import read_abi  # noqa: E402
from conventions import capability_of  # noqa: E402


def exported(library: str) -> set[str]:
    out = subprocess.run(["nm", "-D", "--defined-only", library], capture_output=True,
                         text=True, check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    symbols = exported(argv[1])
    declared = {f.name for f in read_abi(ROOT / "capi", ROOT / "include").functions}
    faults = [f"{s}: exported without a capability prefix" for s in sorted(symbols)
              if capability_of(s) is None]
    faults += [f"{s}: exported but not declared in capi/*.h" for s in sorted(symbols - declared)]
    faults += [f"{s}: declared but not exported" for s in sorted(declared - symbols)]
    for fault in faults:
        print(fault, file=sys.stderr)
    print(f"{len(symbols)} symbols checked, {len(faults)} faults")
    return 1 if faults or len(symbols) < 100 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
