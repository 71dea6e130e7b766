// The built libplinth_prefix_radix.so through the C ABI: dlopen, the entry symbol, the descriptor
// and schema, create refused without a kv_cache, then match / insert (1.0) and match_key /
// insert_key (1.1) / release / evict / get_stats through the table, over a real kv_paged pool.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <plinth/prefix_cache.h>

#include <nlohmann/json.hpp>

#include <array>
#include <string>
#include <vector>

#include "fixtures.hpp"

using plinth::test::iota_tokens;

namespace {

class PrefixRadixAbi : public testing::Test {
 protected:
  void SetUp() override {
    std::string path = std::string(PLINTH_PLUGIN_DIR) + "/libplinth_prefix_radix.so";
    lib_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(lib_, nullptr) << dlerror();
    auto entry = reinterpret_cast<plinth_plugin_entry_fn>(dlsym(lib_, PLINTH_PLUGIN_ENTRY_SYMBOL));
    ASSERT_NE(entry, nullptr);
    desc_ = entry();
    vt_ = static_cast<const plinth_prefix_cache_vtable*>(desc_->vtable);
    err_.struct_size = sizeof(err_);
  }
  void TearDown() override {
    if (lib_ != nullptr) dlclose(lib_);
  }
  plinth_instance* create(plinth_kv_cache_ref kv, const char* config) {
    plinth_create_args args = plinth::test::prefix_args(host_, kv, config);
    plinth_instance* inst = nullptr;
    return vt_->lifecycle.create(&args, &inst, &err_) == PLINTH_OK ? inst : nullptr;
  }
  // A sequence computed `tokens` and finished: its blocks are offered to the cache, then freed.
  std::vector<int32_t> run_seq(plinth_seq_id seq, uint32_t tokens) {
    std::array<plinth_block_copy, 1> copies{};
    pool_.kv->allocate(seq, tokens, copies);
    auto t = pool_.kv->block_table(seq);
    return {t.begin(), t.end()};
  }
  plinth_prefix_key key(const std::vector<int32_t>& tokens, const std::string& salt) {
    plinth_prefix_key k{};
    k.struct_size = sizeof(k);
    k.num_tokens = static_cast<uint32_t>(tokens.size());
    k.tokens = tokens.data();
    k.salt = salt.empty() ? nullptr : salt.data();
    k.salt_len = static_cast<uint32_t>(salt.size());
    return k;
  }
  plinth_prefix_stats stats(plinth_instance* inst) {
    plinth_prefix_stats s{};
    s.struct_size = sizeof(s);
    EXPECT_EQ(vt_->get_stats(inst, &s, &err_), PLINTH_OK);
    return s;
  }

  void* lib_ = nullptr;
  const plinth_plugin_descriptor* desc_ = nullptr;
  const plinth_prefix_cache_vtable* vt_ = nullptr;
  plinth::test::FakeHost host_;
  plinth::test::KvPool pool_{4, 64};
  plinth_error err_{};
};

}  // namespace

TEST_F(PrefixRadixAbi, Descriptor) {
  EXPECT_EQ(desc_->abi_major, PLINTH_ABI_MAJOR);
  EXPECT_EQ(desc_->abi_minor, PLINTH_ABI_MINOR);
  EXPECT_EQ(desc_->kind, PLINTH_KIND_PREFIX_CACHE);
  EXPECT_STREQ(desc_->name, "prefix_radix");
  auto schema = nlohmann::json::parse(desc_->config_schema);
  EXPECT_TRUE(schema["properties"].contains("salt"));
  EXPECT_TRUE(schema["properties"].contains("max_cached_blocks"));
  EXPECT_EQ(vt_->struct_size, sizeof(plinth_prefix_cache_vtable));
  EXPECT_TRUE(PLINTH_HAS_FIELD(vt_, plinth_prefix_cache_vtable, insert_key));
  EXPECT_NE(vt_->match_key, nullptr);
  EXPECT_NE(vt_->insert_key, nullptr);
}

TEST_F(PrefixRadixAbi, CreateRefusedWithoutKvCache) {
  EXPECT_EQ(create({}, "{}"), nullptr);
  EXPECT_EQ(err_.status, PLINTH_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(err_.message).find("no kv_cache is wired"), std::string::npos)
      << err_.message;
  // Unknown keys and ranges are the host's schema check (config_test); create still refuses what
  // C++ cannot read.
  EXPECT_EQ(create(pool_.ref(), R"({"salt": 3})"), nullptr);
  EXPECT_EQ(err_.status, PLINTH_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(err_.message, "prefix_radix: config.salt must be a string, got 3");
}

TEST_F(PrefixRadixAbi, MatchInsertEvictThroughTheTable) {
  plinth_instance* inst = create(pool_.ref(), R"({"salt": "model-a"})");
  ASSERT_NE(inst, nullptr) << err_.message;
  const auto prompt = iota_tokens(14);  // 3 full blocks of 4

  // 1.0 insert = the empty salt.
  auto b1 = run_seq(1, 14);
  ASSERT_EQ(
      vt_->insert(inst, prompt.data(), 14, b1.data(), static_cast<uint32_t>(b1.size()), &err_),
      PLINTH_OK)
      << err_.message;
  pool_.kv->free_seq(1);
  EXPECT_EQ(pool_.tables().num_used_blocks(), 3u);

  plinth_prefix_match m{};
  m.struct_size = sizeof(m);
  ASSERT_EQ(vt_->match(inst, prompt.data(), 14, &m, &err_), PLINTH_OK);
  EXPECT_EQ(m.struct_size, sizeof(plinth_prefix_match));
  EXPECT_EQ(m.num_tokens, 12u);
  ASSERT_EQ(m.num_blocks, 3u);
  EXPECT_EQ(std::vector<int32_t>(m.blocks, m.blocks + 3),
            std::vector<int32_t>(b1.begin(), b1.begin() + 3));
  EXPECT_NE(m.handle, 0u);
  // match_key with an empty salt is the same namespace as the 1.0 calls.
  auto k0 = key(prompt, "");
  plinth_prefix_match m0{};
  ASSERT_EQ(vt_->match_key(inst, &k0, &m0, &err_), PLINTH_OK);
  EXPECT_EQ(m0.num_tokens, 12u);
  vt_->release(inst, m0.handle);
  // Another salt sees nothing, and caches its own blocks.
  const std::string salt("user\0x", 6);
  auto ks = key(prompt, salt);
  plinth_prefix_match ms{};
  ASSERT_EQ(vt_->match_key(inst, &ks, &ms, &err_), PLINTH_OK);
  EXPECT_EQ(ms.num_tokens, 0u);
  EXPECT_EQ(ms.handle, 0u);
  auto b2 = run_seq(2, 14);
  ASSERT_EQ(vt_->insert_key(inst, &ks, b2.data(), static_cast<uint32_t>(b2.size()), &err_),
            PLINTH_OK);
  pool_.kv->free_seq(2);
  ASSERT_EQ(vt_->match_key(inst, &ks, &ms, &err_), PLINTH_OK);
  EXPECT_EQ(std::vector<int32_t>(ms.blocks, ms.blocks + ms.num_blocks),
            std::vector<int32_t>(b2.begin(), b2.begin() + 3));
  vt_->release(inst, ms.handle);

  // Errors: too few blocks; a block cached under another prefix.
  EXPECT_EQ(vt_->insert(inst, prompt.data(), 14, b1.data(), 2, &err_), PLINTH_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(err_.message).find("needs >= 3 block ids"), std::string::npos)
      << err_.message;
  auto other = iota_tokens(8, 500);
  EXPECT_EQ(vt_->insert(inst, other.data(), 8, b2.data(), 2, &err_), PLINTH_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(err_.message).find("cached already"), std::string::npos) << err_.message;

  plinth_prefix_stats s = stats(inst);
  EXPECT_EQ(s.struct_size, sizeof(plinth_prefix_stats));
  EXPECT_EQ(s.num_cached_blocks, 6u);
  EXPECT_EQ(s.num_evictable_blocks, 3u);  // the first match still holds its 3
  EXPECT_EQ(s.num_queried_tokens, 14u * 4);
  EXPECT_EQ(s.num_hit_tokens, 12u * 3);
  EXPECT_EQ(s.num_inserted_blocks, 6u);

  uint32_t evicted = 99;
  ASSERT_EQ(vt_->evict(inst, 10, &evicted, &err_), PLINTH_OK);
  EXPECT_EQ(evicted, 3u);
  ASSERT_EQ(vt_->evict(inst, 10, nullptr, &err_), PLINTH_OK);  // NULL count allowed
  vt_->release(inst, m.handle);
  vt_->release(inst, m.handle);  // twice: no-op
  vt_->release(inst, 777);       // unknown: no-op
  ASSERT_EQ(vt_->evict(inst, 2, &evicted, &err_), PLINTH_OK);
  EXPECT_EQ(evicted, 2u);
  s = stats(inst);
  EXPECT_EQ(s.num_cached_blocks, 1u);
  EXPECT_EQ(s.num_evicted_blocks, 5u);
  EXPECT_EQ(host_.values["plinth_prefix_cache_evicted_blocks_total"], 5.0);
  EXPECT_EQ(pool_.tables().num_used_blocks(), 1u);

  vt_->lifecycle.destroy(inst);  // gives back the last block
  EXPECT_EQ(pool_.tables().num_free_blocks(), 64u);
  pool_.tables().check_invariants();
}
