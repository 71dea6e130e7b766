// The built libplinth_kv_paged.so through the C ABI: dlopen, the entry symbol, the descriptor, the
// config schema, create with a fake backend, a few calls, the metrics and the extension.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <plinth/ext_kv_watermark.h>
#include <plinth/kv_cache.h>

#include <nlohmann/json.hpp>

#include <string>

#include "fake_backend.hpp"
#include "kv_paged_plugin.hpp"

namespace {

class KvPagedAbi : public testing::Test {
 protected:
  void SetUp() override {
    std::string path = std::string(PLINTH_PLUGIN_DIR) + "/libplinth_kv_paged.so";
    lib_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(lib_, nullptr) << dlerror();
    auto entry = reinterpret_cast<plinth_plugin_entry_fn>(dlsym(lib_, PLINTH_PLUGIN_ENTRY_SYMBOL));
    ASSERT_NE(entry, nullptr);
    desc_ = entry();
    vt_ = static_cast<const plinth_kv_cache_vtable*>(desc_->vtable);
  }
  void TearDown() override {
    if (lib_ != nullptr) dlclose(lib_);
  }
  plinth_instance* create(const char* config, plinth_error* err) {
    plinth_create_args args = plinth::test::kv_args(host_, backend_, config);
    plinth_instance* inst = nullptr;
    int32_t st = vt_->lifecycle.create(&args, &inst, err);
    return st == PLINTH_OK ? inst : nullptr;
  }

  void* lib_ = nullptr;
  const plinth_plugin_descriptor* desc_ = nullptr;
  const plinth_kv_cache_vtable* vt_ = nullptr;
  plinth::test::FakeHost host_;
  plinth::test::FakeBackend backend_;
};

}  // namespace

TEST_F(KvPagedAbi, Descriptor) {
  EXPECT_EQ(desc_->abi_major, PLINTH_ABI_MAJOR);
  EXPECT_EQ(desc_->kind, PLINTH_KIND_KV_CACHE);
  EXPECT_STREQ(desc_->name, "kv_paged");
  auto schema = nlohmann::json::parse(desc_->config_schema);  // throws when invalid
  EXPECT_TRUE(schema["properties"].contains("block_size"));
  EXPECT_EQ(vt_->struct_size, sizeof(plinth_kv_cache_vtable));
  EXPECT_NE(vt_->lifecycle.get_extension, nullptr);
}

TEST_F(KvPagedAbi, CreateAllocateForkFree) {
  backend_.bytes_per_token = 1024;  // 16 KiB per block of 16
  plinth_error err{};
  err.struct_size = sizeof(err);
  plinth_instance* inst = create(R"({"max_memory_mb": 1, "watermark": 0.125})", &err);
  ASSERT_NE(inst, nullptr) << err.message;
  plinth_kv_info info{};
  ASSERT_EQ(vt_->get_info(inst, &info, &err), PLINTH_OK);
  EXPECT_EQ(info.block_size, 16u);
  EXPECT_EQ(info.num_blocks, 64u);
  EXPECT_EQ(info.bytes_per_block, 16u * 1024u);
  auto* wm = static_cast<const plinth_kv_watermark_ext*>(
      vt_->lifecycle.get_extension(inst, PLINTH_EXT_KV_WATERMARK));
  ASSERT_NE(wm, nullptr);
  EXPECT_EQ(wm->watermark_blocks, 8u);
  EXPECT_EQ(vt_->lifecycle.get_extension(inst, "plinth.nothing/1"), nullptr);

  plinth_block_copy copies[1];
  uint32_t nc = 99;
  EXPECT_EQ(vt_->blocks_needed(inst, 1, 20), 2u);
  ASSERT_EQ(vt_->allocate(inst, 1, 20, copies, 1, &nc, &err), PLINTH_OK);
  EXPECT_EQ(nc, 0u);
  ASSERT_EQ(vt_->fork(inst, 1, 2, &err), PLINTH_OK);
  ASSERT_EQ(vt_->allocate(inst, 2, 21, copies, 1, &nc, &err), PLINTH_OK);
  EXPECT_EQ(nc, 1u);
  const int32_t* blocks = nullptr;
  uint32_t nb = 0;
  ASSERT_EQ(vt_->get_block_table(inst, 2, &blocks, &nb, &err), PLINTH_OK);
  ASSERT_EQ(nb, 2u);
  EXPECT_EQ(blocks[1], copies[0].dst);
  EXPECT_EQ(host_.values["plinth_kv_cache_num_blocks"], 64.0);
  EXPECT_EQ(host_.values.count("plinth_kv_blocks_used"), 0u);  // the host's, from get_stats
  EXPECT_EQ(host_.values["plinth_kv_blocks_free"], 61.0);
  // 3 blocks = 48 slots: the shared full block (16), seq 1's last (4), seq 2's copy (5) -> 25.
  EXPECT_NEAR(host_.values["plinth_kv_waste_ratio"], 23.0 / 48, 1e-9);

  EXPECT_EQ(vt_->get_block_table(inst, 77, &blocks, &nb, &err), PLINTH_ERR_NOT_FOUND);
  EXPECT_EQ(vt_->truncate(inst, 1, 500, &err), PLINTH_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(err.message).find("cannot keep 500"), std::string::npos) << err.message;
  EXPECT_EQ(vt_->allocate(inst, 3, 64 * 16, copies, 1, &nc, &err), PLINTH_ERR_NO_CAPACITY);
  const int32_t free_block[] = {63};
  EXPECT_EQ(vt_->unref_blocks(inst, free_block, 1, &err), PLINTH_ERR_INVALID_ARGUMENT);

  vt_->free_seq(inst, 1);
  vt_->free_seq(inst, 2);
  vt_->free_seq(inst, 2);
  plinth_kv_stats stats{};
  ASSERT_EQ(vt_->get_stats(inst, &stats, &err), PLINTH_OK);
  EXPECT_EQ(stats.num_free_blocks, 64u);
  EXPECT_EQ(host_.values["plinth_kv_blocks_free"], 64.0);
  vt_->lifecycle.destroy(inst);
}

TEST_F(KvPagedAbi, CreateRefusals) {
  plinth_error err{};
  err.struct_size = sizeof(err);
  EXPECT_EQ(create(R"({"max_model_len": 8192, "max_memory_mb": 1})", &err), nullptr);
  EXPECT_EQ(err.status, PLINTH_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(err.message).find("max_memory_mb to >= 8"), std::string::npos)
      << err.message;
  EXPECT_EQ(create(R"({"block_size": 3})", &err), nullptr);
  EXPECT_EQ(err.status, PLINTH_ERR_INVALID_ARGUMENT);
  backend_.fail_status = PLINTH_ERR_UNSUPPORTED;
  EXPECT_EQ(create("{}", &err), nullptr);
  EXPECT_EQ(err.status, PLINTH_ERR_UNSUPPORTED);
  plinth_create_args args{};
  args.struct_size = sizeof(args);
  plinth_instance* inst = nullptr;
  EXPECT_EQ(vt_->lifecycle.create(&args, &inst, &err), PLINTH_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(err.message).find("no backend"), std::string::npos);
}
