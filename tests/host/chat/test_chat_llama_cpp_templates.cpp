// Chat families against llama.cpp's copies of the real templates (models/templates/*.jinja of the
// llama.cpp that llama-cpp-python==0.3.36 vendors, fetched by tools/fetch_llama_cpp_assets, not
// committed): recognition picks the family, and render_text equals jinja2's rendering
// (tests/fixtures/chat_templates/llama_cpp_expected.json, from tools/reference/chat_fixture.py
// --llama-cpp), including Qwen3's enable_thinking and <think> history, Qwen2.5's tools and tool
// turns, or the error jinja2 raised.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "../llama_cpp_assets.hpp"
#include "chat/chat_template.hpp"

namespace plinth {
namespace {

using nlohmann::json;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

const json& fixture() {
  static const json j = json::parse(read_file(
      std::string(PLINTH_SOURCE_DIR) + "/tests/fixtures/chat_templates/llama_cpp_expected.json"));
  return j;
}

std::vector<ChatMessage> messages_from(const json& j) {
  std::vector<ChatMessage> out;
  for (const auto& m : j) {
    ChatMessage msg{m.at("role"), m.at("content")};
    if (m.contains("reasoning_content") && !m.at("reasoning_content").is_null()) {
      msg.reasoning_content = m.at("reasoning_content").get<std::string>();
    }
    for (const auto& c : m.value("tool_calls", json::array())) {
      const json& fn = c.at("function");
      msg.tool_calls.push_back({c.at("id"), fn.at("name"), fn.at("arguments").dump()});
    }
    if (m.contains("tool_call_id")) msg.tool_call_id = m.at("tool_call_id").get<std::string>();
    out.push_back(msg);
  }
  return out;
}

TEST(ChatLlamaCppTemplates, RecognisedAndRenderedLikeJinja2) {
  if (!test::llama_cpp_assets_present()) GTEST_SKIP() << test::kLlamaCppAssetsMissing;
  for (const json& entry : fixture().at("templates")) {
    const std::string name = entry.at("family");
    const std::string file = entry.at("file");
    SCOPED_TRACE(file);
    const std::string text =
        read_file((test::llama_cpp_assets_dir() / "templates" / file).string());
    ChatTemplate::Options o;
    o.bos_token = entry.at("bos_token").get<std::string>();
    o.eos_token = entry.at("eos_token").get<std::string>();
    if (name == "llama3.2") o.date_string = fixture().at("strftime_now_date");
    const ChatTemplate t = ChatTemplate::from_template_text(text, o);
    ASSERT_EQ(t.family(), name);
    for (const json& c : entry.at("cases")) {
      const auto msgs = messages_from(c.at("messages"));
      const bool gen = c.at("add_generation_prompt");
      ChatTemplate::RenderOptions ro;
      if (c.contains("enable_thinking")) ro.enable_thinking = c.at("enable_thinking").get<bool>();
      for (const json& tool : c.value("tools", json::array())) ro.tools.push_back(tool.dump());
      if (c.contains("text")) {
        try {
          EXPECT_EQ(t.render_text(msgs, gen, ro), c.at("text").get<std::string>()) << c.at("name");
        } catch (const std::exception& e) {
          ADD_FAILURE() << c.at("name") << " threw " << e.what() << "; jinja2 rendered it";
        }
      } else {
        try {
          (void)t.render(msgs, gen, ro);
          ADD_FAILURE() << c.at("name") << ": jinja2 raised " << c.at("error")
                        << ", plinth did not";
        } catch (const std::invalid_argument& e) {
          EXPECT_NE(std::string(e.what()).find("the " + name + " chat template"), std::string::npos)
              << c.at("name") << ": " << e.what();
        }
      }
    }
  }
}

TEST(ChatLlamaCppTemplates, QwenHasItsOwnFamiliesNotChatml) {
  // Qwen2.5's default system prompt also by name; Qwen3's enable_thinking.
  const auto q25 = ChatTemplate::from_family("qwen2.5", {});
  EXPECT_EQ(q25.render_text({{"user", "hi"}}, true),
            "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful "
            "assistant.<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
  const auto q3 = ChatTemplate::from_family("qwen3", {});
  EXPECT_EQ(q3.render_text({{"user", "hi"}}, true, {false, {}, {}}),
            "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n");
  EXPECT_EQ(q3.render_text({{"user", "hi"}}, true),
            "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
  // The think markers are special segments (Qwen3's vocabulary has them as tokens).
  const auto segs = q3.render({{"user", "hi"}}, true, {false, {}, {}});
  EXPECT_TRUE(segs.at(segs.size() - 4).special);
  EXPECT_EQ(segs.at(segs.size() - 4).text, "<think>");
}

}  // namespace
}  // namespace plinth
