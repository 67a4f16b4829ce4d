// The help of --codec and --level, written from the library's codec table (nubo::transfer::
// codecs()), so that a new codec or level range shows in every command without a word here.
#pragma once

#include <string>
#include <string_view>

namespace nubo_xfer {

// "zstd (default; auto with --target-rate), auto (per chunk, for speed), lz4, float (...) or
// none": `default_codec` first with `default_note`, the rest with their help.
std::string codec_option_help(std::string_view default_codec, std::string_view default_note);
// "codec level (...; zstd -7 to 22, default 3, negative: fast modes; lz4 1 to 12, default 1;
// ...; 0: the codec's default)".
std::string level_option_help();

}  // namespace nubo_xfer
