#pragma once
// Engine::Impl: what Engine::load made, destroyed in reverse order (the engine thread first).

#include <memory>

#include "app/engine_host.hpp"
#include "plinth/embed/engine.hpp"
#include "runtime/host_context.hpp"
#include "server/async_engine.hpp"

namespace plinth::embed {

struct Engine::Impl {
  std::unique_ptr<HostContext> context;
  std::unique_ptr<EngineHost> host;
  std::unique_ptr<server::AsyncEngine> async;
};

}  // namespace plinth::embed
