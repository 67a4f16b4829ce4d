// The protocol fuzz target as a plain test (tests/support/fuzz_replay.hpp): a valid message
// stream with every type as its seed.
#include <string>
#include <vector>

#include "fuzz_replay.hpp"
#include "transfer/net/wire.hpp"

namespace tn = nubo::transfer::net;

namespace {

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
  return nubo_test::replay_main(argc, argv, "protocol_fuzz_replay", seeds(),
                                {.mutations = 5000, .seed = 4242});
}
