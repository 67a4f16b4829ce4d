#!/usr/bin/env python3
"""Installs the nubo Python package into a fresh virtual environment and runs its tests there.

This is what a user does (`pip install ./capi/python`), offline: a wheel is built from a copy of
capi/python (so the source tree stays clean) with NUBO_LIB_DIR pointing at the build's
libraries, which the build bundles into the package; the wheel's tag and contents are checked
before it is installed. The tests then run from outside the source
tree with NUBO_LIBRARY unset, so the only libnubo_c.so they can find is the bundled one.

The environment is made with --system-site-packages for two Debian packages, nothing else:
python3-wheel, which setuptools 66 needs to build a wheel without build isolation (a venv bundles
pip and setuptools, not wheel), and python3-jsonschema, for the schema check. The package under
test is installed into the environment itself, so it shadows anything system-wide.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path


def run(command: list[str], **kwargs: object) -> None:
    print("+", " ".join(command), flush=True)
    subprocess.run(command, check=True, **kwargs)  # type: ignore[call-overload]


def wheel_problems(wheel: Path, lib_dir: Path, scratch: Path) -> list[str]:
    """What is wrong with the wheel as a user gets it: its tag (pure ctypes: any Python 3),
    one copy of each library (not one per symlink), and a RUNPATH with neither a build-tree
    path nor an empty entry (CMake's padding, which would load libraries from the current
    directory)."""
    problems = []
    if not re.fullmatch(r"nubo-[\d.]+-py3-none-linux_\w+\.whl", wheel.name):
        problems.append("the tag is not py3-none-linux_<arch>")
    with zipfile.ZipFile(wheel) as z:
        libraries = [n for n in z.namelist() if n.startswith("nubo/_libs/")]
        z.extractall(scratch, libraries)
    for stem in ("libnubo_c.so", "libnubo.so"):
        copies = [n for n in libraries if Path(n).name.startswith(stem)]
        if len(copies) != 1:
            problems.append(f"{stem}: {len(copies)} copies ({', '.join(copies)}), not one")
    for name in libraries:
        dynamic = subprocess.run(["readelf", "-d", str(scratch / name)], check=True,
                                 capture_output=True, text=True).stdout
        for line in dynamic.splitlines():
            if "RUNPATH" not in line and "RPATH" not in line:
                continue
            entries = line.split("[", 1)[1].rstrip("]").split(":")
            if str(lib_dir.resolve()) in line:
                problems.append(f"{name} keeps the build tree in its run path: {line.strip()}")
            if "" in entries:  # the loader reads an empty entry as the current directory
                problems.append(f"{name} has an empty run path entry: {line.strip()}")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--package", type=Path, required=True, help="capi/python")
    parser.add_argument("--lib-dir", type=Path, required=True, help="the build's lib directory")
    parser.add_argument("--tests", type=Path, required=True, help="directory of test_*.py")
    parser.add_argument("--work", type=Path, required=True, help="scratch directory (recreated)")
    parser.add_argument("--layout", type=Path, help="the nubo_bindings_layout program")
    parser.add_argument("--schema", type=Path, help="docs/device-report.schema.json")
    parser.add_argument("--topology", type=Path, help="topology file: two islands of 4 GPUs")
    args = parser.parse_args()

    if not (args.lib_dir / "libnubo_c.so").exists():
        print(f"no libnubo_c.so in {args.lib_dir}: build the nubo_c target first", file=sys.stderr)
        return 1

    started = time.monotonic()
    shutil.rmtree(args.work, ignore_errors=True)
    source, venv, cwd = args.work / "src", args.work / "venv", args.work / "run"
    shutil.copytree(args.package, source, ignore=shutil.ignore_patterns(
        "build", "dist", "*.egg-info", "__pycache__", "_libs"))
    cwd.mkdir(parents=True)

    # Nothing from the caller's environment may decide which nubo gets imported or loaded.
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUBO_LIBRARY", "PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env.update(PYTHONNOUSERSITE="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")

    # No __pycache__ beside the test files: the source tree stays untouched.
    test_env = dict(env, NUBO_TEST_EXPECT_BUNDLED="1", PYTHONDONTWRITEBYTECODE="1")
    # The layout program and the schema are part of the contract: missing, they fail the run.
    # The islands topology is optional (the test that needs it is skipped without it).
    for name, path, required in (("NUBO_TEST_LAYOUT", args.layout, True),
                                 ("NUBO_TEST_SCHEMA", args.schema, True),
                                 ("NUBO_TEST_TOPOLOGY", args.topology, False)):
        if path is None:
            continue
        if path.exists():
            test_env[name] = str(path.resolve())
        elif required:
            print(f"{path} does not exist ({name})", file=sys.stderr)
            return 1
        else:
            print(f"note: {path} does not exist; the test that needs {name} is skipped")

    run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], env=env)
    python = str(venv / "bin" / "python")
    missing = subprocess.run(
        [python, "-c", "import importlib.util as u; "
         "print(' '.join(m for m in ('wheel', 'jsonschema') if not u.find_spec(m)))"],
        env=env, check=True, capture_output=True, text=True).stdout.split()
    if missing:
        print(f"{sys.executable} lacks {' '.join(missing)}: install the Debian packages "
              f"{' '.join('python3-' + m for m in missing)} (.ci/install-deps does)",
              file=sys.stderr)
        return 1

    # Without a library to bundle, the build fails and says why (not a wheel that cannot work).
    build = [python, "-m", "pip", "wheel", "--quiet", "--no-index", "--no-build-isolation",
             "--no-deps", "-w", str(args.work / "wheels"), str(source)]
    refused = subprocess.run(build, env=env, cwd=cwd, capture_output=True, text=True)
    if refused.returncode == 0 or "no libnubo_c.so" not in refused.stdout + refused.stderr:
        print("a copy of the package without NUBO_LIB_DIR built:\n" + refused.stdout +
              refused.stderr, file=sys.stderr)
        return 1
    run(build, env=dict(env, NUBO_LIB_DIR=str(args.lib_dir)), cwd=cwd)
    wheel = next((args.work / "wheels").glob("nubo-*.whl"))
    problems = wheel_problems(wheel, args.lib_dir, args.work / "unzipped")
    if problems:
        print(f"{wheel.name}:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 1
    run([python, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", str(wheel)],
        env=env, cwd=cwd)
    installed = time.monotonic()

    # -s/-t put only the tests' own directory on sys.path: `import nubo` is the installed one.
    result = subprocess.run([python, "-m", "unittest", "discover", "-v", "-s", str(args.tests),
                             "-t", str(args.tests)], env=test_env, cwd=cwd)
    print(f"venv + install {installed - started:.1f} s, tests {time.monotonic() - installed:.1f} s")
    return result.returncode


if __name__ == "__main__":
    sys.exit(main())
