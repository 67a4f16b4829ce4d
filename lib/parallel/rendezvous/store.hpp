// The rendezvous store: a tiny key-value store that the processes of a job share, to find each
// other (Gloo's addresses, the NCCL unique id) and to tell each other why they failed.
// Implementations: a folder (FileStore), one that rank 0 hosts over TCP (tcp_store.hpp) and
// Redis (RedisStore). Keys are written once by one
// process and read by the others; every read that waits has a timeout.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "parallel/rendezvous/rendezvous_url.hpp"

namespace nubo::parallel {

// Values are small records (addresses, ids, messages); anything larger is refused, so a corrupt
// or hostile store cannot make a process allocate without bound.
constexpr std::size_t kMaxStoreValue = std::size_t{1} << 20;

class Store {
 public:
  virtual ~Store() = default;
  // Sets key (1 to 256 of [A-Za-z0-9_.-/]) to value (at most kMaxStoreValue bytes), replacing it.
  virtual void set(const std::string& key, std::string_view value) = 0;
  // Sets key to value unless it is set already, atomically (the compare-and-set that lets
  // several processes agree on one value, e.g. who is in an elastic job's round): returns the
  // value the key holds afterwards, `value` when this call set it.
  virtual std::string set_if_absent(const std::string& key, std::string_view value) = 0;
  // The value, or nullopt when the key is not set yet.
  virtual std::optional<std::string> try_get(const std::string& key) = 0;
  // Where the store is, for messages: "file:///tmp/job" or "redis://host:6379/job".
  virtual std::string describe() const = 0;

  // Waits until key is set and returns its value; Errc::timeout naming the key and the store
  // when it is not set within timeout. Safe to call from several threads.
  std::string get(const std::string& key, std::chrono::milliseconds timeout);
};

// Throws invalid_argument for a key the stores do not accept.
void check_store_key(const std::string& key);
// The same for the key, and for a value over kMaxStoreValue: what every set() checks first.
void check_store_entry(const std::string& key, std::string_view value);

// Opens the store of a rendezvous location. A folder is created if missing; Redis, and a tcp://
// store (which the process of rank 0, `rank0`, hosts), must answer within `timeout`
// (Errc::unavailable naming the server otherwise). A tcp:// store uses NUBO_TOKEN when set.
std::unique_ptr<Store> open_store(const RendezvousUrl& url, bool rank0,
                                  std::chrono::milliseconds timeout);

// The same store with every key prefixed by `prefix` (which ends with '/').
std::shared_ptr<Store> prefixed(std::shared_ptr<Store> base, std::string prefix);

// Implementations, for open_store and the tests.
std::unique_ptr<Store> make_file_store(const std::string& dir, const std::string& url_text);
std::unique_ptr<Store> make_redis_store(const RendezvousUrl& url,
                                        std::chrono::milliseconds timeout);

}  // namespace nubo::parallel
