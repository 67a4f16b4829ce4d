// cuda_diagnose: every diagnosis code from hand-made facts, and no crash on any facts.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

#include "device/cuda/cuda_diagnose.hpp"
#include "device/cuda/cuda_facts.hpp"
#include "facts_builder.hpp"

using nubo::Diagnosis;
using nubo::Severity;
using nubo::detail::GpuPresence;
using nubo::test::healthy_facts;

namespace {

// A machine with an NVIDIA GPU and its device nodes: what every case below but the presence
// ones assumes.
const GpuPresence kGpuHere{{"0000:3b:00.0"}, true, false};

std::vector<Diagnosis> diagnose(const nubo_cuda_facts& f, const GpuPresence& host = kGpuHere) {
  return nubo::detail::diagnose_cuda(f, host);
}

std::vector<std::string> codes(const std::vector<Diagnosis>& ds) {
  std::vector<std::string> out;
  for (const auto& d : ds) out.push_back(d.code);
  return out;
}

Diagnosis only(const std::vector<Diagnosis>& ds, const std::string& code) {
  INFO("diagnoses: " << Catch::StringMaker<std::vector<std::string>>::convert(codes(ds)));
  REQUIRE(ds.size() == 1);
  REQUIRE(ds[0].code == code);
  CHECK(!ds[0].message.empty());
  CHECK(!ds[0].advice.empty());
  return ds[0];
}

bool has(const std::vector<Diagnosis>& ds, const std::string& code) {
  return std::any_of(ds.begin(), ds.end(), [&](const Diagnosis& d) { return d.code == code; });
}

using Catch::Matchers::Contains;

}  // namespace

TEST_CASE("a healthy machine has no CUDA diagnosis", "[cuda][diagnose]") {
  CHECK(diagnose(*healthy_facts()).empty());
}

TEST_CASE(
    "no driver and no NVIDIA GPU is no-nvidia-gpu, and GPUs not passed into a container say so",
    "[cuda][diagnose]") {
  auto f = healthy_facts();
  f->driver_loaded = 0;
  f->init_called = 0;
  const auto& none = only(diagnose(*f, GpuPresence{}), "no-nvidia-gpu");
  CHECK(none.severity == Severity::info);
  CHECK_THAT(none.message, Contains("this machine has no NVIDIA PCI device"));
  CHECK_THAT(none.advice, Contains("Nothing to do if the CPU is meant"));
  CHECK_FALSE(Contains("apt install").match(none.advice));  // no driver to install
  const auto& unseen = only(diagnose(*f, GpuPresence{{}, false, true}), "no-nvidia-gpu");
  CHECK_THAT(unseen.message, Contains("this container sees"));
  CHECK_THAT(unseen.advice, Contains("--gpus all"));

  const GpuPresence container{{"0000:3b:00.0", "0000:5e:00.0"}, false, true};
  const auto& d = only(diagnose(*f, container), "gpu-not-in-container");
  CHECK(d.severity == Severity::error);
  CHECK_THAT(d.message, Contains("2 NVIDIA GPUs (PCI 0000:3b:00.0, 0000:5e:00.0)"));
  CHECK_THAT(d.advice, Contains("docker run --gpus all"));
  CHECK_THAT(d.advice, Contains("nvidia.com/gpu"));
  // GPUs, no driver, not a container: the driver is what is missing.
  only(diagnose(*f, GpuPresence{{"0000:3b:00.0"}, false, false}), "no-driver");
  // Device nodes but no driver library (a container given --device only): still no-driver.
  only(diagnose(*f, GpuPresence{{"0000:3b:00.0"}, true, true}), "no-driver");
}

TEST_CASE("no libcuda.so.1 is no-driver, never driver-too-old", "[cuda][diagnose]") {
  auto f = healthy_facts();
  f->driver_loaded = 0;
  f->driver_version = 0;
  f->init_called = 0;
  NUBO_SET_TEXT(f->driver_error, "libcuda.so.1: cannot open shared object file: No such file");
  const auto& d = only(diagnose(*f), "no-driver");
  CHECK(d.severity == Severity::warning);
  CHECK_THAT(d.message, Contains("libcuda.so.1: cannot open shared object file"));
  CHECK_THAT(d.message, Contains("CUDA 13.0"));
  CHECK_THAT(d.advice, Contains("apt install nvidia-driver"));
  CHECK_THAT(d.advice, Contains("--gpus all"));
  CHECK_THAT(d.advice, Contains("NVIDIA Container Toolkit"));
  CHECK_THAT(d.advice, Contains("580"));
}

TEST_CASE("the toolkit's stub libcuda is stub-driver", "[cuda][diagnose]") {
  auto f = healthy_facts();
  f->init_result = 34;
  f->devices_listed = 0;
  NUBO_SET_TEXT(f->driver_path, "/usr/local/cuda/lib64/stubs/libcuda.so.1");
  auto d = only(diagnose(*f), "stub-driver");
  CHECK(d.severity == Severity::error);
  CHECK_THAT(d.message, Contains("/usr/local/cuda/lib64/stubs/libcuda.so.1"));
  CHECK_THAT(d.advice, Contains("LD_LIBRARY_PATH"));
  CHECK_THAT(d.advice, Contains("stubs"));

  SECTION("also when only cuDriverGetVersion says so") {
    f->init_result = 0;
    f->driver_version_result = 34;
    only(diagnose(*f), "stub-driver");
  }
}

TEST_CASE("a driver older than the runtime's major is driver-too-old", "[cuda][diagnose]") {
  auto f = healthy_facts();
  f->driver_version = 12040;
  f->init_called = 0;
  f->devices_listed = f->nvml_devices_listed = 0;
  NUBO_SET_TEXT(f->driver_release, "550.54.15");
  const auto& d = only(diagnose(*f), "driver-too-old");
  CHECK(d.severity == Severity::error);
  CHECK_THAT(d.message, Contains("12.4"));
  CHECK_THAT(d.message, Contains("13.0"));
  CHECK_THAT(d.message, Contains("580"));
  CHECK_THAT(d.message, Contains("550.54.15"));
  CHECK_THAT(d.advice, Contains("580"));
  CHECK_THAT(d.advice, Contains("cuda-compat-13-0"));
  CHECK_THAT(d.advice, Contains("container"));

  SECTION("CUDA 12 needs branch 525") {
    f->driver_version = 11080;
    f->runtime_version = 12040;
    const auto& d12 = only(diagnose(*f), "driver-too-old");
    CHECK_THAT(d12.message, Contains("11.8"));
    CHECK_THAT(d12.message, Contains("525"));
    CHECK_THAT(d12.advice, Contains("cuda-compat-12-4"));
  }
}

TEST_CASE("minor-version compatibility: a 13.0 driver runs a 13.x runtime", "[cuda][diagnose]") {
  auto f = healthy_facts();
  f->driver_version = 13000;
  f->runtime_version = 13020;
  CHECK(diagnose(*f).empty());
  f->driver_version = 14000;  // a newer driver is always fine
  CHECK(diagnose(*f).empty());
}

TEST_CASE("any other cuInit failure is driver-init-failed, named", "[cuda][diagnose]") {
  auto f = healthy_facts();
  f->devices_listed = 0;
  SECTION("by the driver's own name") {
    f->init_result = 999;
    NUBO_SET_TEXT(f->init_error_name, "CUDA_ERROR_UNKNOWN");
    const auto& d = only(diagnose(*f), "driver-init-failed");
    CHECK_THAT(d.message, Contains("cuInit failed with CUDA_ERROR_UNKNOWN (999)"));
    CHECK_THAT(d.advice, Contains("/dev/nvidia"));
  }
  SECTION("by nubo's table when the driver cannot name it") {
    f->init_result = 803;
    const auto& d = only(diagnose(*f), "driver-init-failed");
    CHECK_THAT(d.message, Contains("CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803)"));
    CHECK_THAT(d.advice, Contains("reboot"));
  }
  SECTION("a code nobody knows") {
    f->init_result = 12345;
    CHECK_THAT(only(diagnose(*f), "driver-init-failed").message, Contains("CUDA error 12345"));
  }
  SECTION("a libcuda.so.1 without cuInit") {
    f->init_result = NUBO_CUDA_MISSING_SYMBOL;
    CHECK_THAT(only(diagnose(*f), "driver-init-failed").message,
               Contains("does not export cuInit"));
  }
  SECTION("cuDeviceGetCount failing after cuInit") {
    f->device_count_result = 46;
    CHECK_THAT(only(diagnose(*f), "driver-init-failed").message,
               Contains("cuDeviceGetCount failed with CUDA_ERROR_DEVICE_UNAVAILABLE"));
  }
}

TEST_CASE("a driver without devices is no-device", "[cuda][diagnose]") {
  auto f = healthy_facts();
  f->init_result = 100;
  f->device_count = f->devices_listed = 0;
  f->nvml_device_count = f->nvml_devices_listed = 0;
  const auto& d = only(diagnose(*f), "no-device");
  CHECK_THAT(d.message, Contains("CUDA_ERROR_NO_DEVICE"));
  CHECK_THAT(d.message, Contains("580.65.06"));

  SECTION("NVML seeing GPUs that CUDA does not is said") {
    f->nvml_device_count = f->nvml_devices_listed = 2;
    CHECK_THAT(only(diagnose(*f), "no-device").message, Contains("NVML lists 2 GPU(s)"));
  }
  SECTION("without NVML, CUDA_VISIBLE_DEVICES is named as a possible cause") {
    f->nvml_loaded = 0;
    f->visible_devices_set = 1;
    NUBO_SET_TEXT(f->visible_devices, "7");
    CHECK_THAT(only(diagnose(*f), "no-device").message, Contains("CUDA_VISIBLE_DEVICES='7'"));
  }
}

TEST_CASE("CUDA_VISIBLE_DEVICES is checked against every GPU NVML lists", "[cuda][diagnose]") {
  auto f = healthy_facts();
  f->visible_devices_set = 1;
  SECTION("an index that does not exist") {
    NUBO_SET_TEXT(f->visible_devices, "7");
    f->init_result = 100;
    f->device_count = f->devices_listed = 0;
    auto ds = diagnose(*f);
    CHECK(has(ds, "visible-devices-invalid"));
    CHECK_FALSE(has(ds, "no-device"));
  }
  SECTION("a bad entry after a good one") {
    NUBO_SET_TEXT(f->visible_devices, "1,7");
    f->device_count = f->devices_listed = 1;
    CHECK(codes(diagnose(*f)) == std::vector<std::string>{"visible-devices-invalid"});
  }
  SECTION("an empty value hides every device") {
    NUBO_SET_TEXT(f->visible_devices, "");
    f->init_result = 100;
    f->device_count = f->devices_listed = 0;
    auto ds = diagnose(*f);
    CHECK(has(ds, "visible-devices-hide-all"));
    CHECK_FALSE(has(ds, "no-device"));
  }
  SECTION("a UUID prefix that exists is fine") {
    NUBO_SET_TEXT(f->visible_devices, "GPU-fa4e0000-0000-0000-0000-000000000001");
    f->device_count = f->devices_listed = 1;
    CHECK(diagnose(*f).empty());
  }
  SECTION("a value too long to carry is not judged") {
    NUBO_SET_TEXT(f->visible_devices, "7");
    f->visible_devices_truncated = 1;
    CHECK(diagnose(*f).empty());
  }
}

TEST_CASE("without NVML the topology is partial: nvml-missing", "[cuda][diagnose]") {
  auto f = healthy_facts();
  f->nvml_loaded = 0;
  f->nvml_devices_listed = 0;
  NUBO_SET_TEXT(f->nvml_error, "libnvidia-ml.so.1: cannot open shared object file");
  const auto& d = only(diagnose(*f), "nvml-missing");
  CHECK(d.severity == Severity::warning);
  CHECK_THAT(d.message, Contains("libnvidia-ml.so.1: cannot open shared object file"));
  CHECK_THAT(d.message, Contains("topology is partial"));

  SECTION("one GPU has no topology to miss: info only") {
    f->devices_listed = 1;
    CHECK(only(diagnose(*f), "nvml-missing").severity == Severity::info);
  }
  SECTION("NVML that fails to initialise counts as missing") {
    f->nvml_loaded = 1;
    f->nvml_init_result = 9;
    NUBO_SET_TEXT(f->nvml_error, "nvmlInit_v2 failed: Driver Not Loaded (NVML error 9)");
    CHECK_THAT(only(diagnose(*f), "nvml-missing").message, Contains("Driver Not Loaded"));
  }
}

TEST_CASE("MIG mode on a listed GPU is mig-enabled", "[cuda][diagnose]") {
  auto f = healthy_facts();
  f->nvml_devices[1].mig_mode = 1;
  const auto& d = only(diagnose(*f), "mig-enabled");
  CHECK_THAT(d.message, Contains("GPU 1 (NVIDIA H100 80GB HBM3, 00000000:20:00.0)"));
  CHECK_THAT(d.message, Contains("MIG UUID"));
  CHECK_THAT(d.advice, Contains("nvidia-smi -i 00000000:20:00.0 -mig 0"));
}

TEST_CASE("plugin diagnoses name the file and the loader's message", "[cuda][diagnose]") {
  auto missing = nubo::detail::diagnose_plugin_not_built("it is not in /opt/nubo/lib");
  CHECK(missing.code == "plugin-not-built");
  CHECK_THAT(missing.message, Contains("/opt/nubo/lib"));
  auto failed = nubo::detail::diagnose_plugin_load_failed("/x/libnubo_cuda.so",
                                                          "/x/libnubo_cuda.so: invalid ELF header");
  CHECK(failed.code == "plugin-load-failed");
  CHECK(failed.severity == Severity::error);
  CHECK_THAT(failed.message, Contains("invalid ELF header"));
}

TEST_CASE("driver branches and error names", "[cuda][diagnose]") {
  using nubo::detail::cuda_error_name;
  using nubo::detail::minimum_driver_branch;
  CHECK(minimum_driver_branch(12) == 525);
  CHECK(minimum_driver_branch(13) == 580);
  CHECK(minimum_driver_branch(99) == 0);
  CHECK(cuda_error_name(100) == "CUDA_ERROR_NO_DEVICE");
  CHECK(cuda_error_name(34) == "CUDA_ERROR_STUB_LIBRARY");
  CHECK(cuda_error_name(-7) == "CUDA error -7");
}

TEST_CASE("bad facts never crash diagnosis or conversion", "[cuda][diagnose]") {
  auto check_all = [](const nubo_cuda_facts& f) {
    auto ds = diagnose(f);
    auto devices = nubo::detail::devices_from_facts(f);
    auto links = nubo::detail::links_from_facts(f);
    CHECK(devices.size() <= NUBO_CUDA_MAX_DEVICES);
    CHECK(links.size() == devices.size());
    for (const auto& d : devices) CHECK(d.name.size() < NUBO_CUDA_NAME_SIZE + 1);
  };
  SECTION("counts out of range") {
    auto f = healthy_facts();
    f->devices_listed = 100000;
    f->nvml_devices_listed = -3;
    f->devices[0].nvml_index = 9999;
    f->devices[1].nvml_index = -77;
    check_all(*f);
    f->devices_listed = -1;
    f->nvml_devices_listed = 1 << 30;
    check_all(*f);
  }
  SECTION("strings without a terminator") {
    auto f = healthy_facts();
    std::memset(f->devices[0].name, 'A', sizeof f->devices[0].name);
    std::memset(f->driver_error, 'B', sizeof f->driver_error);
    std::memset(f->visible_devices, '9', sizeof f->visible_devices);
    std::memset(f->driver_release, 'C', sizeof f->driver_release);
    f->visible_devices_set = 1;
    check_all(*f);
    CHECK(nubo::detail::devices_from_facts(*f)[0].name == std::string(NUBO_CUDA_NAME_SIZE, 'A'));
    f->driver_loaded = 0;
    check_all(*f);
  }
  SECTION("random bytes") {
    std::mt19937 rng(20240611);
    auto f = std::make_unique<nubo_cuda_facts>();
    auto* bytes = reinterpret_cast<unsigned char*>(f.get());
    for (int round = 0; round < 200; ++round) {
      for (std::size_t k = 0; k < sizeof *f; ++k) bytes[k] = static_cast<unsigned char>(rng());
      // Small counts half of the time so that the per-device paths run too.
      if (round % 2) {
        f->devices_listed = static_cast<int32_t>(rng() % 5);
        f->nvml_devices_listed = static_cast<int32_t>(rng() % 5);
        f->driver_loaded = 1;
      }
      check_all(*f);
    }
  }
}
