// End-to-end scenarios of CUDA discovery with the real plugin (libnubo_cuda.so) and, where the
// scenario needs one, a fake driver and NVML (tests/device/cuda/fakes). LD_LIBRARY_PATH is read
// only at process start, so CTest runs this binary once per scenario with that scenario's
// environment and tag (tests/device/cuda/CMakeLists.txt); the tags are hidden so that a plain run
// selects nothing.
#include <dlfcn.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>

#include "nubo/device.hpp"
#include "nubo_plugin/cuda_plugin_abi.h"

using Catch::Matchers::Contains;
using nubo::DeviceReport;
using nubo::LinkKind;

namespace {

DeviceReport discover_cuda() {
  nubo::DiscoverOptions options;
  options.sim_devices = "";  // only real (here: fake) devices, whatever the environment says
  return nubo::discover(options);
}

std::string codes(const DeviceReport& r) {
  std::string out;
  for (const auto& d : r.diagnoses) out += d.code + " ";
  return out;
}

const nubo::Diagnosis& require_diagnosis(const DeviceReport& r, const std::string& code) {
  INFO("diagnoses: " << codes(r));
  const auto* d = r.find_diagnosis(code);
  REQUIRE(d != nullptr);
  return *d;
}

const char* kUuid0 = "GPU-fa4e0000-0000-0000-0000-000000000000";
const char* kUuid1 = "GPU-fa4e0000-0000-0000-0000-000000000001";

}  // namespace

// ---- the machine as it is -------------------------------------------------------------------

TEST_CASE("this machine: the real plugin, found beside libnubo, tells what the driver is",
          "[.][machine]") {
  // The plugin is the one beside libnubo.so (NUBO_CUDA_PLUGIN is unset for this test).
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  auto r = discover_cuda();
  INFO("diagnoses: " << codes(r));
  CHECK(r.find_diagnosis("plugin-not-built") == nullptr);
  CHECK(r.find_diagnosis("plugin-load-failed") == nullptr);
  CHECK(r.host.logical_cores > 0);
  // The runtime is static in the plugin: it answers without any driver.
  CHECK(r.driver.runtime_version / 1000 == NUBO_TEST_CUDA_MAJOR);
  CHECK(r.find_diagnosis("driver-too-old") == nullptr);
  if (!driver) {
    // A machine with the toolkit and no driver: the CUDA runtime would say "driver version is
    // insufficient"; nubo says what is true: no GPU at all (as on a CPU-only build machine), or
    // GPUs without their driver.
    // (Which of them, the sysfs fixtures of tests/device decide.)
    if (const auto* none = r.find_diagnosis("no-nvidia-gpu")) {
      CHECK_THAT(none->message, Contains("no NVIDIA PCI device"));
    } else if (r.find_diagnosis("gpu-not-in-container") == nullptr) {
      const auto& d = require_diagnosis(r, "no-driver");
      CHECK_THAT(d.message, Contains("libcuda.so.1"));
    }
    CHECK_FALSE(r.driver.loaded);
    CHECK(r.driver.driver_version == 0);
    CHECK(r.devices.empty());
  } else {
    CHECK(r.driver.loaded);
    CHECK(r.find_diagnosis("no-driver") == nullptr);
  }
  // The plugin sets nubo's default order for the whole process.
  REQUIRE(std::getenv("CUDA_DEVICE_ORDER") != nullptr);
  CHECK(std::string(std::getenv("CUDA_DEVICE_ORDER")) == "PCI_BUS_ID");
}

TEST_CASE("the toolkit's real stub libcuda on the loader path", "[.][stub-real]") {
  auto r = discover_cuda();
  const auto& d = require_diagnosis(r, "stub-driver");
  CHECK_THAT(d.advice, Contains("stubs"));
  CHECK(r.diagnoses.size() == 1);
  CHECK(r.devices.empty());
}

// ---- fake drivers -------------------------------------------------------------------------

TEST_CASE("a CUDA 12.4 driver is too old for the 13.x runtime", "[.][old-driver]") {
  auto r = discover_cuda();
  const auto& d = require_diagnosis(r, "driver-too-old");
  CHECK_THAT(d.message, Contains("12.4"));
  CHECK_THAT(d.message, Contains("13."));
  CHECK_THAT(d.message, Contains("580"));
  CHECK_THAT(d.message, Contains("550.54.15"));
  CHECK_THAT(d.advice, Contains("cuda-compat-13-"));
  CHECK(r.find_diagnosis("no-driver") == nullptr);
  CHECK(r.driver.loaded);
  CHECK(r.driver.driver_version == 12040);
  CHECK(r.driver.driver_release == "550.54.15");
  CHECK(r.devices.empty());
}

TEST_CASE("a model the table does not know gets its fp32 peak from its own figures",
          "[.][unknown-model]") {
  auto r = discover_cuda();
  REQUIRE(r.devices.size() == 1);
  const auto& d = r.devices[0];
  CHECK(d.model.empty());
  CHECK(d.peak_source == "device");
  // The fake reports CC 9.0 (128 fp32 lanes per SM), 132 SMs at 1980 MHz.
  CHECK(d.peak.fp32 == Approx(2.0 * 128 * 132 * 1980e-6));
  CHECK(d.peak.bf16 == 0);
}

TEST_CASE("two H100s joined by NVLink", "[.][two-gpus]") {
  auto r = discover_cuda();
  INFO("diagnoses: " << codes(r));
  CHECK(r.diagnoses.empty());
  CHECK(r.driver.driver_version == 13000);
  CHECK(r.driver.driver_release == "580.65.06");
  REQUIRE(r.devices.size() == 2);
  for (int i = 0; i < 2; ++i) {
    const auto& d = r.devices[i];
    CHECK(d.backend == nubo::Backend::cuda);
    CHECK(d.index == i);
    CHECK(d.ordinal == i);
    CHECK(d.name == "NVIDIA H100 80GB HBM3");
    CHECK(d.model == "H100-SXM5-80GB");  // from the GPU model table, by name
    CHECK(d.cc_major == 9);
    CHECK(d.cc_minor == 0);
    CHECK(d.multiprocessors == 132);
    CHECK(d.clock_mhz == 1980);
    CHECK(d.memory_total == 81559ull << 20);
    CHECK(d.memory_free == (81559ull << 20) - (512ull << 20));
    CHECK(d.memory_bandwidth_gbs == Approx(3352.32));
    CHECK(d.numa_node == i);
    CHECK_FALSE(d.mig_enabled);
  }
  CHECK(r.devices[0].pci_bus_id == "00000000:10:00.0");
  CHECK(r.devices[1].pci_bus_id == "00000000:20:00.0");
  CHECK(r.devices[0].uuid == kUuid0);
  CHECK(r.devices[1].uuid == kUuid1);
  CHECK(r.link(0, 0).kind == LinkKind::self);
  CHECK(r.link(0, 1).name() == "NV18");
  CHECK(r.link(1, 0).name() == "NV18");
  CHECK(r.link(0, 1).peer_access);
  CHECK(std::string(std::getenv("CUDA_DEVICE_ORDER")) == "PCI_BUS_ID");
}

TEST_CASE("CUDA_VISIBLE_DEVICES=1 leaves the second GPU as device 0", "[.][visible-one]") {
  auto r = discover_cuda();
  INFO("diagnoses: " << codes(r));
  CHECK(r.diagnoses.empty());
  REQUIRE(r.devices.size() == 1);
  CHECK(r.devices[0].index == 0);
  CHECK(r.devices[0].uuid == kUuid1);
  CHECK(r.devices[0].pci_bus_id == "00000000:20:00.0");
  CHECK(r.devices[0].numa_node == 1);  // NVML's facts follow the device, not the ordinal
  CHECK(r.link(0, 0).kind == LinkKind::self);
}

TEST_CASE("CUDA_VISIBLE_DEVICES by UUID", "[.][visible-uuid]") {
  auto r = discover_cuda();
  INFO("diagnoses: " << codes(r));
  CHECK(r.diagnoses.empty());
  REQUIRE(r.devices.size() == 1);
  CHECK(r.devices[0].uuid == kUuid1);
}

TEST_CASE("CUDA_VISIBLE_DEVICES=7 names no device", "[.][visible-invalid]") {
  auto r = discover_cuda();
  const auto& d = require_diagnosis(r, "visible-devices-invalid");
  CHECK_THAT(d.message, Contains("'7'"));
  CHECK(r.find_diagnosis("no-device") == nullptr);
  CHECK(r.devices.empty());
}

TEST_CASE("CUDA_VISIBLE_DEVICES=0,7 keeps GPU 0 and says 7 is wrong", "[.][visible-partial]") {
  auto r = discover_cuda();
  require_diagnosis(r, "visible-devices-invalid");
  REQUIRE(r.devices.size() == 1);
  CHECK(r.devices[0].uuid == kUuid0);
}

TEST_CASE("CUDA_VISIBLE_DEVICES='' hides every GPU", "[.][visible-empty]") {
  auto r = discover_cuda();
  require_diagnosis(r, "visible-devices-hide-all");
  CHECK(r.find_diagnosis("no-device") == nullptr);
  CHECK(r.devices.empty());
}

TEST_CASE("without NVML the devices are listed and the topology is partial", "[.][nvml-missing]") {
  auto r = discover_cuda();
  const auto& d = require_diagnosis(r, "nvml-missing");
  CHECK_THAT(d.message, Contains("libnvidia-ml.so.1"));
  REQUIRE(r.devices.size() == 2);
  CHECK(r.devices[1].uuid == kUuid1);
  CHECK(r.devices[0].memory_free == 0);  // unknown without NVML
  CHECK(r.link(0, 1).kind == LinkKind::unknown);
  CHECK(r.link(0, 1).name() == "?");
  CHECK(r.link(0, 1).peer_access);
  CHECK(r.driver.driver_release.empty());
}

TEST_CASE("NVML that cannot initialise is nvml-missing too", "[.][nvml-init-fails]") {
  auto r = discover_cuda();
  CHECK_THAT(require_diagnosis(r, "nvml-missing").message, Contains("Driver Not Loaded"));
  CHECK(r.devices.size() == 2);
}

TEST_CASE("a GPU in MIG mode", "[.][mig]") {
  auto r = discover_cuda();
  const auto& d = require_diagnosis(r, "mig-enabled");
  CHECK_THAT(d.message, Contains("00000000:10:00.0"));
  REQUIRE(r.devices.size() == 2);
  CHECK(r.devices[0].mig_enabled);
  CHECK_FALSE(r.devices[1].mig_enabled);
}

TEST_CASE("a driver that sees no GPU", "[.][no-device]") {
  auto r = discover_cuda();
  require_diagnosis(r, "no-device");
  CHECK(r.diagnoses.size() == 1);
  CHECK(r.driver.loaded);
  CHECK(r.devices.empty());
}

TEST_CASE("cuInit answering CUDA_ERROR_STUB_LIBRARY", "[.][stub-fake]") {
  auto r = discover_cuda();
  require_diagnosis(r, "stub-driver");
  CHECK(r.diagnoses.size() == 1);
}

TEST_CASE("cuInit failing otherwise", "[.][init-failed]") {
  auto r = discover_cuda();
  CHECK_THAT(require_diagnosis(r, "driver-init-failed").message, Contains("CUDA_ERROR_UNKNOWN"));
}

TEST_CASE("four H100s on NVSwitches", "[.][nvswitch]") {
  auto r = discover_cuda();
  REQUIRE(r.devices.size() == 4);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      if (i != j) CHECK(r.link(i, j).name() == "NV18");
}

TEST_CASE("four L4s on PCIe across two NUMA nodes", "[.][pcie]") {
  auto r = discover_cuda();
  REQUIRE(r.devices.size() == 4);
  CHECK(r.devices[0].model == "L4");
  CHECK(r.link(0, 1).name() == "PXB");
  CHECK(r.link(2, 3).name() == "PXB");
  CHECK(r.link(0, 2).name() == "SYS");
  CHECK(r.link(3, 1).name() == "SYS");
  CHECK_FALSE(r.link(0, 2).peer_access);
}

TEST_CASE("a user's CUDA_DEVICE_ORDER is left alone", "[.][order-kept]") {
  discover_cuda();
  CHECK(std::string(std::getenv("CUDA_DEVICE_ORDER")) == "FASTEST_FIRST");
}

// ---- the plugin itself --------------------------------------------------------------------

TEST_CASE("a plugin path that does not exist", "[.][plugin-missing]") {
  auto r = discover_cuda();
  const auto& d = require_diagnosis(r, "plugin-not-built");
  CHECK_THAT(d.message, Contains(std::getenv("NUBO_CUDA_PLUGIN")));
  CHECK(r.diagnoses.size() == 1);
}

TEST_CASE("a plugin path that is not a library", "[.][plugin-not-library]") {
  const char* path = std::getenv("NUBO_CUDA_PLUGIN");
  REQUIRE(path);
  REQUIRE(dlopen(path, RTLD_NOW) == nullptr);
  const std::string loader_says = dlerror();
  auto r = discover_cuda();
  const auto& d = require_diagnosis(r, "plugin-load-failed");
  CHECK_THAT(d.message, Contains(loader_says));
}

TEST_CASE("a library without the plugin's entry point", "[.][plugin-no-entry]") {
  auto r = discover_cuda();
  CHECK_THAT(require_diagnosis(r, "plugin-load-failed").message, Contains(NUBO_CUDA_PLUGIN_ENTRY));
}

TEST_CASE("the plugin exports one entry point and checks the ABI", "[.][plugin-abi]") {
  void* plugin = dlopen(NUBO_TEST_PLUGIN_FILE, RTLD_NOW | RTLD_LOCAL);
  REQUIRE(plugin);
  auto probe = reinterpret_cast<nubo_cuda_plugin_probe_fn>(dlsym(plugin, NUBO_CUDA_PLUGIN_ENTRY));
  REQUIRE(probe);
  CHECK(dlsym(plugin, "cudaRuntimeGetVersion") == nullptr);  // cudart stays inside

  CHECK(probe(nullptr) == NUBO_CUDA_PLUGIN_BAD_ARGUMENT);
  auto facts = std::make_unique<nubo_cuda_facts>();
  facts->struct_size = sizeof(nubo_cuda_facts);
  facts->abi_version = NUBO_CUDA_PLUGIN_ABI_VERSION + 1;
  CHECK(probe(facts.get()) == NUBO_CUDA_PLUGIN_ABI_MISMATCH);
  CHECK(facts->abi_version == NUBO_CUDA_PLUGIN_ABI_VERSION);

  // An older caller with a shorter struct: the plugin writes no further than it says.
  auto bytes = std::make_unique<unsigned char[]>(sizeof(nubo_cuda_facts));
  std::fill(bytes.get(), bytes.get() + sizeof(nubo_cuda_facts), 0xAB);
  auto* short_facts = reinterpret_cast<nubo_cuda_facts*>(bytes.get());
  const std::size_t shorter = offsetof(nubo_cuda_facts, driver_loaded);
  short_facts->struct_size = static_cast<uint32_t>(shorter);
  short_facts->abi_version = NUBO_CUDA_PLUGIN_ABI_VERSION;
  CHECK(probe(short_facts) == NUBO_CUDA_PLUGIN_OK);
  CHECK(short_facts->struct_size == shorter);
  CHECK(short_facts->runtime_version / 1000 == NUBO_TEST_CUDA_MAJOR);
  CHECK(std::all_of(bytes.get() + shorter, bytes.get() + sizeof(nubo_cuda_facts),
                    [](unsigned char b) { return b == 0xAB; }));
}
