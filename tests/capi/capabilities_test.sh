#!/bin/sh
# An application that only discovers devices: nubo added with add_subdirectory and every
# NUBO_WITH_* off. Its libraries link none of OpenSSL, libcurl, zstd, lz4, zlib, Gloo or hiredis;
# the C ABI keeps every symbol, the devices work, and each entry point of a capability left out
# answers NUBO_ERR_UNSUPPORTED naming its option, from C and from the Python package alike.
#   capabilities_test.sh NUBO_SOURCE_DIR WORKDIR CMAKE PYTHON
set -eu
source_dir=$1 work=$2 cmake=$3 python=$4
rm -rf "$work"
mkdir -p "$work/app"
cat > "$work/app/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.24)
project(devices_only LANGUAGES C CXX)
foreach(capability PARALLEL TRANSFER NET COST TRAIN)
  set(NUBO_WITH_\${capability} OFF CACHE BOOL "")
endforeach()
add_subdirectory("$source_dir" nubo)
add_executable(app app.c)
target_link_libraries(app PRIVATE nubo::c)
CMAKE
cat > "$work/app/app.c" <<'C'
#include <stdio.h>
#include <string.h>

#include "nubo.h"

#define CHECK(c)                                                                          \
  do {                                                                                    \
    if (!(c)) {                                                                           \
      fprintf(stderr, "app.c:%d: %s (last error: %s)\n", __LINE__, #c, nubo_last_error()); \
      return 1;                                                                           \
    }                                                                                     \
  } while (0)

static int says(const char* function, const char* option) {
  return strstr(nubo_last_error(), function) != NULL && strstr(nubo_last_error(), option) != NULL;
}

int main(void) {
  nubo_device_discover_options options;
  nubo_device_report* report = NULL;
  CHECK(nubo_device_discover_options_init(&options, sizeof options) == NUBO_OK);
  options.sim_devices = "2xA100-SXM4-80GB";
  options.probe_cuda = 0;
  CHECK(nubo_device_discover(&options, &report) == NUBO_OK);
  CHECK(nubo_device_report_device_count(report) == 2);
  nubo_device_report_free(report);
  uint64_t bytes = 0;
  CHECK(nubo_units_parse_bytes("4M", "size", &bytes) == NUBO_OK && bytes == 4u << 20);

  const char* sources[] = {"."};
  CHECK(nubo_transfer_pack(sources, 1, "x.nubo", NULL, NULL) == NUBO_ERR_UNSUPPORTED);
  CHECK(says("nubo_transfer_pack", "NUBO_WITH_TRANSFER=OFF"));
  nubo_team* team = NULL;
  CHECK(nubo_team_create_host(2, NULL, &team) == NUBO_ERR_UNSUPPORTED);
  CHECK(says("nubo_team_create_host", "NUBO_WITH_PARALLEL=OFF"));
  nubo_cost_catalog* catalog = NULL;
  CHECK(nubo_cost_catalog_builtin(&catalog) == NUBO_ERR_UNSUPPORTED);
  CHECK(says("nubo_cost_catalog_builtin", "NUBO_WITH_COST=OFF"));
  CHECK(nubo_net_send(NULL, 0, NULL, NULL, NULL) == NUBO_ERR_UNSUPPORTED);
  CHECK(says("nubo_net_send", "NUBO_WITH_NET=OFF"));
  CHECK(nubo_trainer_fit(NULL, NULL, NULL) == NUBO_ERR_UNSUPPORTED);
  CHECK(says("nubo_trainer_fit", "NUBO_WITH_TRAIN=OFF"));
  /* What the header promises for NULL still holds. */
  CHECK(nubo_team_size(NULL) == 0 && nubo_pending_done(NULL) == 1);
  nubo_team_free(NULL);
  puts("devices only: discovery works, the rest says which option is off");
  return 0;
}
C
# An option whose capability needs one turned off is refused at configure, naming both.
if "$cmake" -S "$source_dir" -B "$work/refused" -DNUBO_WITH_CUDA=OFF -DNUBO_WITH_TRANSFER=OFF \
    -DNUBO_WITH_TRAIN=OFF > "$work/refused.log" 2>&1; then
  echo "NUBO_WITH_NET without NUBO_WITH_TRANSFER configured"
  exit 1
fi
grep -q "NUBO_WITH_NET needs NUBO_WITH_TRANSFER" "$work/refused.log" ||
  { cat "$work/refused.log"; exit 1; }

"$cmake" -S "$work/app" -B "$work/build" -DNUBO_WITH_CUDA=OFF > "$work/configure.log" 2>&1 ||
  { cat "$work/configure.log"; exit 1; }
"$cmake" --build "$work/build" -j 2 > "$work/build.log" 2>&1 || { tail -50 "$work/build.log"; exit 1; }

lib="$work/build/nubo/lib"
for library in "$lib/libnubo.so" "$lib/libnubo_c.so"; do
  needed=$(readelf -d "$library" | grep NEEDED || true)
  for unwanted in libssl libcrypto libcurl libzstd liblz4 libz.so libgloo libhiredis; do
    if echo "$needed" | grep -q "$unwanted"; then
      echo "$library links $unwanted, which no capability built needs:"
      echo "$needed"
      exit 1
    fi
  done
done
(cd "$work" && LD_BIND_NOW=1 "$work/build/app")

NUBO_LIBRARY="$lib/libnubo_c.so" PYTHONPATH="$source_dir/capi/python" "$python" - <<'PY'
import nubo
from nubo.errors import NuboError, Status

assert len(nubo.discover(sim_devices="2xA100-SXM4-80GB", probe_cuda=False).devices) == 2
try:
    nubo.pack(["."], "x.nubo")
    raise SystemExit("pack worked in a build without transfer")
except NuboError as e:
    assert e.status == Status.UNSUPPORTED and "NUBO_WITH_TRANSFER=OFF" in str(e), e
print("the Python package loads it, and says the same")
PY
