#include <stdexcept>
#include <utility>

#include "engine_impl.hpp"

namespace plinth::embed {

std::unique_ptr<Engine> Engine::load(const std::filesystem::path& manifest,
                                     const EngineOptions& options) {
  auto impl = std::make_unique<Impl>();
  try {
    impl->context = std::make_unique<HostContext>();
    EngineHost::Options ho;
    ho.manifest = manifest;
    if (!options.model.empty()) ho.model = options.model;
    ho.max_model_len = options.max_model_len;
    ho.chat_template = options.chat_template;
    impl->host = EngineHost::load(ho, *impl->context);
    server::AsyncEngine::Options ao;
    ao.max_pending = options.max_pending;
    impl->async = std::make_unique<server::AsyncEngine>(*impl->host, *impl->context, ao);
  } catch (const std::exception& e) {
    // The host's own exception types are not exported from libplinth.so: one the caller can catch.
    throw std::runtime_error(e.what());
  }
  return std::unique_ptr<Engine>(new Engine(std::move(impl)));
}

Engine::Engine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Engine::~Engine() = default;

const std::string& Engine::model_name() const {
  return impl_->host->model_name();
}

uint32_t Engine::max_model_len() const {
  return impl_->host->max_model_len();
}

}  // namespace plinth::embed
