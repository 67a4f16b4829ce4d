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
#   benchmarks/gpu_check.sh --pack          (here) build the GPU targets in build/ and pack the
#                                           programs, libnubo, the plugin and every library they
#                                           need beyond glibc and libstdc++ into
#                                           build-gpu-carry/prebuilt.tar.gz (~27 MB; gzip, which every
#                                           base system has)
#   benchmarks/gpu_check.sh --prebuilt      (there, with build-gpu-carry/ carried) run the same
#                                           checks on the packed programs: no build, so the
#                                           device's minutes go to measuring
#
# The GPU machine reaches no package registry and may lack OpenBLAS, nlohmann-json, Catch2,
# zstd or lz4 headers. When build-gpu-debs/ holds .debs (carry it: `run` with
# carry ["build-gpu-debs"]), they are unpacked with `dpkg -x` into build-gpu/sysroot and the
# build is pointed at them; nothing is installed into the system. NCCL is taken from the CUDA
# toolkit, or else from the nvidia-nccl Python wheel when one is installed.
#
# Results: benchmarks/results/gemm_gpu.md and preflight_gpu.md, the health and preflight
# reports (health.json, check.json), and copies of them and of the logs in $OUT when set.
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

# --- Pack mode: build here, run there ------------------------------------------------------------
# The programs the checks run (gpu_targets below, the preflight's benchmark and nubo-smi).
packed_programs=(nubo-smi nubo-run nubo-cuda-stream nubo-own-loop-c test_backend test_gpu
  gpu_stream_order bench_gemm_gpu bench_preflight_gpu bench_sharded)
prebuilt=$root/build-gpu-prebuilt
if [ "${1:-}" = "--pack" ]; then
  here=$root/build
  cmake --build "$here" -j"$jobs" --target nubo_cuda "${packed_programs[@]}" || exit 1
  rm -rf "$prebuilt" && mkdir -p "$prebuilt/bin" "$prebuilt/lib"
  for p in "${packed_programs[@]}"; do cp "$here/bin/$p" "$prebuilt/bin/"; done
  cp -P "$here"/lib/libnubo.so* "$here"/lib/libnubo_cuda.so "$prebuilt/lib/"
  # Every library the programs load beyond the C and C++ runtimes (which the machine there
  # has, newer) and the CUDA libraries (the toolkit's there, matching its driver).
  for f in "$prebuilt"/bin/* "$prebuilt"/lib/libnubo.so.* "$prebuilt"/lib/libnubo_cuda.so; do
    ldd "$f" 2>/dev/null | awk '/=> \// {print $3}'
  done | sort -u | grep -Ev '/(libc|libm|libdl|libpthread|librt|libresolv|ld-linux[^/]*|libstdc\+\+|libgcc_s)\.so' |
    grep -Ev '/(libcuda|libcublas|libcublasLt|libnccl|libcudart|libnvidia-ml)\.so' |
    xargs -r -I{} cp -L {} "$prebuilt/lib/"
  # OpenBLAS is loaded with dlopen at the first host GEMM: take it too.
  for f in /usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0 \
           /usr/lib/x86_64-linux-gnu/libgfortran.so.5 /usr/lib/x86_64-linux-gnu/libquadmath.so.0; do
    [ -f "$f" ] && cp -L "$f" "$prebuilt/lib/"
  done
  strip --strip-unneeded "$prebuilt"/bin/* "$prebuilt"/lib/*.so* 2>/dev/null
  # The tests name the plugin by the path it was built at: recreated there as a link.
  echo "$here" >"$prebuilt/build-path"
  mkdir -p "$root/build-gpu-carry"
  rm -f "$root/build-gpu-carry/prebuilt.tar."*
  tar -C "$prebuilt" -czf "$root/build-gpu-carry/prebuilt.tar.gz" . || exit 1
  du -sh "$prebuilt" "$root/build-gpu-carry/prebuilt.tar.gz"
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
  for f in "$root/benchmarks/results/preflight_gpu.md" "$build/health.json" "$build/check.json" \
           "$build/nvidia-smi-q.txt"; do
    [ -f "$f" ] && cp -f "$f" "$OUT/"
  done
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

mode=source
[ "${1:-}" = "--prebuilt" ] && mode=prebuilt

build_from_source() {
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
targets=("${gpu_targets[@]}" bench_gemm_gpu bench_sharded ${NUBO_GPU_EXTRA_TARGETS:-})
if grep -q '^NUBO_NCCL_LIBRARY:FILEPATH=.*NOTFOUND' "$build/CMakeCache.txt"; then
  say "NCCL not found: the plugin is built without it, and the benchmark is skipped"
  targets=("${gpu_targets[@]}" ${NUBO_GPU_EXTRA_TARGETS:-})
fi
say "building ${targets[*]} with $jobs jobs"
timeout 300 cmake --build "$build" -j"$jobs" --target "${targets[@]}" >>"$log" 2>&1 ||
  { tail -60 "$log"; say "build failed (log: $log)"; exit 1; }
bin=$build/bin
export NUBO_CUDA_PLUGIN=$build/lib/libnubo_cuda.so
}

# The packed programs (--pack): their libraries first, then the CUDA libraries of this machine
# (the toolkit's, or the Python wheels' where the toolkit has none).
use_prebuilt() {
  if [ ! -x "$prebuilt/bin/nubo-smi" ] && [ -f "$root/build-gpu-carry/prebuilt.tar.gz" ]; then
    mkdir -p "$prebuilt" && tar -C "$prebuilt" -xzf "$root/build-gpu-carry/prebuilt.tar.gz"
  fi
  [ -x "$prebuilt/bin/nubo-smi" ] || { say "no $prebuilt/bin/nubo-smi: run --pack first and carry build-gpu-carry"; exit 1; }
  bin=$prebuilt/bin
  local dirs=$prebuilt/lib
  for lib in libcublas.so.13 libnccl.so.2; do
    local found
    found=$(ldconfig -p 2>/dev/null | awk -v l="$lib" '$1 == l {print $NF; exit}')
    [ -n "$found" ] && continue
    found=$(find /usr/local/cuda/ /usr/local/cuda*/ /opt /usr/lib /usr/local/lib -name "$lib" \
              -not -path '*/proc/*' 2>/dev/null | head -1)
    if [ -n "$found" ]; then dirs=$dirs:$(dirname "$found"); else say "$lib not found on this machine"; fi
  done
  export LD_LIBRARY_PATH=$dirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export NUBO_CUDA_PLUGIN=$prebuilt/lib/libnubo_cuda.so
  local built_at
  built_at=$(cat "$prebuilt/build-path" 2>/dev/null)
  if [ -n "$built_at" ] && [ ! -e "$built_at/lib/libnubo_cuda.so" ]; then
    mkdir -p "$built_at/lib" && ln -s "$NUBO_CUDA_PLUGIN" "$built_at/lib/libnubo_cuda.so"
  fi
  say "prebuilt programs from $prebuilt (LD_LIBRARY_PATH=$LD_LIBRARY_PATH)"
}

if [ $mode = source ]; then build_from_source; else use_prebuilt; fi

# --- Health and preflight: what NVML says, and each figure against the model's ----------------
say "nubo-smi, nubo-smi health, nubo-smi check"
command -v nvidia-smi >/dev/null && nvidia-smi -q >"$build/nvidia-smi-q.txt" 2>&1
timeout 60 "$bin/nubo-smi" 2>&1 | tail -25
health_rc=0
timeout 60 "$bin/nubo-smi" health --json >"$build/health.json" 2>"$build/health.err" || health_rc=$?
timeout 60 "$bin/nubo-smi" health 2>&1 | tail -20
timeout 60 "$bin/nubo-smi" topo 2>&1 | grep -A12 "NIC Legend" || echo "no NIC in the PCIe tree here"
# The job watch on a healthy GPU: it reads the health while the job runs, and stops nothing.
watch_rc=0
timeout 60 "$bin/nubo-run" --watch-health 0.5 -n 1 -- sleep 3 >"$build/watch.log" 2>&1 || watch_rc=$?
grep -q "failed:" "$build/watch.log" && watch_rc=1
echo "health watch over a 3 s job: exit $watch_rc"
check_rc=0
timeout 120 "$bin/nubo-smi" check --budget "${NUBO_GPU_CHECK_BUDGET:-30}" --out "$build/check.json" \
  >"$build/check.log" 2>&1 || check_rc=$?
tail -30 "$build/check.log"
preflight_rc=0
if [ -x "$bin/bench_preflight_gpu" ]; then
  timeout 240 "$bin/bench_preflight_gpu" --rounds 3 --budget 12 \
    --out "$root/benchmarks/results/preflight_gpu.md" >"$build/preflight_bench.log" 2>&1 || preflight_rc=$?
  cat "$build/preflight_bench.log"
fi

# --- GPU tests: the backend's (its [gpu] cases run against the real device) and any labelled gpu
say "running the backend tests and GPU tests"
tests_rc=0
if [ $mode = source ]; then
  timeout 240 ctest --test-dir "$build" -L 'backend|gpu' -V --timeout 120 \
    >"$build/ctest.log" 2>&1 || tests_rc=$?
else
  : >"$build/ctest.log"
  # The GPU cases only: the others need the fake drivers of the build tree (CI runs them).
  for t in "test_backend [gpu]" test_gpu gpu_stream_order; do
    echo "== $t" >>"$build/ctest.log"
    rc=0
    # shellcheck disable=SC2086  # the name and its tag are two words
    timeout 120 $(echo "$bin/$t") >>"$build/ctest.log" 2>&1 || rc=$?
    if [ $rc -eq 77 ]; then echo "***Skipped $t (no device)" >>"$build/ctest.log"  # SKIP_RETURN_CODE
    elif [ $rc -ne 0 ]; then tests_rc=$rc; echo "***Failed $t (exit $rc)" >>"$build/ctest.log"; fi
  done
  grep -E "^(==|All tests passed|test cases:|\*\*\*)" "$build/ctest.log"
fi
grep -E "^[0-9]+% tests passed|\*\*\*Failed|\*\*\*Not Run|Timeout|stale results" "$build/ctest.log" | tail -15
summary=$(grep -E "^[0-9]+% tests passed" "$build/ctest.log" | tail -1)

# --- The CUDA example: the application's kernel on its own stream, then nubo's all_reduce ------
say "running examples/cuda (nubo-cuda-stream)"
example_rc=0
timeout 60 "$bin/nubo-cuda-stream" 2>&1 | tee "$build/example.log" | tail -5 || example_rc=$?

# --- A program's own loop: nubo_team_join gives a CUDA worker (NCCL), reduced from main() -----
say "running examples/c/own_loop.c under nubo-run (one process, its GPU)"
join_rc=0
timeout 60 "$bin/nubo-run" -n 1 -- "$bin/nubo-own-loop-c" 2>&1 |
  tee "$build/own_loop.log" | tail -3 || join_rc=$?
grep -q "all-reduces from the main thread" "$build/own_loop.log" || join_rc=1

# --- GPU benchmarks -----------------------------------------------------------------------------
say "benchmarking"
bench_rc=0
[ -x "$bin/bench_gemm_gpu" ] &&
  timeout 200 "$bin/bench_gemm_gpu" --out "$results" ${NUBO_GPU_BENCH_ARGS:-} >"$build/bench.log" 2>&1 || bench_rc=$?
[ $bench_rc -eq 0 ] || { cat "$build/bench.log"; say "benchmark failed (exit $bench_rc)"; }

# --- The sharded optimizer on the GPUs: its step (the fused update kernels, the reductions over
# NCCL) replicated and at stage 1, against PyTorch's AdamW and, with 2+ GPUs, DDP with its
# ZeroRedundancyOptimizer, where this machine's PyTorch has CUDA -------------------------------
say "the sharded optimizer's step"
sharded_rc=0
if [ -x "$bin/bench_sharded" ]; then
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
  spec=cuda:0
  [ "${gpus:-0}" -ge 2 ] && spec=cuda:$(seq -s, 0 $((gpus - 1)))
  for st in 0 1 2; do
    timeout 120 "$bin/bench_sharded" step $st 67108864 20 f32 "$spec" 2>&1 |
      tee -a "$build/sharded.log" || sharded_rc=1
  done
  timeout 120 "$bin/bench_sharded" step 1 67108864 20 bf16 "$spec" 2>&1 | tee -a "$build/sharded.log" ||
    sharded_rc=1
  timeout 180 python3 "$root/benchmarks/bench_sharded_torch.py" 67108864 20 2>&1 |
    tee -a "$build/sharded.log" || true
fi

# --- The table, last ---------------------------------------------------------------------------
echo
echo "== nubo gpu_check: tests: ${summary:-see $build/ctest.log} (exit $tests_rc); example exit $example_rc; own loop exit $join_rc; health exit $health_rc; check exit $check_rc; $((SECONDS - start)) s"
cat "$build/bench.log"
cat "$build/preflight_bench.log" 2>/dev/null
cat "$build/sharded.log" 2>/dev/null
# health and check exit 4 or 5 on a degraded or failing GPU: a finding, not a broken script.
[ $tests_rc -eq 0 ] && [ $bench_rc -eq 0 ] && [ $example_rc -eq 0 ] && [ $join_rc -eq 0 ] &&
  [ $preflight_rc -eq 0 ] && [ $sharded_rc -eq 0 ] && [ $health_rc -le 5 ] && [ $check_rc -le 5 ] && [ $check_rc -ne 1 ] &&
  [ $watch_rc -eq 0 ]
