#include "common/json.hpp"

#include <vector>

#include "nubo/error.hpp"

namespace nubo::json {
namespace {

using Json = nlohmann::json;

// Builds the document as nlohmann's own parser does, but stops at a key its object already
// has: nlohmann keeps the last one silently, and a catalog whose second "spot" wins is a typo
// nobody would see. Labels name where the parser is ("instances[3]") for that message.
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
    if (open_.back()->contains(k)) {
      problem_ = "the key '" + k + "' appears twice in " + where();
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
  // Places a value where the parser is: the root, the end of an array, or under the last key.
  Json* place(Json&& value) {
    if (open_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    auto& parent = *open_.back();
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
    std::string label = open_.empty() ? "the document"
                        : open_.back()->is_array()
                            ? labels_.back() + "[" + std::to_string(open_.back()->size()) + "]"
                        : open_.size() == 1 ? key_
                                            : labels_.back() + "." + key_;
    open_.push_back(place(std::move(container)));
    labels_.push_back(std::move(label));
    return true;
  }
  bool close() {
    open_.pop_back();
    labels_.pop_back();
    return true;
  }
  std::string where() const { return labels_.back(); }

  Json root_;
  std::vector<Json*> open_;
  std::vector<std::string> labels_;
  std::string key_;
  std::string problem_;
};

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

}  // namespace nubo::json
