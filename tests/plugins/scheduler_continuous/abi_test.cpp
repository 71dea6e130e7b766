// The built libplinth_scheduler_continuous.so through the C ABI, wired to a kv_paged instance
// (the real core's table) the way the host wires them.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <plinth/scheduler.h>

#include <nlohmann/json.hpp>

#include <string>

#include "harness.hpp"

using namespace plinth::test;

TEST(SchedulerAbi, LoadCreateScheduleUpdate) {
  std::string path = std::string(PLINTH_PLUGIN_DIR) + "/libplinth_scheduler_continuous.so";
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  auto entry = reinterpret_cast<plinth_plugin_entry_fn>(dlsym(lib, PLINTH_PLUGIN_ENTRY_SYMBOL));
  ASSERT_NE(entry, nullptr);
  const plinth_plugin_descriptor* d = entry();
  EXPECT_EQ(d->kind, PLINTH_KIND_SCHEDULER);
  EXPECT_STREQ(d->name, "scheduler_continuous");
  EXPECT_EQ(d->abi_major, PLINTH_ABI_MAJOR);
  auto schema = nlohmann::json::parse(d->config_schema);
  EXPECT_EQ(schema["properties"]["policy"]["enum"].size(), 3u);
  const auto* vt = static_cast<const plinth_scheduler_vtable*>(d->vtable);

  FakeHost host;
  FakeBackend backend;
  plinth_create_args kv = kv_args(host, backend, R"({"num_blocks": 32, "block_size": 4})");
  plinth_instance* kv_inst = nullptr;
  plinth_error err{};
  err.struct_size = sizeof(err);
  ASSERT_EQ(kv_paged_table()->lifecycle.create(&kv, &kv_inst, &err), PLINTH_OK) << err.message;

  plinth_create_args args{};
  args.struct_size = sizeof(args);
  args.host = &host.api;
  args.instance_name = "scheduler";
  args.config_json = R"({"max_num_batched_tokens": 16})";
  plinth_instance* inst = nullptr;
  EXPECT_EQ(vt->lifecycle.create(&args, &inst, &err), PLINTH_ERR_INVALID_ARGUMENT);  // no kv
  EXPECT_NE(std::string(err.message).find("no kv_cache"), std::string::npos);
  args.kv_cache = {kv_paged_table(), kv_inst};
  args.config_json = R"({"policy": "random"})";
  EXPECT_EQ(vt->lifecycle.create(&args, &inst, &err), PLINTH_ERR_INVALID_ARGUMENT);
  args.config_json = R"({"max_num_batched_tokens": 16})";
  ASSERT_EQ(vt->lifecycle.create(&args, &inst, &err), PLINTH_OK) << err.message;

  plinth_sched_request r{sizeof(plinth_sched_request), 7, 20, 4, 0, 0.0, 0};
  ASSERT_EQ(vt->add(inst, &r, &err), PLINTH_OK);
  EXPECT_EQ(vt->add(inst, &r, &err), PLINTH_ERR_INVALID_ARGUMENT);
  plinth_sched_request huge{sizeof(plinth_sched_request), 8, 100, 100, 0, 0.0, 0};
  EXPECT_EQ(vt->add(inst, &huge, &err), PLINTH_ERR_INVALID_ARGUMENT);

  plinth_sched_step step{sizeof(plinth_sched_step), 0};
  plinth_sched_output out{};
  ASSERT_EQ(vt->schedule(inst, &step, &out, &err), PLINTH_OK);
  ASSERT_EQ(out.num_scheduled, 1u);
  EXPECT_EQ(out.seqs[0], 7u);
  EXPECT_EQ(out.num_new_tokens[0], 16u);  // chunk of the 20-token prompt
  plinth_sched_result res{7, 16, 20, 0};
  ASSERT_EQ(vt->update(inst, &res, 1, &err), PLINTH_OK);
  ASSERT_EQ(vt->schedule(inst, &step, &out, &err), PLINTH_OK);
  EXPECT_EQ(out.num_computed[0], 16u);
  EXPECT_EQ(out.num_new_tokens[0], 4u);
  plinth_sched_result bad{7, 30, 30, 0};
  EXPECT_EQ(vt->update(inst, &bad, 1, &err), PLINTH_ERR_INVALID_ARGUMENT);
  plinth_sched_stats stats{};
  ASSERT_EQ(vt->get_stats(inst, &stats, &err), PLINTH_OK);
  EXPECT_EQ(stats.num_running, 1u);
  vt->abort_seq(inst, 7);
  ASSERT_EQ(vt->get_stats(inst, &stats, &err), PLINTH_OK);
  EXPECT_EQ(stats.num_running, 0u);
  EXPECT_EQ(host.values["plinth_kv_blocks_free"], host.values["plinth_kv_cache_num_blocks"]);

  vt->lifecycle.destroy(inst);
  kv_paged_table()->lifecycle.destroy(kv_inst);
  dlclose(lib);
}
