#include "runtime/pipeline.hpp"

#include <algorithm>
#include <stdexcept>

#include "plinth/model_spec.hpp"
#include "runtime/call.hpp"
#include "runtime/draft_model.hpp"
#include "runtime/json_schema.hpp"
#include "runtime/kinds.hpp"

namespace plinth {

namespace {

std::string fix_for(int32_t status, const PipelinePlugin& p, const Manifest& m) {
  switch (status) {
    case PLINTH_ERR_INVALID_ARGUMENT:
      return "fix its config at " + m.file.string() + ": " + p.entry.json_path + ".config";
    case PLINTH_ERR_UNSUPPORTED:
      if (p.entry.is_draft_backend()) {
        return "this backend cannot run the draft model or device: choose another draft model (" +
               p.entry.json_path + ".model) or library (" + p.entry.json_path + ".library)";
      }
      return "this plugin cannot serve this model or device: choose another " +
             std::string(kind_name(p.entry.kind)) + " in the manifest";
    case PLINTH_ERR_OUT_OF_MEMORY:
      return "lower its memory settings in " + p.entry.json_path + ".config or free memory";
    default:
      return "this is a bug in the plugin: report it to its author with this message";
  }
}

}  // namespace

std::unique_ptr<Pipeline> Pipeline::load(const Manifest& manifest, HostContext& host) {
  std::unique_ptr<Pipeline> p(new Pipeline(manifest, host));
  for (const PluginEntry& e : manifest.plugins) {
    PipelinePlugin pp;
    pp.entry = e;
    pp.library = PluginLibrary::open(e.library_path);
    const PluginLibrary& lib = *pp.library;
    host.logger().info("loaded plugin {} for host ABI {}.{}", lib.describe(), PLINTH_ABI_MAJOR,
                       PLINTH_ABI_MINOR);
    if (lib.kind() != e.kind) {
      throw ManifestError(manifest.file, e.json_path + ".kind",
                          "library \"" + e.library + "\" (" + lib.file().string() + ") is a " +
                              std::string(kind_name(lib.kind())) + " plugin, not a " +
                              std::string(kind_name(e.kind)) + ": fix `kind` or `library`");
    }
    pp.config = e.config;
    try {
      validate_json(lib.schema(), pp.config, e.json_path + ".config");
    } catch (const SchemaError& err) {
      throw ManifestError(manifest.file, err.path(), err.message());
    }
    p->plugins_.push_back(std::move(pp));
  }
  p->check_wiring();
  return p;
}

void Pipeline::check_wiring() const {
  // A prefix cache is called by the scheduler (admission and update), through plinth_host_api's
  // get_seq of ABI 1.1: a scheduler built against 1.0 would load it and never use it.
  const PipelinePlugin* prefix = plugin(PLINTH_KIND_PREFIX_CACHE);
  const PipelinePlugin* sched = plugin(PLINTH_KIND_SCHEDULER);
  if (prefix != nullptr && sched != nullptr && sched->library->descriptor().abi_minor < 1) {
    throw ManifestError(
        manifest_.file, prefix->entry.json_path,
        "prefix_cache \"" + prefix->entry.name +
            "\" needs a scheduler that calls it (ABI >= 1.1), "
            "but scheduler \"" +
            sched->entry.name + "\" was built against ABI 1." +
            std::to_string(sched->library->descriptor().abi_minor) +
            ": use scheduler_continuous, rebuild the scheduler against this SDK, or remove the "
            "prefix_cache");
  }
  // The draft backend reaches the speculator only through create_args.draft_backend (ABI 1.2).
  const PipelinePlugin* draft = draft_plugin();
  const PipelinePlugin* spec = plugin(PLINTH_KIND_SPECULATOR);
  if (draft != nullptr && spec != nullptr && spec->library->descriptor().abi_minor < 2) {
    throw ManifestError(
        manifest_.file, draft->entry.json_path,
        "a draft backend needs a speculator that receives it (ABI >= 1.2), but speculator \"" +
            spec->entry.name + "\" was built against ABI 1." +
            std::to_string(spec->library->descriptor().abi_minor) +
            ": use spec_decode, rebuild the speculator against this SDK, or remove the draft "
            "backend");
  }
}

std::unique_ptr<Pipeline> Pipeline::create(const Manifest& manifest, const plinth_model_desc* model,
                                           HostContext& host) {
  std::unique_ptr<Pipeline> p = load(manifest, host);
  p->instantiate(model);
  return p;
}

std::unique_ptr<Pipeline> Pipeline::create(const Manifest& manifest, const LoadedModel& model,
                                           HostContext& host) {
  std::unique_ptr<Pipeline> p = load(manifest, host);
  p->instantiate(model);
  return p;
}

Pipeline::~Pipeline() {
  for (auto it = created_.rbegin(); it != created_.rend(); ++it) {
    PipelinePlugin& p = **it;
    p.library->head().lifecycle.destroy(p.instance);
    p.instance = nullptr;
  }
  // plugins_ (and with them the last references to the libraries) go after every destroy.
}

PipelinePlugin* Pipeline::find(plinth_plugin_kind kind) {
  for (PipelinePlugin& p : plugins_) {
    if (p.entry.kind == kind && !p.entry.is_draft_backend()) return &p;
  }
  return nullptr;
}

PipelinePlugin* Pipeline::find_draft() {
  for (PipelinePlugin& p : plugins_) {
    if (p.entry.is_draft_backend()) return &p;
  }
  return nullptr;
}

const PipelinePlugin* Pipeline::plugin(plinth_plugin_kind kind) const {
  return const_cast<Pipeline*>(this)->find(kind);
}

const PipelinePlugin* Pipeline::draft_plugin() const {
  return const_cast<Pipeline*>(this)->find_draft();
}

template <class VTable>
PluginRef<VTable> Pipeline::ref(plinth_plugin_kind kind) const {
  const PipelinePlugin* p = plugin(kind);
  if (p == nullptr || p->instance == nullptr) return {};
  return {static_cast<const VTable*>(p->library->descriptor().vtable), p->instance};
}

BackendRef Pipeline::backend() const {
  return ref<plinth_backend_vtable>(PLINTH_KIND_BACKEND);
}
BackendRef Pipeline::draft_backend() const {
  const PipelinePlugin* p = draft_plugin();
  if (p == nullptr || p->instance == nullptr) return {};
  return {static_cast<const plinth_backend_vtable*>(p->library->descriptor().vtable), p->instance};
}
KvCacheRef Pipeline::kv_cache() const {
  return ref<plinth_kv_cache_vtable>(PLINTH_KIND_KV_CACHE);
}
PrefixCacheRef Pipeline::prefix_cache() const {
  return ref<plinth_prefix_cache_vtable>(PLINTH_KIND_PREFIX_CACHE);
}
SchedulerRef Pipeline::scheduler() const {
  return ref<plinth_scheduler_vtable>(PLINTH_KIND_SCHEDULER);
}
uint32_t Pipeline::abi_minor(plinth_plugin_kind kind) const {
  const PipelinePlugin* p = plugin(kind);
  return p == nullptr ? 0 : p->library->descriptor().abi_minor;
}

SpeculatorRef Pipeline::speculator() const {
  return ref<plinth_speculator_vtable>(PLINTH_KIND_SPECULATOR);
}
GraphRunnerRef Pipeline::graph_runner() const {
  return ref<plinth_graph_runner_vtable>(PLINTH_KIND_GRAPH_RUNNER);
}
GrammarRef Pipeline::grammar() const {
  return ref<plinth_grammar_vtable>(PLINTH_KIND_GRAMMAR);
}

void Pipeline::instantiate_grammar(const plinth_grammar_vocab& vocab) {
  PipelinePlugin* p = find(PLINTH_KIND_GRAMMAR);
  if (p == nullptr || p->instance != nullptr) return;
  vocab_ = &vocab;
  try {
    create_instance(*p, nullptr);
  } catch (...) {
    vocab_ = nullptr;
    throw;
  }
  vocab_ = nullptr;
}

std::string Pipeline::function_name(plinth_plugin_kind kind, std::string_view function) const {
  const PipelinePlugin* p = plugin(kind);
  return (p != nullptr ? p->entry.name : std::string(kind_name(kind))) + "." +
         std::string(function);
}

void Pipeline::instantiate(const plinth_model_desc* model, plinth_plugin_kind last) {
  for (plinth_plugin_kind kind : kCreationOrder) {
    if (kind == PLINTH_KIND_GRAMMAR) break;  // instantiate_grammar: it needs the vocabulary
    PipelinePlugin* p = find(kind);
    if (p != nullptr && p->instance == nullptr) create_instance(*p, model);
    if (kind == PLINTH_KIND_BACKEND) {
      PipelinePlugin* draft = find_draft();
      if (draft != nullptr && draft->instance == nullptr) create_draft(*draft, model);
    }
    if (kind == last) break;
  }
}

void Pipeline::instantiate(const LoadedModel& model, plinth_plugin_kind last) {
  target_file_ = model.file.get();
  instantiate(model.desc->get(), last);
}

void Pipeline::create_draft(PipelinePlugin& draft, const plinth_model_desc* target) {
  if (target == nullptr) return;  // create_instance refused the target backend already
  if (!draft_model_) {
    auto m = std::make_unique<LoadedModel>(load_draft_model(manifest_, draft.entry));
    // The target's token strings: from the file the caller opened, else from its path.
    std::unique_ptr<GgufFile> opened;
    const GgufFile* tf = target_file_;
    if (tf == nullptr) {
      try {
        if (target->path == nullptr) throw std::runtime_error("the model descriptor has no path");
        opened = GgufFile::open(target->path);
        tf = opened.get();
      } catch (const std::exception& e) {
        throw ManifestError(manifest_.file, "model",
                            "cannot read the target model's vocabulary to compare it with the "
                            "draft model of " +
                                draft.entry.json_path + ": " + e.what() +
                                ": the target model must be a readable GGUF file");
      }
    }
    // cppcheck-suppress nullPointerRedundantCheck ; GgufFile::open returns a file or throws
    check_same_vocabulary(manifest_, draft.entry, *tf, target->config.vocab_size, *m->file,
                          m->config.vocab_size);
    draft_model_ = std::move(m);
  }
  create_instance(draft, draft_model_->desc->get());
  host_.logger().info("draft backend \"{}\" runs the draft model {}", draft.entry.name,
                      draft_model_->file->path());
}

void Pipeline::create_instance(PipelinePlugin& p, const plinth_model_desc* model) {
  const PluginLibrary& lib = *p.library;
  const std::string who = std::string(p.entry.is_draft_backend() ? "draft " : "") +
                          std::string(kind_name(p.entry.kind)) + " plugin \"" + p.entry.name +
                          "\" (" + p.entry.json_path + ", " + lib.file().string() + ")";
  const bool needs_model =
      p.entry.kind == PLINTH_KIND_BACKEND || p.entry.kind == PLINTH_KIND_SPECULATOR;
  if (needs_model && model == nullptr) {
    throw PluginError(lib.file(),
                      who + " needs a model: set `model` in the manifest or pass --model");
  }
  // The architecture description is ABI 1.4: a backend built before it would read only config
  // and silently run the plain LLaMA block on a model that needs more.
  if (p.entry.kind == PLINTH_KIND_BACKEND && model != nullptr && model->arch != nullptr &&
      model->arch->required_features != 0 && lib.descriptor().abi_minor < 4) {
    throw PluginError(lib.file(), who + " was built against ABI 1." +
                                      std::to_string(lib.descriptor().abi_minor) +
                                      ", before the architecture description (1.4), and the "
                                      "model (" +
                                      std::string(model->config.architecture) + ") needs " +
                                      sdk::arch_feature_names(model->arch->required_features) +
                                      ": rebuild the backend against this SDK");
  }
  if (p.entry.kind == PLINTH_KIND_GRAPH_RUNNER) {
    BackendRef b = backend();
    const plinth_lifecycle& bl = b.vtable->lifecycle;
    const void* ext = bl.get_extension != nullptr
                          ? bl.get_extension(b.instance, PLINTH_EXT_CUDA_STREAM)
                          : nullptr;
    if (ext == nullptr) {
      throw PluginError(lib.file(), who + " needs a backend offering the CUDA extension \"" +
                                        PLINTH_EXT_CUDA_STREAM + "\", and backend \"" +
                                        plugin(PLINTH_KIND_BACKEND)->entry.name +
                                        "\" does not: use a CUDA backend (backend_cuda) or remove "
                                        "the graph_runner from the manifest");
    }
  }
  const std::string config_text = p.config.dump();
  plinth_create_args args{};
  args.struct_size = sizeof(plinth_create_args);
  args.host = plugin_api_->table();
  args.instance_name = p.entry.name.c_str();
  args.config_json = config_text.c_str();
  switch (p.entry.kind) {
    case PLINTH_KIND_BACKEND:
      args.model = model;
      break;
    case PLINTH_KIND_KV_CACHE:
      args.backend = to_c(backend());
      break;
    case PLINTH_KIND_PREFIX_CACHE:
      args.model = model;  // its identity (path) keys the cache
      args.kv_cache = to_c(kv_cache());
      break;
    case PLINTH_KIND_SCHEDULER:
      args.kv_cache = to_c(kv_cache());
      args.prefix_cache = to_c(prefix_cache());
      break;
    case PLINTH_KIND_SPECULATOR:
      args.model = model;
      args.backend = to_c(backend());
      args.kv_cache = to_c(kv_cache());  // ABI 1.2
      args.draft_backend = to_c(draft_backend());
      args.draft_model = draft_model_ ? draft_model_->desc->get() : nullptr;
      break;
    case PLINTH_KIND_GRAPH_RUNNER:
      args.model = model;  // context_length sizes the captured block tables
      args.backend = to_c(backend());
      args.kv_cache = to_c(kv_cache());  // the block size, for capture
      break;
    case PLINTH_KIND_GRAMMAR:
      args.vocab = vocab_;  // ABI 1.4
      break;
  }
  plinth_error err = make_error();
  plinth_instance* inst = nullptr;
  int32_t status = PLINTH_ERR_INTERNAL;
  try {
    status = lib.head().lifecycle.create(&args, &inst, &err);
  } catch (...) {
    // The ABI forbids this; catching keeps a misbehaving plugin from taking the host down.
    throw PluginError(lib.file(), who +
                                      ": create let a C++ exception cross the C ABI; wrap its "
                                      "body in plinth::sdk::guard (or build the table with "
                                      "plinth::sdk::" +
                                      std::string(kind_name(p.entry.kind)) +
                                      "_vtable<T>()), which turns exceptions into a status");
  }
  if (status != PLINTH_OK) {
    std::string msg = who + " failed to create: " + status_name(status) + ": " +
                      error_message(err) + "; " + fix_for(status, p, manifest_);
    if (status == PLINTH_ERR_INVALID_ARGUMENT) throw PluginConfigError(lib.file(), msg);
    throw PluginError(lib.file(), msg);
  }
  if (inst == nullptr) {
    throw PluginError(lib.file(), who + ": create returned OK without an instance: fix the plugin");
  }
  p.instance = inst;
  created_.push_back(&p);
  host_.logger().debug("created {} with config {}", who, config_text);
}

std::string Pipeline::describe() const {
  std::string out = "pipeline of " + manifest_.file.string() + " in step order:\n";
  for (plinth_plugin_kind kind : kStepOrder) {
    out += "  " + std::string(kind_step(kind)) + "\n";
    const PipelinePlugin* p = plugin(kind);
    if (p == nullptr) {
      out += "      (none)\n";
      continue;
    }
    const plinth_plugin_descriptor& d = p->library->descriptor();
    out += "      " + p->entry.name + ": " + d.name + " " + d.version + ", ABI " +
           std::to_string(d.abi_major) + "." + std::to_string(d.abi_minor) + ", " +
           p->library->file().string() + "\n";
    out += "      config " + p->config.dump() + "\n";
    const PipelinePlugin* draft = draft_plugin();
    if (kind == PLINTH_KIND_SPECULATOR && draft != nullptr) {
      const plinth_plugin_descriptor& dd = draft->library->descriptor();
      out += "      draft backend " + draft->entry.name + " (" + draft->entry.json_path +
             ", driven by the speculator): " + dd.name + " " + dd.version + ", ABI " +
             std::to_string(dd.abi_major) + "." + std::to_string(dd.abi_minor) + ", " +
             draft->library->file().string() + "\n";
      out += "        draft model " + draft->entry.model->string() + "\n";
      out += "        config " + draft->config.dump() + "\n";
    }
  }
  out += "  6. sampler (host): next tokens; 7. update sequences; 8. kv_cache.free_seq\n";
  return out;
}

}  // namespace plinth
