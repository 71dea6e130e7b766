// plinth SDK — reading a plugin's config in create(). Header-only C++; needs nlohmann/json
// (https://github.com/nlohmann/json, 3.x: find_package(nlohmann_json 3) and link
// nlohmann_json::nlohmann_json), which plugin.hpp and the kind adapters do not.
//
// The host validates the manifest's `config` against the JSON Schema the plugin publishes and
// fills the schema's defaults before it calls create() (plugin.h, plinth_create_args.config_json).
// The schema is the one place for types, ranges, enums and unknown keys; a plugin only reads the
// config. ConfigReader checks what C++ needs on top: the JSON type of each value and that an
// integer fits the C++ type it is read into (never wraps), so a plugin created without the host
// (a unit test, another host) cannot misread a value. The rules a schema cannot express (min_n <=
// max_n) the plugin checks itself and reports through fail().
//
//   plinth::sdk::ConfigReader config("kv_paged", args.config_json);
//   c.block_size = config.get<uint32_t>("block_size", 16);
//   c.watermark = config.get<double>("watermark", 0.01);
//   if (c.min_n > c.max_n) config.fail("min_n", "must not exceed max_n");
//
// Every error is std::invalid_argument (INVALID_ARGUMENT at the boundary, plugin.hpp) of the form
// "<plugin>: config.<key> <what>, got <the value as sent>".
#pragma once

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace plinth::sdk {

/// A parsed plugin config and its typed getters. Owns a copy of the JSON; immutable after
/// construction, so its const members may be called from any number of threads at once.
class ConfigReader {
 public:
  /// Parses `config_json`, the text create() received (plinth_create_args.config_json): empty (or
  /// only whitespace) means `{}`. `plugin` names the plugin in every error message (its library
  /// name, e.g. "kv_paged"). Throws std::invalid_argument when the text is not JSON or not an
  /// object. Reads nothing after it returns (the text may be freed).
  ConfigReader(std::string_view plugin, std::string_view config_json)
      : ConfigReader(std::string(plugin), parse(plugin, config_json), "") {}

  /// As above; nullptr means `{}` (create args of a host that passes no config).
  ConfigReader(std::string_view plugin, const char* config_json)
      : ConfigReader(plugin,
                     config_json == nullptr ? std::string_view() : std::string_view(config_json)) {}

  /// Whether the config has `key` (absent keys read as their fallback). Throws only
  /// std::bad_alloc.
  bool has(std::string_view key) const { return find(key) != json_.end(); }

  /// The value of `key` as T, or `fallback` when the key is absent. T is bool, an integer type (not
  /// a character type), float, double or std::string. Checks only what C++ needs, not the
  /// schema's rules: a bool must be a JSON boolean, a string a JSON string, a floating-point
  /// value a JSON number (that fits T), an integer a JSON integer or a whole number such as 64.0
  /// (which the schema's "integer" accepts) that fits T without wrapping (no negative value for
  /// an unsigned T, no 2^40 for uint32_t). Throws std::invalid_argument "<plugin>: config.<key>
  /// must be ..., got <value>" otherwise.
  template <class T>
  T get(std::string_view key, T fallback) const {
    const auto it = find(key);
    return it == json_.end() ? fallback : convert<T>(*it, key);
  }

  /// The value of `key` as T (see get(key, fallback)); a required key: throws
  /// std::invalid_argument "<plugin>: config.<key> must be given" when it is absent.
  template <class T>
  T get(std::string_view key) const {
    const auto it = find(key);
    if (it == json_.end()) fail(key, "must be given");
    return convert<T>(*it, key);
  }

  /// The string value of `key` mapped to the enumerator its name stands for in `names`, or
  /// `fallback` when the key is absent. Throws std::invalid_argument naming the key and the names
  /// when the value is not a string or not one of them (C++ has no value to give it; the schema's
  /// "enum" lists the same names, so through the host this never happens).
  template <class E>
  E get_enum(std::string_view key, std::initializer_list<std::pair<std::string_view, E>> names,
             E fallback) const {
    const auto it = find(key);
    if (it == json_.end()) return fallback;
    std::string allowed;
    for (const auto& [name, value] : names) {
      if (it->is_string() && it->get_ref<const std::string&>() == name) return value;
      allowed += (allowed.empty() ? "\"" : ", \"") + std::string(name) + "\"";
    }
    fail_value(key, "must be one of " + allowed, *it);
  }

  /// The array value of `key` with each element read as T (see get(key, fallback)), or `{}`
  /// when the key is absent. Throws std::invalid_argument for a value that is not an array
  /// ("config.<key> must be an array") or an element that does not convert (named
  /// "config.<key>[<i>]").
  template <class T>
  std::vector<T> get_array(std::string_view key) const {
    std::vector<T> out;
    const nlohmann::json* a = array_at(key);
    if (a == nullptr) return out;
    out.reserve(a->size());
    for (size_t i = 0; i < a->size(); ++i) out.push_back(convert<T>((*a)[i], index(key, i)));
    return out;
  }

  /// The array of objects at `key`, each as a ConfigReader whose keys are named
  /// "config.<key>[<i>].<member>" in errors, or `{}` when the key is absent. Throws
  /// std::invalid_argument when the value is not an array or an element is not an object.
  std::vector<ConfigReader> get_objects(std::string_view key) const {
    std::vector<ConfigReader> out;
    const nlohmann::json* a = array_at(key);
    if (a == nullptr) return out;
    out.reserve(a->size());
    for (size_t i = 0; i < a->size(); ++i) {
      const std::string at = index(key, i);
      if (!(*a)[i].is_object()) fail_value(at, "must be an object", (*a)[i]);
      out.push_back(ConfigReader(plugin_, (*a)[i], prefix_ + at + "."));
    }
    return out;
  }

  /// Throws std::invalid_argument "<plugin>: config.<key> <what>": for the plugin's own rules
  /// that a JSON Schema cannot express (one option against another, an option against the
  /// model). `what` says what is wrong and the fix, e.g. "= 8 must not exceed config.max_n = 4:
  /// lower min_n or raise max_n".
  [[noreturn]] void fail(std::string_view key, std::string_view what) const {
    throw std::invalid_argument(plugin_ + ": config." + prefix_ + std::string(key) + " " +
                                std::string(what));
  }

  /// The parsed config object (read-only; valid while the reader lives), for what the getters do
  /// not cover.
  const nlohmann::json& json() const noexcept { return json_; }

 private:
  ConfigReader(std::string plugin, nlohmann::json j, std::string prefix)
      : plugin_(std::move(plugin)), json_(std::move(j)), prefix_(std::move(prefix)) {}

  static nlohmann::json parse(std::string_view plugin, std::string_view text) {
    if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
      return nlohmann::json::object();
    }
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
      throw std::invalid_argument(std::string(plugin) + ": config is not valid JSON: " + e.what());
    }
    if (!j.is_object()) {
      throw std::invalid_argument(std::string(plugin) + ": config must be a JSON object, got " +
                                  j.dump());
    }
    return j;
  }

  // nlohmann::json 3.x before 3.11 finds only by std::string.
  nlohmann::json::const_iterator find(std::string_view key) const {
    return json_.find(std::string(key));
  }

  static std::string index(std::string_view key, size_t i) {
    return std::string(key) + "[" + std::to_string(i) + "]";
  }

  [[noreturn]] void fail_value(std::string_view key, const std::string& what,
                               const nlohmann::json& v) const {
    fail(key, what + ", got " + v.dump());
  }

  const nlohmann::json* array_at(std::string_view key) const {
    const auto it = find(key);
    if (it == json_.end()) return nullptr;
    if (!it->is_array()) fail_value(key, "must be an array", *it);
    return &*it;
  }

  template <class T>
  T convert(const nlohmann::json& v, std::string_view key) const {
    if constexpr (std::is_same_v<T, bool>) {
      if (!v.is_boolean()) fail_value(key, "must be true or false", v);
      return v.get<bool>();
    } else if constexpr (std::is_integral_v<T>) {
      return to_integer<T>(v, key);
    } else if constexpr (std::is_floating_point_v<T>) {
      if (!v.is_number()) fail_value(key, "must be a number", v);
      const double d = v.get<double>();
      if (std::abs(d) > static_cast<double>(std::numeric_limits<T>::max())) {
        fail_value(
            key, "must be a number that fits a " + std::string(sizeof(T) == 4 ? "float" : "double"),
            v);
      }
      return static_cast<T>(d);
    } else {
      static_assert(std::is_same_v<T, std::string>,
                    "ConfigReader::get reads bool, integer types, float, double, std::string");
      if (!v.is_string()) fail_value(key, "must be a string", v);
      return v.get<std::string>();
    }
  }

  // An integer of T's range: a JSON integer, or a whole number (64.0, 1e3), as the schema's
  // "integer" accepts.
  template <class T>
  T to_integer(const nlohmann::json& v, std::string_view key) const {
    const std::string range = "must be an integer in " +
                              std::to_string(std::numeric_limits<T>::min()) + ".." +
                              std::to_string(std::numeric_limits<T>::max());
    if (v.is_number_unsigned()) {
      const auto u = v.get<uint64_t>();
      if (!std::in_range<T>(u)) fail_value(key, range, v);
      return static_cast<T>(u);
    }
    if (v.is_number_integer()) {
      const auto i = v.get<int64_t>();
      if (!std::in_range<T>(i)) fail_value(key, range, v);
      return static_cast<T>(i);
    }
    if (v.is_number_float()) {
      const double d = v.get<double>();
      constexpr double kTwo63 = 9223372036854775808.0;
      if (std::isfinite(d) && std::floor(d) == d) {
        if (d >= -kTwo63 && d < kTwo63 && std::in_range<T>(static_cast<int64_t>(d))) {
          return static_cast<T>(static_cast<int64_t>(d));
        }
        if (d >= kTwo63 && d < 2 * kTwo63 && std::in_range<T>(static_cast<uint64_t>(d))) {
          return static_cast<T>(static_cast<uint64_t>(d));
        }
      }
    }
    fail_value(key, range, v);
  }

  std::string plugin_;
  nlohmann::json json_;
  std::string prefix_;  // "capture_sizes[2]." for the elements of get_objects
};

}  // namespace plinth::sdk
