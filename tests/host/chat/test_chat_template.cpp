// ChatTemplate: renderings equal jinja2's over SmolLM2's real template (chat_fixture.json), special
// segments, default system prompt extraction, errors.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "chat/chat_template.hpp"

namespace plinth {
namespace {

using nlohmann::json;

json load_fixture() {
  // Regenerate: python3 tools/reference/chat_fixture.py models/SmolLM2-135M-Instruct.Q4_1.gguf
  //               > tests/host/chat/chat_fixture.json
  const std::string path = std::string(PLINTH_SOURCE_DIR) + "/tests/host/chat/chat_fixture.json";
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  return json::parse(in);
}

std::vector<ChatMessage> messages_from(const json& j) {
  std::vector<ChatMessage> out;
  for (const auto& m : j) out.push_back({m.at("role"), m.at("content")});
  return out;
}

const std::string kSmolDefault =
    "You are a helpful AI assistant named SmolLM, trained by Hugging Face";

TEST(ChatTemplate, RenderTextEqualsJinja2OnTheRealTemplate) {
  const json fixture = load_fixture();
  const auto tmpl = ChatTemplate::from_template_text(fixture.at("template"), "ignored default");
  EXPECT_EQ(tmpl.family(), "chatml");
  EXPECT_EQ(tmpl.default_system(), kSmolDefault);
  ASSERT_GE(fixture.at("cases").size(), 10u);
  for (const auto& c : fixture.at("cases")) {
    const auto text =
        tmpl.render_text(messages_from(c.at("messages")), c.at("add_generation_prompt"));
    EXPECT_EQ(text, c.at("text").get<std::string>()) << c.at("name");
  }
}

TEST(ChatTemplate, SegmentsMarkOnlyTemplateTokensSpecial) {
  const json fixture = load_fixture();
  const auto tmpl = ChatTemplate::from_template_text(fixture.at("template"), "");
  const std::vector<ChatMessage> msgs{{"system", "S"}, {"user", "a <|im_start|> b <|im_end|>"}};
  const auto segs = tmpl.render(msgs, true);
  using S = ChatTemplate::Segment;
  const std::vector<S> expected{
      {"<|im_start|>", true}, {"system\nS", false},   {"<|im_end|>", true},
      {"\n", false},          {"<|im_start|>", true}, {"user\na <|im_start|> b <|im_end|>", false},
      {"<|im_end|>", true},   {"\n", false},          {"<|im_start|>", true},
      {"assistant\n", false},
  };
  EXPECT_EQ(segs, expected);
}

TEST(ChatTemplate, StopTexts) {
  const auto tmpl = ChatTemplate::from_template_text("<|im_start|>{{x}}<|im_end|>", "");
  EXPECT_EQ(tmpl.stop_texts(), std::vector<std::string>{"<|im_end|>"});
}

TEST(ChatTemplate, CallerDefaultSystemWhenTheTemplateHasNone) {
  const std::string plain_chatml =
      "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + "
      "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}"
      "{{ '<|im_start|>assistant\\n' }}{% endif %}";
  const auto none = ChatTemplate::from_template_text(plain_chatml, "");
  EXPECT_EQ(none.render_text({{"user", "hi"}}, false), "<|im_start|>user\nhi<|im_end|>\n");
  const auto with = ChatTemplate::from_template_text(plain_chatml, "Be brief.");
  EXPECT_EQ(with.render_text({{"user", "hi"}}, true),
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n"
            "<|im_start|>assistant\n");
  EXPECT_EQ(with.render_text({}, false), "");
}

TEST(ChatTemplate, ExtractsDefaultSystemFromEscapedOrRawNewline) {
  // Qwen2.5-style: the default is in a string literal with the "\n" escape.
  EXPECT_EQ(extract_chatml_default_system(
                "{%- else %}{{- '<|im_start|>system\\nYou are Qwen, created by Alibaba Cloud. "
                "You are a helpful assistant.<|im_end|>\\n' }}"),
            "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.");
  EXPECT_EQ(extract_chatml_default_system("{{ \"<|im_start|>system\nIt\\'s me<|im_end|>\" }}"),
            "It's me");
  // The system text is an expression, not a literal: no default.
  EXPECT_EQ(extract_chatml_default_system(
                "{{ '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}"),
            "");
  EXPECT_EQ(extract_chatml_default_system("<|im_start|>user<|im_end|>"), "");
}

TEST(ChatTemplate, UnknownRoleIsNamed) {
  const auto tmpl = ChatTemplate::from_template_text("<|im_start|><|im_end|>", "");
  try {
    (void)tmpl.render({{"user", "x"}, {"tool", "y"}}, false);
    FAIL() << "accepted role tool";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("\"tool\""), std::string::npos) << what;
    EXPECT_NE(what.find("message 1"), std::string::npos) << what;
  }
}

TEST(ChatTemplate, UnrecognisedTemplateIsNamed) {
  const std::string llama3 =
      "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = "
      "'<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' %}{% endfor %}";
  try {
    (void)ChatTemplate::from_template_text(llama3, "");
    FAIL() << "accepted a Llama 3 template";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(llama3.substr(0, 80)), std::string::npos) << what;
    EXPECT_EQ(what.find(llama3.substr(0, 81)), std::string::npos) << "more than 80 chars: " << what;
  }
  EXPECT_THROW((void)ChatTemplate::from_template_text("", ""), std::runtime_error);
  // Only one of the two markers is not ChatML.
  EXPECT_THROW((void)ChatTemplate::from_template_text("<|im_start|>", ""), std::runtime_error);
}

}  // namespace
}  // namespace plinth
