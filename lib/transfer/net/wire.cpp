#include "transfer/net/wire.hpp"

#include <cstring>

#include "nubo/error.hpp"
#include "transfer/paths.hpp"

namespace nubo::transfer::net {
namespace {

constexpr std::byte kMagic{'N'};
constexpr char kHelloMagic[8] = {'n', 'u', 'b', 'o', '-', 'n', 'e', 't'};

[[noreturn]] void bad(const std::string& what, const std::string& problem) {
  throw Error(Errc::corrupt, what + ": " + problem);
}

template <std::size_t N>
void take_array(ByteReader& r, std::array<std::byte, N>& out) {
  auto b = r.take(N);
  std::memcpy(out.data(), b.data(), N);
}

// The fields chunk and bundle messages share, in this order, each checked: a known codec, a raw
// size within min_raw..chunk_size, and a stored size that codec may have for it.
template <class Meta>
void read_payload_fields(ByteReader& r, Meta& m, std::uint32_t min_raw, std::uint32_t chunk_size,
                         const char* kind) {
  auto codec = r.get<std::uint8_t>();
  if (!valid_chunk_codec(codec)) bad(r.what(), "unknown codec " + std::to_string(codec));
  m.codec = static_cast<ChunkCodec>(codec);
  m.level = static_cast<std::int8_t>(r.get<std::uint8_t>());
  m.raw_size = r.get<std::uint32_t>();
  m.raw_hash = r.get<std::uint64_t>();
  m.stored_size = r.get<std::uint32_t>();
  if (m.raw_size < min_raw || m.raw_size > chunk_size)
    bad(r.what(), "raw size " + std::to_string(m.raw_size) + " outside " + std::to_string(min_raw) +
                      ".." + std::to_string(chunk_size));
  if (m.stored_size > max_stored_size(m.codec, m.raw_size))
    bad(r.what(), "stored size " + std::to_string(m.stored_size) + " exceeds what a " +
                      std::string(chunk_codec_name(m.codec)) + " " + kind + " of " +
                      std::to_string(m.raw_size) + " bytes may have");
  if (m.codec == ChunkCodec::none && m.stored_size != m.raw_size)
    bad(r.what(), std::string("a raw ") + kind + " whose stored size differs from its raw size");
}

void done(const ByteReader& r) {
  if (r.remaining() != 0)
    bad(r.what(), std::to_string(r.remaining()) + " unexpected bytes at the end");
}

}  // namespace

const char* msg_name(MsgType t) {
  switch (t) {
    case MsgType::hello:
      return "hello";
    case MsgType::challenge:
      return "challenge";
    case MsgType::auth:
      return "auth";
    case MsgType::welcome:
      return "welcome";
    case MsgType::error:
      return "error";
    case MsgType::begin:
      return "begin";
    case MsgType::entries:
      return "entries";
    case MsgType::entries_end:
      return "entries_end";
    case MsgType::status:
      return "status";
    case MsgType::status_end:
      return "status_end";
    case MsgType::chunk:
      return "chunk";
    case MsgType::file_end:
      return "file_end";
    case MsgType::stream_end:
      return "stream_end";
    case MsgType::stream_done:
      return "stream_done";
    case MsgType::finish:
      return "finish";
    case MsgType::result:
      return "result";
    case MsgType::bundle:
      return "bundle";
  }
  return "unknown";
}

std::array<std::byte, kFrameHeaderSize> encode_frame_header(MsgType type, std::uint32_t length) {
  std::array<std::byte, kFrameHeaderSize> h{};
  h[0] = kMagic;
  h[1] = static_cast<std::byte>(type);
  put_le<std::uint32_t>(h.data() + 4, length);
  return h;
}

FrameHeader decode_frame_header(Bytes in, std::uint32_t max_length) {
  if (in.size() != kFrameHeaderSize) bad("frame header", "wrong size");
  if (in[0] != kMagic) bad("frame header", "bad magic (not a nubo peer, or out of step)");
  auto type = std::to_integer<std::uint8_t>(in[1]);
  if (get_le<std::uint16_t>(in.data() + 2) != 0) bad("frame header", "reserved bits set");
  FrameHeader h;
  h.type = static_cast<MsgType>(type);
  if (std::string_view(msg_name(h.type)) == "unknown")
    bad("frame header", "unknown message type " + std::to_string(type));
  h.length = get_le<std::uint32_t>(in.data() + 4);
  if (h.length > max_length) {
    bad(std::string(msg_name(h.type)) + " message", "length " + std::to_string(h.length) +
                                                        " exceeds the limit of " +
                                                        std::to_string(max_length) + " bytes here");
  }
  return h;
}

std::uint32_t max_payload(MsgType type, std::uint32_t chunk_size) {
  switch (type) {
    case MsgType::chunk:
      return kChunkMetaSize + chunk_size;
    case MsgType::bundle:
      return kBundleHeadSize + kBundleMemberSize * kMaxBundleMembers + chunk_size;
    case MsgType::hello:
    case MsgType::challenge:
    case MsgType::auth:
    case MsgType::welcome:
      return kMaxHandshake;
    default:
      return kMaxControl;
  }
}

std::vector<std::byte> frame(MsgType type, Bytes payload) {
  auto h = encode_frame_header(type, static_cast<std::uint32_t>(payload.size()));
  std::vector<std::byte> out(h.begin(), h.end());
  append(out, payload);
  return out;
}

std::vector<std::byte> encode_hello(const Hello& h) {
  std::vector<std::byte> out;
  ByteWriter w(out);
  w.put_bytes(as_bytes(std::string_view(kHelloMagic, 8)));
  w.put<std::uint16_t>(h.version);
  w.put<std::uint8_t>(static_cast<std::uint8_t>(h.role));
  w.put<std::uint8_t>(0);
  w.put_bytes(h.nonce);
  if (h.role == Role::data) w.put_bytes(h.session);
  return out;
}

Hello decode_hello(Bytes in) {
  ByteReader r(in, "hello message");
  Hello h;
  if (std::memcmp(r.take(8).data(), kHelloMagic, 8) != 0) bad(r.what(), "not a nubo-net client");
  h.version = r.get<std::uint16_t>();
  if (h.version != kProtocolVersion)
    throw Error(Errc::unsupported, "hello message: protocol version " + std::to_string(h.version) +
                                       " (this side speaks " + std::to_string(kProtocolVersion) +
                                       ")");
  auto role = r.get<std::uint8_t>();
  if (role > 1) bad(r.what(), "unknown role " + std::to_string(role));
  h.role = static_cast<Role>(role);
  if (r.get<std::uint8_t>() != 0) bad(r.what(), "reserved byte set");
  take_array(r, h.nonce);
  if (h.role == Role::data) take_array(r, h.session);
  done(r);
  return h;
}

std::vector<std::byte> encode_challenge(const Challenge& c) {
  std::vector<std::byte> out;
  ByteWriter w(out);
  w.put<std::uint16_t>(c.version);
  w.put_bytes(c.nonce);
  return out;
}

Challenge decode_challenge(Bytes in) {
  ByteReader r(in, "challenge message");
  Challenge c;
  c.version = r.get<std::uint16_t>();
  if (c.version != kProtocolVersion)
    throw Error(Errc::unsupported,
                "the server speaks protocol version " + std::to_string(c.version));
  take_array(r, c.nonce);
  done(r);
  return c;
}

Mac decode_mac(Bytes in, const char* what) {
  ByteReader r(in, what);
  Mac m;
  take_array(r, m);
  done(r);
  return m;
}

std::vector<std::byte> encode_welcome(const Welcome& w) {
  std::vector<std::byte> out;
  ByteWriter bw(out);
  bw.put_bytes(w.mac);
  bw.put_bytes(w.session);
  return out;
}

Welcome decode_welcome(Bytes in) {
  ByteReader r(in, "welcome message");
  Welcome w;
  take_array(r, w.mac);
  take_array(r, w.session);
  done(r);
  return w;
}

std::vector<std::byte> encode_error(const ErrorMsg& e) {
  std::vector<std::byte> out;
  ByteWriter w(out);
  auto text = e.text.substr(0, kMaxErrorText);
  w.put<std::uint16_t>(e.code);
  w.put<std::uint16_t>(static_cast<std::uint16_t>(text.size()));
  w.put_bytes(as_bytes(text));
  return out;
}

ErrorMsg decode_error(Bytes in) {
  ByteReader r(in, "error message");
  ErrorMsg e;
  e.code = r.get<std::uint16_t>();
  auto n = r.get<std::uint16_t>();
  if (n > kMaxErrorText) bad(r.what(), "text longer than " + std::to_string(kMaxErrorText));
  e.text = r.take_string(n);
  done(r);
  return e;
}

std::vector<std::byte> encode_begin(const Begin& b) {
  std::vector<std::byte> out;
  ByteWriter w(out);
  w.put<std::uint32_t>(b.chunk_size);
  w.put<std::uint64_t>(b.entry_count);
  w.put<std::uint16_t>(static_cast<std::uint16_t>(b.subdir.size()));
  w.put_bytes(as_bytes(b.subdir));
  return out;
}

Begin decode_begin(Bytes in) {
  ByteReader r(in, "begin message");
  Begin b;
  b.chunk_size = r.get<std::uint32_t>();
  if (b.chunk_size < format::kMinChunkSize || b.chunk_size > format::kMaxChunkSize)
    bad(r.what(), "chunk size " + std::to_string(b.chunk_size) + " outside 4 KiB..64 MiB");
  b.entry_count = r.get<std::uint64_t>();
  if (b.entry_count > kMaxEntries)
    bad(r.what(), std::to_string(b.entry_count) + " entries exceed the limit of " +
                      std::to_string(kMaxEntries));
  auto n = r.get<std::uint16_t>();
  if (n > format::kMaxPathLength) bad(r.what(), "subdirectory longer than 4096 bytes");
  b.subdir = r.take_string(n);
  if (!b.subdir.empty()) {
    if (auto p = paths::problem(b.subdir); !p.empty())
      throw Error(Errc::corrupt,
                  "destination subdirectory '" + b.subdir + "': the path " + p + "; refused");
  }
  done(r);
  return b;
}

namespace {

// Items as control messages of at most kMaxControl bytes each: a u32 count, then the items, as
// many as fit. `largest(item)` bounds what write(item, writer) puts.
template <class T, class Largest, class Write>
std::vector<std::vector<std::byte>> in_batches(const std::vector<T>& items, Largest largest,
                                               Write write) {
  std::vector<std::vector<std::byte>> batches;
  std::vector<std::byte> body;
  std::uint32_t count = 0;
  auto flush = [&] {
    std::vector<std::byte> out;
    ByteWriter(out).put<std::uint32_t>(count);
    append(out, body);
    batches.push_back(std::move(out));
    body.clear();
    count = 0;
  };
  for (const auto& item : items) {
    if (body.size() + largest(item) + 4 > kMaxControl) flush();
    ByteWriter w(body);
    write(item, w);
    ++count;
  }
  if (count > 0) flush();
  return batches;
}

// A file with very many verified ranges is reported as its first ones only: what is left out
// is simply sent again, which is safe.
std::size_t reported_ranges(const FileStatus& s) {
  return std::min<std::size_t>(s.verified.size(), 4096);
}

}  // namespace

std::vector<std::vector<std::byte>> encode_entries(const std::vector<format::EntryMeta>& entries) {
  // One entry encodes to at most kMaxEntryPayload bytes, far below the batch limit.
  return in_batches(
      entries, [](const format::EntryMeta&) { return format::kMaxEntryPayload; },
      [](const format::EntryMeta& e, ByteWriter& w) { format::encode_entry_to(w, e); });
}

std::vector<format::EntryMeta> decode_entries(Bytes in) {
  ByteReader r(in, "entries message");
  auto count = r.get<std::uint32_t>();
  // Each entry takes some bytes, so the count can never ask for more than the payload holds.
  if (count > r.remaining()) bad(r.what(), "count " + std::to_string(count) + " exceeds its size");
  std::vector<format::EntryMeta> out;
  out.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i) out.push_back(format::decode_entry_from(r));
  done(r);
  return out;
}

std::vector<std::vector<std::byte>> encode_status(const std::vector<FileStatus>& status) {
  return in_batches(
      status, [](const FileStatus& s) { return 9 + 16 * reported_ranges(s); },
      [](const FileStatus& s, ByteWriter& w) {
        const std::size_t ranges = reported_ranges(s);
        w.put<std::uint32_t>(s.entry);
        w.put<std::uint8_t>(s.complete ? 1 : 0);
        w.put<std::uint32_t>(static_cast<std::uint32_t>(ranges));
        for (std::size_t i = 0; i < ranges; ++i) {
          w.put<std::uint64_t>(s.verified[i].first);
          w.put<std::uint64_t>(s.verified[i].second);
        }
      });
}

std::vector<FileStatus> decode_status(Bytes in, std::uint64_t entry_count) {
  ByteReader r(in, "status message");
  auto count = r.get<std::uint32_t>();
  if (count > r.remaining() / 9)
    bad(r.what(), "count " + std::to_string(count) + " exceeds its size");
  std::vector<FileStatus> out(count);
  for (auto& s : out) {
    s.entry = r.get<std::uint32_t>();
    if (s.entry >= entry_count) bad(r.what(), "entry " + std::to_string(s.entry) + " out of range");
    auto flag = r.get<std::uint8_t>();
    if (flag > 1) bad(r.what(), "bad completion flag");
    s.complete = flag == 1;
    auto ranges = r.get<std::uint32_t>();
    if (ranges > r.remaining() / 16) bad(r.what(), "range count exceeds its size");
    s.verified.resize(ranges);
    for (auto& [first, n] : s.verified) {
      first = r.get<std::uint64_t>();
      n = r.get<std::uint64_t>();
      if (n == 0 || first + n < first) bad(r.what(), "empty or overflowing range");
    }
  }
  done(r);
  return out;
}

std::array<std::byte, kChunkMetaSize> encode_chunk_meta(const ChunkMeta& c) {
  std::array<std::byte, kChunkMetaSize> out{};
  auto* p = out.data();
  put_le<std::uint32_t>(p, c.entry);
  put_le<std::uint64_t>(p + 4, c.index);
  p[12] = static_cast<std::byte>(c.codec);
  p[13] = static_cast<std::byte>(c.level);
  put_le<std::uint32_t>(p + 14, c.raw_size);
  put_le<std::uint64_t>(p + 18, c.raw_hash);
  put_le<std::uint32_t>(p + 26, c.stored_size);
  return out;
}

ChunkMeta decode_chunk_meta(Bytes in, std::uint32_t chunk_size) {
  ByteReader r(in, "chunk message");
  ChunkMeta c;
  c.entry = r.get<std::uint32_t>();
  c.index = r.get<std::uint64_t>();
  read_payload_fields(r, c, 1, chunk_size, "chunk");
  if (c.index > (std::uint64_t{1} << 40)) bad(r.what(), "chunk index out of range");
  return c;
}

std::vector<std::byte> encode_bundle_head(const BundleMeta& b) {
  std::vector<std::byte> out;
  out.reserve(kBundleHeadSize + kBundleMemberSize * b.members.size());
  ByteWriter w(out);
  w.put<std::uint32_t>(static_cast<std::uint32_t>(b.members.size()));
  w.put<std::uint8_t>(static_cast<std::uint8_t>(b.codec));
  w.put<std::uint8_t>(static_cast<std::uint8_t>(b.level));
  w.put<std::uint32_t>(b.raw_size);
  w.put<std::uint64_t>(b.raw_hash);
  w.put<std::uint32_t>(b.stored_size);
  for (const auto& m : b.members) {
    w.put<std::uint32_t>(m.entry);
    w.put_bytes(m.hash.bytes);
    w.put<std::uint32_t>(m.source);
  }
  return out;
}

Bytes decode_bundle(Bytes message, std::uint32_t chunk_size, BundleMeta& b) {
  ByteReader r(message, "bundle message");
  auto count = r.get<std::uint32_t>();
  if (count == 0 || count > kMaxBundleMembers)
    bad(r.what(),
        std::to_string(count) + " members, outside 1.." + std::to_string(kMaxBundleMembers));
  read_payload_fields(r, b, 0, chunk_size, "bundle payload");
  if (r.remaining() != std::uint64_t{kBundleMemberSize} * count + b.stored_size)
    bad(r.what(), "length " + std::to_string(message.size()) + " does not match " +
                      std::to_string(count) + " members and a payload of " +
                      std::to_string(b.stored_size) + " bytes");
  b.members.resize(count);
  for (auto& m : b.members) {
    m.entry = r.get<std::uint32_t>();
    take_array(r, m.hash.bytes);
    m.source = r.get<std::uint32_t>();
    // Sources come first in the walk, so references never form a cycle.
    if (m.source != kNoSource && m.source >= m.entry)
      bad(r.what(), "member " + std::to_string(m.entry) + " names source " +
                        std::to_string(m.source) + ", which is not an earlier entry");
  }
  return r.take(b.stored_size);
}

std::vector<std::byte> encode_file_end(const FileEnd& f) {
  std::vector<std::byte> out;
  ByteWriter w(out);
  w.put<std::uint32_t>(f.entry);
  w.put_bytes(f.hash.bytes);
  return out;
}

FileEnd decode_file_end(Bytes in) {
  ByteReader r(in, "file_end message");
  FileEnd f;
  f.entry = r.get<std::uint32_t>();
  take_array(r, f.hash.bytes);
  done(r);
  return f;
}

std::vector<std::byte> encode_u64(std::uint64_t v) {
  std::vector<std::byte> out;
  ByteWriter(out).put<std::uint64_t>(v);
  return out;
}

std::uint64_t decode_u64(Bytes in, const char* what) {
  ByteReader r(in, what);
  auto v = r.get<std::uint64_t>();
  done(r);
  return v;
}

std::vector<std::byte> encode_result(const Result& res) {
  std::vector<std::byte> out;
  ByteWriter w(out);
  auto text = res.text.substr(0, kMaxErrorText);
  w.put<std::uint64_t>(res.files);
  w.put<std::uint64_t>(res.bytes);
  w.put<std::uint32_t>(res.failed);
  w.put<std::uint16_t>(static_cast<std::uint16_t>(text.size()));
  w.put_bytes(as_bytes(text));
  return out;
}

Result decode_result(Bytes in) {
  ByteReader r(in, "result message");
  Result res;
  res.files = r.get<std::uint64_t>();
  res.bytes = r.get<std::uint64_t>();
  res.failed = r.get<std::uint32_t>();
  auto n = r.get<std::uint16_t>();
  if (n > kMaxErrorText) bad(r.what(), "text too long");
  res.text = r.take_string(n);
  done(r);
  return res;
}

}  // namespace nubo::transfer::net
