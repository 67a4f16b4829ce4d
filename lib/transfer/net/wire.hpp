// The wire protocol's messages (docs/protocol.md is the specification): an 8-byte frame header,
//   'N' | type (u8) | reserved u16 = 0 | payload length (u32, little-endian)
// then the payload. This file only encodes and decodes; it does no I/O. Every decoder checks
// every field against the limits below and throws Error(corrupt) naming the message and the
// problem, so a malformed message closes its connection with a reason and never makes the
// receiver allocate more than the limit for that message type allows.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "common/crypto.hpp"
#include "transfer/bytes.hpp"
#include "transfer/codec/codec.hpp"
#include "transfer/format/format.hpp"
#include "transfer/hash.hpp"
#include "transfer/pipeline/chunk_source.hpp"

namespace nubo::transfer::net {

constexpr std::uint16_t kProtocolVersion = 2;
constexpr std::size_t kFrameHeaderSize = 8;
constexpr std::size_t kNonceSize = 32;
constexpr std::size_t kMacSize = 32;
constexpr std::size_t kSessionIdSize = 16;

// Limits. Before authentication only handshake messages of their exact sizes are accepted, so
// an unauthenticated peer can make the server hold at most kMaxHandshake bytes.
constexpr std::uint32_t kMaxHandshake = 64;
constexpr std::uint32_t kMaxControl = 1 << 20;           // entries, status, errors
constexpr std::uint32_t kChunkMetaSize = 30;             // a chunk message before its payload
constexpr std::uint32_t kBundleHeadSize = 22;            // a bundle message before its members
constexpr std::uint32_t kBundleMemberSize = 24;          // entry + XXH3-128 + source
constexpr std::uint32_t kMaxBundleMembers = 8192;        // files in one bundle
constexpr std::uint64_t kMaxEntries = 10'000'000;        // entries in one send
constexpr std::uint64_t kMaxManifestBytes = 1ull << 30;  // their encoded size, all together
constexpr std::size_t kMaxErrorText = 1024;

enum class MsgType : std::uint8_t {
  hello = 1,         // c->s: version, role, client nonce [, session id]
  challenge = 2,     // s->c: server nonce
  auth = 3,          // c->s: HMAC proving the token
  welcome = 4,       // s->c: HMAC proving the server's token [, session id]
  error = 5,         // either way: a code and a reason; the connection closes after it
  begin = 10,        // c->s control: chunk size, entry count, subdir
  entries = 11,      // c->s control: a batch of entries
  entries_end = 12,  // c->s control: the manifest is complete
  status = 13,       // s->c control: what the receiver already has, per file
  status_end = 14,   // s->c control: every file was answered
  chunk = 20,        // c->s data: one compressed chunk
  file_end = 21,     // c->s data: a file's whole hash
  stream_end = 22,   // c->s data: no more on this stream
  stream_done = 23,  // s->c data: everything on this stream was processed
  finish = 24,       // c->s control: every stream is done
  result = 25,       // s->c control: the outcome
  bundle = 26,       // c->s data: whole small files, compressed together
};
const char* msg_name(MsgType t);

struct FrameHeader {
  MsgType type = MsgType::error;
  std::uint32_t length = 0;
};
std::array<std::byte, kFrameHeaderSize> encode_frame_header(MsgType type, std::uint32_t length);
// Checks the magic, the reserved bits, that the type is known, and that the length is at most
// `max_length` (what the reader is prepared to accept in its current state).
FrameHeader decode_frame_header(Bytes in, std::uint32_t max_length);
// The largest payload a message of `type` may have once authenticated, for a session whose
// chunks are at most `chunk_size` bytes.
std::uint32_t max_payload(MsgType type, std::uint32_t chunk_size);

// A whole message: header + payload.
std::vector<std::byte> frame(MsgType type, Bytes payload);

enum class Role : std::uint8_t { control = 0, data = 1 };

struct Hello {
  std::uint16_t version = kProtocolVersion;
  Role role = Role::control;
  std::array<std::byte, kNonceSize> nonce{};
  std::array<std::byte, kSessionIdSize> session{};  // data streams: the session they join
};
std::vector<std::byte> encode_hello(const Hello& h);
Hello decode_hello(Bytes in);

struct Challenge {
  std::uint16_t version = kProtocolVersion;
  std::array<std::byte, kNonceSize> nonce{};
};
std::vector<std::byte> encode_challenge(const Challenge& c);
Challenge decode_challenge(Bytes in);

using Mac = crypto::Mac;
static_assert(sizeof(Mac) == kMacSize);
Mac decode_mac(Bytes in, const char* what);

struct Welcome {
  Mac mac{};
  std::array<std::byte, kSessionIdSize> session{};
};
std::vector<std::byte> encode_welcome(const Welcome& w);
Welcome decode_welcome(Bytes in);

struct ErrorMsg {
  std::uint16_t code = 0;  // a nubo::Errc
  std::string text;
};
std::vector<std::byte> encode_error(const ErrorMsg& e);
ErrorMsg decode_error(Bytes in);

struct Begin {
  std::uint32_t chunk_size = 0;
  std::uint64_t entry_count = 0;
  std::string subdir;  // "" or a relative path below DEST
};
std::vector<std::byte> encode_begin(const Begin& b);
Begin decode_begin(Bytes in);

// Entries in batches whose encoding stays under kMaxControl.
std::vector<std::vector<std::byte>> encode_entries(const std::vector<format::EntryMeta>& entries);
std::vector<format::EntryMeta> decode_entries(Bytes in);

// Per file, what the receiver has: the file complete (skip), or these chunk ranges verified.
struct FileStatus {
  std::uint32_t entry = 0;
  bool complete = false;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> verified;  // [first, first + count)
};
std::vector<std::vector<std::byte>> encode_status(const std::vector<FileStatus>& status);
// `entry_count` and `chunks_of` bound every index and range the receiver may name.
std::vector<FileStatus> decode_status(Bytes in, std::uint64_t entry_count);

struct ChunkMeta {
  std::uint32_t entry = 0;
  std::uint64_t index = 0;
  ChunkCodec codec = ChunkCodec::none;
  std::int8_t level = 0;
  std::uint32_t raw_size = 0;
  std::uint64_t raw_hash = 0;
  std::uint32_t stored_size = 0;  // the payload after the meta
};
std::array<std::byte, kChunkMetaSize> encode_chunk_meta(const ChunkMeta& c);
// Checks the codec and that the payload fits the codec and `chunk_size`; `payload_size` is the
// message's length minus the meta.
ChunkMeta decode_chunk_meta(Bytes in, std::uint32_t chunk_size);

// A bundle: several whole files of at most one chunk each, concatenated in member order and
// compressed together (small files compress far better side by side than one by one). Each
// member's size is its manifest size. A member with a source has the content of that earlier
// file of the send (an identical file, sent once) and none in the payload; the sizes of the
// others add up to the raw size.
// A bundle's members are made by the source (transfer/pipeline/chunk_source.hpp).
using transfer::BundleMember;
using transfer::kNoSource;
struct BundleMeta {
  ChunkCodec codec = ChunkCodec::none;
  std::int8_t level = 0;
  std::uint32_t raw_size = 0;  // 0 .. chunk size (a bundle of empty files is empty)
  std::uint64_t raw_hash = 0;  // XXH3-64 of the raw bytes
  std::uint32_t stored_size = 0;
  std::vector<BundleMember> members;
};
// The message up to its payload: the head and the member table.
std::vector<std::byte> encode_bundle_head(const BundleMeta& b);
// Decodes the head and the member table of a whole bundle message and checks them against
// `chunk_size` and the message's length; returns the payload, which follows them.
Bytes decode_bundle(Bytes message, std::uint32_t chunk_size, BundleMeta& out);

struct FileEnd {
  std::uint32_t entry = 0;
  Hash128 hash;
};
std::vector<std::byte> encode_file_end(const FileEnd& f);
FileEnd decode_file_end(Bytes in);

std::vector<std::byte> encode_u64(std::uint64_t v);  // stream_end, stream_done
std::uint64_t decode_u64(Bytes in, const char* what);

struct Result {
  std::uint64_t files = 0;   // renamed into place this time
  std::uint64_t bytes = 0;   // logical bytes written this time
  std::uint32_t failed = 0;  // files that did not verify
  std::string text;          // the first failure
};
std::vector<std::byte> encode_result(const Result& r);
Result decode_result(Bytes in);

}  // namespace nubo::transfer::net
