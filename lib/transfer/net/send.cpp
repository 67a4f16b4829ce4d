// nubo::net::send: walk the sources, tell the receiver what is coming, learn what it already
// has, then run the archive pipeline (read and hash in order, compress on every core; the jobs
// are send_jobs.hpp's: chunks of large files, bundles of small ones) and hand the messages to
// the streams through a bounded queue. Chunks the receiver verified in an earlier attempt are
// read (for the whole-file hash) but not sent; files it has complete are not read.
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
#include "transfer/auto_codec.hpp"
#include "transfer/net/auth.hpp"
#include "transfer/net/rate.hpp"
#include "transfer/net/send_jobs.hpp"
#include "transfer/net/send_queue.hpp"
#include "transfer/net/socket.hpp"
#include "transfer/net/token.hpp"
#include "transfer/options.hpp"
#include "transfer/paths.hpp"
#include "transfer/pipeline.hpp"
#include "transfer/progress.hpp"
#include "transfer/walk.hpp"

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
// sent before the handshake (busy, encryption required) is shown as the server's reason.
Socket open_stream(const Endpoint& endpoint, const SendOptions& options,
                   const std::shared_ptr<tls::Context>& tls) {
  auto s = Socket::connect(endpoint, options.timeout_seconds);
  if (tls) {
    try {
      s.start_tls(*tls, endpoint.host);
    } catch (const Error&) {
      if (auto refusal = read_refusal(s)) throw *refusal;
      throw;
    }
  }
  return s;
}

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
  auto resources = plan_resources(options.threads, options.memory_limit, options.chunk_size);
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

  // The manifest, and what the receiver already has.
  auto control = open_stream(endpoint, options, tls);
  auto session = client_handshake(control, token, Role::control, {});
  std::vector<format::EntryMeta> metas;
  for (const auto& e : walk.entries) metas.push_back(e.meta);
  control.write_message(MsgType::begin, encode_begin({chunk_size, metas.size(), endpoint.subdir}));
  for (const auto& batch : encode_entries(metas)) control.write_message(MsgType::entries, batch);
  control.write_message(MsgType::entries_end, {});
  std::map<std::uint32_t, FileStatus> status;
  for (;;) {
    auto m = control.read_message(kMaxControl);
    if (m.type == MsgType::status_end) break;
    expect(m, MsgType::status, control.peer());
    for (auto& s : decode_status(m.payload, metas.size())) status[s.entry] = std::move(s);
  }

  SendSummary summary;
  summary.streams = options.streams;
  std::vector<FilePlan> files;
  std::uint64_t resumed = 0;
  for (std::uint32_t i = 0; i < walk.entries.size(); ++i) {
    const auto& e = walk.entries[i];
    switch (e.meta.kind) {
      case format::EntryKind::directory:
        ++summary.directories;
        continue;
      case format::EntryKind::symlink:
        ++summary.symlinks;
        continue;
      case format::EntryKind::file:
        break;
    }
    ++summary.files;
    summary.bytes += e.meta.size;
    auto it = status.find(i);
    if (it != status.end() && it->second.complete) {
      summary.bytes_skipped += e.meta.size;
      continue;
    }
    FilePlan plan{i, &e, {}};
    if (it != status.end()) {
      auto chunks = format::chunks_for(e.meta.size, chunk_size);
      for (auto [first, n] : it->second.verified) {
        if (first >= chunks) continue;
        n = std::min(n, chunks - first);
        plan.verified.emplace_back(first, n);
        for (auto k = first; k < first + n; ++k)
          resumed += format::chunk_bytes(e.meta.size, chunk_size, k);
      }
      std::sort(plan.verified.begin(), plan.verified.end());
    }
    files.push_back(std::move(plan));
  }
  summary.bytes_resumed = resumed;

  std::vector<Socket> streams;
  for (int i = 0; i < options.streams; ++i) {
    streams.push_back(open_stream(endpoint, options, tls));
    client_handshake(streams.back(), token, Role::data, session);
  }

  std::optional<AutoCodec> auto_codec;
  if (options.codec == Codec::automatic)
    // A socket's writes block once its buffers are full: they measure the link, not a cache.
    auto_codec.emplace(static_cast<int>(resources.workers), auto_max_level(options.level),
                       options.rate, std::numeric_limits<double>::infinity());
  AutoCodec* ac = auto_codec ? &*auto_codec : nullptr;

  RateLimiter limiter(options.rate);
  LinkMeter meter;
  SendQueue queue(2 * static_cast<std::size_t>(options.streams) + 2, [ac](double fill) {
    if (ac) ac->observe_backlog(fill);
  });
  ProgressTracker progress(
      [&](const Progress& p) {
        if (!options.progress) return true;
        SendProgress sp;
        static_cast<Progress&>(sp) = p;
        sp.wire_bytes = meter.bytes();
        sp.link_rate = meter.recent_rate();
        sp.bytes_resumed = resumed;
        return options.progress(sp);
      },
      summary.bytes, summary.files);
  progress.add_skipped(summary.bytes_skipped + resumed);
  progress.report(true);

  std::vector<std::thread> threads;
  std::atomic<std::size_t> streams_done{0};
  for (auto& s : streams) {
    threads.emplace_back([&, sp = &s] {
      try {
        run_stream(*sp, queue, limiter, meter, options.rate > 0 ? nullptr : ac, options.streams);
      } catch (...) {
        queue.fail(std::current_exception());
      }
      ++streams_done;
    });
  }
  auto stop_streams = [&] {
    for (auto& s : streams) s.shutdown();
    for (auto& t : threads)
      if (t.joinable()) t.join();
  };
  // Cancelled: nothing more is read, but the messages already queued still go out and the
  // streams end normally, so the receiver verifies them and the next send does not repeat
  // them. Bounded: after kCancelDrainSeconds the connections are cut.
  auto drain_streams = [&] {
    queue.close();
    auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                       std::chrono::duration<double>(kCancelDrainSeconds));
    while (streams_done < threads.size() && Clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    stop_streams();
  };

  PipelineStages<SendJob> stages;
  Producer producer(files, chunk_size);
  stages.produce = [&](SendJob& job) { return producer(job); };
  stages.work = [&](SendJob& job) { encode_job(job, options, ac); };
  stages.consume = [&](SendJob& job) {
    auto stored = job.out.body.size();
    queue.push(std::move(job.out));
    job.out = {};
    if (job.kind == SendJob::Kind::file_end) {
      progress.file_done();
    } else {
      summary.bytes_sent += job.raw_size + job.copied;
      summary.bytes_deduplicated += job.copied;
      ++summary.chunks_sent;
      switch (job.codec) {
        case ChunkCodec::none:
          ++summary.chunks_none;
          break;
        case ChunkCodec::lz4:
          ++summary.chunks_lz4;
          break;
        case ChunkCodec::zstd:
          ++summary.chunks_zstd;
          break;
        case ChunkCodec::zero:
          ++summary.chunks_zero;
          break;
      }
      progress.add_done(job.raw_size + job.copied);
      progress.add_written(stored);
      if (job.kind == SendJob::Kind::bundle) {
        for (std::size_t i = 0; i < job.members.size(); ++i) progress.file_done();
      }
    }
    progress.report();
  };
  try {
    run_pipeline(resources.slots, resources.workers, stages);
  } catch (const Error& e) {
    if (e.code() == Errc::cancelled) {
      drain_streams();
    } else {
      queue.fail(std::current_exception());
      stop_streams();
    }
    throw;
  } catch (...) {
    queue.fail(std::current_exception());
    stop_streams();
    throw;
  }
  queue.close();
  for (auto& t : threads) t.join();
  if (auto failure = queue.failure()) std::rethrow_exception(failure);

  control.write_message(MsgType::finish, {});
  auto reply = control.read_message(kMaxControl);
  expect(reply, MsgType::result, control.peer());
  auto result = decode_result(reply.payload);
  summary.wire_bytes = meter.bytes();
  summary.seconds = seconds_since(started);
  if (result.failed > 0)
    throw Error(Errc::corrupt, std::to_string(result.failed) + " file(s) did not arrive intact; " +
                                   result.text + " (run the same send again)");
  progress.finish();
  return summary;
}

}  // namespace nubo::net
