"""Build hook of the nubo Python package: bundles the nubo shared libraries.

The package itself is pure Python (ctypes), but it is only useful with libnubo_c.so. So that
`pip install ./capi/python` gives a package that works without any further set-up, the build
copies the libraries into nubo/_libs/, where nubo._lib looks first after NUBO_LIBRARY:

  * libnubo_c.so*     the C ABI the package binds
  * libnubo.so*       the C++ library libnubo_c.so needs (found through its RUNPATH $ORIGIN)
  * libnubo_cuda.so   the CUDA plugin, when it was built (libnubo loads it from beside itself)

They are taken from $NUBO_LIB_DIR, else from ../../build/lib (the repository's build tree).
When no libnubo_c.so is there the package is built without them; it then needs NUBO_LIBRARY or
a system-wide installation of nubo at run time.

Everything else is declared in pyproject.toml.
"""

from __future__ import annotations

import functools
import os
import shutil
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = Path(__file__).resolve().parent
LIBRARY_PATTERNS = ("libnubo_c.so*", "libnubo.so*", "libnubo_cuda.so")


def library_dir() -> Path:
    env = os.environ.get("NUBO_LIB_DIR")
    return Path(env) if env else HERE.parent.parent / "build" / "lib"


@functools.lru_cache(maxsize=None)  # asked several times per build; look (and warn) once
def libraries_to_bundle() -> tuple[Path, ...]:
    """The library files to bundle; empty when the directory holds no libnubo_c.so."""
    directory = library_dir()
    if not directory.is_dir():
        found: list[Path] = []
    else:
        found = sorted({p for pattern in LIBRARY_PATTERNS for p in directory.glob(pattern)
                        if p.is_file()})
    if not any(p.name.startswith("libnubo_c.so") for p in found):
        if "NUBO_LIB_DIR" in os.environ:
            # Asked for explicitly, so say why nothing was bundled (pip shows it with -v).
            print(f"nubo: no libnubo_c.so in NUBO_LIB_DIR={directory}; building without the "
                  "libraries (set NUBO_LIBRARY at run time)", file=sys.stderr)
        return ()
    return tuple(found)


class BuildPyWithLibraries(build_py):
    def run(self) -> None:
        super().run()
        destination = Path(self.build_lib) / "nubo" / "_libs"
        # A previous in-tree build may have left other versions of the libraries there.
        shutil.rmtree(destination, ignore_errors=True)
        libraries = libraries_to_bundle()
        if not libraries:
            return
        destination.mkdir(parents=True)
        for library in libraries:
            # copy2 follows symlinks: a wheel cannot hold links, so the SONAME names
            # (libnubo.so.1, which libnubo_c.so's DT_NEEDED asks for) become plain files.
            shutil.copy2(library, destination / library.name)


class NuboDistribution(Distribution):
    def has_ext_modules(self) -> bool:
        # With ELF libraries inside, the wheel is specific to this platform: say so in its tag
        # instead of claiming "any".
        return bool(libraries_to_bundle())


setup(cmdclass={"build_py": BuildPyWithLibraries}, distclass=NuboDistribution)
