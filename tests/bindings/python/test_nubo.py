"""Tests of the nubo Python package, as installed (see run_python_tests.py).

Environment, set by the runner (each test that needs one skips without it when run by hand):
  NUBO_TEST_LAYOUT           the nubo_bindings_layout program: nubo.h's layout as C sees it
  NUBO_TEST_SCHEMA           docs/device-report.schema.json
  NUBO_TEST_TOPOLOGY         a topology file of 8 simulated GPUs in two NVLink islands of 4
  NUBO_TEST_EXPECT_BUNDLED   "1": the library must be the copy bundled into the package
"""

from __future__ import annotations

import ctypes
import gc
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import threading
import unittest
from pathlib import Path

import nubo
from nubo import _abi, _lib

GIB = 1 << 30
A100 = "A100-SXM4-80GB"

# Codes of the diagnoses that only the CUDA probe makes (docs/diagnoses.md).
CUDA_DIAGNOSES = {
    "plugin-not-built", "plugin-load-failed", "no-nvidia-gpu", "gpu-not-in-container",
    "no-driver", "stub-driver", "driver-too-old",
    "driver-init-failed", "no-device", "visible-devices-invalid", "visible-devices-hide-all",
    "nvml-missing", "mig-enabled",
}


def setUpModule() -> None:
    # discover() reads these when an option is not given; the tests set everything explicitly.
    for name in ("NUBO_SIM_DEVICES", "NUBO_SIM_TOPOLOGY", "NUBO_CUDA_PLUGIN", "NUBO_CUDA",
                 "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"):
        os.environ.pop(name, None)


def env_path(name: str) -> Path:
    value = os.environ.get(name)
    if not value:
        raise unittest.SkipTest(f"{name} is not set (run through run_python_tests.py)")
    return Path(value)


def driver_present() -> bool:
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


class LibraryTest(unittest.TestCase):
    def test_version(self) -> None:
        self.assertRegex(nubo.version(), r"^\d+\.\d+\.\d+$")
        # The package is released with the library it binds.
        self.assertEqual(nubo.version(), nubo.__version__)
        self.assertEqual(nubo.abi_version(), _lib.ABI_VERSION)

    def test_check_environment(self) -> None:
        nubo.check_environment()
        saved = os.environ.get("NUBO_LOG")
        os.environ["NUBO_LOG"] = "loud"
        try:
            with self.assertRaises(nubo.NuboError) as caught:
                nubo.check_environment()
            self.assertEqual(caught.exception.status, nubo.Status.INVALID_ARGUMENT)
            self.assertIn("NUBO_LOG='loud' is not valid", str(caught.exception))
        finally:
            if saved is None:
                del os.environ["NUBO_LOG"]
            else:
                os.environ["NUBO_LOG"] = saved

    def test_installed_package_uses_bundled_library(self) -> None:
        if os.environ.get("NUBO_TEST_EXPECT_BUNDLED") != "1":
            self.skipTest("NUBO_TEST_EXPECT_BUNDLED is not set")
        package = Path(nubo.__file__).resolve().parent
        self.assertTrue(package.is_relative_to(Path(sys.prefix).resolve()),
                        f"nubo imported from {package}, not from the environment {sys.prefix}")
        self.assertEqual(Path(nubo.library_path()).parent, package / "_libs")

    def test_mirrors_match_the_c_layout(self) -> None:
        """Every struct, field and constant of the C headers, as the compiler lays them out,
        against the generated mirror (_abi.py), and the package's enums against the
        constants they name."""
        out = subprocess.run([str(env_path("NUBO_TEST_LAYOUT"))], check=True,
                             capture_output=True, text=True).stdout
        checked = 0
        for line in out.splitlines():
            kind, *rest = line.split()
            mirror = getattr(_abi, rest[0], None)
            if kind == "struct" and isinstance(mirror, type):
                self.assertEqual(ctypes.sizeof(mirror), int(rest[1]), line)
            elif kind == "struct":  # an enum: passed as c_int
                self.assertEqual(ctypes.sizeof(ctypes.c_int), int(rest[1]), line)
            elif kind == "field":
                struct, field, offset, size = rest
                member = getattr(getattr(_abi, struct), field)
                self.assertEqual((member.offset, member.size), (int(offset), int(size)), line)
            elif kind == "const":
                self.assertEqual(getattr(_abi, rest[0]), int(rest[1]), line)
            checked += 1
        self.assertGreater(checked, 400)
        # The Python enums name the C constants: NUBO_<PREFIX><MEMBER>.
        from nubo import cost, parallel, train, transfer
        self.assertIs(parallel.DType, cost.DType)  # one dtype for buffers and the cost model
        enums = [(nubo.Status, "NUBO_ERR_"), (nubo.Backend, "NUBO_BACKEND_"),
                 (nubo.LinkKind, "NUBO_LINK_"), (nubo.Severity, "NUBO_SEVERITY_"),
                 (transfer.Codec, "NUBO_CODEC_"), (transfer.EntryKind, "NUBO_ENTRY_"),
                 (nubo.DType, "NUBO_DTYPE_"), (parallel.ReduceOp, "NUBO_REDUCE_"),
                 (cost.Pricing, "NUBO_PRICING_"),
                 (train.Optimizer, "NUBO_TRAIN_")]
        for enum, prefix in enums:
            for member in enum:
                name = "NUBO_OK" if member is nubo.Status.OK else prefix + member.name
                self.assertEqual(getattr(_abi, name), int(member), f"{enum.__name__}.{name}")

    def test_bad_nubo_library_is_an_error_naming_it(self) -> None:
        # In a child: the library is loaded once per process.
        code = textwrap.dedent("""
            import nubo
            try:
                nubo.version()
            except nubo.NuboError as e:
                print(e.status.name, str(e))
        """)
        env = dict(os.environ, NUBO_LIBRARY="/nonexistent/libnubo_c.so")
        out = subprocess.run([sys.executable, "-c", code], env=env, check=True,
                             capture_output=True, text=True).stdout
        self.assertTrue(out.startswith("UNAVAILABLE "), out)
        self.assertIn("NUBO_LIBRARY", out)
        self.assertIn("/nonexistent/libnubo_c.so", out)

    def test_missing_library_lists_what_was_tried(self) -> None:
        code = textwrap.dedent("""
            from pathlib import Path
            import nubo
            from nubo import _lib
            _lib.BUNDLED_DIR = Path("/nonexistent/_libs")
            _lib.SYSTEM_DIRS = ()
            try:
                print("LOADED", nubo.library_path())
            except nubo.NuboError as e:
                print(e.status.name, str(e))
        """)
        env = {k: v for k, v in os.environ.items() if k not in ("NUBO_LIBRARY", "LD_LIBRARY_PATH")}
        out = subprocess.run([sys.executable, "-c", code], env=env, check=True,
                             capture_output=True, text=True).stdout
        if out.startswith("LOADED"):
            self.skipTest(f"nubo is installed system-wide: {out.strip()}")
        self.assertTrue(out.startswith("UNAVAILABLE "), out)
        for tried in ("NUBO_LIBRARY: not set", "/nonexistent/_libs", "find_library"):
            self.assertIn(tried, out)


    def _run_from_checkout(self, built: bool) -> str:
        """Copies the package into a fake source checkout (capi/python/nubo beside capi/nubo.h)
        and imports it from there, as a user running from a clone does."""
        package = Path(nubo.__file__).parent
        with tempfile.TemporaryDirectory() as root:
            checkout = Path(root)
            shutil.copytree(package, checkout / "capi" / "python" / "nubo",
                            ignore=shutil.ignore_patterns("_libs", "__pycache__"))
            (checkout / "capi" / "nubo.h").write_text("/* the C ABI */\n")
            if built:  # the libraries in use, as `make` leaves them in build/lib
                lib = checkout / "build" / "lib"
                lib.mkdir(parents=True)
                for f in Path(nubo.library_path()).parent.iterdir():
                    if f.name.startswith("libnubo"):
                        (lib / f.name).symlink_to(f)
                if not (lib / "libnubo_c.so").exists():
                    (lib / "libnubo_c.so").symlink_to(nubo.library_path())
            code = textwrap.dedent("""
                import nubo
                from nubo import _lib
                _lib.SYSTEM_DIRS = ()
                try:
                    print("LOADED", nubo.library_path())
                except nubo.NuboError as e:
                    print(e.status.name, str(e))
            """)
            env = {k: v for k, v in os.environ.items()
                   if k not in ("NUBO_LIBRARY", "LD_LIBRARY_PATH")}
            env["PYTHONPATH"] = str(checkout / "capi" / "python")
            out = subprocess.run([sys.executable, "-c", code], env=env, check=True,
                                 capture_output=True, text=True, cwd=root).stdout
            return out.replace(str(checkout), "<checkout>")

    def test_a_checkout_finds_its_own_build(self) -> None:
        out = self._run_from_checkout(built=True)
        self.assertEqual(out.strip(), "LOADED <checkout>/build/lib/libnubo_c.so")

    def test_an_unbuilt_checkout_says_to_build_it(self) -> None:
        out = self._run_from_checkout(built=False)
        if out.startswith("LOADED"):
            self.skipTest(f"nubo is installed system-wide: {out.strip()}")
        self.assertIn("<checkout>/build/lib/libnubo_c.so: not built yet (run make in "
                      "<checkout>)", out)
        self.assertNotIn("installed without a build", out)

    def test_exceptions_print_with_public_names(self) -> None:
        code = "import nubo\nnubo.Team.host(0)\n"
        err = subprocess.run([sys.executable, "-c", code], capture_output=True,
                             text=True).stderr
        self.assertIn("nubo.InvalidArgumentError: nubo_team_create_host: workers is 0", err)
        self.assertNotIn("_InvalidArgument", err)
        with self.assertRaises(ValueError) as caught:
            nubo.Team.host(0)
        self.assertIsInstance(caught.exception, nubo.NuboError)
        self.assertIsInstance(caught.exception, nubo.InvalidArgumentError)


class EightA100Test(unittest.TestCase):
    report: nubo.DeviceReport

    @classmethod
    def setUpClass(cls) -> None:
        cls.report = nubo.discover(sim_devices=f"8x{A100}", probe_cuda=False)

    def test_devices(self) -> None:
        devices = self.report.devices
        self.assertEqual(len(devices), 8)
        self.assertTrue(self.report.has_gpu)
        for i, device in enumerate(devices):
            self.assertEqual(device.index, i)
            self.assertEqual(device.backend, nubo.Backend.SIM)
            self.assertEqual(device.model, A100)
            self.assertIn(A100, device.name)
            self.assertEqual(device.memory_total, 80 * GIB)
            self.assertLessEqual(device.memory_free, device.memory_total)
            self.assertEqual(device.compute_capability, (8, 0))
            self.assertGreater(device.multiprocessors, 0)
            self.assertGreater(device.peak_tflops_bf16, device.peak_tflops_fp32)
            self.assertEqual(device.peak_source, "catalog")
            self.assertIn(A100, str(device))
        self.assertEqual(len({d.uuid for d in devices}), 8, "UUIDs must be distinct")

    def test_nvlink_everywhere(self) -> None:
        n = len(self.report.devices)
        self.assertEqual([len(row) for row in self.report.links], [n] * n)
        for i in range(n):
            for j in range(n):
                link = self.report.link(i, j)
                self.assertIs(link, self.report.links[i][j])
                if i == j:
                    self.assertEqual((link.kind, link.name), (nubo.LinkKind.SELF, "X"))
                else:
                    self.assertEqual((link.kind, link.nvlinks, link.name),
                                     (nubo.LinkKind.NVLINK, 12, "NV12"))
        with self.assertRaises(IndexError):
            self.report.link(0, n)

    def test_diagnoses_without_cuda_probe(self) -> None:
        codes = {d.code for d in self.report.diagnoses}
        self.assertIn("sim-devices", codes)
        self.assertFalse(codes & CUDA_DIAGNOSES, codes)
        self.assertFalse(self.report.driver.loaded)

    def test_select(self) -> None:
        group = self.report.select(count=4, min_memory=40 * GIB, min_cc=(8, 0))
        self.assertEqual(len(group), 4)
        self.assertEqual(len({d.index for d in group}), 4)
        self.assertEqual(len(self.report.select(count=0)), 8)

    def test_select_asking_too_much_is_unavailable(self) -> None:
        for request in ({"count": 9}, {"count": 1, "min_memory": 81 * GIB},
                        {"count": 1, "min_cc": (9, 0)}):
            with self.subTest(**request), self.assertRaises(nubo.NuboError) as caught:
                self.report.select(**request)  # type: ignore[arg-type]
            self.assertEqual(caught.exception.status, nubo.Status.UNAVAILABLE)
            self.assertTrue(caught.exception.message)

    def test_select_rejects_values_c_cannot_hold(self) -> None:
        with self.assertRaises(nubo.NuboError) as caught:
            self.report.select(count=1, min_memory=-1)
        self.assertEqual(caught.exception.status, nubo.Status.INVALID_ARGUMENT)
        with self.assertRaises(TypeError):
            self.report.select(count=1.5)  # type: ignore[arg-type]

    def test_to_json(self) -> None:
        document = json.loads(self.report.to_json())
        self.assertEqual(len(document["devices"]), 8)
        schema_path = env_path("NUBO_TEST_SCHEMA")
        try:
            import jsonschema
        except ImportError:
            self.skipTest("jsonschema is not installed (Debian: python3-jsonschema)")
        schema = json.loads(schema_path.read_text())
        jsonschema.validate(document, schema)
        # And a report with diagnoses and PCIe links, so more of the schema is exercised.
        other = nubo.discover(sim_devices="2xT4,1xV100-SXM2-16GB", probe_cuda=True)
        jsonschema.validate(json.loads(other.to_json()), schema)

    def test_reports_are_freed(self) -> None:
        # Each report frees its C handle once it is collected: the finalizer has run for every
        # one of many reports made in a row, and none was left alive.
        finalizers = []
        for _ in range(200):
            report = nubo.discover(sim_devices=f"2x{A100}", probe_cuda=False)
            report.to_json()
            finalizers.append(report._free)
            del report
        gc.collect()
        self.assertEqual([f for f in finalizers if f.alive], [])
        # A report still referenced keeps its handle.
        kept = nubo.discover(sim_devices=f"2x{A100}", probe_cuda=False)
        gc.collect()
        self.assertTrue(kept._free.alive)

    def test_every_handle_closes_once_and_names_itself_after(self) -> None:
        # Every object that owns a library handle shares one way of closing (nubo._lib.Handle):
        # close() frees it, a second close() and the end of a with block after it do nothing,
        # and a use after close is an error naming the object, not a NULL handed to C.
        report = nubo.discover(sim_devices=f"2x{A100}", probe_cuda=False)
        report.close()
        report.close()
        with self.assertRaisesRegex(nubo.NuboError, "the device report is closed"):
            report.to_json()
        with nubo.Team.host(1) as team:
            buffer = team.worker().buffer("f32", 4)
            event = team.worker().record_event()
        with self.assertRaisesRegex(nubo.NuboError, "the team is closed"):
            team.describe()
        buffer.close()
        event.close()
        with self.assertRaisesRegex(nubo.NuboError, "the buffer is closed"):
            buffer.read()
        with self.assertRaisesRegex(nubo.NuboError, "the event is closed"):
            event.synchronize()
        catalog = nubo.cost.Catalog()
        with catalog:
            self.assertTrue(catalog.instances)
        with self.assertRaisesRegex(nubo.NuboError, "the catalog is closed"):
            catalog.instances  # noqa: B018 - the read is what raises


class PcieTest(unittest.TestCase):
    def test_pcie_cards_are_not_nvlinked(self) -> None:
        report = nubo.discover(sim_devices="2xT4,1xV100-SXM2-16GB", probe_cuda=False)
        self.assertEqual([d.model for d in report.devices], ["T4", "T4", "V100-SXM2-16GB"])
        self.assertEqual(report.devices[2].memory_total, 16 * GIB)
        for i, row in enumerate(report.links):
            for j, link in enumerate(row):
                if i != j:
                    self.assertIn(link.kind, (nubo.LinkKind.PHB, nubo.LinkKind.SYS), link)
                    self.assertIn(link.name, ("PHB", "SYS"))
                    self.assertEqual(link.nvlinks, 0)


class NicTest(unittest.TestCase):
    def test_nics_and_the_gpus_paths_to_them(self) -> None:
        report = nubo.discover(sim_devices="2xT4", probe_cuda=False)
        self.assertEqual(len(report.gpu_nic), 2)
        for row in report.gpu_nic:
            self.assertEqual(len(row), len(report.nics))
            # Simulated GPUs are nowhere in the PCIe tree.
            self.assertTrue(all(link.kind == nubo.LinkKind.UNKNOWN for link in row))
        self.assertEqual(report.preferred_nic, [-1, -1])
        for nic in report.nics:
            self.assertIn(nic.kind, ("infiniband", "efa", "ethernet"))


class PreflightTest(unittest.TestCase):
    def test_a_derated_device_is_flagged_by_the_preflight(self) -> None:
        report = nubo.discover(sim_devices="1xH100-SXM5-80GB,1xH100-SXM5-80GB:gemm=0.5",
                               probe_cuda=False)
        check = nubo.preflight(report, budget_seconds=1, host=False)
        self.assertEqual(check["verdict"], "degraded")
        self.assertEqual(check["exit_status"], 4)
        verdicts = {d["device"]: d["verdict"] for d in check["devices"]}
        self.assertEqual(verdicts, {0: "healthy", 1: "degraded"})
        only = nubo.preflight(report, devices=[0], budget_seconds=1, host=False)
        self.assertEqual(only["verdict"], "healthy")
        with self.assertRaises(nubo.InvalidArgumentError):
            nubo.preflight(report, devices=[9])
        # A team may watch its GPUs' health; a negative interval is refused.
        with self.assertRaises(nubo.InvalidArgumentError):
            nubo.Team.from_report(report, [0], health_watch=-1)

    def test_health_reads_a_saved_kernel_log(self) -> None:
        report = nubo.discover(sim_devices="1xT4", probe_cuda=False)
        with tempfile.TemporaryDirectory() as d:
            log = os.path.join(d, "dmesg.txt")
            with open(log, "w", encoding="utf-8") as f:
                f.write("[ 1.0] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.\n")
            h = nubo.health(report, kernel_log_file=log)
        self.assertEqual(h["status"], "fail")
        self.assertEqual(h["exit_status"], 5)
        self.assertEqual([f["code"] for f in h["findings"]], ["xid-79"])
        self.assertEqual(h["findings"][0]["action"], "drain-node")


class IslandsTest(unittest.TestCase):
    def test_select_takes_a_whole_island(self) -> None:
        topology = env_path("NUBO_TEST_TOPOLOGY")
        report = nubo.discover(sim_devices=f"8x{A100}", sim_topology_file=topology,
                               probe_cuda=False)
        group = report.select(count=4)
        self.assertEqual(len(group), 4)
        # Every pair of the group is NVLinked: the group is one island, not a mix.
        for a in group:
            for b in group:
                if a.index != b.index:
                    self.assertEqual(report.link(a.index, b.index).kind, nubo.LinkKind.NVLINK)


class HostAndDiagnosesTest(unittest.TestCase):
    def test_host_cpu(self) -> None:
        host = nubo.discover(sim_devices="", probe_cuda=False).host
        self.assertTrue(host.model)
        self.assertGreaterEqual(host.logical_cores, host.physical_cores)
        self.assertGreaterEqual(host.physical_cores, 1)
        self.assertGreater(host.memory_total, 0)
        self.assertTrue(host.blas)

    def test_diagnoses_with_cuda_probe(self) -> None:
        report = nubo.discover(sim_devices="", probe_cuda=True)
        if not report.driver.loaded:
            # No driver is always explained (and a healthy GPU machine may have nothing to say).
            self.assertTrue(report.diagnoses)
        for d in report.diagnoses:
            self.assertTrue(d.code and d.message, d)
            self.assertIsInstance(d.severity, nubo.Severity)
        plugin_bundled = (Path(nubo.library_path()).parent / "libnubo_cuda.so").is_file()
        if plugin_bundled and not driver_present():
            # This machine: the CUDA toolkit (so the plugin) but no NVIDIA driver; and no GPU
            # either, when it is a CPU-only machine.
            diagnosis = (report.find_diagnosis("no-driver") or report.find_diagnosis("no-nvidia-gpu")
                         or report.find_diagnosis("gpu-not-in-container"))
            self.assertIsNotNone(diagnosis, [d.code for d in report.diagnoses])
            assert diagnosis is not None
            self.assertTrue(diagnosis.advice)
            self.assertFalse(report.driver.loaded)

    def test_no_cuda_diagnoses_without_probe(self) -> None:
        report = nubo.discover(sim_devices="", probe_cuda=False)
        self.assertFalse({d.code for d in report.diagnoses} & CUDA_DIAGNOSES)


class ErrorsTest(unittest.TestCase):
    def test_unknown_model_lists_the_known_ones(self) -> None:
        with self.assertRaises(nubo.NuboError) as caught:
            nubo.discover(sim_devices="2xB9000", probe_cuda=False)
        error = caught.exception
        self.assertEqual(error.status, nubo.Status.INVALID_ARGUMENT)
        self.assertIn("B9000", error.message)
        for known in (A100, "T4", "H100-SXM5-80GB"):
            self.assertIn(known, error.message)
        self.assertEqual(str(error), error.message)

    def test_malformed_sim_devices(self) -> None:
        for spec in ("8x", "x" + A100, "0x" + A100, "8*" + A100, "8x" + A100 + ",,"):
            with self.subTest(spec=spec), self.assertRaises(nubo.NuboError) as caught:
                nubo.discover(sim_devices=spec, probe_cuda=False)
            self.assertEqual(caught.exception.status, nubo.Status.INVALID_ARGUMENT)

    def test_missing_topology_file(self) -> None:
        with self.assertRaises(nubo.NuboError) as caught:
            nubo.discover(sim_devices=f"8x{A100}", sim_topology_file="/nonexistent/topo.txt",
                          probe_cuda=False)
        self.assertIn("/nonexistent/topo.txt", caught.exception.message)

    def test_errors_are_per_thread(self) -> None:
        # nubo_last_error() is thread-local: each thread must see its own message.
        messages: dict[str, str] = {}

        def worker(model: str) -> None:
            for _ in range(20):
                try:
                    nubo.discover(sim_devices=f"1x{model}", probe_cuda=False)
                except nubo.NuboError as e:
                    if model not in e.message:
                        messages[model] = e.message
                        return

        threads = [threading.Thread(target=worker, args=(f"Bad{i}",)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(messages, {})


if __name__ == "__main__":
    unittest.main()
