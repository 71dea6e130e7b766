// plinth draft-model --model IN.gguf --layers L --output OUT.gguf: writes a smaller draft model
// for speculative decoding, the first L transformer blocks of IN with its embeddings, final norm,
// LM head and all its metadata (tokenizer and chat template included), block_count set to L.
// Tensors keep their ggml types and bytes. OUT appears only complete and validated: it is written
// to a temporary file next to it, re-opened and checked, then renamed.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <system_error>

#include "cli/commands.hpp"
#include "model/gguf.hpp"
#include "model/layer_selection.hpp"
#include "model/model_config.hpp"
#include "model/output_path.hpp"

namespace plinth::cli {

namespace {

namespace fs = std::filesystem;

struct DraftOptions {
  std::string model;
  int64_t layers = 0;
  std::string output;
};

// A bad option: exit 2 with "error: <message>".
[[noreturn]] void bad(const std::string& message) {
  throw std::invalid_argument(message);
}

void check_paths(const DraftOptions& o) {
  std::error_code ec;
  if (!fs::exists(o.model, ec)) {
    bad("--model: " + o.model +
        " does not exist; give the path of a GGUF model (tools/fetch_model fetches "
        "models/SmolLM2-135M-Instruct.Q4_1.gguf)");
  }
  if (!fs::is_regular_file(o.model, ec)) {
    bad("--model: " + o.model + " is not a regular file; give the path of a GGUF model");
  }
  const fs::path out(o.output);
  if (fs::is_directory(out, ec)) {
    bad("--output: " + o.output + " is a directory; give a file path such as " +
        (out / "draft.gguf").string());
  }
  if (const std::string kind = non_regular_output(o.output); !kind.empty()) {
    bad("--output: " + non_regular_output_message(o.output, kind));
  }
  if (fs::exists(out, ec) ? fs::equivalent(o.model, out, ec)
                          : fs::weakly_canonical(out, ec) == fs::weakly_canonical(o.model, ec)) {
    bad("--output: " + o.output +
        " is the input model itself; give another path for the draft (e.g. " +
        fs::path(o.model).replace_extension().string() + ".L8.gguf)");
  }
  const fs::path dir = out.has_parent_path() ? out.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec)) {
    bad("--output: directory " + dir.string() +
        " does not exist; create it first or choose another path");
  }
}

// The temporary draft, re-read by plinth's reader: the layers asked for, every tensor written,
// and, when plinth can run the source model, a config it can run too. A failure is a bug here,
// not the user's: std::logic_error (exit 1), and the temporary file is removed.
void check_draft(const GgufFile& src, const GgufWriter& w, uint32_t layers,
                 const std::string& tmp) {
  bool source_runs = true;
  try {
    read_model_config(src);
  } catch (const GgufError&) {
    source_runs = false;  // not a model plinth runs; the draft is the same kind of file
  }
  try {
    const auto draft = GgufFile::open(tmp);
    const std::string arch = draft->get_string("general.architecture");
    if (draft->get_uint(arch + ".block_count") != layers ||
        draft->tensors().size() != w.num_tensors()) {
      throw std::logic_error("the draft does not read back as written");
    }
    if (source_runs) read_model_config(*draft);
  } catch (const std::exception& e) {
    throw std::logic_error(std::string("internal error: the draft written to ") + tmp +
                           " fails its check (" + e.what() + "); nothing was written");
  }
}

void run(const DraftOptions& o) {
  check_paths(o);
  const auto src = GgufFile::open(o.model);
  const std::string arch = src->get_string("general.architecture");
  const uint64_t blocks = src->get_uint(arch + ".block_count");
  if (o.layers < 1 || static_cast<uint64_t>(o.layers) >= blocks) {
    bad("--layers: " + std::to_string(o.layers) + " is outside 1.." +
        std::to_string(blocks > 0 ? blocks - 1 : 0) + ": " + o.model + " has " +
        std::to_string(blocks) + " blocks and a draft keeps fewer (e.g. --layers " +
        std::to_string(std::max<uint64_t>(1, blocks / 4)) + ")");
  }
  const auto layers = static_cast<uint32_t>(o.layers);
  const GgufWriter w = select_first_layers(*src, layers);
  try {
    w.write_file(o.output, [&](const std::string& tmp) { check_draft(*src, w, layers, tmp); });
  } catch (const std::runtime_error& e) {  // I/O: the path cannot be created or written
    bad(std::string("--output: ") + e.what() +
        "; choose another path, in a writable directory with space for the draft");
  }
  const uint64_t size = w.layout().file_size;
  std::printf("wrote %s: the first %u of %llu layers of %s, %zu tensors, %.1f MiB\n",
              o.output.c_str(), layers, static_cast<unsigned long long>(blocks), o.model.c_str(),
              w.num_tensors(), static_cast<double>(size) / (1024.0 * 1024.0));
}

}  // namespace

void register_draft_model(CLI::App& app) {
  auto opts = std::make_shared<DraftOptions>();
  CLI::App* cmd = app.add_subcommand(
      "draft-model", "Write a draft model for speculative decoding: the first L layers of a GGUF");
  cmd->add_option("--model", opts->model, "Source GGUF model file")->required();
  cmd->add_option("--layers", opts->layers,
                  "Transformer blocks the draft keeps, 1 .. the model's block count - 1")
      ->required();
  cmd->add_option("--output", opts->output,
                  "Draft GGUF file to write (replaced atomically; not the source)")
      ->required();
  cmd->callback([opts] {
    try {
      run(*opts);
    } catch (const GgufError& e) {
      std::fprintf(stderr, "error: --model: %s\n", e.what());
      throw CLI::RuntimeError(kExitConfig);
    } catch (const std::invalid_argument& e) {
      std::fprintf(stderr, "error: %s\n", e.what());
      throw CLI::RuntimeError(kExitConfig);
    }
  });
}

}  // namespace plinth::cli
