#include "transfer/pipeline/file_chunks.hpp"

#include <fcntl.h>

#include <algorithm>
#include <cerrno>

#include "nubo/error.hpp"

namespace nubo::transfer {

void FileChunks::open(const std::string& path, const FileHasher& state) {
  // O_NOATIME spares a metadata write per file; it is refused on files of other users.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOATIME);
  if (fd < 0 && errno == EPERM) fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw_io("open", path, errno);
  fd_ = Fd(fd, path);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  data_.reset();
  hasher_ = state;
}

bool FileChunks::read(std::uint64_t offset, std::uint32_t size, std::vector<std::byte>& out) {
  if (data_.hole(fd_.get(), offset, size)) {
    hasher_.update_zeros(size);
    return true;
  }
  out.resize(std::max<std::size_t>(out.size(), size));
  MutableBytes chunk{out.data(), size};
  const auto n = fd_.pread(chunk, offset);
  if (n != size)
    throw Error(Errc::io, fd_.name() + ": the file shrank while being read (it ends at " +
                              std::to_string(offset + n) + " bytes, not at least " +
                              std::to_string(offset + size) + "); run it again");
  hasher_.update(chunk);
  return false;
}

}  // namespace nubo::transfer
