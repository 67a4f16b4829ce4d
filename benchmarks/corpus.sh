# Corpora shared by the benchmarks (sourced, not run).

# linux_tree DIR: the files of the first 256 MiB of the Linux 6.1 source tar (Debian's
# linux-source-6.1) under DIR, about 31,500 files, most of them small: a source tree as a user
# would move it. The tar is cut at 256 MiB, so the file it cuts is kept in part.
linux_tree() {
  [ -d "$1" ] && return 0
  mkdir -p "$1.tmp"
  xz -dc /usr/src/linux-source-6.1.tar.xz | head -c $((256 << 20)) | tar -x -C "$1.tmp" 2>/dev/null || true
  mv "$1.tmp" "$1"
}
