#include "transfer/codec/codec_table.hpp"

#include <array>

#include "common/text.hpp"
#include "nubo/error.hpp"

namespace nubo::transfer {
namespace {

// In the order users are offered them; the levels are zstd's and lz4's own (zstd's negative
// levels are its fast modes; lz4 1 is its fast mode, 2 to 12 HC).
constexpr std::array<CodecRow, 6> kRows{{
    {Codec::automatic, std::nullopt, "auto", true, 1, 19, 12, "the highest zstd level it may use",
     "per chunk, for speed"},
    {Codec::zstd, ChunkCodec::zstd, "zstd", true, -7, 22, 3, "", ""},
    {Codec::lz4, ChunkCodec::lz4, "lz4", true, 1, 12, 1, "", ""},
    {Codec::floats, ChunkCodec::floats, "float", true, -7, 22, 3, "zstd's, over byte planes",
     "zstd over the byte planes of bf16/fp16/fp32 tensors"},
    {Codec::none, ChunkCodec::none, "none", true, 0, 0, 0, "", ""},
    {Codec::zero, ChunkCodec::zero, "zero", false, 0, 0, 0, "", ""},
}};

}  // namespace

std::span<const CodecRow> codec_rows() {
  return kRows;
}

const CodecRow* find_codec(Codec c) noexcept {
  for (const auto& row : kRows)
    if (row.id == c) return &row;
  return nullptr;
}

const CodecRow* find_stored_codec(ChunkCodec c) noexcept {
  for (const auto& row : kRows)
    if (row.stored == c) return &row;
  return nullptr;
}

std::string selectable_codec_names() {
  std::string out;
  std::size_t left = 0;
  for (const auto& row : kRows) left += row.selectable ? 1 : 0;
  for (const auto& row : kRows) {
    if (!row.selectable) continue;
    out += row.name;
    --left;
    out += left > 1 ? ", " : left == 1 ? " or " : "";
  }
  return out;
}

std::string_view codec_name(Codec c) noexcept {
  const CodecRow* row = find_codec(c);
  return row ? row->name : "unknown";
}

Codec parse_codec(std::string_view name) {
  const auto n = text::lower(text::trim(name));
  for (const auto& row : kRows)
    if (row.selectable && row.name == n) return row.id;
  throw Error(Errc::invalid_argument,
              "codec '" + std::string(name) + "' is not known: use " + selectable_codec_names());
}

std::vector<CodecInfo> codecs() {
  std::vector<CodecInfo> out;
  for (const auto& row : kRows) {
    if (!row.selectable) continue;
    out.push_back({row.id, row.name, row.min_level, row.max_level, row.default_level,
                   row.level_means, row.help});
  }
  return out;
}

int checked_level(const CodecRow& row, int level) {
  if (level == 0) return row.default_level;
  if (row.min_level == 0 && row.max_level == 0) {
    throw Error(Errc::invalid_argument, "level " + std::to_string(level) + " given for codec " +
                                            std::string(row.name) + ", which takes none");
  }
  if (level < row.min_level || level > row.max_level) {
    throw Error(Errc::invalid_argument,
                std::string(row.name) + " level " + std::to_string(level) + " is out of range" +
                    (row.level_means.empty() ? "" : " (" + std::string(row.level_means) + ")") +
                    ": use " + std::to_string(row.min_level) + " to " +
                    std::to_string(row.max_level) + ", or 0 for " +
                    std::to_string(row.default_level));
  }
  return level;
}

}  // namespace nubo::transfer
