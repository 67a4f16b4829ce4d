// The protocol fuzz target as a plain test (g++, `make test`): valid message streams of every
// type and thousands of seeded mutations of them (flipped bytes, truncations, garbage, huge
// length fields), plus any files given on the command line (a corpus, or crashes to replay).
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "transfer/net/wire.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace tn = nubo::transfer::net;

namespace {

void run(const std::string& s) {
  LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
}

std::string to_string(const std::vector<std::byte>& b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

std::vector<std::string> seeds() {
  std::string s;
  auto add = [&](tn::MsgType t, const std::vector<std::byte>& p) {
    s += to_string(tn::frame(t, p));
  };
  tn::Hello h;
  add(tn::MsgType::hello, tn::encode_hello(h));
  add(tn::MsgType::auth, std::vector<std::byte>(32));
  add(tn::MsgType::begin, tn::encode_begin({4096, 2, "sub"}));
  nubo::transfer::format::EntryMeta e;
  e.path = "dir/file";
  e.size = 9000;
  for (const auto& b : tn::encode_entries({e, e})) add(tn::MsgType::entries, b);
  for (const auto& b : tn::encode_status({{1, false, {{0, 1}}}})) add(tn::MsgType::status, b);
  tn::ChunkMeta c{0, 1, nubo::transfer::ChunkCodec::none, 0, 8, 1, 8};
  auto m = tn::encode_chunk_meta(c);
  std::vector<std::byte> chunk(m.begin(), m.end());
  chunk.resize(chunk.size() + 8);
  add(tn::MsgType::chunk, chunk);
  tn::BundleMeta b;
  b.raw_size = 8;
  b.stored_size = 8;
  b.members = {{0, {}}, {1, {}}};
  auto bundle = tn::encode_bundle_head(b);
  bundle.resize(bundle.size() + 8);
  add(tn::MsgType::bundle, bundle);
  add(tn::MsgType::file_end, tn::encode_file_end({0, {}}));
  add(tn::MsgType::stream_end, tn::encode_u64(3));
  add(tn::MsgType::result, tn::encode_result({1, 2, 0, "ok"}));
  add(tn::MsgType::error, tn::encode_error({5, "bad"}));
  return {s};
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t runs = 0;
  for (int i = 1; i < argc; ++i) {
    std::ifstream f(argv[i], std::ios::binary);
    run({std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()});
    ++runs;
  }
  auto base = seeds();
  if (const char* corpus = std::getenv("NUBO_FUZZ_WRITE_SEEDS")) {
    for (std::size_t i = 0; i < base.size(); ++i)
      std::ofstream(std::string(corpus) + "/seed" + std::to_string(i), std::ios::binary) << base[i];
  }
  std::mt19937_64 rng(4242);
  for (const auto& seed : base) {
    run(seed);
    for (int m = 0; m < 5000; ++m) {
      auto s = seed;
      switch (rng() % 4) {
        case 0:
          for (int k = 0; k < 1 + static_cast<int>(rng() % 4); ++k)
            s[rng() % s.size()] ^= static_cast<char>(1 + rng() % 255);
          break;
        case 1:
          s.resize(rng() % s.size());
          break;
        case 2: {
          std::string junk(1 + rng() % 64, '\0');
          for (auto& c : junk) c = static_cast<char>(rng());
          s.insert(rng() % s.size(), junk);
          break;
        }
        default: {
          auto at = rng() % (s.size() - 4);
          for (int k = 0; k < 4; ++k) s[at + static_cast<std::size_t>(k)] = static_cast<char>(0xff);
        }
      }
      run(s);
      ++runs;
    }
  }
  std::cout << "protocol_fuzz_replay: " << runs << " inputs, no crash\n";
  return 0;
}
