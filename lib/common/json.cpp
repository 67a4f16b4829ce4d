#include "common/json.hpp"

#include <cmath>
#include <cstdio>
#include <variant>
#include <vector>

#include "nubo/error.hpp"

namespace nubo::json {
namespace {

using Json = nlohmann::json;

// Builds the document as nlohmann's own parser does, but stops at a key its object already
// has (nlohmann keeps the last one silently, and a catalog whose second "spot" wins is a typo
// nobody would see) and at a level deeper than kMaxDepth. Each open level remembers only how
// its parent reached it (a key or an index), so memory stays linear in the document whatever
// its depth; the path ("instances[3].spot") is spelled out only for a message.
class StrictBuilder final : public nlohmann::json_sax<Json> {
 public:
  bool null() override { return put(nullptr); }
  bool boolean(bool v) override { return put(v); }
  bool number_integer(number_integer_t v) override { return put(v); }
  bool number_unsigned(number_unsigned_t v) override { return put(v); }
  bool number_float(number_float_t v, const string_t&) override { return put(v); }
  bool string(string_t& v) override { return put(std::move(v)); }
  bool binary(binary_t& v) override { return put(Json::binary(std::move(v))); }
  bool start_object(std::size_t) override { return open(Json::object()); }
  bool start_array(std::size_t) override { return open(Json::array()); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t& k) override {
    if (open_.back().node->contains(k)) {
      problem_ = "the key '" + printable(k.substr(0, 200)) + "' appears twice in " + where();
      return false;
    }
    key_ = std::move(k);
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    problem_ = std::string("not valid JSON: ") + e.what();
    return false;
  }

  Json& document() { return root_; }
  const std::string& problem() const { return problem_; }

 private:
  // An open container, and how its parent reached it: under a key, or at an index.
  struct Level {
    Json* node;
    std::variant<std::string, std::size_t> step;
  };

  // Places a value where the parser is: the root, the end of an array, or under the last key.
  Json* place(Json&& value) {
    if (open_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    auto& parent = *open_.back().node;
    if (parent.is_array()) {
      parent.push_back(std::move(value));
      return &parent.back();
    }
    return &(parent[key_] = std::move(value));
  }
  bool put(Json&& value) {
    place(std::move(value));
    return true;
  }
  // A container stays where it was placed while it is open: its parent grows only after it.
  bool open(Json&& container) {
    if (open_.size() >= kMaxDepth) {
      problem_ = "nested deeper than " + std::to_string(kMaxDepth) + " levels at " + where();
      return false;
    }
    Level level{nullptr, std::string()};
    if (!open_.empty()) {
      const auto& parent = *open_.back().node;
      if (parent.is_array())
        level.step = parent.size();
      else
        level.step = key_;
    }
    level.node = place(std::move(container));
    open_.push_back(std::move(level));
    return true;
  }
  bool close() {
    open_.pop_back();
    return true;
  }
  // "the document", "instances", "instances[3].spot": the innermost levels when it is long.
  std::string where() const {
    if (open_.size() <= 1) return "the document";
    constexpr std::size_t kShown = 16;
    std::string out;
    const std::size_t first = open_.size() > kShown + 1 ? open_.size() - kShown : 1;
    if (first > 1) out = "...";
    for (std::size_t i = first; i < open_.size(); ++i) {
      if (const auto* index = std::get_if<std::size_t>(&open_[i].step)) {
        out += '[';  // piece by piece: GCC 12 warns falsely on "[" + std::to_string
        out += std::to_string(*index);
        out += ']';
      } else {
        const auto& k = std::get<std::string>(open_[i].step);
        if (!out.empty() && out != "...") out += '.';
        out += printable(k.substr(0, 64));
      }
    }
    return out;
  }

  Json root_;
  std::vector<Level> open_;
  std::string key_;
  std::string problem_;
};

std::string shown(const Json& v) {
  if (!v.is_number()) return std::string(v.type_name());
  return v.dump();
}

std::string bound_text(long double x) {
  char buf[64];
  if (x == std::floor(x) && std::fabs(x) < 1e19L)
    std::snprintf(buf, sizeof buf, "%.0Lf", x);
  else
    std::snprintf(buf, sizeof buf, "%.6Lg", x);
  return buf;
}

}  // namespace

nlohmann::json parse(std::string_view text, const std::string& what) {
  StrictBuilder builder;
  bool ok = false;
  try {
    ok = Json::sax_parse(text, &builder);
  } catch (const nlohmann::json::exception& e) {  // out_of_range for 1e400
    throw Error(Errc::invalid_argument, what + ": not valid JSON: " + e.what());
  }
  if (!ok) throw Error(Errc::invalid_argument, what + ": " + builder.problem());
  return std::move(builder.document());
}

namespace detail {

void out_of_range(const nlohmann::json& v, const std::string& what, long double min,
                  long double max) {
  throw Error(Errc::invalid_argument,
              what + ": " + shown(v) + " is outside " + bound_text(min) + " to " + bound_text(max));
}

double finite(const nlohmann::json& v, const std::string& what) {
  if (!v.is_number())
    throw Error(Errc::invalid_argument, what + ": a number is needed, not " + shown(v));
  const double d = v.get<double>();
  if (!std::isfinite(d))
    throw Error(Errc::invalid_argument, what + ": " + shown(v) + " is not a finite number");
  return d;
}

long double whole(const nlohmann::json& v, const std::string& what) {
  if (v.is_number_unsigned()) return static_cast<long double>(v.get<std::uint64_t>());
  if (v.is_number_integer()) return static_cast<long double>(v.get<std::int64_t>());
  const double d = finite(v, what);
  if (std::trunc(d) != d)
    throw Error(Errc::invalid_argument, what + ": " + shown(v) + " is not a whole number");
  return static_cast<long double>(d);
}

}  // namespace detail
}  // namespace nubo::json
