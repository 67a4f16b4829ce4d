// Whether a machine has NVIDIA GPUs, read from fixture trees laid out as sysfs, /dev and /proc.
#include <catch2/catch.hpp>

#include "../transfer/helpers.hpp"
#include "device/cuda/gpu_presence.hpp"

using nubo::detail::gpu_presence;

namespace {

void pci(const nubo_test::TempDir& root, const std::string& address, const std::string& vendor,
         const std::string& device_class) {
  const auto dir = root / ("sys/bus/pci/devices/" + address);
  nubo_test::write_file(dir + "/vendor", vendor + "\n");
  nubo_test::write_file(dir + "/class", device_class + "\n");
}

}  // namespace

TEST_CASE("NVIDIA display and 3D controllers are found by PCI address, nothing else") {
  nubo_test::TempDir root;
  pci(root, "0000:5e:00.0", "0x10de", "0x030200");  // an H100: 3D controller
  pci(root, "0000:3b:00.0", "0x10de", "0x030000");  // a VGA-class GPU
  pci(root, "0000:3b:00.1", "0x10de", "0x040300");  // its audio function
  pci(root, "0000:c1:00.0", "0x10de", "0x068000");  // an NVSwitch
  pci(root, "0000:00:02.0", "0x8086", "0x030000");  // another vendor's display
  const auto p = gpu_presence(root.path());
  CHECK(p.nvidia_pci == std::vector<std::string>{"0000:3b:00.0", "0000:5e:00.0"});
  CHECK_FALSE(p.device_nodes);
  CHECK_FALSE(p.in_container);
  nubo_test::write_file(root / "dev/nvidiactl", "");
  CHECK(gpu_presence(root.path()).device_nodes);
}

// Whether a tree holding only `file` (with `content`) is taken for a container.
bool container_with(const std::string& file, const std::string& content) {
  nubo_test::TempDir root;
  nubo_test::write_file(root / file, content);
  return gpu_presence(root.path()).in_container;
}

TEST_CASE("a container is known by its runtime's markers, and an empty tree has nothing") {
  nubo_test::TempDir empty;
  const auto none = gpu_presence(empty.path());
  CHECK(none.nvidia_pci.empty());
  CHECK_FALSE(none.device_nodes);
  CHECK_FALSE(none.in_container);
  CHECK(container_with(".dockerenv", ""));
  CHECK(container_with("run/.containerenv", ""));
  CHECK(container_with("proc/1/cgroup", "12:pids:/kubepods/besteffort/pod1/abc\n"));
  CHECK_FALSE(container_with("proc/1/cgroup", "0::/init.scope\n"));
}
