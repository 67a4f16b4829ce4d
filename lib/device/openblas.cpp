#include "device/openblas.hpp"

#include <dlfcn.h>

#include "common/text.hpp"
#include "nubo/error.hpp"

namespace nubo::detail {
namespace {

// The runtime name first (the Debian alternatives link), then the file found at build time.
constexpr const char* kCandidates[] = {"libopenblas.so.0", NUBO_OPENBLAS_LIBRARY};

OpenBlas load() {
  void* handle = nullptr;
  std::string tried;
  for (const char* name : kCandidates) {
    if ((handle = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
    const char* why = dlerror();
    tried += std::string(tried.empty() ? "" : "; ") + (why ? why : name);
  }
  if (!handle)
    throw Error(Errc::unavailable,
                "OpenBLAS, which the CPU backend multiplies matrices with, cannot be loaded (" +
                    tried + "): install libopenblas0 (Debian, Ubuntu) or openblas");
  OpenBlas b;
  b.sgemm = reinterpret_cast<decltype(&cblas_sgemm)>(dlsym(handle, "cblas_sgemm"));
  b.sbgemm = reinterpret_cast<decltype(&cblas_sbgemm)>(dlsym(handle, "cblas_sbgemm"));
  auto get_config = reinterpret_cast<char* (*)()>(dlsym(handle, "openblas_get_config"));
  if (!b.sgemm || !get_config)
    throw Error(Errc::unavailable,
                "the OpenBLAS library loaded lacks cblas_sgemm or openblas_get_config: "
                "install libopenblas0 (Debian, Ubuntu) or openblas");
  const char* config = get_config();
  b.config = config ? std::string(text::trim(config)) : "OpenBLAS";
  return b;  // the handle stays open for the life of the process
}

}  // namespace

const OpenBlas& openblas() {
  // A failed load throws out of the initialisation, so the next call tries again.
  static const OpenBlas blas = load();
  return blas;
}

std::string openblas_description() {
  try {
    return openblas().config;
  } catch (const Error& e) {
    return e.what();
  }
}

}  // namespace nubo::detail
