#include "parallel/rendezvous/store.hpp"

#include <algorithm>
#include <cctype>
#include <thread>

#include "common/env.hpp"
#include "nubo/error.hpp"
#include "parallel/rendezvous/tcp_store.hpp"

namespace nubo::parallel {
namespace {

class PrefixedStore final : public Store {
 public:
  PrefixedStore(std::shared_ptr<Store> base, std::string prefix)
      : base_(std::move(base)), prefix_(std::move(prefix)) {}
  void set(const std::string& key, std::string_view value) override {
    base_->set(prefix_ + key, value);
  }
  std::string set_if_absent(const std::string& key, std::string_view value) override {
    return base_->set_if_absent(prefix_ + key, value);
  }
  std::optional<std::string> try_get(const std::string& key) override {
    return base_->try_get(prefix_ + key);
  }
  std::string describe() const override { return base_->describe(); }

 private:
  std::shared_ptr<Store> base_;
  std::string prefix_;
};

std::string seconds_text(std::chrono::milliseconds d) {
  auto ms = d.count();
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + " s";
  return std::to_string(ms / 1000) + "." + std::to_string((ms % 1000) / 100) + " s";
}

}  // namespace

void check_store_key(const std::string& key) {
  bool ok = !key.empty() && key.size() <= 256;
  for (char c : key) {
    ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' ||
                c == '/');
  }
  if (!ok) {
    throw Error(Errc::invalid_argument,
                "store key '" + key.substr(0, 64) +
                    "' is not valid: use 1 to 256 letters, digits, '_', '.', '-' or '/'");
  }
}

void check_store_entry(const std::string& key, std::string_view value) {
  check_store_key(key);
  if (value.size() > kMaxStoreValue) {
    throw Error(Errc::invalid_argument, "store value for '" + key + "' is " +
                                            std::to_string(value.size()) +
                                            " bytes; the limit is 1 MiB");
  }
}

std::string Store::get(const std::string& key, std::chrono::milliseconds timeout) {
  // Polling with a growing pause (1 ms up to 50 ms): rendezvous happens once per team, and
  // neither a folder nor plain Redis GET can block until a key appears.
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    if (auto v = try_get(key)) return std::move(*v);
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      throw Error(Errc::timeout, "'" + key + "' did not appear in the rendezvous store " +
                                     describe() + " within " + seconds_text(timeout));
    }
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(pause, deadline - now));
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
}

std::unique_ptr<Store> open_store(const RendezvousUrl& url, bool rank0,
                                  std::chrono::milliseconds timeout) {
  switch (url.kind) {
    case RendezvousUrl::Kind::file:
      return make_file_store(url.path, url.text);
    case RendezvousUrl::Kind::tcp:
      return make_tcp_store(url, rank0, env::token().value_or(""), timeout);
    case RendezvousUrl::Kind::redis:
      break;
  }
  return make_redis_store(url, timeout);
}

std::shared_ptr<Store> prefixed(std::shared_ptr<Store> base, std::string prefix) {
  return std::make_shared<PrefixedStore>(std::move(base), std::move(prefix));
}

}  // namespace nubo::parallel
