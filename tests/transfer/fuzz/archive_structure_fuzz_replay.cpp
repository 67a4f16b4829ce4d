// The structure-aware archive fuzz target as a plain test, for builds without libFuzzer (g++,
// `make test`): it runs the target over the files given on the command line (the committed
// corpus: programs the fuzzer found interesting, and those that once broke the reader), then
// over thousands of programs drawn from a fixed seed. With NUBO_FUZZ_WRITE_SEEDS, the drawn
// programs are written there first, as a starting corpus for the real fuzzer.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
  std::size_t runs = 0;
  for (int i = 1; i < argc; ++i) {
    std::ifstream f(argv[i], std::ios::binary);
    const std::string bytes{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    ++runs;
  }
  std::mt19937_64 rng(20261203);
  const char* seeds = std::getenv("NUBO_FUZZ_WRITE_SEEDS");
  for (int i = 0; i < 3000; ++i) {
    std::vector<std::uint8_t> program(8 + rng() % 120);
    for (auto& b : program) b = static_cast<std::uint8_t>(rng());
    if (seeds && i < 200) {
      std::ofstream(std::string(seeds) + "/program" + std::to_string(i), std::ios::binary)
          .write(reinterpret_cast<const char*>(program.data()),
                 static_cast<std::streamsize>(program.size()));
    }
    LLVMFuzzerTestOneInput(program.data(), program.size());
    ++runs;
  }
  std::cout << "archive_structure_fuzz_replay: " << runs << " programs, no crash\n";
  return 0;
}
