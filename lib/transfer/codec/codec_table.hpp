// The codecs, one row each: every name, parse, level check and mapping between the public
// Codec and the archive's codec byte reads this table. A new codec is a row here, its value in
// the public enum (include/nubo/transfer.hpp, capi/nubo_transfer.h), and its compress and
// decompress in codec.cpp.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "nubo/transfer.hpp"
#include "transfer/codec/codec.hpp"

namespace nubo::transfer {

struct CodecRow {
  Codec id;                          // the public value (nubo_codec)
  std::optional<ChunkCodec> stored;  // the archive's codec byte; none for auto, which chooses
  std::string_view name;             // as users write it: --codec, JSON counters, codec_name()
  bool selectable = false;           // users may ask for it (zero is only ever recorded)
  // Levels a user may give; 0 always means default_level.
  int min_level = 0, max_level = 0, default_level = 0;
  std::string_view level_means;  // what a level is, when not the codec's own ("" : its own)
  std::string_view help;         // when to choose it, for tools' help ("" : its name says it)
};

std::span<const CodecRow> codec_rows();
// The row of a public value or an archive byte; nullptr for one no row has.
const CodecRow* find_codec(Codec c) noexcept;
const CodecRow* find_stored_codec(ChunkCodec c) noexcept;
// "auto, zstd, lz4, float or none": the codecs users may choose, for messages.
std::string selectable_codec_names();
// The level to use for `level` (0: the default); invalid_argument naming the range otherwise.
int checked_level(const CodecRow& row, int level);

}  // namespace nubo::transfer
