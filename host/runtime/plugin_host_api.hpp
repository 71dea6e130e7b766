#pragma once
// The plinth_host_api table one pipeline hands its plugins: logging and metrics forwarded to the
// shared HostContext, and (ABI 1.1) get_seq answered by the engine that drives the pipeline. One
// per pipeline, so that two engines on one HostContext never see each other's sequences.

#include <functional>

#include "plinth/host_api.h"
#include "runtime/host_context.hpp"

namespace plinth {

class PluginHostApi {
 public:
  /// Describes a live sequence into *out (struct_size set by the caller); returns a plinth_status.
  using SeqLookup = std::function<int32_t(plinth_seq_id, plinth_seq_view*)>;

  /// `host` must outlive this object.
  explicit PluginHostApi(HostContext& host);
  PluginHostApi(const PluginHostApi&) = delete;
  PluginHostApi& operator=(const PluginHostApi&) = delete;

  /// The table for plinth_create_args.host; valid while this object lives. Its ctx is this object.
  const plinth_host_api* table() const { return &api_; }
  /// Installs (or, with an empty function, removes) the engine's sequence lookup. Engine thread
  /// only; get_seq answers NOT_FOUND while none is installed.
  void set_seq_lookup(SeqLookup lookup) { lookup_ = std::move(lookup); }

 private:
  static const plinth_host_api& shared(void* ctx);

  const plinth_host_api* shared_;  // the HostContext's table, where logs and metrics go
  SeqLookup lookup_;
  plinth_host_api api_{};
};

}  // namespace plinth
