// nubo::net::send: the receiver as a Sink (transfer/pipeline/sink.hpp). plan() walks the manifest
// over the control connection and learns what the receiver already has; the shared source reads
// what is missing (chunks of large files, bundles of small ones) and encodes it on every core;
// put() frames each job as a message and hands it to the streams through a bounded queue. Chunks
// the receiver verified in an earlier attempt are read (for the whole-file hash) but not sent;
// files it has complete are not read.
#include <atomic>
#include <chrono>
#include <limits>
#include <map>
#include <optional>
#include <thread>

#include "common/log.hpp"
#include "common/tls.hpp"
#include "nubo/error.hpp"
#include "nubo/net.hpp"
#include "nubo/retry.hpp"
#include "transfer/net/auth.hpp"
#include "transfer/net/send_queue.hpp"
#include "transfer/net/socket.hpp"
#include "transfer/net/token.hpp"
#include "transfer/paths.hpp"
#include "transfer/pipeline/auto_codec.hpp"
#include "transfer/pipeline/options.hpp"
#include "transfer/pipeline/progress.hpp"
#include "transfer/pipeline/sink.hpp"
#include "transfer/pipeline/summary.hpp"
#include "transfer/pipeline/walk.hpp"
#include "transfer/rate.hpp"

namespace nubo::net {

using namespace nubo::transfer;
using namespace nubo::transfer::net;

namespace {

using Clock = std::chrono::steady_clock;

constexpr double kCancelDrainSeconds = 5;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// One stream: takes messages until the queue is drained, then ends the stream and waits for the
// receiver to confirm it processed everything.
void run_stream(Socket& s, SendQueue& queue, RateLimiter& limiter, LinkMeter& meter,
                AutoCodec* auto_codec, int streams) {
  OutMsg m;
  constexpr std::size_t kSlice = 256 << 10;
  auto write = [&](Bytes b) {
    for (std::size_t at = 0; at < b.size();) {
      auto n = limiter.limited() ? std::min(kSlice, b.size() - at) : b.size() - at;
      auto t0 = Clock::now();
      limiter.acquire(n);
      s.write_all(b.subspan(at, n));
      // Each stream sees its share of the link: scaled, it estimates the whole.
      if (auto_codec)
        auto_codec->observe_output(n * static_cast<std::size_t>(streams), seconds_since(t0));
      meter.add(n);
      at += n;
    }
  };
  while (queue.pop(m)) {
    write(m.head);
    write(m.body);
    // The receiver says something on a data stream only when it gives up on it (a full disk,
    // a refused chunk): its reason, rather than the reset that follows.
    if (s.readable(0)) expect(s.read_message(kMaxControl), MsgType::stream_done, s.peer());
  }
  if (queue.failure()) return;
  auto end = frame(MsgType::stream_end, encode_u64(0));
  write(end);
  auto reply = s.read_message(kMaxControl);
  expect(reply, MsgType::stream_done, s.peer());
  decode_u64(reply.payload, "stream_done message");
}

// A connection to the server, encrypted unless the options say otherwise. A refusal the server
// sent before the handshake (busy, encryption required) is shown as the server's reason. A key
// from the token that does not verify means another token, or a handshake altered on the way:
// one more handshake tells which, since a token does not change between two.
Socket open_stream(const Endpoint& endpoint, const SendOptions& options,
                   const std::shared_ptr<tls::Context>& tls) {
  const RetryPolicy policy{2};  // one more handshake tells an altered one from another token
  for (int failed = 0;;) {
    auto s = Socket::connect(endpoint, options.timeout_seconds);
    if (!tls) return s;
    try {
      s.start_tls(*tls, endpoint.host);
      return s;
    } catch (const Error& e) {
      if (auto refusal = read_refusal(s)) throw *refusal;
      if (e.code() != Errc::invalid_argument) throw;  // not the token's check (tcp.hpp)
      if (!policy.again(++failed))
        throw Error(Errc::invalid_argument, std::string(e.what()) +
                                                " (twice: if the tokens are the same, something on "
                                                "the way alters every connection)");
      log::warn(std::string(e.what()) +
                "; trying once more, in case the handshake was altered "
                "on the way");
    }
  }
}

// The message for an encoded chunk or bundle job: the frame header and meta in `head`, the
// payload (moved out of the job) in `body`.
OutMsg frame_job(SourceJob& job) {
  OutMsg out;
  const auto& e = job.encoded;
  if (e.codec == ChunkCodec::none) {
    out.body.swap(job.raw);
    out.body.resize(job.raw_size);
  } else {
    out.body.swap(job.stored);
    out.body.resize(e.stored_size);
  }
  const auto stored = static_cast<std::uint32_t>(out.body.size());
  const auto level = static_cast<std::int8_t>(e.level);
  std::vector<std::byte> meta;
  MsgType type;
  if (job.kind == SourceJob::Kind::chunk) {
    auto m =
        encode_chunk_meta({job.entry, job.index, e.codec, level, job.raw_size, e.raw_hash, stored});
    meta.assign(m.begin(), m.end());
    type = MsgType::chunk;
  } else {
    BundleMeta b;
    b.codec = e.codec;
    b.level = level;
    b.raw_size = job.raw_size;
    b.raw_hash = e.raw_hash;
    b.stored_size = stored;
    b.members.swap(job.members);
    meta = encode_bundle_head(b);
    job.members.swap(b.members);
    type = MsgType::bundle;
  }
  auto h = encode_frame_header(type, static_cast<std::uint32_t>(meta.size()) + stored);
  out.head.assign(h.begin(), h.end());
  append(out.head, meta);
  return out;
}

// The receiver as a sink: the control connection for the manifest, the plan and the result;
// `streams` data connections taking the messages from a shared queue.
class NetSink : public Sink {
 public:
  NetSink(const Endpoint& endpoint, const SendOptions& options, std::string token,
          std::shared_ptr<tls::Context> tls, std::uint32_t chunk_size, AutoCodec* auto_codec)
      : endpoint_(endpoint),
        options_(options),
        token_(std::move(token)),
        tls_(std::move(tls)),
        chunk_size_(chunk_size),
        auto_(auto_codec),
        limiter_(options.rate),
        queue_(2 * static_cast<std::size_t>(options.streams) + 2, [auto_codec](double fill) {
          if (auto_codec) auto_codec->observe_backlog(fill);
        }) {}

  ~NetSink() override { stop_streams(); }

  const SendSummary& summary() const { return summary_; }

  std::vector<FilePlan> plan(const WalkResult& walk) override {
    // The manifest, and what the receiver already has.
    control_ = open_stream(endpoint_, options_, tls_);
    const auto session = client_handshake(control_, token_, Role::control, {});
    std::vector<format::EntryMeta> metas;
    for (const auto& e : walk.entries) metas.push_back(e.meta);
    control_.write_message(MsgType::begin,
                           encode_begin({chunk_size_, metas.size(), endpoint_.subdir}));
    for (const auto& batch : encode_entries(metas)) control_.write_message(MsgType::entries, batch);
    control_.write_message(MsgType::entries_end, {});
    std::map<std::uint32_t, FileStatus> status;
    for (;;) {
      auto m = control_.read_message(kMaxControl);
      if (m.type == MsgType::status_end) break;
      expect(m, MsgType::status, control_.peer());
      for (auto& s : decode_status(m.payload, metas.size())) status[s.entry] = std::move(s);
    }

    summary_.streams = options_.streams;
    std::vector<FilePlan> files;
    for (std::uint32_t i = 0; i < walk.entries.size(); ++i) {
      const auto& e = walk.entries[i];
      switch (e.meta.kind) {
        case format::EntryKind::directory:
          ++summary_.directories;
          continue;
        case format::EntryKind::symlink:
          ++summary_.symlinks;
          continue;
        case format::EntryKind::file:
          break;
      }
      ++summary_.files;
      summary_.bytes += e.meta.size;
      auto it = status.find(i);
      if (it != status.end() && it->second.complete) {
        summary_.bytes_skipped += e.meta.size;
        continue;
      }
      FilePlan plan;
      plan.entry = i;
      plan.source = &e;
      if (it != status.end()) {
        auto chunks = format::chunks_for(e.meta.size, chunk_size_);
        for (auto [first, n] : it->second.verified) {
          if (first >= chunks) continue;
          n = std::min(n, chunks - first);
          plan.verified.emplace_back(first, n);
          for (auto k = first; k < first + n; ++k)
            summary_.bytes_resumed += format::chunk_bytes(e.meta.size, chunk_size_, k);
        }
        std::sort(plan.verified.begin(), plan.verified.end());
      }
      files.push_back(std::move(plan));
    }

    for (int i = 0; i < options_.streams; ++i) {
      streams_.push_back(open_stream(endpoint_, options_, tls_));
      client_handshake(streams_.back(), token_, Role::data, session);
    }
    progress_.emplace(
        [this](const Progress& p) {
          if (!options_.progress) return true;
          SendProgress sp;
          static_cast<Progress&>(sp) = p;
          sp.wire_bytes = meter_.bytes();
          sp.link_rate = meter_.recent_rate();
          sp.bytes_resumed = summary_.bytes_resumed;
          return options_.progress(sp);
        },
        summary_.bytes, summary_.files);
    progress_->add_skipped(summary_.bytes_skipped + summary_.bytes_resumed);
    progress_->report(true);
    for (auto& s : streams_) {
      threads_.emplace_back([this, sp = &s] {
        try {
          // With a rate limit, the limiter, not the link, sets the pace: nothing to measure.
          run_stream(*sp, queue_, limiter_, meter_, options_.rate > 0 ? nullptr : auto_,
                     options_.streams);
        } catch (...) {
          queue_.fail(std::current_exception());
        }
        ++streams_done_;
      });
    }
    return files;
  }

  SourceOptions source_options() const override {
    SourceOptions o;
    o.bundle_members = kMaxBundleMembers;
    return o;
  }

  void put(SourceJob& job) override {
    try {
      push(job);
    } catch (const Error& e) {
      throw_receiver_reason(e);
    }
  }

  void push(SourceJob& job) {
    if (job.kind == SourceJob::Kind::file_end) {
      queue_.push({frame(MsgType::file_end, encode_file_end({job.entry, job.hash})), {}});
      progress_->file_done();
      progress_->report();
      return;
    }
    const auto codec = job.encoded.codec;
    auto message = frame_job(job);
    const auto stored = message.body.size();
    queue_.push(std::move(message));
    summary_.bytes_sent += job.raw_size + job.copied;
    summary_.bytes_deduplicated += job.copied;
    ++summary_.chunks_sent;
    count_stored(summary_.chunks_by_codec, codec);
    progress_->add_done(job.raw_size + job.copied);
    progress_->add_written(stored);
    if (job.kind == SourceJob::Kind::bundle)
      for (std::size_t i = 0; i < job.members.size(); ++i) progress_->file_done();
    progress_->report();
  }

  void finish() override {
    queue_.close();
    for (auto& t : threads_) t.join();
    threads_.clear();
    if (auto failure = queue_.failure()) {
      try {
        std::rethrow_exception(failure);
      } catch (const Error& e) {
        throw_receiver_reason(e);
      }
    }
    control_.write_message(MsgType::finish, {});
    auto reply = control_.read_message(kMaxControl);
    expect(reply, MsgType::result, control_.peer());
    auto result = decode_result(reply.payload);
    summary_.wire_bytes = meter_.bytes();
    if (result.failed > 0)
      throw Error(Errc::corrupt, std::to_string(result.failed) +
                                     " file(s) did not arrive intact; " + result.text +
                                     " (run the same send again)");
    progress_->finish();
  }

  // Cancelled: nothing more is read, but the messages already queued still go out and the
  // streams end normally, so the receiver verifies them and the next send does not repeat
  // them. Bounded: after kCancelDrainSeconds the connections are cut. Failed: cut at once.
  void abort(bool cancelled) noexcept override {
    if (cancelled) {
      queue_.close();
      auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                         std::chrono::duration<double>(kCancelDrainSeconds));
      while (streams_done_ < threads_.size() && Clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    } else {
      queue_.fail(std::make_exception_ptr(Error(Errc::cancelled, "the send stopped")));
    }
    stop_streams();
  }

 private:
  // A lost data stream may be the receiver giving up (a full disk): its control stream then
  // says why, and that reason replaces the reset. Anything else is rethrown as it is.
  [[noreturn]] void throw_receiver_reason(const Error& e) {
    if (e.code() == Errc::unavailable) {
      try {
        control_.set_timeout(2);
        expect(control_.read_message(kMaxControl), MsgType::result, control_.peer());
      } catch (const Error& reason) {
        if (std::string(reason.what()).find(" refused: ") != std::string::npos) throw reason;
      }
    }
    throw e;
  }

  void stop_streams() noexcept {
    for (auto& s : streams_) s.shutdown();
    for (auto& t : threads_)
      if (t.joinable()) t.join();
    threads_.clear();
  }

  Endpoint endpoint_;
  const SendOptions& options_;
  std::string token_;
  std::shared_ptr<tls::Context> tls_;
  std::uint32_t chunk_size_;
  AutoCodec* auto_;
  Socket control_;
  std::vector<Socket> streams_;
  std::vector<std::thread> threads_;
  std::atomic<std::size_t> streams_done_{0};
  RateLimiter limiter_;
  LinkMeter meter_;
  SendQueue queue_;
  std::optional<ProgressTracker> progress_;
  SendSummary summary_;
};

}  // namespace

SendSummary send(const std::vector<std::string>& sources, const std::string& destination,
                 const SendOptions& options) {
  auto started = Clock::now();
  if (sources.empty()) throw Error(Errc::invalid_argument, "nothing to send: no sources given");
  if (options.streams < 1 || options.streams > 64)
    throw Error(Errc::invalid_argument,
                "streams " + std::to_string(options.streams) + " is out of range: use 1 to 64");
  if (options.rate < 0) throw Error(Errc::invalid_argument, "the rate must not be negative");
  check_chunk_size(options.chunk_size);
  auto chunk_size = static_cast<std::uint32_t>(options.chunk_size);
  if (options.codec != Codec::automatic) fixed_setting(options.codec, options.level);
  Encoding encoding;
  encoding.codec = options.codec;
  encoding.level = options.level;
  encoding.resources = plan_resources(options.threads, options.memory_limit, options.chunk_size);
  auto token = resolve_token(options.token);
  auto endpoint = parse_endpoint(destination, true);
  if (!endpoint.subdir.empty()) {
    if (auto p = paths::problem(endpoint.subdir); !p.empty())
      throw Error(Errc::invalid_argument,
                  "destination subdirectory '" + endpoint.subdir + "': the path " + p);
  }
  auto walk = walk_sources(sources, {}, PathFilter(options.exclude, options.include));
  std::shared_ptr<tls::Context> tls;
  if (options.encrypt) {
    tls::Options t;
    t.token = token;
    t.ca_file = options.ca_file;
    t.server_name = options.server_name;
    tls = tls::Context::client(t);
  } else {
    log::warn("sending to " + destination +
              " without encryption (--no-encryption): anyone on the path can read and alter "
              "what is sent; use it on trusted links only");
  }
  std::optional<AutoCodec> auto_codec;
  if (options.codec == Codec::automatic) {
    // A socket's writes block once its buffers are full: they measure the link, not a cache.
    auto_codec.emplace(static_cast<int>(encoding.resources.workers), auto_max_level(options.level),
                       options.rate, std::numeric_limits<double>::infinity());
    encoding.auto_codec = &*auto_codec;
  }
  NetSink sink(endpoint, options, token, tls, chunk_size, encoding.auto_codec);
  run_transfer(walk, sink, chunk_size, encoding);
  auto summary = sink.summary();
  summary.seconds = seconds_since(started);
  return summary;
}

}  // namespace nubo::net
