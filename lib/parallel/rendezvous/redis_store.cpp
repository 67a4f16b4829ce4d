// RedisStore: the rendezvous store on a Redis server, for jobs that span hosts without a shared
// folder (Gloo has no TCP store of its own). Keys live under "nubo/<job>/" and expire after a
// day, so old jobs do not pile up on a long-lived server; give each job its own name.
#include "parallel/rendezvous/store.hpp"

#include "nubo/error.hpp"
#include "nubo/retry.hpp"

#if NUBO_HAVE_HIREDIS
#include <hiredis/hiredis.h>
#include <sys/time.h>

#include <mutex>

namespace nubo::parallel {
namespace {

constexpr int kExpirySeconds = 24 * 3600;

timeval to_timeval(std::chrono::milliseconds d) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(d.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((d.count() % 1000) * 1000);
  return tv;
}

class RedisStore final : public Store {
 public:
  RedisStore(const RendezvousUrl& url, std::chrono::milliseconds timeout)
      : host_(url.host),
        port_(url.port),
        prefix_("nubo/" + (url.job.empty() ? std::string("default") : url.job) + "/"),
        url_(url.text),
        timeout_(timeout) {
    std::lock_guard<std::mutex> lock(mutex_);
    connect();
  }
  ~RedisStore() override {
    if (ctx_) redisFree(ctx_);
  }

  void set(const std::string& key, std::string_view value) override {
    check_store_entry(key, value);
    const std::string full = prefix_ + key;
    Reply r = command([&] {
      return redisCommand(ctx_, "SET %b %b EX %d", full.data(), full.size(), value.data(),
                          value.size(), kExpirySeconds);
    });
    if (r.get()->type == REDIS_REPLY_ERROR) server_error("SET", r.get());
  }

  std::string set_if_absent(const std::string& key, std::string_view value) override {
    check_store_entry(key, value);
    const std::string full = prefix_ + key;
    Reply r = command([&] {
      return redisCommand(ctx_, "SET %b %b NX EX %d", full.data(), full.size(), value.data(),
                          value.size(), kExpirySeconds);
    });
    if (r.get()->type == REDIS_REPLY_ERROR) server_error("SET NX", r.get());
    if (r.get()->type != REDIS_REPLY_NIL) return std::string(value);
    if (auto held = try_get(key)) return *held;
    throw Error(Errc::unavailable, "Redis at " + url_ + " refused SET NX " + full +
                                       " but holds no value for it (expired at once?)");
  }

  std::optional<std::string> try_get(const std::string& key) override {
    check_store_key(key);
    const std::string full = prefix_ + key;
    Reply r = command([&] { return redisCommand(ctx_, "GET %b", full.data(), full.size()); });
    const redisReply* rep = r.get();
    if (rep->type == REDIS_REPLY_NIL) return std::nullopt;
    if (rep->type == REDIS_REPLY_ERROR) server_error("GET", rep);
    if (rep->type != REDIS_REPLY_STRING) {
      throw Error(Errc::corrupt, "Redis at " + url_ + " answered GET " + full +
                                     " with a reply of type " + std::to_string(rep->type));
    }
    if (rep->len > kMaxStoreValue) {
      throw Error(Errc::corrupt, "Redis key " + full + " at " + url_ + " holds " +
                                     std::to_string(rep->len) +
                                     " bytes, more than any nubo record (1 MiB)");
    }
    return std::string(rep->str, rep->len);
  }

  std::string describe() const override { return url_; }

 private:
  struct Reply {
    redisReply* reply = nullptr;
    explicit Reply(void* r) : reply(static_cast<redisReply*>(r)) {}
    Reply(Reply&& o) noexcept : reply(o.reply) { o.reply = nullptr; }
    Reply(const Reply&) = delete;
    ~Reply() {
      if (reply) freeReplyObject(reply);
    }
    const redisReply* get() const { return reply; }
  };

  void connect() {
    if (ctx_) redisFree(ctx_);
    ctx_ = redisConnectWithTimeout(host_.c_str(), port_, to_timeval(timeout_));
    if (ctx_ == nullptr) throw Error(Errc::out_of_memory, "cannot allocate a Redis context");
    if (ctx_->err) {
      std::string why = ctx_->errstr;
      redisFree(ctx_);
      ctx_ = nullptr;
      throw Error(Errc::unavailable, "cannot reach the Redis rendezvous at " + url_ + ": " + why +
                                         " (is redis-server running there, and the port open?)");
    }
    redisSetTimeout(ctx_, to_timeval(timeout_));
  }

  // Runs one command under the lock (a hiredis context serves one thread at a time); a broken
  // connection is reopened once, since a server restart or idle drop should not fail a job.
  template <class Issue>
  Reply command(Issue&& issue) {
    std::lock_guard<std::mutex> lock(mutex_);
    const RetryPolicy policy{2};  // the first try, and one on a fresh connection, at once
    for (int failed = 0;;) {
      if (!ctx_) connect();
      void* r = issue();
      if (r != nullptr) return Reply(r);
      std::string why = ctx_->errstr;
      redisFree(ctx_);
      ctx_ = nullptr;
      if (!policy.again(++failed)) {
        throw Error(Errc::unavailable, "lost the Redis rendezvous at " + url_ + ": " + why);
      }
    }
  }

  [[noreturn]] void server_error(const char* cmd, const redisReply* r) const {
    throw Error(Errc::unavailable,
                "Redis at " + url_ + " refused " + cmd + ": " + std::string(r->str, r->len));
  }

  std::string host_;
  int port_;
  std::string prefix_;
  std::string url_;
  std::chrono::milliseconds timeout_;
  std::mutex mutex_;
  redisContext* ctx_ = nullptr;
};

}  // namespace

std::unique_ptr<Store> make_redis_store(const RendezvousUrl& url,
                                        std::chrono::milliseconds timeout) {
  return std::make_unique<RedisStore>(url, timeout);
}

}  // namespace nubo::parallel

#else  // !NUBO_HAVE_HIREDIS

namespace nubo::parallel {

std::unique_ptr<Store> make_redis_store(const RendezvousUrl& url, std::chrono::milliseconds) {
  throw Error(Errc::unsupported, "rendezvous " + url.text +
                                     ": this build of nubo has no Redis support; install "
                                     "libhiredis-dev and rebuild, or use file:///shared/dir");
}

}  // namespace nubo::parallel

#endif
