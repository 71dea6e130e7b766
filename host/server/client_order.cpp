#include "server/client_order.hpp"

#include "chat/ordered_json.hpp"
#include "server/response_builder.hpp"

namespace plinth::server {

std::string chat_text_in_client_order(const nlohmann::json& chat, std::string_view client_body,
                                      const std::vector<CopiedValue>& copied) {
  if (copied.empty()) return dump_json(chat);
  using nlohmann::ordered_json;
  const ordered_json client = parse_ordered_json(client_body);
  ordered_json out = parse_ordered_json(dump_json(chat));
  if (client.is_discarded() || out.is_discarded()) return dump_json(chat);
  for (const CopiedValue& c : copied) {
    const ordered_json::json_pointer from(c.from), to(c.to);
    if (client.contains(from) && out.contains(to)) out[to] = client[from];
  }
  return out.dump(-1, ' ', false, ordered_json::error_handler_t::replace);
}

}  // namespace plinth::server
