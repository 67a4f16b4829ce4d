#!/usr/bin/env bash
# Proves, on a machine without a GPU, that benchmarks/gpu_check.sh runs on a bare machine: a
# minimal Debian 12 (debootstrap --variant=minbase) with only the CUDA toolkit mounted in, no
# network inside (unshare -n), where the packed programs (gpu_check.sh --pack) must load every
# library they need and reach the "no device" path. Run as root; needs debootstrap and network
# the first time (the chroot is kept in $NUBO_CHROOT, default /tmp/nubo-gpu-chroot).
#
#   benchmarks/gpu_check_chroot.sh           pack, then run gpu_check.sh --prebuilt in the chroot
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
chroot_dir=${NUBO_CHROOT:-/tmp/nubo-gpu-chroot}
cuda=${CUDA_HOME:-/usr/local/cuda}

if [ ! -x "$chroot_dir/bin/bash" ]; then
  command -v debootstrap >/dev/null || apt-get install -y debootstrap
  debootstrap --variant=minbase bookworm "$chroot_dir" http://deb.debian.org/debian
fi
"$root/benchmarks/gpu_check.sh" --pack

# The working tree as the device machine gets it: the sources and the carried package.
rm -rf "$chroot_dir/work"
mkdir -p "$chroot_dir/work/repo"
(cd "$root" && git ls-files -z --cached --others --exclude-standard | tar -c --null -T - build-gpu-carry) |
  tar -x -C "$chroot_dir/work/repo"
mkdir -p "$chroot_dir$cuda" "$chroot_dir/proc"
cleanup() {
  umount "$chroot_dir$cuda" 2>/dev/null || true
  umount "$chroot_dir/proc" 2>/dev/null || true
}
trap cleanup EXIT
mount --bind "$cuda" "$chroot_dir$cuda"
mount -o remount,bind,ro "$chroot_dir$cuda"
mount -t proc proc "$chroot_dir/proc"
unshare -n chroot "$chroot_dir" /bin/bash -c \
  "cd /work/repo && export OUT=/tmp/out && mkdir -p \$OUT && benchmarks/gpu_check.sh --prebuilt"
