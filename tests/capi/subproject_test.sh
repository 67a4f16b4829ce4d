#!/bin/sh
# nubo added to another project with add_subdirectory (as FetchContent does): the configure
# step defines the libraries nubo::nubo and nubo::c, and neither the tests nor the bundled
# programs, which default to PROJECT_IS_TOP_LEVEL.
#   subproject_test.sh NUBO_SOURCE_DIR WORKDIR CMAKE
set -eu
source_dir=$1 work=$2 cmake=$3
rm -rf "$work"
mkdir -p "$work/app"
cat > "$work/app/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.24)
project(consumer LANGUAGES C CXX)
add_subdirectory("$source_dir" nubo)
add_executable(app app.c)
target_link_libraries(app PRIVATE nubo::c)
CMAKE
printf '#include "nubo.h"\nint main(void) { return nubo_abi_version() > 0 ? 0 : 1; }\n' \
  > "$work/app/app.c"
"$cmake" -S "$work/app" -B "$work/build" -DNUBO_WITH_CUDA=OFF > "$work/configure.log" 2>&1 ||
  { cat "$work/configure.log"; exit 1; }
targets=$("$cmake" --build "$work/build" --target help)
for wanted in nubo nubo_c app; do
  echo "$targets" | grep -q "^\.\.\. $wanted\$" || { echo "no target $wanted"; exit 1; }
done
for unwanted in test_common nubo-xfer nubo-run; do
  if echo "$targets" | grep -q "^\.\.\. $unwanted\$"; then
    echo "the subproject defines $unwanted: tests and tools must default to off"
    exit 1
  fi
done
echo "add_subdirectory(nubo): the libraries only"
