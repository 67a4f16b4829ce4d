// A fuzz target's replay as a plain test, for builds without libFuzzer (g++, `make test`): the
// target (LLVMFuzzerTestOneInput, linked beside) runs over the files given on the command line
// (the committed corpus, crashes the fuzzer found), over the seeds, and over seeded mutations of
// each: flipped bytes, truncations, spliced garbage, a 32-bit field set to all ones, a line
// repeated, a digit turned into a number at an edge, the body repeated, and the target's own
// pieces (tags, keywords) spliced in. With NUBO_FUZZ_WRITE_SEEDS the seeds are written there
// first, as the real fuzzer's starting corpus.
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

struct ReplayOptions {
  int mutations = 600;  // of each seed
  std::uint64_t seed = 12345;
  std::size_t keep = 0;             // leading bytes no mutation changes (a selector byte)
  std::vector<std::string> pieces;  // spliced in by a mutation of their own
};

inline void fuzz_once(const std::string& s) {
  LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
}

inline std::string mutated(std::string s, const ReplayOptions& o, std::mt19937_64& rng) {
  const std::size_t keep = std::min(o.keep, s.size());
  if (s.size() == keep) return s + std::string(1 + rng() % 64, static_cast<char>(rng()));
  const auto at = [&] { return keep + rng() % (s.size() - keep); };
  switch (rng() % (o.pieces.empty() ? 7 : 8)) {
    case 0:  // flipped bytes
      for (int k = 0; k < 1 + static_cast<int>(rng() % 4); ++k)
        s[at()] ^= static_cast<char>(1 + rng() % 255);
      break;
    case 1:  // truncated
      s.resize(at());
      break;
    case 2: {  // garbage spliced in
      std::string junk(1 + rng() % 64, '\0');
      for (auto& c : junk) c = static_cast<char>(rng());
      s.insert(at(), junk);
      break;
    }
    case 3: {  // a 32-bit field somewhere set to a huge value
      const auto from = at();
      for (std::size_t k = from; k < std::min(from + 4, s.size()); ++k) s[k] = '\xff';
      break;
    }
    case 4: {  // a line repeated (a duplicate key or row)
      const auto from = s.rfind('\n', at());
      const auto start = from == std::string::npos || from < keep ? keep : from + 1;
      const auto end = s.find('\n', start);
      s.insert(start,
               s.substr(start, end == std::string::npos ? std::string::npos : end - start + 1));
      break;
    }
    case 5: {  // a digit turned into a number at an edge
      static const char* kEdges[] = {"18446744073709551616", "-1",         "1e400", "nan", "0",
                                     "9223372036854775807",  "4294967296", "-0"};
      const auto digit = s.find_first_of("0123456789", at());
      if (digit != std::string::npos) s.replace(digit, 1, kEdges[rng() % std::size(kEdges)]);
      break;
    }
    case 6:  // the body repeated (two documents, two archives glued)
      s += s.substr(keep);
      break;
    default:  // one of the target's pieces spliced in
      s.insert(at(), o.pieces[rng() % o.pieces.size()]);
  }
  return s;
}

inline int replay_main(int argc, char** argv, const char* name,
                       const std::vector<std::string>& seeds, const ReplayOptions& o = {}) {
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
  std::mt19937_64 rng(o.seed);
  for (const auto& seed : seeds) {
    fuzz_once(seed);
    ++runs;
    for (int m = 0; m < o.mutations; ++m, ++runs) fuzz_once(mutated(seed, o, rng));
  }
  std::cout << name << ": " << runs << " inputs, no crash\n";
  return 0;
}

}  // namespace nubo_test
