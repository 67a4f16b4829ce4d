"""Build hook of the nubo Python package: bundles the nubo shared libraries.

The package itself is pure Python (ctypes), but it is only useful with libnubo_c.so. So that
`pip install ./capi/python` gives a package that works without any further set-up, the build
copies the libraries into nubo/_libs/, where nubo._lib looks first after NUBO_LIBRARY:

  * libnubo_c.so*     the C ABI the package binds
  * libnubo.so*       the C++ library libnubo_c.so needs (found through its RUNPATH $ORIGIN)
  * libnubo_cuda.so   the CUDA plugin, when it was built (libnubo loads it from beside itself)

They are taken from $NUBO_LIB_DIR, else from ../../build/lib (the repository's build tree).
Finding no libnubo_c.so there is an error, since the package would not work; NUBO_LIB_DIR=none
builds it without the libraries on purpose (it then needs NUBO_LIBRARY or a system-wide nubo).

Each library is bundled once, under its SONAME (libnubo_c.so.2: what the loader and DT_NEEDED
ask for), not once per symlink. The wheel's tag is py3-none-<platform>: any Python 3 on this
platform can use it, since the package holds no extension module.

Everything else is declared in pyproject.toml.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
from pathlib import Path
from typing import Optional

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

try:  # setuptools >= 70.1 carries bdist_wheel; older ones take it from the wheel package
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:
    from wheel.bdist_wheel import bdist_wheel

HERE = Path(__file__).resolve().parent
LIBRARY_PATTERNS = ("libnubo_c.so*", "libnubo.so*", "libnubo_cuda.so")


def library_dir() -> Optional[Path]:
    """Where the libraries come from; None when NUBO_LIB_DIR=none asks for none."""
    env = os.environ.get("NUBO_LIB_DIR")
    if env == "none":
        return None
    return Path(env) if env else HERE.parent.parent / "build" / "lib"


def soname(files: list[Path]) -> Path:
    """Of the names a library has in its directory (libnubo.so, libnubo.so.2, libnubo.so.0.1.0),
    the one the loader asks for: lib<name>.so.<ABI>. An unversioned module keeps its name."""
    versioned = [f for f in files if re.fullmatch(r"lib[\w-]+\.so\.\d+", f.name)]
    return versioned[0] if versioned else min(files, key=lambda f: len(f.name))


@functools.lru_cache(maxsize=None)  # asked several times per build; look once
def libraries_to_bundle() -> tuple[Path, ...]:
    """The library files to bundle, one per library. Raises when there are none to bundle and
    none was asked for."""
    directory = library_dir()
    if directory is None:
        return ()
    names: dict[Path, list[Path]] = {}
    if directory.is_dir():
        for pattern in LIBRARY_PATTERNS:
            for path in directory.glob(pattern):
                if path.is_file():
                    names.setdefault(path.resolve(), []).append(path)
    chosen = tuple(sorted(soname(files) for files in names.values()))
    if not any(p.name.startswith("libnubo_c.so") for p in chosen):
        raise SystemExit(
            f"nubo: no libnubo_c.so in {directory}: build nubo first (make, or cmake --preset "
            "release && cmake --build build), or point NUBO_LIB_DIR at the directory holding "
            "it; NUBO_LIB_DIR=none builds a package that loads a system-wide libnubo_c.so")
    return chosen


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
            # A wheel cannot hold links: the SONAME name becomes the plain file.
            shutil.copy2(library, destination / library.name)


class NuboDistribution(Distribution):
    def has_ext_modules(self) -> bool:
        # With ELF libraries inside, the wheel is specific to this platform: say so in its tag
        # instead of claiming "any".
        return bool(libraries_to_bundle())


class WheelForAnyPython3(bdist_wheel):
    def get_tag(self) -> tuple[str, str, str]:
        # ctypes only: the libraries tie the wheel to the platform, never to one CPython.
        _, _, platform = super().get_tag()
        return "py3", "none", platform


setup(cmdclass={"build_py": BuildPyWithLibraries, "bdist_wheel": WheelForAnyPython3},
      distclass=NuboDistribution)
