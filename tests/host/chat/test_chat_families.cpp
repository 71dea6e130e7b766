// Chat-template families: render_text equals jinja2's rendering of each family's real template
// (tests/fixtures/chat_templates/expected.json, from tools/reference/chat_fixture.py --families),
// the template's errors become errors naming the message, markers become special segments only
// when the vocabulary has them, recognition and --chat-template NAME|FILE.
#include <gtest/gtest.h>

#include <cstdio>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "chat/chat_template.hpp"

namespace plinth {
namespace {

using nlohmann::json;

const std::string kDir = std::string(PLINTH_SOURCE_DIR) + "/tests/fixtures/chat_templates/";

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

const json& fixture() {
  // Regenerate: python3 tools/reference/chat_fixture.py --families tests/fixtures/chat_templates
  //               > tests/fixtures/chat_templates/expected.json
  static const json j = json::parse(read_file(kDir + "expected.json"));
  return j;
}

std::vector<ChatMessage> messages_from(const json& j) {
  std::vector<ChatMessage> out;
  for (const auto& m : j) out.push_back({m.at("role"), m.at("content")});
  return out;
}

ChatTemplate::Options tokens_of(const json& family) {
  ChatTemplate::Options o;
  o.bos_token = family.at("bos_token").get<std::string>();
  o.eos_token = family.at("eos_token").get<std::string>();
  // Llama 3.2's template prints strftime_now(), which the fixture ran over a fixed day.
  if (family.at("family") == "llama3.2") o.date_string = fixture().at("strftime_now_date");
  return o;
}

std::string error_of(const ChatTemplate& t, const std::vector<ChatMessage>& msgs, bool gen) {
  try {
    (void)t.render(msgs, gen);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(ChatFamilies, EveryFamilyMatchesJinja2OnItsRealTemplate) {
  const json& f = fixture();
  // Every family is checked here or against llama.cpp's template files
  // (test_chat_llama_cpp_templates.cpp: qwen2.5, qwen3; mistral-nemo in both).
  ASSERT_EQ(f.at("families").size() + 2, ChatTemplate::known_families().size());
  for (const json& fam : f.at("families")) {
    const std::string name = fam.at("family");
    SCOPED_TRACE(name);
    const std::string text = read_file(kDir + fam.at("file").get<std::string>());
    const ChatTemplate t = ChatTemplate::from_template_text(text, tokens_of(fam));
    EXPECT_EQ(t.family(), name);
    ASSERT_GE(fam.at("cases").size(), 30u);
    size_t errors = 0;
    for (const json& c : fam.at("cases")) {
      const auto msgs = messages_from(c.at("messages"));
      const bool gen = c.at("add_generation_prompt");
      if (c.contains("text")) {
        try {
          EXPECT_EQ(t.render_text(msgs, gen), c.at("text").get<std::string>()) << c.at("name");
        } catch (const std::exception& e) {
          ADD_FAILURE() << c.at("name") << " threw " << e.what() << "; jinja2 rendered it";
        }
      } else {
        ++errors;
        const std::string what = error_of(t, msgs, gen);
        EXPECT_NE(what.find("the " + name + " chat template"), std::string::npos)
            << c.at("name") << ": jinja2 raised " << c.at("error") << ", plinth: \"" << what
            << "\"";
      }
    }
    // Only ChatML, Llama 3, Phi-3 and Zephyr render every conversation of the fixture.
    const bool lenient = name == "chatml" || name == "llama3" || name == "phi3" || name == "zephyr";
    EXPECT_EQ(errors == 0, lenient) << errors << " error cases";
  }
}

TEST(ChatFamilies, FamilyNamesRenderLikeTheRecognisedTemplate) {
  for (const json& fam : fixture().at("families")) {
    const std::string name = fam.at("family");
    const ChatTemplate by_name = ChatTemplate::from_family(name, tokens_of(fam));
    EXPECT_EQ(by_name.family(), name);
    const json& c = fam.at("cases").at(5);  // multi_turn+gen
    ASSERT_EQ(c.at("name"), "multi_turn+gen");
    if (c.contains("text")) {
      EXPECT_EQ(by_name.render_text(messages_from(c.at("messages")), true), c.at("text")) << name;
    }
    // Without the model's texts, each family uses its models' usual bos_token / eos_token.
    const ChatTemplate usual = ChatTemplate::from_family(name, {});
    if (name != "chatml") {  // OpenHermes' "<s>" is unused by ChatML; plinth says none
      EXPECT_EQ(usual.bos_token(), fam.at("bos_token")) << name;
    }
    EXPECT_EQ(usual.eos_token(), fam.at("eos_token")) << name;
  }
}

TEST(ChatFamilies, ErrorsNameTheMessage) {
  const auto gemma = ChatTemplate::from_family("gemma", {});
  EXPECT_NE(error_of(gemma, {{"system", "s"}, {"user", "u"}}, true)
                .find("chat message 0 (role \"system\"): the gemma chat template does not support "
                      "a system role"),
            std::string::npos);
  EXPECT_NE(error_of(gemma, {{"user", "a"}, {"assistant", "b"}, {"assistant", "c"}}, true)
                .find("chat message 2 (role \"assistant\")"),
            std::string::npos);
  const auto v3 = ChatTemplate::from_family("mistral-v3", {});
  // After the system message the index is still the caller's.
  EXPECT_NE(error_of(v3, {{"system", "s"}, {"user", "a"}, {"user", "b"}}, true)
                .find("chat message 2 (role \"user\"): the mistral-v3 chat template requires roles "
                      "to alternate"),
            std::string::npos);
  EXPECT_NE(error_of(v3, {}, true).find("the conversation is empty"), std::string::npos);
  // A default system prompt is prepended as a system message; Gemma refuses it by that name.
  ChatTemplate::Options o;
  o.default_system = "Be brief.";
  const auto gemma_default = ChatTemplate::from_family("gemma", o);
  EXPECT_NE(error_of(gemma_default, {{"user", "u"}}, true).find("the default system prompt"),
            std::string::npos);
  const auto gemma3_default = ChatTemplate::from_family("gemma3", o);
  EXPECT_EQ(gemma3_default.render_text({{"user", "u"}}, true),
            "<bos><start_of_turn>user\nBe brief.\n\nu<end_of_turn>\n<start_of_turn>model\n");
  EXPECT_NE(error_of(gemma3_default, {{"user", "u"}, {"user", "v"}}, true)
                .find("chat message 1 (role \"user\")"),
            std::string::npos);
}

TEST(ChatFamilies, MarkersAndBosAreSpecialSegmentsContentIsText) {
  const auto llama3 = ChatTemplate::from_family("llama3", {});
  using S = ChatTemplate::Segment;
  const std::vector<S> expected{
      {"<|begin_of_text|>", true},
      {"<|start_header_id|>", true},
      {"user", false},
      {"<|end_header_id|>", true},
      {"\n\nhi <|eot_id|>", false},
      {"<|eot_id|>", true},
      {"<|start_header_id|>", true},
      {"assistant", false},
      {"<|end_header_id|>", true},
      {"\n\n", false},
  };
  EXPECT_EQ(llama3.render({{"user", " hi <|eot_id|> "}}, true), expected);
}

TEST(ChatFamilies, MarkersTheVocabularyLacksAreText) {
  // TinyLlama's vocabulary (Zephyr template) has "</s>" but no "<|user|>" token.
  ChatTemplate::Options o;
  o.is_special_token = [](std::string_view t) { return t == "<s>" || t == "</s>"; };
  const auto zephyr = ChatTemplate::from_family("zephyr", o);
  using S = ChatTemplate::Segment;
  const std::vector<S> expected{
      {"<|user|>\nhi", false}, {"</s>", true}, {"\n<|assistant|>\n", false}};
  EXPECT_EQ(zephyr.render({{"user", "hi"}}, true), expected);
  // Llama 2: "[INST]" and "<<SYS>>" are plain text, BOS / EOS special.
  const auto llama2 = ChatTemplate::from_family("llama2", o);
  const std::vector<S> l2{
      {"<s>", true}, {"[INST] <<SYS>>\nS\n<</SYS>>\n\nQ [/INST] A ", false}, {"</s>", true}};
  EXPECT_EQ(llama2.render({{"system", "S"}, {"user", "Q"}, {"assistant", "A"}}, true), l2);
  // A model without BOS: nothing where the template writes bos_token.
  ChatTemplate::Options no_bos;
  no_bos.bos_token = "";
  EXPECT_EQ(ChatTemplate::from_family("gemma", no_bos).render_text({{"user", "x"}}, false),
            "<start_of_turn>user\nx<end_of_turn>\n");
}

TEST(ChatFamilies, ReplyPrefixMarkerEndsTheGenerationPrompt) {
  // Mistral Nemo's [TOOL_CALLS] after the prompt: a special segment where the vocabulary has the
  // token (Tekken), plain text where it lacks it; nothing without a generation prompt.
  ChatTemplate::RenderOptions ro;
  ro.reply_prefix_marker = "[TOOL_CALLS]";
  ChatTemplate::Options tekken;
  tekken.is_special_token = [](std::string_view) { return true; };
  const auto nemo = ChatTemplate::from_family("mistral-nemo", tekken);
  const auto segs = nemo.render({{"user", "hi"}}, true, ro);
  ASSERT_FALSE(segs.empty());
  EXPECT_EQ(segs.back(), (ChatTemplate::Segment{"[TOOL_CALLS]", true}));
  EXPECT_EQ(nemo.render_text({{"user", "hi"}}, false, ro), "<s>[INST]hi[/INST]");
  ChatTemplate::Options other;
  other.is_special_token = [](std::string_view t) { return t == "<s>" || t == "</s>"; };
  const auto plain = ChatTemplate::from_family("mistral-nemo", other);
  EXPECT_EQ(plain.render({{"user", "hi"}}, true, ro).back(),
            (ChatTemplate::Segment{"[INST]hi[/INST][TOOL_CALLS]", false}));
}

TEST(ChatFamilies, Llama32DatesTheSystemTurnTodayUnlessGivenADate) {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char today[32];
  today[std::strftime(today, sizeof today, "%d %b %Y", &local)] = 0;
  const auto l32 = ChatTemplate::from_family("llama3.2", {});
  const std::string text = l32.render_text({{"user", "hi"}}, true);
  EXPECT_NE(text.find(std::string("\nToday Date: ") + today + "\n\n<|eot_id|>"), std::string::npos)
      << text;
  ChatTemplate::Options dated;
  dated.date_string = "01 Jan 2030";
  EXPECT_NE(ChatTemplate::from_family("llama3.1", dated)
                .render_text({{"user", "hi"}}, true)
                .find("Today Date: 01 Jan 2030\n"),
            std::string::npos);
  EXPECT_NE(ChatTemplate::from_family("llama3.1", {})
                .render_text({{"user", "hi"}}, true)
                .find("Today Date: 26 Jul 2024\n"),
            std::string::npos);
}

TEST(ChatFamilies, StopTexts) {
  auto stops = [](const std::string& name) {
    return ChatTemplate::from_family(name, {}).stop_texts();
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(stops("chatml"), V{"<|im_end|>"});
  EXPECT_EQ(stops("llama2"), V{"</s>"});
  EXPECT_EQ(stops("llama3"), (V{"<|eot_id|>", "<|end_of_text|>"}));
  EXPECT_EQ(stops("llama3.2"), (V{"<|eot_id|>", "<|eom_id|>", "<|end_of_text|>"}));
  EXPECT_EQ(stops("mistral-v3"), V{"</s>"});
  EXPECT_EQ(stops("gemma3"), (V{"<end_of_turn>", "<eos>"}));
  EXPECT_EQ(stops("phi3"), (V{"<|end|>", "<|endoftext|>"}));
  EXPECT_EQ(stops("zephyr"), V{"</s>"});
}

TEST(ChatFamilies, RecognitionRefusesOtherRenderings) {
  // A Llama 3 template with a dated system block but not 3.1's default date: neither llama3 nor
  // llama3.1.
  const std::string llama31 =
      "{{- bos_token }}{%- set date_string = \"26 Jul 2024\" %}{{- \"<|start_header_id|>system"
      "<|end_header_id|>\\n\\n\" }}{{- \"Cutting Knowledge Date: December 2023\\n\" }}"
      "{{- '<|eot_id|>' }}";
  // Phi-4 uses ChatML markers with <|im_sep|>.
  const std::string phi4 =
      "{% for message in messages %}{{'<|im_start|>system<|im_sep|>' + message['content'] + "
      "'<|im_end|>'}}{% endfor %}";
  // A ChatML template that rewrites <think> blocks in history (QwQ's) is not plain ChatML, nor
  // Qwen3's.
  const std::string qwq =
      "{%- for message in messages %}{%- set content = message.content.split('</think>')[-1] %}"
      "{{- '<|im_start|>' + message.role + '\\n' + content + '<|im_end|>\\n' }}{%- endfor %}"
      "{{- '<|im_start|>assistant\\n<think>\\n' }}";
  for (const std::string& t : {llama31, phi4, qwq}) {
    try {
      (void)ChatTemplate::from_template_text(t, ChatTemplate::Options{});
      ADD_FAILURE() << "recognised " << t;
    } catch (const std::runtime_error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(t.substr(0, 80)), std::string::npos) << what;
      EXPECT_NE(what.find("chatml, "), std::string::npos) << what;
      EXPECT_NE(what.find("zephyr"), std::string::npos) << what;
      EXPECT_NE(what.find("--chat-template"), std::string::npos) << what;
    }
  }
}

TEST(ChatFamilies, NameOrFile) {
  EXPECT_EQ(ChatTemplate::from_name_or_file("mistral-v1", {}).family(), "mistral-v1");
  EXPECT_EQ(ChatTemplate::from_name_or_file(kDir + "gemma3.jinja", {}).family(), "gemma3");
  try {
    (void)ChatTemplate::from_name_or_file("llama-2", {});
    ADD_FAILURE() << "accepted llama-2";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("\"llama-2\""), std::string::npos) << what;
    EXPECT_NE(what.find("llama2, "), std::string::npos) << what;
  }
  // A file whose template is not recognised: the error names the file and the template.
  const std::string path = testing::TempDir() + "plinth_vicuna.jinja";
  std::ofstream(path) << "{% for message in messages %}USER: {{ message['content'] }}{% endfor %}";
  try {
    (void)ChatTemplate::from_name_or_file(path, {});
    ADD_FAILURE() << "accepted " << path;
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(path), std::string::npos) << what;
    EXPECT_NE(what.find("unrecognised chat template \"{% for"), std::string::npos) << what;
  }
  std::remove(path.c_str());
  EXPECT_THROW((void)ChatTemplate::from_family("nope", {}), std::invalid_argument);
}

}  // namespace
}  // namespace plinth
