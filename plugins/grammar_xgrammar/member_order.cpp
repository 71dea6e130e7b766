#include "member_order.hpp"

#include <string>
#include <vector>

namespace plinth::grammar {
namespace {

using ordered_json = nlohmann::ordered_json;

constexpr int kMaxDepth = 128;  // beyond, members keep their order (recursive $refs)

const ordered_json& empty_schema() {
  static const ordered_json empty = ordered_json::object();
  return empty;
}

/// `s` with local "$ref"s followed (a few hops at most); the empty schema when one dangles.
const ordered_json& resolve(const ordered_json& s, const ordered_json& root) {
  const ordered_json* cur = &s;
  for (int hop = 0; hop < 16 && cur->is_object(); ++hop) {
    const auto ref = cur->find("$ref");
    if (ref == cur->end() || !ref->is_string()) return *cur;
    const std::string& r = ref->get_ref<const std::string&>();
    if (r.empty() || r[0] != '#') return empty_schema();
    try {
      cur = &root.at(ordered_json::json_pointer(r.substr(1)));
    } catch (const std::exception&) {
      return empty_schema();
    }
  }
  return cur->is_object() ? *cur : empty_schema();
}

/// Whether `s`'s "type" (absent: any) admits the JSON type of `v`.
bool type_fits(const ordered_json& s, const ordered_json& v) {
  const auto t = s.find("type");
  if (t == s.end()) return true;
  auto fits = [&](const ordered_json& name) {
    if (!name.is_string()) return false;
    const std::string& n = name.get_ref<const std::string&>();
    if (n == "object") return v.is_object();
    if (n == "array") return v.is_array();
    if (n == "string") return v.is_string();
    if (n == "integer") return v.is_number_integer() || v.is_number_unsigned();
    if (n == "number") return v.is_number();
    if (n == "boolean") return v.is_boolean();
    if (n == "null") return v.is_null();
    return false;
  };
  if (t->is_array()) {
    for (const auto& n : *t) {
      if (fits(n)) return true;
    }
    return false;
  }
  return fits(*t);
}

/// How well alternative `s` describes `v`: -1 when its type does not fit, else the number of
/// `v`'s members that its "properties" lists.
int score(const ordered_json& s, const ordered_json& v) {
  if (!s.is_object() || !type_fits(s, v)) return -1;
  int n = 0;
  const auto props = s.find("properties");
  if (v.is_object() && props != s.end() && props->is_object()) {
    for (const auto& [k, unused] : v.items()) n += props->contains(k) ? 1 : 0;
  }
  return n;
}

/// The schema under `s` that describes `v`: through $refs and into the best anyOf / oneOf
/// alternative.
const ordered_json& applicable(const ordered_json& s, const ordered_json& v,
                               const ordered_json& root) {
  const ordered_json* cur = &resolve(s, root);
  for (int hop = 0; hop < 16; ++hop) {
    const ordered_json* best = nullptr;
    int best_score = -1;
    for (const char* combinator : {"anyOf", "oneOf"}) {
      const auto alts = cur->find(combinator);
      if (alts == cur->end() || !alts->is_array()) continue;
      for (const auto& alt : *alts) {
        const ordered_json& a = resolve(alt, root);
        const int sc = score(a, v);
        if (sc > best_score) {
          best_score = sc;
          best = &a;
        }
      }
    }
    if (best == nullptr) return *cur;
    cur = best;
  }
  return *cur;
}

void order(ordered_json& v, const ordered_json& s_in, const ordered_json& root, int depth) {
  if (depth > kMaxDepth || !(v.is_object() || v.is_array())) return;
  const ordered_json& s = applicable(s_in, v, root);
  if (v.is_array()) {
    const auto prefix = s.find("prefixItems");
    const auto items = s.find("items");
    for (size_t i = 0; i < v.size(); ++i) {
      const ordered_json* item = &empty_schema();
      if (prefix != s.end() && prefix->is_array() && i < prefix->size()) {
        item = &(*prefix)[i];
      } else if (items != s.end() && items->is_object()) {
        item = &*items;
      }
      order(v[i], *item, root, depth + 1);
    }
    return;
  }
  const auto props = s.find("properties");
  const auto extra = s.find("additionalProperties");
  const ordered_json& other = extra != s.end() && extra->is_object() ? *extra : empty_schema();
  ordered_json out = ordered_json::object();
  if (props != s.end() && props->is_object()) {
    for (const auto& [k, ps] : props->items()) {
      const auto it = v.find(k);
      if (it == v.end()) continue;
      ordered_json member = std::move(*it);
      order(member, ps, root, depth + 1);
      out[k] = std::move(member);
    }
  }
  for (auto& [k, member] : v.items()) {
    if (out.contains(k)) continue;
    ordered_json m = std::move(member);
    order(m, other, root, depth + 1);
    out[k] = std::move(m);
  }
  v = std::move(out);
}

}  // namespace

void order_members_like_schema(ordered_json& instance, const ordered_json& schema) {
  order(instance, schema, schema, 0);
}

}  // namespace plinth::grammar
