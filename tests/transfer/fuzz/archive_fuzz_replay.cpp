// The fuzz target as a plain test, for builds without libFuzzer (g++, `make test`): it runs the
// target over valid archives of several shapes and over thousands of seeded mutations of them
// (flipped bytes, truncations, spliced garbage, rewritten length fields), plus any files given
// on the command line (a corpus directory's files, e.g. crashes found by the fuzzer).
#include <sys/stat.h>

#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "nubo/transfer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

namespace xfer = nubo::transfer;

std::string read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

void write_all(const std::string& path, const std::string& s) {
  std::ofstream(path, std::ios::binary) << s;
}

void run(const std::string& s) {
  LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
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
  std::size_t runs = 0;
  for (int i = 1; i < argc; ++i) {
    run(read_all(argv[i]));
    ++runs;
  }
  const char* tmp = std::getenv("TMPDIR");
  auto dir =
      std::string(tmp && *tmp ? tmp : "/tmp") + "/nubo-fuzz-replay-" + std::to_string(::getpid());
  auto base = seeds(dir);
  if (base.empty()) {
    std::cerr << "archive_fuzz_replay: could not make the seed archives\n";
    return 1;
  }
  // The seeds are written out too, as a starting corpus for the real fuzzer.
  if (const char* corpus = std::getenv("NUBO_FUZZ_WRITE_SEEDS")) {
    for (std::size_t i = 0; i < base.size(); ++i)
      write_all(std::string(corpus) + "/seed" + std::to_string(i), base[i]);
  }
  std::mt19937_64 rng(12345);
  for (const auto& seed : base) {
    run(seed);
    for (int m = 0; m < 700; ++m) {
      auto s = seed;
      switch (rng() % 5) {
        case 0:  // flipped bytes
          for (int k = 0; k < 1 + static_cast<int>(rng() % 4); ++k)
            s[rng() % s.size()] ^= static_cast<char>(1 + rng() % 255);
          break;
        case 1:  // truncated
          s.resize(rng() % s.size());
          break;
        case 2: {  // garbage spliced in
          auto at = rng() % s.size();
          std::string junk(1 + rng() % 64, '\0');
          for (auto& c : junk) c = static_cast<char>(rng());
          s.insert(at, junk);
          break;
        }
        case 3: {  // a 32-bit field somewhere set to a huge value
          auto at = rng() % (s.size() - 4);
          for (int k = 0; k < 4; ++k) s[at + static_cast<std::size_t>(k)] = static_cast<char>(0xff);
          break;
        }
        default:  // two archives glued together
          s += base[rng() % base.size()];
      }
      run(s);
      ++runs;
    }
  }
  std::system(("rm -rf '" + dir + "'").c_str());
  std::cout << "archive_fuzz_replay: " << runs << " inputs, no crash\n";
  return 0;
}
