// pack, unpack and verify through the C ABI: options, the progress callback and the summary.
#include <string>
#include <vector>

#include "generated/options.hpp"
#include "generated/results.hpp"
#include "guard.hpp"
#include "nubo.h"
#include "nubo/transfer.hpp"
#include "records.hpp"
#include "sized_struct.hpp"
#include "text_out.hpp"
#include "transfer_convert.hpp"

namespace nubo::capi {

// nubo_codec and transfer::Codec are one numbering, which generated/results.hpp asserts.

namespace {
// The codec table as C records, made once (a static's initialisation is thread-safe).
const Records<nubo_codec_info>& codec_table() {
  static const std::vector<transfer::CodecInfo> table = transfer::codecs();
  static const Records<nubo_codec_info> records(table, to_nubo_codec_info);
  return records;
}
}  // namespace
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
  return [callback, user](const transfer::Progress& p) {
    Texts texts;  // the current file, NUL-terminated for the call
    const nubo_transfer_progress c = to_nubo_transfer_progress(p, texts);
    return callback(&c, user) != 0;
  };
}

}  // namespace nubo::capi

namespace {

namespace xfer = nubo::transfer;
using nubo::Errc;
using nubo::Error;
using nubo::capi::to_codec;

// The summary into the caller's struct, when it asked for one.
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

}  // namespace

extern "C" {

NUBO_C_API nubo_status nubo_transfer_pack_options_init(nubo_transfer_pack_options* options,
                                                       size_t struct_size) {
  return nubo::capi::guard("nubo_transfer_pack_options_init", [&] {
    nubo::capi::require(options, "options");
    nubo::capi::init_options(options, struct_size);
  });
}

NUBO_C_API nubo_status nubo_transfer_unpack_options_init(nubo_transfer_unpack_options* options,
                                                         size_t struct_size) {
  return nubo::capi::guard("nubo_transfer_unpack_options_init", [&] {
    nubo::capi::require(options, "options");
    nubo::capi::init_options(options, struct_size);
  });
}

NUBO_C_API nubo_status nubo_transfer_verify_options_init(nubo_transfer_verify_options* options,
                                                         size_t struct_size) {
  return nubo::capi::guard("nubo_transfer_verify_options_init", [&] {
    nubo::capi::require(options, "options");
    nubo::capi::init_options(options, struct_size);
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
    write_summary(xfer::pack(list, archive, nubo::capi::read_options(options)), summary);
  });
}

NUBO_C_API nubo_status nubo_transfer_archive_difference(
    const char* archive, const char* const* sources, size_t source_count,
    const nubo_transfer_pack_options* options, char* buf, size_t capacity, size_t* needed) {
  return nubo::capi::guard("nubo_transfer_archive_difference", [&] {
    nubo::capi::require(archive, "archive");
    auto list = pack_sources(sources, source_count);
    nubo::capi::copy_text_out(
        xfer::archive_difference(archive, list, nubo::capi::read_options(options)),
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
    write_summary(xfer::unpack(archive, directory, nubo::capi::read_options(options)), summary);
  });
}

NUBO_C_API nubo_status nubo_transfer_verify(const char* archive,
                                            const nubo_transfer_verify_options* options,
                                            nubo_transfer_summary* summary) {
  return nubo::capi::guard("nubo_transfer_verify", [&] {
    nubo::capi::require(archive, "archive");
    nubo::capi::check_out_size(summary, "summary", "nubo_transfer_summary");
    write_summary(xfer::verify(archive, nubo::capi::read_options(options)), summary);
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

NUBO_C_API size_t nubo_transfer_codec_count(void) {
  return nubo::capi::codec_table().size();
}

NUBO_C_API nubo_status nubo_transfer_codec_info(size_t index, nubo_codec_info* out) {
  return nubo::capi::guard("nubo_transfer_codec_info", [&] {
    nubo::capi::codec_table().read(index, out, "the codec table", "codecs", "nubo_codec_info");
  });
}

NUBO_C_API nubo_status nubo_transfer_keygen(const char* path) {
  return nubo::capi::guard("nubo_transfer_keygen", [&] {
    nubo::capi::require(path, "path");
    xfer::keygen(path);
  });
}

}  // extern "C"
