#include "nubo/interruption.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/http.hpp"
#include "common/json.hpp"
#include "common/log.hpp"
#include "nubo/error.hpp"

namespace nubo {
namespace {

// A metadata service's answer as JSON, through the one bounded reader; null when it is not.
nlohmann::json document_of(const std::string& body) {
  try {
    return json::parse(body, "cloud metadata");
  } catch (const Error&) {
    return nullptr;
  }
}

// A string field of an answer; "" when absent or of another type (nlohmann's value() throws).
std::string text_of(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? printable(it->get<std::string>().substr(0, 256))
                                               : std::string();
}

constexpr double kProbeSeconds = 0.1;
constexpr double kPollSeconds = 1;  // each poll's own limit

std::string base_url() {
  const char* v = std::getenv("NUBO_METADATA_URL");
  std::string url = v && *v ? v : "http://169.254.169.254";
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

http::Response get(const std::string& url, std::map<std::string, std::string> headers,
                   double seconds, const std::string& method = "GET") {
  http::Request r;
  r.method = method;
  r.url = url;
  r.headers = std::move(headers);
  r.timeout_seconds = seconds;
  r.total_seconds = seconds;
  r.max_response = 64 << 10;
  return http::request(r);
}

// "2017-09-18T08:22:00Z" or "Mon, 19 Sep 2016 18:29:47 GMT" -> seconds from now; -1 unknown.
double seconds_until(const std::string& when) {
  std::tm tm{};
  const char* end = ::strptime(when.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  if (!end) end = ::strptime(when.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (!end) return -1;
  return std::difftime(::timegm(&tm), std::time(nullptr));
}

// One provider: how to recognise its service, and how to read a notice from it.
struct Provider {
  std::string name;
  // True when the service answers as this provider's; may keep state (AWS's token).
  std::function<bool(double seconds)> probe;
  // A notice, or an empty action when there is none yet.
  std::function<InterruptionNotice()> poll;
};

std::vector<Provider> providers(const std::string& base, std::shared_ptr<std::string> token) {
  std::vector<Provider> out;
  out.push_back({"aws",
                 [base, token](double s) {
                   auto r = get(base + "/latest/api/token",
                                {{"X-aws-ec2-metadata-token-ttl-seconds", "21600"}}, s, "PUT");
                   if (r.status != 200 || r.body.empty() || r.body.size() > 1024) return false;
                   *token = r.body;
                   return true;
                 },
                 [base, token] {
                   InterruptionNotice n;
                   auto r = get(base + "/latest/meta-data/spot/instance-action",
                                {{"X-aws-ec2-metadata-token", *token}}, kPollSeconds);
                   if (r.status == 401) {  // the token expired: a new one, next time
                     auto t = get(base + "/latest/api/token",
                                  {{"X-aws-ec2-metadata-token-ttl-seconds", "21600"}}, kPollSeconds,
                                  "PUT");
                     if (t.status == 200) *token = t.body;
                   }
                   if (r.status != 200) return n;
                   auto j = document_of(r.body);
                   if (!j.is_object() || !j.contains("action")) return n;
                   n.cloud = "aws";
                   n.action = text_of(j, "action");
                   n.detail = r.body.substr(0, 512);
                   n.seconds_left = seconds_until(text_of(j, "time"));
                   return n;
                 }});
  out.push_back({"gcp",
                 [base](double s) {
                   auto r = get(base + "/computeMetadata/v1/instance/preempted",
                                {{"Metadata-Flavor", "Google"}}, s);
                   return r.status == 200 && (r.body == "TRUE" || r.body == "FALSE");
                 },
                 [base] {
                   InterruptionNotice n;
                   auto r = get(base + "/computeMetadata/v1/instance/preempted",
                                {{"Metadata-Flavor", "Google"}}, kPollSeconds);
                   if (r.status != 200 || r.body != "TRUE") return n;
                   n.cloud = "gcp";
                   n.action = "preempt";
                   n.detail = "instance/preempted = TRUE";
                   n.seconds_left = 30;  // GCP's documented notice
                   return n;
                 }});
  out.push_back({"azure",
                 [base](double s) {
                   auto r = get(base + "/metadata/scheduledevents?api-version=2020-07-01",
                                {{"Metadata", "true"}}, s);
                   auto j = document_of(r.body);
                   return r.status == 200 && j.is_object() && j.contains("Events");
                 },
                 [base] {
                   InterruptionNotice n;
                   auto r = get(base + "/metadata/scheduledevents?api-version=2020-07-01",
                                {{"Metadata", "true"}}, kPollSeconds);
                   auto j = document_of(r.body);
                   if (r.status != 200 || !j.is_object() || !j.contains("Events") ||
                       !j["Events"].is_array())
                     return n;
                   for (const auto& e : j["Events"]) {
                     if (!e.is_object()) continue;
                     const auto type = text_of(e, "EventType");
                     if (type != "Preempt" && type != "Terminate") continue;
                     n.cloud = "azure";
                     n.action = type == "Preempt" ? "preempt" : "terminate";
                     n.detail = e.dump().substr(0, 512);
                     n.seconds_left = seconds_until(text_of(e, "NotBefore"));
                     return n;
                   }
                   return n;
                 }});
  return out;
}

}  // namespace

struct InterruptionWatcher::Impl {
  Callback on_notice;
  double poll_seconds = 2;
  std::string cloud;
  std::mutex mutex;
  std::condition_variable wake;
  bool stopping = false;
  std::thread thread;
};

InterruptionWatcher::InterruptionWatcher(Callback on_notice, double poll_seconds)
    : impl_(std::make_unique<Impl>()) {
  impl_->on_notice = std::move(on_notice);
  impl_->poll_seconds = poll_seconds;
  auto token = std::make_shared<std::string>();
  const auto base = base_url();
  std::optional<Provider> found;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(kProbeSeconds);
  for (auto& p : providers(base, token)) {
    const double left =
        std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0.005) break;
    try {
      if (p.probe(left)) {
        found = std::move(p);
        break;
      }
    } catch (const Error&) {  // nothing there, or too slow: not this one
    }
  }
  if (!found) {
    log::debug("no cloud metadata service at " + base + ": interruption notices are off");
    return;
  }
  impl_->cloud = found->name;
  log::info("watching " + found->name + "'s metadata service (" + base +
            ") for interruption notices");
  impl_->thread = std::thread([impl = impl_.get(), provider = std::move(*found)] {
    std::unique_lock lock(impl->mutex);
    while (!impl->stopping) {
      lock.unlock();
      InterruptionNotice n;
      try {
        n = provider.poll();
      } catch (const std::exception& e) {  // a busy or restarting service: try again
        log::debug(std::string("metadata poll: ") + e.what());
      }
      if (!n.action.empty()) {
        impl->on_notice(n);
        return;
      }
      lock.lock();
      impl->wake.wait_for(lock, std::chrono::duration<double>(impl->poll_seconds),
                          [impl] { return impl->stopping; });
    }
  });
}

InterruptionWatcher::~InterruptionWatcher() {
  {
    std::lock_guard lock(impl_->mutex);
    impl_->stopping = true;
  }
  impl_->wake.notify_all();
  if (impl_->thread.joinable()) impl_->thread.join();
}

std::string InterruptionWatcher::cloud() const {
  return impl_->cloud;
}

}  // namespace nubo
