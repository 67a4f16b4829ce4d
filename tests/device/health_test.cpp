// The health report's parts that need no GPU: the XID table and its policy files, the kernel
// log's XID lines, and a report built from the kernel log alone.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "device/health/health_facts.hpp"
#include "device/health/kernel_log.hpp"
#include "nubo/error.hpp"
#include "nubo/health.hpp"
#include "sim_helpers.hpp"

using Catch::Matchers::Contains;
using nubo::device::Action;
using nubo::device::HealthStatus;

namespace {

struct TempFile {
  std::filesystem::path path;
  explicit TempFile(const std::string& text) {
    path = std::filesystem::temp_directory_path() /
           ("nubo-health-" + std::to_string(::getpid()) + "-" + std::to_string(++counter()));
    std::ofstream(path) << text;
  }
  ~TempFile() { std::filesystem::remove(path); }
  static int& counter() {
    static int n = 0;
    return n;
  }
};

const nubo::device::XidRule& rule(const std::vector<nubo::device::XidRule>& t, int xid) {
  for (const auto& r : t)
    if (r.xid == xid) return r;
  FAIL("no rule for XID " << xid);
  throw 0;
}

constexpr const char* kDmesg =
    "[ 1234.567] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the "
    "bus.\n"
    "[ 1240.000] eth0: link up\n"
    "6,1301,1240000,-;NVRM: Xid (PCI:0000:86:00): 48, pid=77, DBE (0x1) occurred\n"
    "[ 1250.000] NVRM: Xid (PCI:0000:3b:00): garbage\n";

}  // namespace

TEST_CASE("health: the XID table gives each critical XID its action", "[health]") {
  const auto t = nubo::device::xid_table();
  CHECK(rule(t, 79).status == HealthStatus::fail);
  CHECK(rule(t, 79).action == Action::drain_node);
  CHECK(rule(t, 48).action == Action::drain_node);
  CHECK(rule(t, 63).action == Action::reset_gpu);
  CHECK(rule(t, 64).action == Action::replace_gpu);
  CHECK(rule(t, 13).action == Action::restart_application);
  CHECK(rule(t, 119).action == Action::reset_gpu);
}

TEST_CASE("health: a policy file overrides and extends the XID table", "[health]") {
  TempFile policy(
      "# our cluster drains on an uncontained error\n"
      "95 fail drain-node\n"
      "  79 warn none   tolerated on this test rig\n"
      "200 fail reset-gpu a future XID\n");
  const auto t = nubo::device::xid_table(policy.path.string());
  CHECK(rule(t, 95).action == Action::drain_node);
  CHECK_THAT(rule(t, 95).meaning, Contains("uncontained ECC"));  // kept when not given
  CHECK(rule(t, 79).status == HealthStatus::warn);
  CHECK(rule(t, 79).meaning == "tolerated on this test rig");
  CHECK(rule(t, 200).action == Action::reset_gpu);

  for (const char* bad : {"79 fail\n", "79 broken drain-node\n", "79 fail reboot\n",
                          "x79 fail none\n", "0 fail none\n"}) {
    TempFile f(std::string("# header\n") + bad);
    INFO(bad);
    CHECK_THROWS_WITH(nubo::device::xid_table(f.path.string()), Contains(f.path.string() + ":2"));
  }
  CHECK_THROWS_WITH(nubo::device::xid_table("/no/such/policy"), Contains("does not exist"));
  // Not a file: /dev/zero once grew to 2 GB here, and a FIFO hung the check.
  CHECK_THROWS_WITH(nubo::device::xid_table("/dev/zero"), Contains("not a regular file"));
  const auto fifo =
      std::filesystem::temp_directory_path() / ("nubo-xid-fifo-" + std::to_string(::getpid()));
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THROWS_WITH(nubo::device::xid_table(fifo.string()), Contains("a FIFO, not a regular file"));
  nubo::detail::KernelLog from_fifo(fifo.string());
  std::string state;
  CHECK(from_fifo.read(state).empty());
  CHECK_THAT(state, Contains("a FIFO"));
  std::filesystem::remove(fifo);
  // A meaning is printed: one line of printable text.
  TempFile escape("79 fail drain-node \x1b[2J cleared\n");
  CHECK_THROWS_WITH(nubo::device::xid_table(escape.path.string()), Contains("control character"));
}

TEST_CASE("health: a kernel log of many GPUs' XIDs is judged once per GPU, in one pass",
          "[health]") {
  // 40,000 distinct bus ids took 3.3 s when each event scanned every finding before it.
  std::string log;
  for (int i = 0; i < 40000; ++i) {
    char line[96];
    std::snprintf(line, sizeof line, "NVRM: Xid (PCI:%04x:%02x:00): 79, pid=1, name=x\n", i / 256,
                  i % 256);
    log += line;
    log += line;  // each twice: one finding each
  }
  log += "NVRM: Xid (PCI:0000:3b:00 ; rm -rf /): 79, name=\x1b[2Jx\n";  // not a bus id
  log += "NVRM: Xid (PCI:ffff:3c:00): 79, name=\x1b[2Jx\n";
  const auto xids = nubo::detail::parse_kernel_xids(log);
  REQUIRE(xids.size() == 80001);
  CHECK_THAT(xids.back().text, Contains("\\x1b[2Jx"));  // escaped, never raw
  nubo::device::HealthReport out;
  nubo::detail::judge_health(nullptr, xids, nubo::device::xid_table(""),
                             nubo::testing::sim_report("1xT4"), out);
  CHECK(out.findings.size() == 40001);
}

TEST_CASE("health: XID lines of the kernel log, in dmesg's and /dev/kmsg's formats", "[health]") {
  const auto xids = nubo::detail::parse_kernel_xids(kDmesg);
  REQUIRE(xids.size() == 2);
  CHECK(xids[0].xid == 79);
  CHECK(xids[0].pci_bus_id == "00000000:3b:00.0");
  CHECK_THAT(xids[0].text, Contains("fallen off the bus"));
  CHECK(xids[1].xid == 48);
  CHECK(xids[1].pci_bus_id == "00000000:86:00.0");
  CHECK(nubo::detail::parse_kernel_xids("NVRM: Xid (PCI:").empty());
  CHECK(nubo::detail::parse_kernel_xids(std::string(100000, 'x')).empty());
}

TEST_CASE("health: without NVML the kernel log still tells of a fallen GPU", "[health]") {
  nubo::testing::ScopedEnv no_cuda("NUBO_CUDA", "0");
  TempFile log(kDmesg);
  auto report = nubo::testing::sim_report("1xT4");
  nubo::device::HealthOptions o;
  o.kernel_log_file = log.path.string();
  auto r = nubo::device::health(report, o);
  CHECK_THAT(r.source, Contains("NUBO_CUDA=0"));
  CHECK(r.kernel_log == "read");
  REQUIRE(r.findings.size() == 2);
  CHECK(r.findings[0].code == "xid-79");
  CHECK(r.findings[0].device == -1);  // not a GPU nubo lists
  CHECK(r.findings[0].pci_bus_id == "00000000:3b:00.0");
  CHECK(r.status == HealthStatus::fail);
  CHECK(r.exit_status() == 5);
  CHECK_THAT(r.to_json(), Contains("\"action\": \"drain-node\""));

  o.wait_seconds = -1;
  CHECK_THROWS_WITH(nubo::device::health(report, o), Contains("wait_seconds"));
  o.wait_seconds = 0;
  o.kernel_log_file = "/no/such/log";
  auto unread = nubo::device::health(report, o);
  CHECK_THAT(unread.kernel_log, Contains("cannot be read"));
}

TEST_CASE("health: the kernel log is read on from where the last reading stopped", "[health]") {
  TempFile log(kDmesg);
  nubo::detail::KernelLog reader(log.path.string());
  std::string state;
  CHECK(reader.read(state).size() == 2);
  CHECK(state == "read");
  CHECK(reader.read(state).empty());  // nothing new
  // A line being written is read once it is whole.
  std::ofstream(log.path, std::ios::app) << "[ 1300.0] NVRM: Xid (PCI:0000:3b:00): 95, pid=7";
  CHECK(reader.read(state).empty());
  std::ofstream(log.path, std::ios::app) << ", Uncontained\n";
  const auto fresh = reader.read(state);
  REQUIRE(fresh.size() == 1);
  CHECK(fresh[0].xid == 95);
  // A log that was rotated (now shorter) is read anew.
  { std::ofstream(log.path, std::ios::trunc) << "NVRM: Xid (PCI:0000:86:00): 48, DBE\n"; }
  const auto rotated = reader.read(state);
  REQUIRE(rotated.size() == 1);
  CHECK(rotated[0].xid == 48);
}
