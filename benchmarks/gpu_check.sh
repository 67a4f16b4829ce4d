#!/usr/bin/env bash
# One call on a machine with a GPU (a lent single-GPU H200): builds the CUDA plugin, runs the GPU
# tests, runs the GPU benchmarks, and prints a short table last. Meant to finish in under
# 8 minutes on 16 cores. Without a GPU it still builds and runs everything (the GPU tests then
# check the clean "no device" path and the benchmark says there is nothing to measure).
#
#   benchmarks/gpu_check.sh                 build in build-gpu/, test, benchmark
#   benchmarks/gpu_check.sh --fetch-debs    (here, on a Debian machine with a package registry)
#                                           download the build's dependencies as .debs into
#                                           build-gpu-debs/, for a machine that has none
#
# The GPU machine reaches no package registry and may lack OpenBLAS, nlohmann-json, Catch2,
# zstd or lz4 headers. When build-gpu-debs/ holds .debs (carry it: `run` with
# carry ["build-gpu-debs"]), they are unpacked with `dpkg -x` into build-gpu/sysroot and the
# build is pointed at them; nothing is installed into the system. NCCL is taken from the CUDA
# toolkit, or else from the nvidia-nccl Python wheel when one is installed.
#
# Results: benchmarks/results/gemm_gpu.md, and copies of it and of the logs in $OUT when set.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${NUBO_GPU_BUILD:-$root/build-gpu}
debs=$root/build-gpu-debs
results=$root/benchmarks/results/gemm_gpu.md
jobs=$(nproc 2>/dev/null || echo 4)
start=$SECONDS

say() { printf '[gpu_check %3ds] %s\n' $((SECONDS - start)) "$*"; }

# --- Fetch mode: run where apt works, before asking for a GPU ---------------------------------
deb_packages=(catch2 nlohmann-json3-dev libopenblas-dev libopenblas-pthread-dev libopenblas0
  libopenblas0-pthread libgfortran5 libzstd-dev libzstd1 liblz4-dev liblz4-1 pkgconf pkgconf-bin
  libpkgconf3 libxxhash-dev libxxhash0 libcli11-dev libdlpack-dev)
if [ "${1:-}" = "--fetch-debs" ]; then
  mkdir -p "$debs" && cd "$debs" || exit 1
  apt-get download "${deb_packages[@]}" || exit 1
  du -sh "$debs"
  exit 0
fi

mkdir -p "$build"
log=$build/gpu_check.log
: >"$log"
copy_out() {  # what the device tool brings back
  [ -n "${OUT:-}" ] || return 0
  cp -f "$log" "$OUT/" 2>/dev/null
  [ -f "$results" ] && cp -f "$results" "$OUT/"
  [ -f "$build/ctest.log" ] && cp -f "$build/ctest.log" "$OUT/"
  return 0
}
trap copy_out EXIT

# --- The machine --------------------------------------------------------------------------------
say "machine: $(nproc) cores, $(uname -r)"
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | sed 's/^/  GPU: /'
else
  say "nvidia-smi not found: no GPU driver here; the GPU tests will check the no-device path"
fi

# --- Dependencies carried as .debs --------------------------------------------------------------
cmake_extra=()
if compgen -G "$debs/*.deb" >/dev/null; then
  sysroot=$build/sysroot
  if [ ! -f "$sysroot/.unpacked" ]; then
    say "unpacking $(ls "$debs"/*.deb | wc -l) carried .debs into $sysroot"
    rm -rf "$sysroot" && mkdir -p "$sysroot"
    for f in "$debs"/*.deb; do dpkg -x "$f" "$sysroot" || { say "dpkg -x $f failed"; exit 1; }; done
    # .pc files name /usr; make them name the sysroot. Debian selects OpenBLAS's variant with
    # update-alternatives, which dpkg -x does not run: point at the pthread variant directly.
    find "$sysroot" -name '*.pc' -exec sed -i \
      -e "s|^prefix=/usr|prefix=$sysroot/usr|" -e "s|^libdir=/usr|libdir=$sysroot/usr|" \
      -e "s|^includedir=/usr|includedir=$sysroot/usr|" {} +
    touch "$sysroot/.unpacked"
  fi
  ma=x86_64-linux-gnu
  export PKG_CONFIG_PATH="$sysroot/usr/lib/$ma/openblas-pthread/pkgconfig:$sysroot/usr/lib/$ma/pkgconfig:$sysroot/usr/share/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
  cmake_extra+=("-DCMAKE_PREFIX_PATH=$sysroot/usr" "-DCMAKE_MODULE_PATH=$sysroot/usr/lib/cmake/Catch2")
  if ! command -v pkg-config >/dev/null; then
    export LD_LIBRARY_PATH="$sysroot/usr/lib/$ma${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    cmake_extra+=("-DPKG_CONFIG_EXECUTABLE=$sysroot/usr/bin/pkgconf")
  fi
  # Run-time libraries the system may lack (OpenBLAS needs libgfortran).
  if ! ldconfig -p 2>/dev/null | grep -q 'libgfortran.so.5 '; then
    export LD_LIBRARY_PATH="$sysroot/usr/lib/$ma${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  fi
  export LD_LIBRARY_PATH="$sysroot/usr/lib/$ma/openblas-pthread${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi

# --- NCCL: the toolkit's, or the pip wheel's ---------------------------------------------------
cuda_root=${CUDA_HOME:-/usr/local/cuda}
if [ ! -f "$cuda_root/include/nccl.h" ] && command -v python3 >/dev/null; then
  wheel=$(python3 -c 'import nvidia.nccl, os; print(os.path.dirname(nvidia.nccl.__file__))' 2>/dev/null || \
          python3 -c 'import nvidia.nccl; print(list(nvidia.nccl.__path__)[0])' 2>/dev/null || true)
  if [ -n "$wheel" ] && [ -f "$wheel/include/nccl.h" ]; then
    lib=$(ls "$wheel"/lib/libnccl.so* 2>/dev/null | head -1)
    say "NCCL from the Python wheel: $lib"
    cmake_extra+=("-DNUBO_NCCL_INCLUDE_DIR=$wheel/include" "-DNUBO_NCCL_LIBRARY=$lib")
  fi
fi

# --- Configure and build (only what the GPU check needs) ---------------------------------------
arch=80-real\;90
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then arch=native; fi
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
if [ ! -f "$build/CMakeCache.txt" ]; then
  say "configuring (CUDA architectures: $arch)"
  cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DNUBO_WITH_CUDA=ON \
    "-DCMAKE_CUDA_ARCHITECTURES=$arch" "${cmake_extra[@]}" \
    >>"$log" 2>&1 || { tail -40 "$log"; say "configure failed (log: $log)"; exit 1; }
fi
# The GPU paths: the backend, the public compute API and the trainer's kernels (test_gpu), the
# stream-ordering check (gpu_stream_order), the CUDA example, a program's own loop joining on the
# GPU (nubo-own-loop-c under nubo-run), and the benchmark.
gpu_targets=(nubo_cuda test_backend openblas_lazy_test test_gpu gpu_stream_order nubo-cuda-stream
  nubo-run nubo-own-loop-c)
targets=("${gpu_targets[@]}" bench_gemm_gpu ${NUBO_GPU_EXTRA_TARGETS:-})
if grep -q '^NUBO_NCCL_LIBRARY:FILEPATH=.*NOTFOUND' "$build/CMakeCache.txt"; then
  say "NCCL not found: the plugin is built without it, and the benchmark is skipped"
  targets=("${gpu_targets[@]}" ${NUBO_GPU_EXTRA_TARGETS:-})
fi
say "building ${targets[*]} with $jobs jobs"
timeout 300 cmake --build "$build" -j"$jobs" --target "${targets[@]}" >>"$log" 2>&1 ||
  { tail -60 "$log"; say "build failed (log: $log)"; exit 1; }
export NUBO_CUDA_PLUGIN=$build/lib/libnubo_cuda.so

# --- GPU tests: the backend's (its [gpu] cases run against the real device) and any labelled gpu
say "running the backend tests and GPU tests"
tests_rc=0
timeout 240 ctest --test-dir "$build" -L 'backend|gpu' -V --timeout 120 \
  >"$build/ctest.log" 2>&1 || tests_rc=$?
grep -E "^[0-9]+% tests passed|\*\*\*Failed|\*\*\*Not Run|Timeout|stale results" "$build/ctest.log" | tail -15
summary=$(grep -E "^[0-9]+% tests passed" "$build/ctest.log" | tail -1)

# --- The CUDA example: the application's kernel on its own stream, then nubo's all_reduce ------
say "running examples/cuda (nubo-cuda-stream)"
example_rc=0
timeout 60 "$build/bin/nubo-cuda-stream" 2>&1 | tee "$build/example.log" | tail -5 || example_rc=$?

# --- A program's own loop: nubo_team_join gives a CUDA worker (NCCL), reduced from main() -----
say "running examples/c/own_loop.c under nubo-run (one process, its GPU)"
join_rc=0
timeout 60 "$build/bin/nubo-run" -n 1 -- "$build/bin/nubo-own-loop-c" 2>&1 |
  tee "$build/own_loop.log" | tail -3 || join_rc=$?
grep -q "all-reduces from the main thread" "$build/own_loop.log" || join_rc=1

# --- GPU benchmarks -----------------------------------------------------------------------------
say "benchmarking"
bench_rc=0
[ -x "$build/bin/bench_gemm_gpu" ] &&
  timeout 200 "$build/bin/bench_gemm_gpu" --out "$results" >"$build/bench.log" 2>&1 || bench_rc=$?
[ $bench_rc -eq 0 ] || { cat "$build/bench.log"; say "benchmark failed (exit $bench_rc)"; }

# --- The table, last ---------------------------------------------------------------------------
echo
echo "== nubo gpu_check: tests: ${summary:-see $build/ctest.log} (exit $tests_rc); example exit $example_rc; own loop exit $join_rc; $((SECONDS - start)) s"
cat "$build/bench.log"
[ $tests_rc -eq 0 ] && [ $bench_rc -eq 0 ] && [ $example_rc -eq 0 ] && [ $join_rc -eq 0 ]
