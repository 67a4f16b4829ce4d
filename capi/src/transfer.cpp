// pack, unpack and verify through the C ABI: options, the progress callback and the summary.
#include <string>
#include <vector>

#include "generated/results.hpp"
#include "guard.hpp"
#include "nubo.h"
#include "nubo/transfer.hpp"
#include "sized_struct.hpp"
#include "text_out.hpp"
#include "transfer_convert.hpp"

namespace nubo::capi {

// nubo_codec and transfer::Codec are one numbering: the C value is the C++ one.
static_assert(NUBO_CODEC_AUTO == static_cast<int>(transfer::Codec::automatic) &&
              NUBO_CODEC_NONE == static_cast<int>(transfer::Codec::none) &&
              NUBO_CODEC_LZ4 == static_cast<int>(transfer::Codec::lz4) &&
              NUBO_CODEC_ZSTD == static_cast<int>(transfer::Codec::zstd) &&
              NUBO_CODEC_ZERO == static_cast<int>(transfer::Codec::zero) &&
              NUBO_CODEC_FLOAT == static_cast<int>(transfer::Codec::floats));

transfer::Codec to_codec(nubo_codec c) {
  const auto codec = static_cast<transfer::Codec>(static_cast<int>(c));
  const std::string_view name = transfer::codec_name(codec);
  if (name == "unknown") {
    throw Error(Errc::invalid_argument,
                "options->codec " + std::to_string(static_cast<int>(c)) + " is not a nubo_codec");
  }
  // A codec only ever recorded (zero) is refused with the list of those to choose, which
  // parse_codec knows.
  if (codec != transfer::Codec::automatic) {
    try {
      transfer::parse_codec(name);
    } catch (const Error& e) {
      throw Error(Errc::invalid_argument, "options->codec " + std::string(name) +
                                              " is not a codec to choose (" + e.what() + ")");
    }
  }
  return codec;
}

std::vector<std::string> to_strings(const char* const* items, size_t count, const char* what) {
  if (count > 0 && items == nullptr)
    throw Error(Errc::invalid_argument,
                std::string(what) + " is NULL with a count of " + std::to_string(count));
  std::vector<std::string> out;
  for (size_t i = 0; i < count; ++i) {
    if (items[i] == nullptr)
      throw Error(Errc::invalid_argument,
                  std::string(what) + "[" + std::to_string(i) + "] is NULL");
    out.emplace_back(items[i]);
  }
  return out;
}

transfer::ProgressFn wrap_progress(nubo_transfer_progress_callback callback, void* user) {
  if (callback == nullptr) return {};
  return [callback, user, name = std::string()](const transfer::Progress& p) mutable {
    name.assign(p.current_file);
    nubo_transfer_progress c{};
    copy_progress(p, name, c);
    return callback(&c, user) != 0;
  };
}

}  // namespace nubo::capi

namespace {

namespace xfer = nubo::transfer;
using nubo::Errc;
using nubo::Error;
using nubo::capi::to_codec;

nubo_transfer_pack_options default_pack() {
  nubo_transfer_pack_options o{};
  o.struct_size = sizeof o;
  o.codec = NUBO_CODEC_ZSTD;
  o.chunk_size = xfer::kDefaultChunkSize;
  o.memory_limit = xfer::kDefaultMemory;
  o.resume = 1;
  o.sync = 1;
  return o;
}

nubo_transfer_unpack_options default_unpack() {
  nubo_transfer_unpack_options o{};
  o.struct_size = sizeof o;
  o.memory_limit = xfer::kDefaultMemory;
  o.resume = 1;
  o.sync = 1;
  return o;
}

nubo_transfer_verify_options default_verify() {
  nubo_transfer_verify_options o{};
  o.struct_size = sizeof o;
  o.memory_limit = xfer::kDefaultMemory;
  return o;
}

// The C callback as a ProgressFn; the current file is copied so that it is NUL-terminated.
void write_summary(const xfer::Summary& s, nubo_transfer_summary* out) {
  if (out == nullptr) return;
  nubo::capi::write_sized(nubo::capi::to_nubo_transfer_summary(s), out, "summary",
                          "nubo_transfer_summary");
}

// The sources of a pack, checked.
std::vector<std::string> pack_sources(const char* const* sources, size_t source_count) {
  if (source_count == 0) throw Error(Errc::invalid_argument, "source_count is 0: nothing to pack");
  nubo::capi::require(sources, "sources");
  return nubo::capi::to_strings(sources, source_count, "sources");
}

// The C options of a pack (NULL: the defaults) as the C++ ones.
xfer::PackOptions pack_options(const nubo_transfer_pack_options* options) {
  auto o = default_pack();
  if (options)
    o = nubo::capi::read_sized(*options, o, "options", "nubo_transfer_pack_options_init()");
  xfer::PackOptions p;
  p.codec = to_codec(o.codec);
  p.level = o.level;
  p.chunk_size = o.chunk_size;
  p.threads = o.threads;
  p.memory_limit = o.memory_limit;
  p.target_rate = o.target_rate;
  p.resume = o.resume != 0;
  p.sync = o.sync != 0;
  p.exclude = nubo::capi::to_strings(o.exclude, o.exclude_count, "options->exclude");
  p.include = nubo::capi::to_strings(o.include, o.include_count, "options->include");
  p.progress = nubo::capi::wrap_progress(o.progress, o.progress_user);
  p.key_file = o.key_file ? o.key_file : "";
  p.keep_partial = o.keep_partial != 0;
  p.skip_unchanged = o.skip_unchanged != 0;
  return p;
}

}  // namespace

extern "C" {

NUBO_C_API nubo_status nubo_transfer_pack_options_init(nubo_transfer_pack_options* options,
                                                       size_t struct_size) {
  return nubo::capi::guard("nubo_transfer_pack_options_init", [&] {
    nubo::capi::require(options, "options");
    nubo::capi::init_sized(default_pack(), options, struct_size, "nubo_transfer_pack_options");
  });
}

NUBO_C_API nubo_status nubo_transfer_unpack_options_init(nubo_transfer_unpack_options* options,
                                                         size_t struct_size) {
  return nubo::capi::guard("nubo_transfer_unpack_options_init", [&] {
    nubo::capi::require(options, "options");
    nubo::capi::init_sized(default_unpack(), options, struct_size, "nubo_transfer_unpack_options");
  });
}

NUBO_C_API nubo_status nubo_transfer_verify_options_init(nubo_transfer_verify_options* options,
                                                         size_t struct_size) {
  return nubo::capi::guard("nubo_transfer_verify_options_init", [&] {
    nubo::capi::require(options, "options");
    nubo::capi::init_sized(default_verify(), options, struct_size, "nubo_transfer_verify_options");
  });
}

NUBO_C_API nubo_status nubo_transfer_pack(const char* const* sources, size_t source_count,
                                          const char* archive,
                                          const nubo_transfer_pack_options* options,
                                          nubo_transfer_summary* summary) {
  return nubo::capi::guard("nubo_transfer_pack", [&] {
    nubo::capi::require(archive, "archive");
    nubo::capi::check_out_size(summary, "summary", "nubo_transfer_summary");
    auto list = pack_sources(sources, source_count);
    write_summary(xfer::pack(list, archive, pack_options(options)), summary);
  });
}

NUBO_C_API nubo_status nubo_transfer_archive_difference(
    const char* archive, const char* const* sources, size_t source_count,
    const nubo_transfer_pack_options* options, char* buf, size_t capacity, size_t* needed) {
  return nubo::capi::guard("nubo_transfer_archive_difference", [&] {
    nubo::capi::require(archive, "archive");
    auto list = pack_sources(sources, source_count);
    nubo::capi::copy_text_out(xfer::archive_difference(archive, list, pack_options(options)),
                              "the difference", buf, capacity, needed);
  });
}

NUBO_C_API nubo_status nubo_transfer_unpack(const char* archive, const char* directory,
                                            const nubo_transfer_unpack_options* options,
                                            nubo_transfer_summary* summary) {
  return nubo::capi::guard("nubo_transfer_unpack", [&] {
    nubo::capi::require(archive, "archive");
    nubo::capi::require(directory, "directory");
    nubo::capi::check_out_size(summary, "summary", "nubo_transfer_summary");
    auto o = default_unpack();
    if (options)
      o = nubo::capi::read_sized(*options, o, "options", "nubo_transfer_unpack_options_init()");
    xfer::UnpackOptions u;
    u.threads = o.threads;
    u.memory_limit = o.memory_limit;
    u.resume = o.resume != 0;
    u.sync = o.sync != 0;
    u.preserve_special_modes = o.preserve_special_modes != 0;
    u.progress = nubo::capi::wrap_progress(o.progress, o.progress_user);
    u.key_file = o.key_file ? o.key_file : "";
    write_summary(xfer::unpack(archive, directory, u), summary);
  });
}

NUBO_C_API nubo_status nubo_transfer_verify(const char* archive,
                                            const nubo_transfer_verify_options* options,
                                            nubo_transfer_summary* summary) {
  return nubo::capi::guard("nubo_transfer_verify", [&] {
    nubo::capi::require(archive, "archive");
    nubo::capi::check_out_size(summary, "summary", "nubo_transfer_summary");
    auto o = default_verify();
    if (options)
      o = nubo::capi::read_sized(*options, o, "options", "nubo_transfer_verify_options_init()");
    xfer::VerifyOptions v;
    v.threads = o.threads;
    v.memory_limit = o.memory_limit;
    v.progress = nubo::capi::wrap_progress(o.progress, o.progress_user);
    v.key_file = o.key_file ? o.key_file : "";
    write_summary(xfer::verify(archive, v), summary);
  });
}

NUBO_C_API nubo_status nubo_transfer_codec_from_name(const char* name, nubo_codec* out) {
  return nubo::capi::guard("nubo_transfer_codec_from_name", [&] {
    nubo::capi::require(name, "name");
    *nubo::capi::require(out, "out") = static_cast<nubo_codec>(xfer::parse_codec(name));
  });
}

NUBO_C_API const char* nubo_transfer_codec_name(nubo_codec codec) {
  // codec_name's views are of string literals, so NUL-terminated.
  return xfer::codec_name(static_cast<xfer::Codec>(static_cast<int>(codec))).data();
}

NUBO_C_API nubo_status nubo_transfer_keygen(const char* path) {
  return nubo::capi::guard("nubo_transfer_keygen", [&] {
    nubo::capi::require(path, "path");
    xfer::keygen(path);
  });
}

}  // extern "C"
