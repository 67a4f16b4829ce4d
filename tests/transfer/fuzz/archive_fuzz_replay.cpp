// The fuzz target as a plain test (tests/support/fuzz_replay.hpp): valid archives of several
// shapes, plain and encrypted, as seeds.
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "fuzz_replay.hpp"
#include "nubo/transfer.hpp"

namespace {

namespace xfer = nubo::transfer;

std::string read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

void write_all(const std::string& path, const std::string& s) {
  std::ofstream(path, std::ios::binary) << s;
}

// A few small valid archives: the seeds every mutation starts from.
std::vector<std::string> seeds(const std::string& dir) {
  std::vector<std::string> out;
  std::string src = dir + "/src";
  std::string cmd = "rm -rf '" + dir + "' && mkdir -p '" + src + "/d' && printf 'hello' > '" + src +
                    "/a' && head -c 20000 /dev/zero > '" + src + "/z' && seq 1 3000 > '" + src +
                    "/d/t' && ln -s a '" + src + "/l'";
  if (std::system(cmd.c_str()) != 0) return out;
  for (auto codec : {xfer::Codec::zstd, xfer::Codec::lz4, xfer::Codec::none}) {
    auto archive = dir + "/seed.nubo";
    xfer::PackOptions o;
    o.codec = codec;
    o.chunk_size = 4096;
    o.threads = 1;
    o.sync = false;
    xfer::pack({src}, archive, o);
    out.push_back(read_all(archive));
  }
  // And one encrypted with the key the target reads every input with (fuzz_readers.hpp).
  write_all(dir + "/fuzz.key", std::string(64, 'a'));
  ::chmod((dir + "/fuzz.key").c_str(), 0600);
  xfer::PackOptions o;
  o.chunk_size = 4096;
  o.threads = 1;
  o.sync = false;
  o.key_file = dir + "/fuzz.key";
  xfer::pack({src}, dir + "/sealed.nubo", o);
  out.push_back(read_all(dir + "/sealed.nubo"));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const char* tmp = std::getenv("TMPDIR");
  auto dir =
      std::string(tmp && *tmp ? tmp : "/tmp") + "/nubo-fuzz-replay-" + std::to_string(::getpid());
  const auto base = seeds(dir);
  std::system(("rm -rf '" + dir + "'").c_str());
  if (base.empty()) {
    std::cerr << "archive_fuzz_replay: could not make the seed archives\n";
    return 1;
  }
  return nubo_test::replay_main(argc, argv, "archive_fuzz_replay", base, {.mutations = 700});
}
