// The configuration nubo reads from files and the environment, under attack. The first byte of
// the input picks the reader, the rest is its text: the AWS CLI's config and credentials files,
// a topology file, a JSON document, NUBO_* variables (NAME=value lines), a key file, a token
// file. Each either reads it or throws nubo::Error; never crashes, hangs or reads without bound.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.hpp"
#include "common/text.hpp"
#include "device/sim/topology_file.hpp"
#include "mem_file.hpp"
#include "nubo/env.hpp"
#include "nubo/error.hpp"
#include "nubo/net.hpp"
#include "transfer/keys/archive_cipher.hpp"
#include "transfer/store/s3/config.hpp"

namespace {

// The variables the environment reader checks, set from the input for one call.
constexpr const char* kVariables[] = {
    "NUBO_LOG",        "NUBO_CUDA",        "CUDA_DEVICE_ORDER",
    "NUBO_RANK",       "NUBO_WORLD_SIZE",  "NUBO_LOCAL_RANK",
    "NUBO_RENDEZVOUS", "NUBO_TIMEOUT",     "NUBO_CHECKPOINT_DELAY",
    "NUBO_AUTOTUNE",   "NUBO_SHM_DISABLE", "OMP_NUM_THREADS"};

void environment(std::string_view text) {
  for (const char* v : kVariables) ::unsetenv(v);
  for (auto line : nubo::text::split(text, '\n')) {
    const auto eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string name(line.substr(0, eq));
    for (const char* v : kVariables)
      if (name == v) ::setenv(v, std::string(line.substr(eq + 1)).c_str(), 1);
  }
  try {
    nubo::check_environment();
  } catch (const nubo::Error&) {
  }
  for (const char* v : kVariables) ::unsetenv(v);
}

void aws_files(const nubo_test::MemFile& file) {
  for (const char* v : {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                        "AWS_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL"})
    ::unsetenv(v);
  ::setenv("AWS_CONFIG_FILE", file.path.c_str(), 1);
  ::setenv("AWS_SHARED_CREDENTIALS_FILE", file.path.c_str(), 1);
  try {
    nubo::s3::load_config();
  } catch (const nubo::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  const nubo_test::MemFile file(text.data(), text.size());
  try {
    switch (data[0] % 6) {
      case 0:
        aws_files(file);
        break;
      case 1:
        nubo::detail::parse_topology(text, "fuzz.topo");
        break;
      case 2:
        nubo::json::parse(text, "fuzz.json");
        break;
      case 3:
        environment(text);
        break;
      case 4:
        nubo::transfer::read_key_file(file.path);
        break;
      default:
        nubo::net::read_token_file(file.path);
    }
  } catch (const nubo::Error&) {
  }
  return 0;
}
