// The built libplinth_spec_decode.so through the C ABI: dlopen, the entry symbol, the descriptor;
// create with method ngram; num_lookahead_slots (the schedule), propose_batch with per-sequence
// limits, propose (1.0), verify and get_stats (an older out-struct not overrun); creates refused
// with a message naming the fix (layer_skip without plinth.early_exit/1, draft without a draft
// backend, a bad config).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>

#include <plinth/abi_versions.h>
#include <plinth/ext_early_exit.h>
#include <plinth/plinth.h>

#include <nlohmann/json.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "ngram_proposer.hpp"
#include "spec_config.hpp"

namespace {

using Tokens = std::vector<int32_t>;

// A backend whose lifecycle answers no extension (get_extension returns NULL).
const void* no_extension(plinth_instance*, const char*) {
  return nullptr;
}

class SpecDecodeAbi : public testing::Test {
 protected:
  void SetUp() override {
    const std::string path = std::string(PLINTH_PLUGIN_DIR) + "/libplinth_spec_decode.so";
    lib_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(lib_, nullptr) << dlerror();
    auto entry = reinterpret_cast<plinth_plugin_entry_fn>(dlsym(lib_, PLINTH_PLUGIN_ENTRY_SYMBOL));
    ASSERT_NE(entry, nullptr);
    desc_ = entry();
    vt_ = static_cast<const plinth_speculator_vtable*>(desc_->vtable);
    err_.struct_size = sizeof(err_);
    args_.struct_size = sizeof(args_);
    args_.instance_name = "spec_decode";
  }
  void TearDown() override {
    for (plinth_instance* i : instances_) vt_->lifecycle.destroy(i);
    if (lib_ != nullptr) dlclose(lib_);
  }
  plinth_instance* create(const char* config) {
    args_.config_json = config;
    plinth_instance* inst = nullptr;
    err_ = plinth_error{};
    err_.struct_size = sizeof(err_);
    if (vt_->lifecycle.create(&args_, &inst, &err_) != PLINTH_OK) return nullptr;
    instances_.push_back(inst);
    return inst;
  }
  plinth_spec_stats stats(plinth_instance* inst) {
    plinth_spec_stats s{};
    s.struct_size = sizeof(s);
    EXPECT_EQ(vt_->get_stats(inst, &s, &err_), PLINTH_OK) << err_.message;
    return s;
  }

  void* lib_ = nullptr;
  const plinth_plugin_descriptor* desc_ = nullptr;
  const plinth_speculator_vtable* vt_ = nullptr;
  plinth_create_args args_{};
  plinth_error err_{};
  std::vector<plinth_instance*> instances_;
  // Pointed to by args_ in the tests that wire them.
  plinth_model_desc model_{};
  plinth_backend_vtable backend_{};
  plinth_kv_cache_vtable kv_{};
  int dummy_instance_ = 0;
};

plinth_spec_seq seq_of(plinth_seq_id id, const Tokens& t) {
  return {id, t.data(), static_cast<uint32_t>(t.size())};
}

Tokens row(const plinth_spec_proposal& p, uint32_t i) {
  const int32_t* r = p.draft_tokens + size_t{i} * p.max_draft;
  return {r, r + p.num_draft[i]};
}

// Repetitive histories: n-gram lookup proposes at least 6 tokens for each.
const Tokens kA{1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3};
const Tokens kB{20, 21, 22, 23, 24, 25, 26, 27, 20, 21};
const Tokens kC{30, 31, 32, 33, 34, 35, 36, 37, 38, 30, 31};

}  // namespace

TEST_F(SpecDecodeAbi, Descriptor) {
  EXPECT_EQ(desc_->abi_major, PLINTH_ABI_MAJOR);
  EXPECT_EQ(desc_->abi_minor, PLINTH_ABI_MINOR);
  EXPECT_GE(desc_->abi_minor, 2u);
  EXPECT_EQ(desc_->kind, PLINTH_KIND_SPECULATOR);
  EXPECT_STREQ(desc_->name, "spec_decode");
  EXPECT_STREQ(desc_->config_schema, plinth::spec_decode::kConfigSchema);
  EXPECT_NO_THROW(nlohmann::json::parse(desc_->config_schema));
  EXPECT_EQ(vt_->struct_size, sizeof(plinth_speculator_vtable));
  EXPECT_GE(vt_->struct_size, PLINTH_ABI_1_2_SIZEOF_SPECULATOR_VTABLE);
  EXPECT_NE(vt_->propose, nullptr);
  EXPECT_NE(vt_->verify, nullptr);
  EXPECT_NE(vt_->release_seq, nullptr);
  EXPECT_NE(vt_->get_stats, nullptr);
  EXPECT_NE(vt_->num_lookahead_slots, nullptr);
  EXPECT_NE(vt_->propose_batch, nullptr);
}

TEST_F(SpecDecodeAbi, LookaheadSlotsFollowTheSchedule) {
  plinth_instance* inst = create(R"({"method": "ngram", "num_speculative_tokens": 6})");
  ASSERT_NE(inst, nullptr) << err_.message;
  EXPECT_EQ(vt_->num_lookahead_slots(inst, 0), 6u);  // nothing ran yet: as one sequence
  EXPECT_EQ(vt_->num_lookahead_slots(inst, 4), 6u);
  EXPECT_EQ(vt_->num_lookahead_slots(inst, 5), 3u);
  EXPECT_EQ(vt_->num_lookahead_slots(inst, 16), 3u);
  EXPECT_EQ(vt_->num_lookahead_slots(inst, 17), 0u);
  plinth_instance* custom = create(
      R"({"draft_len_schedule": [{"max_batch_size": 2, "num_speculative_tokens": 3},
                                 {"max_batch_size": 64, "num_speculative_tokens": 1}]})");
  ASSERT_NE(custom, nullptr) << err_.message;
  EXPECT_EQ(vt_->num_lookahead_slots(custom, 2), 3u);
  EXPECT_EQ(vt_->num_lookahead_slots(custom, 3), 1u);
  EXPECT_EQ(vt_->num_lookahead_slots(custom, 65), 0u);
}

TEST_F(SpecDecodeAbi, ProposeBatchRespectsPerSequenceLimits) {
  plinth_instance* inst =
      create(R"({"method": "ngram", "num_speculative_tokens": 4, "min_n": 1, "max_n": 3,
                 "adaptive": false})");
  ASSERT_NE(inst, nullptr) << err_.message;
  const std::vector<plinth_spec_seq> seqs{seq_of(11, kA), seq_of(12, kB), seq_of(13, kC)};
  const std::vector<uint32_t> max_draft{2, 0, 16};
  plinth_spec_propose_args a{};
  a.struct_size = sizeof(a);
  a.num_seqs = 3;
  a.seqs = seqs.data();
  a.max_draft = max_draft.data();
  a.batch_size = 3;
  plinth_spec_proposal p{};
  p.struct_size = sizeof(p);
  ASSERT_EQ(vt_->propose_batch(inst, &a, &p, &err_), PLINTH_OK) << err_.message;
  EXPECT_EQ(p.struct_size, sizeof(plinth_spec_proposal));
  ASSERT_EQ(p.num_seqs, 3u);
  EXPECT_EQ(p.max_draft, 4u);  // the stride: the longest row, k of the step
  EXPECT_EQ(p.num_draft[0], 2u);
  EXPECT_EQ(p.num_draft[1], 0u);
  EXPECT_EQ(p.num_draft[2], 4u);  // max_draft 16 clamped to num_speculative_tokens
  EXPECT_EQ(row(p, 0), (Tokens{4, 5}));
  EXPECT_EQ(row(p, 2), (Tokens{32, 33, 34, 35}));
  EXPECT_EQ(row(p, 2), plinth::spec_decode::ngram_propose(kC, 1, 3, 4));
  EXPECT_EQ(p.draft_probs, nullptr);  // n-gram drafts are deterministic
  EXPECT_EQ(p.vocab_size, 0u);

  // A batch the schedule does not speculate in: no drafts, whatever max_draft says.
  const std::vector<uint32_t> all{4, 4, 4};
  a.max_draft = all.data();
  a.batch_size = 17;
  ASSERT_EQ(vt_->propose_batch(inst, &a, &p, &err_), PLINTH_OK) << err_.message;
  for (uint32_t i = 0; i < 3; ++i) EXPECT_EQ(p.num_draft[i], 0u);
  // 5..16 sequences: k / 2.
  a.batch_size = 8;
  ASSERT_EQ(vt_->propose_batch(inst, &a, &p, &err_), PLINTH_OK) << err_.message;
  EXPECT_EQ(p.max_draft, 2u);
  for (uint32_t i = 0; i < 3; ++i) EXPECT_EQ(p.num_draft[i], 2u);
  EXPECT_EQ(row(p, 1), (Tokens{22, 23}));

  // The 1.0 entry: one limit for all.
  ASSERT_EQ(vt_->propose(inst, seqs.data(), 3, 3, &p, &err_), PLINTH_OK) << err_.message;
  for (uint32_t i = 0; i < 3; ++i) EXPECT_EQ(p.num_draft[i], 3u);
  EXPECT_EQ(row(p, 0), (Tokens{4, 5, 6}));

  // Missing arrays are refused, not read.
  a.max_draft = nullptr;
  EXPECT_EQ(vt_->propose_batch(inst, &a, &p, &err_), PLINTH_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(err_.message).find("max_draft"), std::string::npos) << err_.message;
}

TEST_F(SpecDecodeAbi, AdaptivePolicyPausesARejectedSequence) {
  plinth_instance* inst =
      create(R"({"num_speculative_tokens": 4, "min_n": 1, "probe_interval": 3})");
  ASSERT_NE(inst, nullptr) << err_.message;
  const std::vector<plinth_spec_seq> seqs{seq_of(1, kA)};
  const std::vector<uint32_t> max_draft{4};
  plinth_spec_propose_args a{};
  a.struct_size = sizeof(a);
  a.num_seqs = 1;
  a.seqs = seqs.data();
  a.max_draft = max_draft.data();
  a.batch_size = 1;
  plinth_spec_proposal p{};
  p.struct_size = sizeof(p);
  ASSERT_EQ(vt_->propose_batch(inst, &a, &p, &err_), PLINTH_OK);
  const uint32_t first = p.num_draft[0];
  ASSERT_GT(first, 0u);
  // The target disagrees with every draft.
  const Tokens drafts = row(p, 0);
  Tokens targets(first + 1, 99);
  plinth_spec_verify v{};
  v.seq = 1;
  v.num_draft = first;
  v.draft_tokens = drafts.data();
  v.target_tokens = targets.data();
  uint32_t accepted = 7;
  int32_t next = -1;
  ASSERT_EQ(vt_->verify(inst, &v, 1, &accepted, &next, &err_), PLINTH_OK) << err_.message;
  EXPECT_EQ(accepted, 0u);
  EXPECT_EQ(next, 99);
  // Every later proposal rejected too: the sequence pauses within a few steps, then probes with
  // one draft every 3rd step.
  std::vector<uint32_t> ks;
  for (int step = 0; step < 12; ++step) {
    ASSERT_EQ(vt_->propose_batch(inst, &a, &p, &err_), PLINTH_OK);
    const uint32_t n = p.num_draft[0];
    ks.push_back(n);
    if (n == 0) continue;
    const Tokens d = row(p, 0);
    Tokens t(n + 1, 99);
    v.num_draft = n;
    v.draft_tokens = d.data();
    v.target_tokens = t.data();
    ASSERT_EQ(vt_->verify(inst, &v, 1, &accepted, &next, &err_), PLINTH_OK) << err_.message;
  }
  const auto first_pause = std::find(ks.begin(), ks.end(), 0u);
  ASSERT_LT(first_pause - ks.begin(), 5) << "rejections must pause the sequence";
  // Paused; the first probe comes at the 3rd step; once that is rejected too the method has
  // failed everywhere (this is its only sequence), so the next probe waits 8 × 3 steps.
  EXPECT_EQ(std::vector<uint32_t>(first_pause, first_pause + 3), (std::vector<uint32_t>{0, 0, 1}));
  EXPECT_EQ(std::count(first_pause + 3, ks.end(), 0u), ks.end() - (first_pause + 3));
  // release_seq forgets it; a new sequence starts from the method's acceptance, which is now
  // too low to draft at all.
  vt_->release_seq(inst, 1);
  ASSERT_EQ(vt_->propose_batch(inst, &a, &p, &err_), PLINTH_OK);
  EXPECT_EQ(p.num_draft[0], 0u);
  EXPECT_GT(first, 0u);
}

TEST_F(SpecDecodeAbi, VerifyCountsIntoStats) {
  plinth_instance* inst = create(R"({"method": "ngram"})");
  ASSERT_NE(inst, nullptr) << err_.message;
  plinth_spec_stats s = stats(inst);
  EXPECT_EQ(s.struct_size, sizeof(plinth_spec_stats));
  EXPECT_EQ(s.num_drafts, 0u);
  EXPECT_EQ(s.num_draft_tokens, 0u);
  EXPECT_EQ(s.num_accepted_tokens, 0u);

  const Tokens d0{5, 6, 7}, t0{5, 6, 8, 9};  // 2 of 3
  const Tokens t1{4};                        // no drafts
  const Tokens d2{1}, t2{2, 3};              // 0 of 1
  const Tokens d3{1, 2}, t3{1, 2, 3};        // 2 of 2 + bonus
  std::vector<plinth_spec_verify> items(4);
  items[0] = {1, 3, d0.data(), t0.data(), nullptr, nullptr, 0, nullptr};
  items[1] = {2, 0, nullptr, t1.data(), nullptr, nullptr, 0, nullptr};
  items[2] = {3, 1, d2.data(), t2.data(), nullptr, nullptr, 0, nullptr};
  items[3] = {4, 2, d3.data(), t3.data(), nullptr, nullptr, 0, nullptr};
  std::vector<uint32_t> accepted(4, 99);
  std::vector<int32_t> next(4, -1);
  ASSERT_EQ(vt_->verify(inst, items.data(), 4, accepted.data(), next.data(), &err_), PLINTH_OK)
      << err_.message;
  EXPECT_EQ(accepted, (std::vector<uint32_t>{2, 0, 0, 2}));
  EXPECT_EQ(next, (std::vector<int32_t>{8, 4, 2, 3}));
  s = stats(inst);
  EXPECT_EQ(s.num_drafts, 3u);  // proposals of at least one token
  EXPECT_EQ(s.num_draft_tokens, 6u);
  EXPECT_EQ(s.num_accepted_tokens, 4u);

  // Accumulates; a sampled item with uniforms (u = 0 accepts every draft p gives mass).
  const std::vector<float> p{0, 1, 0, 0, /* bonus */ 0, 0, 0.5f, 0.5f};
  const std::vector<double> u{0, 0, 0, 0};
  const Tokens d4{1}, t4{0, 0};
  plinth_spec_verify sampled{5, 1, d4.data(), t4.data(), p.data(), nullptr, 4, u.data()};
  ASSERT_EQ(vt_->verify(inst, &sampled, 1, accepted.data(), next.data(), &err_), PLINTH_OK)
      << err_.message;
  EXPECT_EQ(accepted[0], 1u);
  EXPECT_EQ(next[0], 2);
  s = stats(inst);
  EXPECT_EQ(s.num_drafts, 4u);
  EXPECT_EQ(s.num_draft_tokens, 7u);
  EXPECT_EQ(s.num_accepted_tokens, 5u);

  // Without uniforms the plugin draws its own; the verdict is still a valid one.
  sampled.uniforms = nullptr;
  ASSERT_EQ(vt_->verify(inst, &sampled, 1, accepted.data(), next.data(), &err_), PLINTH_OK);
  EXPECT_EQ(accepted[0], 1u);  // p(draft) = 1: always accepted
  EXPECT_TRUE(next[0] == 2 || next[0] == 3) << next[0];

  // A bad item is refused through the table.
  const Tokens bad{9};
  sampled.draft_tokens = bad.data();
  EXPECT_EQ(vt_->verify(inst, &sampled, 1, accepted.data(), next.data(), &err_),
            PLINTH_ERR_INVALID_ARGUMENT);
}

TEST_F(SpecDecodeAbi, OlderStatsStructIsNotOverrun) {
  plinth_instance* inst = create("{}");
  ASSERT_NE(inst, nullptr) << err_.message;
  const Tokens d{1, 2, 3}, t{1, 2, 5, 0};
  plinth_spec_verify v{1, 3, d.data(), t.data(), nullptr, nullptr, 0, nullptr};
  uint32_t accepted = 0;
  int32_t next = 0;
  ASSERT_EQ(vt_->verify(inst, &v, 1, &accepted, &next, &err_), PLINTH_OK);

  // A 1.1 caller's struct ends after num_accepted_tokens; the bytes after it are not its own.
  static_assert(PLINTH_ABI_1_1_SIZEOF_SPEC_STATS < sizeof(plinth_spec_stats));
  alignas(plinth_spec_stats) unsigned char buf[sizeof(plinth_spec_stats) + 16];
  std::memset(buf, 0xAB, sizeof(buf));
  plinth_spec_stats old{};
  old.struct_size = PLINTH_ABI_1_1_SIZEOF_SPEC_STATS;
  std::memcpy(buf, &old.struct_size, sizeof(old.struct_size));
  ASSERT_EQ(vt_->get_stats(inst, reinterpret_cast<plinth_spec_stats*>(buf), &err_), PLINTH_OK);
  for (size_t i = PLINTH_ABI_1_1_SIZEOF_SPEC_STATS; i < sizeof(buf); ++i) {
    ASSERT_EQ(buf[i], 0xAB) << "byte " << i << " past the caller's struct was written";
  }
  plinth_spec_stats got{};
  std::memcpy(&got, buf, PLINTH_ABI_1_1_SIZEOF_SPEC_STATS);
  EXPECT_EQ(got.struct_size, PLINTH_ABI_1_1_SIZEOF_SPEC_STATS);  // what was written
  EXPECT_EQ(got.num_draft_tokens, 3u);
  EXPECT_EQ(got.num_accepted_tokens, 2u);

  // struct_size 0 (a caller that did not say) reads as the current size.
  plinth_spec_stats zero{};
  ASSERT_EQ(vt_->get_stats(inst, &zero, &err_), PLINTH_OK);
  EXPECT_EQ(zero.struct_size, sizeof(plinth_spec_stats));
  EXPECT_EQ(zero.num_drafts, 1u);
}

TEST_F(SpecDecodeAbi, LayerSkipWithoutTheExtensionIsRefused) {
  backend_.struct_size = sizeof(backend_);
  backend_.lifecycle.struct_size = sizeof(backend_.lifecycle);
  // kv_ is all NULL: not called, the refusal comes first.
  auto* instance = reinterpret_cast<plinth_instance*>(&dummy_instance_);
  args_.backend = {&backend_, instance};
  args_.kv_cache = {&kv_, instance};
  for (auto* get_extension : {&no_extension, static_cast<decltype(&no_extension)>(nullptr)}) {
    backend_.lifecycle.get_extension = get_extension;
    EXPECT_EQ(create(R"({"method": "layer_skip"})"), nullptr);
    EXPECT_EQ(err_.status, PLINTH_ERR_INVALID_ARGUMENT);
    const std::string m = err_.message;
    EXPECT_NE(m.find(PLINTH_EXT_EARLY_EXIT), std::string::npos) << m;
    EXPECT_NE(m.find("plinth.early_exit/1"), std::string::npos) << m;
    EXPECT_NE(m.find("config.method"), std::string::npos) << m;
  }
  // No backend at all: refused too, naming what is missing.
  args_.backend = {};
  EXPECT_EQ(create(R"({"method": "layer_skip"})"), nullptr);
  EXPECT_EQ(err_.status, PLINTH_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(err_.message).find("backend"), std::string::npos) << err_.message;
}

TEST_F(SpecDecodeAbi, DraftWithoutADraftBackendIsRefused) {
  model_.struct_size = sizeof(model_);
  args_.model = &model_;
  for (uint32_t size : {static_cast<uint32_t>(sizeof(plinth_create_args)),
                        PLINTH_ABI_1_1_SIZEOF_CREATE_ARGS}) {  // a 1.1 host has no draft fields
    args_.struct_size = size;
    EXPECT_EQ(create(R"({"method": "draft"})"), nullptr);
    EXPECT_EQ(err_.status, PLINTH_ERR_INVALID_ARGUMENT);
    const std::string m = err_.message;
    EXPECT_NE(m.find("config.method \"draft\" needs a draft backend"), std::string::npos) << m;
    EXPECT_NE(m.find("\"role\": \"draft\""), std::string::npos) << m;  // the fix
    EXPECT_NE(m.find("method \"ngram\""), std::string::npos) << m;     // the alternative
  }
}

TEST_F(SpecDecodeAbi, BadConfigIsRefused) {
  EXPECT_EQ(create(R"({"min_n": 4, "max_n": 2})"), nullptr);
  EXPECT_EQ(err_.status, PLINTH_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(err_.message).find("config.min_n"), std::string::npos) << err_.message;
  // Unknown keys and ranges are the host's schema check (config_test); create still refuses what
  // C++ cannot read.
  EXPECT_EQ(create(R"({"adaptive": "yes"})"), nullptr);
  EXPECT_EQ(err_.status, PLINTH_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(err_.message, "spec_decode: config.adaptive must be true or false, got \"yes\"");
  // NULL config: the defaults.
  args_.config_json = nullptr;
  plinth_instance* inst = nullptr;
  ASSERT_EQ(vt_->lifecycle.create(&args_, &inst, &err_), PLINTH_OK) << err_.message;
  instances_.push_back(inst);
  EXPECT_EQ(vt_->num_lookahead_slots(inst, 1), 4u);
}
