#include "runtime/pipeline.hpp"

#include <algorithm>

#include "runtime/call.hpp"
#include "runtime/json_schema.hpp"
#include "runtime/kinds.hpp"

namespace plinth {

namespace {

std::string fix_for(int32_t status, const PipelinePlugin& p, const Manifest& m) {
  switch (status) {
    case PLINTH_ERR_INVALID_ARGUMENT:
      return "fix its config at " + m.file.string() + ": " + p.entry.json_path + ".config";
    case PLINTH_ERR_UNSUPPORTED:
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
}

std::unique_ptr<Pipeline> Pipeline::create(const Manifest& manifest, const plinth_model_desc* model,
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
    if (p.entry.kind == kind) return &p;
  }
  return nullptr;
}

const PipelinePlugin* Pipeline::plugin(plinth_plugin_kind kind) const {
  return const_cast<Pipeline*>(this)->find(kind);
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

std::string Pipeline::function_name(plinth_plugin_kind kind, std::string_view function) const {
  const PipelinePlugin* p = plugin(kind);
  return (p != nullptr ? p->entry.name : std::string(kind_name(kind))) + "." +
         std::string(function);
}

void Pipeline::instantiate(const plinth_model_desc* model, plinth_plugin_kind last) {
  for (plinth_plugin_kind kind : kCreationOrder) {
    PipelinePlugin* p = find(kind);
    if (p != nullptr && p->instance == nullptr) create_instance(*p, model);
    if (kind == last) break;
  }
}

void Pipeline::create_instance(PipelinePlugin& p, const plinth_model_desc* model) {
  const PluginLibrary& lib = *p.library;
  const std::string who = std::string(kind_name(p.entry.kind)) + " plugin \"" + p.entry.name +
                          "\" (" + p.entry.json_path + ", " + lib.file().string() + ")";
  const bool needs_model =
      p.entry.kind == PLINTH_KIND_BACKEND || p.entry.kind == PLINTH_KIND_SPECULATOR;
  if (needs_model && model == nullptr) {
    throw PluginError(lib.file(),
                      who + " needs a model: set `model` in the manifest or pass --model");
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
      args.backend = {backend().vtable, backend().instance};
      break;
    case PLINTH_KIND_PREFIX_CACHE:
      args.model = model;  // its identity (path) keys the cache
      args.kv_cache = {kv_cache().vtable, kv_cache().instance};
      break;
    case PLINTH_KIND_SCHEDULER:
      args.kv_cache = {kv_cache().vtable, kv_cache().instance};
      args.prefix_cache = {prefix_cache().vtable, prefix_cache().instance};
      break;
    case PLINTH_KIND_SPECULATOR:
      args.model = model;
      args.backend = {backend().vtable, backend().instance};
      break;
    case PLINTH_KIND_GRAPH_RUNNER:
      args.backend = {backend().vtable, backend().instance};
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
  }
  out += "  6. sampler (host): next tokens; 7. update sequences; 8. kv_cache.free_seq\n";
  return out;
}

}  // namespace plinth
