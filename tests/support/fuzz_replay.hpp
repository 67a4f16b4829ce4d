// A text fuzz target's replay as a plain test, for builds without libFuzzer (g++, `make test`):
// the target (LLVMFuzzerTestOneInput, linked beside) runs over the files given on the command
// line (the committed corpus, crashes the fuzzer found), over the seeds, and over seeded
// mutations of each: flipped bytes, truncations, spliced garbage, a line repeated, a digit
// turned into a huge number. With NUBO_FUZZ_WRITE_SEEDS the seeds are written there first, as
// the real fuzzer's starting corpus.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace nubo_test {

inline void fuzz_once(const std::string& s) {
  LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
}

inline std::string mutated(std::string s, std::mt19937_64& rng) {
  if (s.empty()) return std::string(1 + rng() % 64, static_cast<char>(rng()));
  switch (rng() % 5) {
    case 0:  // flipped bytes
      for (int k = 0; k < 1 + static_cast<int>(rng() % 4); ++k)
        s[rng() % s.size()] ^= static_cast<char>(1 + rng() % 255);
      break;
    case 1:  // truncated
      s.resize(rng() % s.size());
      break;
    case 2: {  // garbage spliced in
      std::string junk(1 + rng() % 32, '\0');
      for (auto& c : junk) c = static_cast<char>(rng());
      s.insert(rng() % s.size(), junk);
      break;
    }
    case 3: {  // a line repeated (a duplicate key or row)
      const auto at = s.rfind('\n', rng() % s.size());
      const auto from = at == std::string::npos ? 0 : at + 1;
      const auto to = s.find('\n', from);
      const auto line = s.substr(from, to == std::string::npos ? std::string::npos : to - from + 1);
      s.insert(from, line);
      break;
    }
    default: {  // a digit turned into a number at the edge
      const auto at = s.find_first_of("0123456789", rng() % s.size());
      static const char* kEdges[] = {"18446744073709551616", "-1",         "1e400", "nan", "0",
                                     "9223372036854775807",  "4294967296", "-0"};
      if (at != std::string::npos) s.replace(at, 1, kEdges[rng() % std::size(kEdges)]);
    }
  }
  return s;
}

inline int replay_main(int argc, char** argv, const char* name,
                       const std::vector<std::string>& seeds, int mutations = 600) {
  std::size_t runs = 0;
  for (int i = 1; i < argc; ++i) {
    std::ifstream f(argv[i], std::ios::binary);
    fuzz_once({std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()});
    ++runs;
  }
  if (const char* dir = std::getenv("NUBO_FUZZ_WRITE_SEEDS")) {
    for (std::size_t i = 0; i < seeds.size(); ++i)
      std::ofstream(std::string(dir) + "/seed" + std::to_string(i), std::ios::binary) << seeds[i];
  }
  std::mt19937_64 rng(12345);
  for (const auto& seed : seeds) {
    fuzz_once(seed);
    ++runs;
    for (int m = 0; m < mutations; ++m, ++runs) fuzz_once(mutated(seed, rng));
  }
  std::cout << name << ": " << runs << " inputs, no crash\n";
  return 0;
}

}  // namespace nubo_test
