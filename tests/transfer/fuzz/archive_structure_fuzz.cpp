// The archive reader against archives whose checksums hold and whose numbers lie. The input is
// a program, not an archive: it picks a few files, directories and links, how they are bundled
// and compressed, whether the archive is encrypted, and then edits, at the values where
// arithmetic breaks (0, 1, 2^31, 2^32 - 1, 2^63, 2^64 - k, the chunk size and its neighbours,
// sums that wrap), the sizes and offsets of the entry records and bundle tables as written, and
// the fields and counts of the index as decoded. The archive is written through ArchiveWriter
// and its index re-encoded and sealed as a writer would, so every check a reader makes past
// the checksums is reached. Then every reader runs over it (fuzz_readers.hpp).
//
// Built as a libFuzzer target by the `fuzz` preset (a structure-aware fuzzer in the sense that
// libFuzzer mutates the program), replayed over generated programs and the committed corpus by
// archive_structure_fuzz_replay.cpp otherwise.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "fuzz_readers.hpp"
#include "transfer/archive/archive_writer.hpp"
#include "transfer/bytes.hpp"
#include "transfer/codec/codec.hpp"
#include "transfer/format/format.hpp"
#include "transfer/hash.hpp"
#include "transfer/keys/archive_cipher.hpp"

namespace {

namespace xfer = nubo::transfer;
namespace fmt = nubo::transfer::format;

constexpr std::uint32_t kChunk = 4096;

// The program: bytes read in order, and zeros once they run out (so that every input is one).
class Program {
 public:
  Program(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  std::uint8_t byte() { return at_ < size_ ? data_[at_++] : 0; }
  bool flag() { return byte() & 1; }
  std::size_t below(std::size_t n) { return n == 0 ? 0 : byte() % n; }
  std::uint64_t u64() {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = v << 8 | byte();
    return v;
  }
  bool done() const { return at_ >= size_; }

  // A value where arithmetic on `v` breaks, or a plain one.
  std::uint64_t edge(std::uint64_t v) {
    switch (below(16)) {
      case 0:
        return 0;
      case 1:
        return 1;
      case 2:
        return 2;
      case 3:
        return 1ull << 63;
      case 4:
        return ~0ull;
      case 5:
        return ~0ull - below(64);  // 2^64 - k: a sum with k wraps
      case 6:
        return 0xffffffffull;
      case 7:
        return 1ull << 31;
      case 8:
        return kChunk;
      case 9:
        return kChunk + 1;
      case 10:
        return kChunk - 1;
      case 11:
        return v + 1;
      case 12:
        return v - 1;
      case 13:
        return v * 2;
      case 14:
        return (1ull << 63) - 1;
      default:
        return u64();
    }
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t at_ = 0;
};

// Collects what ArchiveWriter writes.
class MemoryOutput : public xfer::ArchiveOutput {
 public:
  explicit MemoryOutput(std::vector<std::byte>& out) : out_(out) {}
  void write(xfer::Bytes a, xfer::Bytes b) override {
    xfer::append(out_, a);
    xfer::append(out_, b);
  }

 private:
  std::vector<std::byte>& out_;
};

struct Item {
  fmt::EntryMeta meta;
  std::vector<std::byte> content;
};

std::vector<Item> make_items(Program& p) {
  static constexpr std::uint64_t kSizes[] = {0, 1, 5, 100, 2000, 2048, 4095, 4096, 4097, 10000};
  std::vector<Item> items(1 + p.below(6));
  for (std::size_t i = 0; i < items.size(); ++i) {
    auto& it = items[i];
    it.meta.path = std::to_string(i);
    it.meta.path.insert(0, 1, 'e');  // not "e" + ...: GCC 12's false -Wrestrict (bug 105329)
    switch (p.below(4)) {
      case 0:
        it.meta.kind = fmt::EntryKind::directory;
        it.meta.mode = 0755;
        break;
      case 1:
        it.meta.kind = fmt::EntryKind::symlink;
        it.meta.link_target = "e0";
        break;
      default: {
        it.meta.mode = 0644;
        it.meta.size = kSizes[p.below(std::size(kSizes))];
        std::mt19937_64 rng(p.byte());
        it.content.resize(it.meta.size);
        // Half of them compressible, half not.
        const bool text = p.flag();
        for (auto& b : it.content) b = std::byte(text ? 'a' + rng() % 4 : rng());
      }
    }
  }
  return items;
}

// A payload as the writer stores it: compressed when that pays and the program asks.
xfer::ChunkCodec encode(Program& p, xfer::Bytes raw, std::vector<std::byte>& stored) {
  stored.assign(raw.begin(), raw.end());
  if (!p.flag()) return xfer::ChunkCodec::none;
  xfer::Compressor c;
  std::vector<std::byte> out;
  const auto n = c.compress({xfer::ChunkCodec::zstd, 1}, raw, out);
  if (n == 0) return xfer::ChunkCodec::none;
  stored.assign(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(n));
  return xfer::ChunkCodec::zstd;
}

// Writes the items, some bundled, with the sizes of some entry records and bundle tables edited
// on the way; returns the writer before its index (the caller writes that).
void write_records(Program& p, std::vector<Item>& items, xfer::ArchiveWriter& w) {
  std::vector<std::byte> stored;
  for (std::size_t i = 0; i < items.size();) {
    // A bundle of the next few items that fit one (as pack makes them), or a file on its own.
    const auto fits = [&](std::size_t k) { return fmt::bundled_in_archive(items[k].meta, kChunk); };
    const bool bundle = fits(i) && (items[i].meta.kind != fmt::EntryKind::file || p.flag());
    if (bundle) {
      const auto bytes = [&](std::size_t k) {
        return items[k].content.size() + fmt::encoded_entry_size(items[k].meta);
      };
      std::size_t end = i + 1, used = bytes(i);
      while (end < items.size() && fits(end) && used + bytes(end) <= kChunk && p.flag())
        used += bytes(end++);
      std::vector<std::byte> raw;
      std::vector<fmt::EntryMeta> metas;
      std::vector<xfer::Hash128> hashes;
      for (std::size_t k = i; k < end; ++k) {
        xfer::append(raw, items[k].content);
        hashes.push_back(xfer::hash128(items[k].content));
        metas.push_back(items[k].meta);
        if (items[k].meta.kind == fmt::EntryKind::file && p.below(4) == 0)
          metas.back().size = p.edge(metas.back().size);  // in the table and the index alike
      }
      auto table_offset = static_cast<std::uint32_t>(raw.size());
      if (p.below(8) == 0) table_offset = static_cast<std::uint32_t>(p.edge(table_offset));
      for (const auto& m : metas) xfer::append(raw, fmt::encode_entry(m));
      const auto codec = encode(p, raw, stored);
      w.add_bundle(metas, hashes, codec, 1, static_cast<std::uint32_t>(raw.size()), table_offset,
                   xfer::hash64(raw), stored);
      i = end;
      continue;
    }
    auto meta = items[i].meta;
    if (p.below(4) == 0) meta.size = p.edge(meta.size);  // the entry record's, and the index's
    const auto e = w.add_entry(meta);
    const xfer::Bytes content(items[i].content);
    for (std::uint64_t off = 0; off < content.size(); off += kChunk) {
      const auto piece = content.subspan(off, std::min<std::size_t>(kChunk, content.size() - off));
      const auto codec = encode(p, piece, stored);
      w.add_chunk(e, off, codec, 1, static_cast<std::uint32_t>(piece.size()), xfer::hash64(piece),
                  stored);
    }
    w.end_file(e, xfer::hash128(content));
    ++i;
  }
}

// Edits fields of the decoded index at their edges.
void edit_index(Program& p, fmt::Index& index) {
  for (std::size_t n = p.below(4); n > 0 && !p.done(); --n) {
    if (p.flag() && !index.entries.empty()) {
      auto& e = index.entries[p.below(index.entries.size())];
      switch (p.below(7)) {
        case 0:
          e.record_offset = p.edge(e.record_offset);
          break;
        case 1:
          e.first_chunk = p.edge(e.first_chunk);
          break;
        case 2:
          e.chunk_count = p.edge(e.chunk_count);
          break;
        case 3:
          e.meta.size = p.edge(e.meta.size);
          break;
        case 4:
          e.bundle_offset = static_cast<std::uint32_t>(p.edge(e.bundle_offset));
          break;
        case 5:
          e.bundled = !e.bundled;
          break;
        default:
          e.meta.mtime_ns =
              static_cast<std::int64_t>(p.edge(static_cast<std::uint64_t>(e.meta.mtime_ns)));
      }
    } else if (!index.chunks.empty()) {
      auto& c = index.chunks[p.below(index.chunks.size())];
      switch (p.below(5)) {
        case 0:
          c.record_offset = p.edge(c.record_offset);
          break;
        case 1:
          c.raw_size = static_cast<std::uint32_t>(p.edge(c.raw_size));
          break;
        case 2:
          c.stored_size = static_cast<std::uint32_t>(p.edge(c.stored_size));
          break;
        case 3:
          c.codec = static_cast<xfer::ChunkCodec>(p.below(xfer::kChunkCodecCount));
          break;
        default:
          c.bundle = !c.bundle;
      }
    }
  }
}

// The index record and the trailer, as ArchiveWriter::finish writes them (sealed when
// encrypted), with the counts and the declared size edited when the program says so.
void write_index(Program& p, fmt::Index index, std::uint64_t at,
                 const std::optional<xfer::ArchiveCipher>& cipher, std::vector<std::byte>& out) {
  edit_index(p, index);
  auto raw = fmt::encode_index(index);
  if (p.below(6) == 0) xfer::put_le<std::uint64_t>(raw.data(), p.edge(index.entries.size()));
  if (p.below(6) == 0) xfer::put_le<std::uint64_t>(raw.data() + 8, p.edge(index.chunks.size()));
  fmt::RecordHeader r;
  r.type = fmt::RecordType::index;
  r.raw_size = static_cast<std::uint32_t>(raw.size());
  r.hash = xfer::hash64(raw);
  std::vector<std::byte> payload;
  r.codec = encode(p, raw, payload);
  if (p.below(8) == 0) r.raw_size = static_cast<std::uint32_t>(p.edge(r.raw_size));
  if (cipher) {
    std::vector<std::byte> sealed;
    cipher->seal(r, at, payload, sealed);
    payload = std::move(sealed);
    r.hash = cipher->mask(r.hash, at);
  }
  r.stored_size = static_cast<std::uint32_t>(payload.size());
  r.payload_check = fmt::payload_check(payload);
  const auto head = fmt::encode_record_header(r);
  xfer::append(out, head);
  xfer::append(out, payload);
  const auto tail = fmt::encode_trailer({at, head.size() + payload.size()});
  xfer::append(out, tail);
}

std::vector<std::byte> build(Program& p) {
  auto items = make_items(p);
  std::vector<std::byte> bytes;
  std::optional<xfer::ArchiveCipher> cipher;
  std::optional<xfer::Encryption> encryption;
  if (p.below(4) == 0) {
    static const auto key = xfer::read_key_file(nubo_fuzz::key_file());
    encryption = xfer::KeySource::of(key).create();
    cipher = encryption->cipher;
  }
  auto w = xfer::ArchiveWriter::create(std::make_unique<MemoryOutput>(bytes), kChunk, encryption);
  write_records(p, items, w);
  w.flush();
  write_index(p, w.index(), w.offset(), cipher, bytes);
  return bytes;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Program p(data, size);
  std::vector<std::byte> archive;
  try {
    archive = build(p);
  } catch (const nubo::Error&) {
    return 0;  // a program the writer itself refuses
  }
  nubo_fuzz::MemFile file(archive.data(), archive.size());
  if (file.fd < 0) return 0;
  // One input in eight is unpacked too, into a folder of this process's.
  static const std::string unpack_to = [] {
    std::string leaf = "nubo-structure-fuzz-";
    leaf += std::to_string(::getpid());
    return (std::filesystem::temp_directory_path() / leaf).string();
  }();
  nubo_fuzz::read_everything(file.path, p.below(8) == 0 ? unpack_to : std::string());
  return 0;
}
