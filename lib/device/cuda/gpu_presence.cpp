#include "device/cuda/gpu_presence.hpp"

#include "common/sysfs_text.hpp"

#include <algorithm>
#include <filesystem>
#include <string_view>

namespace nubo::detail {
namespace {

namespace fs = std::filesystem;

bool present(const fs::path& path) {
  std::error_code ec;
  return fs::exists(path, ec);
}

}  // namespace

GpuPresence gpu_presence(const std::string& root) {
  const fs::path base(root);
  GpuPresence p;
  std::error_code ec;
  for (fs::directory_iterator it(base / "sys/bus/pci/devices", ec), end; !ec && it != end;
       it.increment(ec)) {
    // vendor "0x10de"; class "0x030000" (VGA) or "0x030200" (3D controller): NVSwitches and
    // NVIDIA's audio functions are other classes.
    if (first_line(it->path() / "vendor") == "0x10de" &&
        first_line(it->path() / "class").rfind("0x03", 0) == 0)
      p.nvidia_pci.push_back(it->path().filename().string());
  }
  std::sort(p.nvidia_pci.begin(), p.nvidia_pci.end());
  p.device_nodes = present(base / "dev/nvidiactl") || present(base / "dev/nvidia0");
  // cgroup v1 names the manager in init's cgroup; v2 ("0::/") leaves the marker files.
  constexpr std::string_view kManagers[] = {"docker", "kubepods", "containerd", "libpod"};
  const std::string cgroup = first_line(base / "proc/1/cgroup");
  p.in_container = present(base / ".dockerenv") || present(base / "run/.containerenv") ||
                   std::any_of(std::begin(kManagers), std::end(kManagers),
                               [&](auto m) { return cgroup.find(m) != std::string::npos; });
  return p;
}

}  // namespace nubo::detail
