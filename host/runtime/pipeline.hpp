#pragma once
// A pipeline: the plugin libraries a manifest names, loaded and checked, and their instances
// created in the ABI's order with the ABI's wiring (sdk/include/plinth/plugin.h):
//   backend(model) -> draft backend(draft model) -> kv_cache(backend) -> prefix_cache(kv_cache)
//   -> scheduler(kv_cache, prefix_cache) -> speculator(backend, model, kv_cache, draft backend,
//   draft model) -> graph_runner(model, backend with plinth.cuda_stream/1, kv_cache)
// and destroyed in reverse. Libraries stay loaded until every instance is destroyed. The draft
// backend (`"role": "draft"`, at most one) is a second backend instance over its own model file,
// which the pipeline opens and owns; its KV is the speculator's to allocate.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/model_desc.hpp"
#include "plinth/plinth.h"
#include "runtime/host_context.hpp"
#include "runtime/manifest.hpp"
#include "runtime/plugin_host_api.hpp"
#include "runtime/plugin_library.hpp"
#include "runtime/plugin_ref.hpp"

namespace plinth {

/// One plugin of the pipeline.
struct PipelinePlugin {
  PluginEntry entry;                       // from the manifest (name, json_path, ...)
  std::shared_ptr<PluginLibrary> library;  // loaded and checked
  nlohmann::json config;                   // validated against the plugin's schema, defaults filled
  plinth_instance* instance = nullptr;     // set once created
};

class Pipeline {
 public:
  /// Loads every library of `manifest` (in manifest order), checks each, and validates each
  /// `config` against the schema the library publishes. Creates no instance. Throws
  /// ManifestError (a library of another kind than the manifest says; a config that violates the
  /// schema: path "plugins[i].config...") or PluginError (the library is refused).
  static std::unique_ptr<Pipeline> load(const Manifest& manifest, HostContext& host);
  /// load() + instantiate(model): the whole pipeline, ready to run. `model` (may be NULL only when
  /// no plugin needs it... in practice the backend does) and `host` must outlive the pipeline.
  static std::unique_ptr<Pipeline> create(const Manifest& manifest, const plinth_model_desc* model,
                                          HostContext& host);
  /// create() over an opened model file (`model` must outlive the pipeline): the draft model's
  /// vocabulary is compared with this file's without opening it again.
  static std::unique_ptr<Pipeline> create(const Manifest& manifest, const LoadedModel& model,
                                          HostContext& host);

  /// Destroys the instances in reverse creation order, then unloads the libraries.
  ~Pipeline();
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  /// Creates the instances not created yet, in creation order, up to and including kind `last`
  /// (`manifest check` stops after the prefix_cache). A draft backend is created right after the
  /// target backend: first its model is opened (owned by the pipeline, see draft_model()) and its
  /// vocabulary compared with the target's, read from `model->path` (or from the file given to
  /// the LoadedModel overload). Throws PluginError when a create fails (status and the plugin's
  /// message, and what to do), throws, or when a graph_runner's backend lacks the
  /// "plinth.cuda_stream/1" extension; ManifestError at "plugins[i].model" for a draft model that
  /// is missing, unusable or of another vocabulary, at "model" when the target's file cannot be
  /// read to compare. Instances created before a failure are kept (and destroyed with the
  /// pipeline).
  void instantiate(const plinth_model_desc* model,
                   plinth_plugin_kind last = PLINTH_KIND_GRAPH_RUNNER);
  /// instantiate() over an opened model file, which must outlive the pipeline.
  void instantiate(const LoadedModel& model, plinth_plugin_kind last = PLINTH_KIND_GRAPH_RUNNER);

  BackendRef backend() const;  // the target backend (the served model)
  /// The draft backend (`"role": "draft"`); null when the manifest has none or before it is
  /// created. Its instance runs draft_model(); the speculator owns its KV allocation.
  BackendRef draft_backend() const;
  KvCacheRef kv_cache() const;
  PrefixCacheRef prefix_cache() const;  // null when absent
  SchedulerRef scheduler() const;
  SpeculatorRef speculator() const;     // null when absent
  GraphRunnerRef graph_runner() const;  // null when absent
  /// The grammar plugin (null when absent, or before instantiate_grammar).
  GrammarRef grammar() const;
  /// Creates the grammar plugin, when the manifest has one and it is not created yet, over
  /// `vocab` (valid during the call; the host builds it from the tokenizer). instantiate() leaves
  /// the grammar out: its vocabulary comes from the tokenizer, not the model descriptor.
  void instantiate_grammar(const plinth_grammar_vocab& vocab);

  /// The plugin of `kind`, or nullptr when the manifest has none. For PLINTH_KIND_BACKEND the
  /// target backend.
  const PipelinePlugin* plugin(plinth_plugin_kind kind) const;
  /// The draft backend's plugin, or nullptr when the manifest has none.
  const PipelinePlugin* draft_plugin() const;
  /// The draft backend's model, owned by the pipeline (valid while it lives); nullptr before the
  /// draft backend is instantiated or when there is none.
  const LoadedModel* draft_model() const { return draft_model_.get(); }
  /// The ABI minor the library of `kind` declares (0 when the kind is absent).
  uint32_t abi_minor(plinth_plugin_kind kind) const;
  /// All plugins in manifest order.
  const std::vector<PipelinePlugin>& plugins() const { return plugins_; }
  /// "<plugin name>.<function>" for check()/call() messages, e.g. "kv_paged.allocate".
  std::string function_name(plinth_plugin_kind kind, std::string_view function) const;
  /// The pipeline in the step order of docs/architecture.md ("One engine step"), one block per
  /// step: plugin, version, ABI, library file, effective config.
  std::string describe() const;
  const Manifest& manifest() const { return manifest_; }
  HostContext& host() const { return host_; }
  /// The host API table this pipeline's plugins received; the engine installs its sequence
  /// lookup here (plinth_host_api.get_seq).
  PluginHostApi& plugin_host_api() { return *plugin_api_; }

 private:
  Pipeline(const Manifest& manifest, HostContext& host)
      : manifest_(manifest), host_(host), plugin_api_(std::make_unique<PluginHostApi>(host)) {}
  PipelinePlugin* find(plinth_plugin_kind kind);
  PipelinePlugin* find_draft();
  /// Refuses plugins the others cannot drive (a prefix cache with a 1.0 scheduler, a draft
  /// backend with a speculator older than ABI 1.2).
  void check_wiring() const;
  /// Opens the draft model, checks its vocabulary against `target`'s and creates the draft backend.
  void create_draft(PipelinePlugin& draft, const plinth_model_desc* target);
  template <class VTable>
  PluginRef<VTable> ref(plinth_plugin_kind kind) const;
  void create_instance(PipelinePlugin& p, const plinth_model_desc* model);

  Manifest manifest_;
  HostContext& host_;
  std::unique_ptr<PluginHostApi> plugin_api_;    // outlives every instance (destroyed after them)
  std::vector<PipelinePlugin> plugins_;          // manifest order
  std::vector<PipelinePlugin*> created_;         // creation order
  const GgufFile* target_file_ = nullptr;        // the LoadedModel overloads' file, not owned
  const plinth_grammar_vocab* vocab_ = nullptr;  // during instantiate_grammar only
  std::unique_ptr<LoadedModel> draft_model_;     // outlives the instances (destroyed after them)
};

}  // namespace plinth
