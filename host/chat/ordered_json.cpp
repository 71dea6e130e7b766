#include "chat/ordered_json.hpp"

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace plinth {

namespace {

using ordered_json = nlohmann::ordered_json;

// Objects up to this many members find a repeated key by a scan; larger ones through an index.
constexpr size_t kScanMembers = 16;

/// Builds the value bottom-up: a container's children are collected in movable vectors and moved
/// into it once it closes, so nothing is copied and no member is looked up twice.
// NOLINTNEXTLINE(bugprone-exception-escape): ordered_json's noexcept move calls ordered_map's.
class OrderedBuilder final : public nlohmann::json_sax<ordered_json> {
 public:
  bool null() override { return put(ordered_json(nullptr)); }
  bool boolean(bool v) override { return put(ordered_json(v)); }
  bool number_integer(number_integer_t v) override { return put(ordered_json(v)); }
  bool number_unsigned(number_unsigned_t v) override { return put(ordered_json(v)); }
  bool number_float(number_float_t v, const string_t& /*text*/) override {
    return put(ordered_json(v));
  }
  bool string(string_t& v) override { return put(ordered_json(std::move(v))); }
  bool binary(binary_t& v) override { return put(ordered_json::binary(std::move(v))); }
  bool start_object(std::size_t /*elements*/) override {
    open_.push_back(Frame{true, {}, {}, {}});
    return true;
  }
  bool key(string_t& k) override {
    open_.back().key = std::move(k);
    return true;
  }
  bool end_object() override {
    Frame f = std::move(open_.back());
    open_.pop_back();
    return put(object_of(std::move(f.members)));
  }
  bool start_array(std::size_t /*elements*/) override {
    open_.push_back(Frame{false, {}, {}, {}});
    return true;
  }
  bool end_array() override {
    Frame f = std::move(open_.back());
    open_.pop_back();
    ordered_json a = ordered_json::array();
    a.get_ref<ordered_json::array_t&>() = std::move(f.items);
    return put(std::move(a));
  }
  bool parse_error(std::size_t /*position*/, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& /*ex*/) override {
    failed_ = true;
    return false;
  }

  ordered_json take() {
    if (failed_ || !open_.empty()) return ordered_json(ordered_json::value_t::discarded);
    return std::move(root_);
  }

 private:
  struct Frame {
    bool object;
    std::string key;  // the key of the member being read
    std::vector<std::pair<std::string, ordered_json>> members;
    std::vector<ordered_json> items;
  };

  bool put(ordered_json&& v) {
    if (open_.empty()) {
      root_ = std::move(v);
    } else if (Frame& top = open_.back(); top.object) {
      top.members.emplace_back(std::move(top.key), std::move(v));
    } else {
      top.items.push_back(std::move(v));
    }
    return true;
  }

  static ordered_json object_of(std::vector<std::pair<std::string, ordered_json>>&& members) {
    ordered_json out = ordered_json::object();
    // ordered_map is a std::vector of (key, value) pairs; indexed through the vector.
    auto& obj = static_cast<std::vector<std::pair<const std::string, ordered_json>>&>(
        out.get_ref<ordered_json::object_t&>());
    obj.reserve(members.size());  // no reallocation below: the index's views stay valid
    std::unordered_map<std::string_view, size_t> index;
    const bool indexed = members.size() > kScanMembers;
    for (auto& [k, v] : members) {
      size_t at = obj.size();
      if (indexed) {
        if (auto it = index.find(k); it != index.end()) at = it->second;
      } else {
        for (size_t i = 0; i < obj.size(); ++i) {
          if (obj[i].first == k) {
            at = i;
            break;
          }
        }
      }
      if (at < obj.size()) {
        obj[at].second = std::move(v);  // a repeated key: first position, last value
        continue;
      }
      obj.emplace_back(std::move(k), std::move(v));
      if (indexed) index.emplace(obj.back().first, obj.size() - 1);
    }
    return out;
  }

  std::vector<Frame> open_;
  ordered_json root_;
  bool failed_ = false;
};

}  // namespace

ordered_json parse_ordered_json(std::string_view text) {
  OrderedBuilder builder;
  if (!ordered_json::sax_parse(text, &builder)) {
    return ordered_json(ordered_json::value_t::discarded);
  }
  return builder.take();
}

}  // namespace plinth
