#!/usr/bin/env python3
"""Installs the nubo Python package into a fresh virtual environment and runs its tests there.

This is what a user does (`pip install ./capi/python`), offline: the package is built from a
copy of capi/python (so the source tree stays clean) with NUBO_LIB_DIR pointing at the build's
libraries, which the build bundles into the package. The tests then run from outside the source
tree with NUBO_LIBRARY unset, so the only libnubo_c.so they can find is the bundled one.

The environment is made with --system-site-packages for two Debian packages, nothing else:
python3-wheel, which setuptools 66 needs to build a wheel without build isolation (a venv bundles
pip and setuptools, not wheel), and python3-jsonschema, for the schema check. The package under
test is installed into the environment itself, so it shadows anything system-wide.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path


def run(command: list[str], **kwargs: object) -> None:
    print("+", " ".join(command), flush=True)
    subprocess.run(command, check=True, **kwargs)  # type: ignore[call-overload]


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

    run([python, "-m", "pip", "install", "--quiet", "--no-index", "--no-build-isolation",
         "--no-deps", str(source)], env=dict(env, NUBO_LIB_DIR=str(args.lib_dir)), cwd=cwd)
    installed = time.monotonic()

    # -s/-t put only the tests' own directory on sys.path: `import nubo` is the installed one.
    result = subprocess.run([python, "-m", "unittest", "discover", "-v", "-s", str(args.tests),
                             "-t", str(args.tests)], env=test_env, cwd=cwd)
    print(f"venv + install {installed - started:.1f} s, tests {time.monotonic() - installed:.1f} s")
    return result.returncode


if __name__ == "__main__":
    sys.exit(main())
