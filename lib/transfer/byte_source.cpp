#include "transfer/byte_source.hpp"

#include "nubo/error.hpp"

namespace nubo::transfer {
namespace {

class FileSource : public ByteSource {
 public:
  explicit FileSource(Fd fd) : fd_(std::move(fd)), size_(fd_.size()) {}
  const std::string& name() const override { return fd_.name(); }
  std::uint64_t size() const override { return size_; }
  std::size_t pread(MutableBytes out, std::uint64_t offset) const override {
    return fd_.pread(out, offset);
  }
  const Fd* file() const override { return &fd_; }

 private:
  Fd fd_;
  std::uint64_t size_;
};

}  // namespace

void ByteSource::pread_exact(MutableBytes out, std::uint64_t offset, std::string_view what) const {
  if (pread(out, offset) != out.size())
    throw Error(Errc::corrupt, name() + ": " + std::string(what) + ": truncated at offset " +
                                   std::to_string(offset));
}

std::unique_ptr<ByteSource> open_file_source(const std::string& path) {
  return std::make_unique<FileSource>(open_read(path));
}

}  // namespace nubo::transfer
