// plinth synth-model --output F [--seed N] [--dtype q4_1|q4_0|q8_0|f16|bf16|f32] [--layers N]
//                    [--from REAL.gguf [--real-layers K]] [--vocab-from GGUF] [--vocab-only]:
// writes a GGUF with SmolLM2-135M's architecture and seeded random weights
// (host/model/synthetic_model.hpp), for tests and for GPU machines the real model cannot reach.
// plinth synth-model --arch A --output F [--seed N] [--dtype ...]: a tiny random model of
// architecture A (host/model/synthetic_arch.hpp; dtype default f32).
// The output appears only complete and validated (written next to it, re-opened, renamed).
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "cli/commands.hpp"
#include "model/gguf.hpp"
#include "model/model_config.hpp"
#include "model/output_path.hpp"
#include "model/synthetic_arch.hpp"
#include "model/synthetic_model.hpp"

namespace plinth::cli {

namespace {

namespace fs = std::filesystem;

struct SynthOptions {
  std::string output;
  uint64_t seed = 0;
  std::string dtype = "q4_1";
  int64_t layers = SmolLm2Shape::kLayers;
  std::string from;
  int64_t real_layers = 0;
  std::string vocab_from;
  bool vocab_only = false;
  std::string arch;
  bool dtype_given = false;
  bool quant_mix = false;
};

[[noreturn]] void bad(const std::string& message) {
  throw std::invalid_argument(message);
}

const std::map<std::string, GgmlType>& dtypes() {
  static const std::map<std::string, GgmlType> m = {
      {"q4_1", GgmlType::kQ4_1}, {"q4_0", GgmlType::kQ4_0}, {"q8_0", GgmlType::kQ8_0},
      {"f16", GgmlType::kF16},   {"bf16", GgmlType::kBF16}, {"f32", GgmlType::kF32}};
  return m;
}

std::unique_ptr<GgufFile> open_input(const std::string& option, const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    bad(option + ": " + path +
        " is not a file; give the path of a GGUF model (tools/fetch_model fetches "
        "models/SmolLM2-135M-Instruct.Q4_1.gguf)");
  }
  try {
    return GgufFile::open(path);
  } catch (const GgufError& e) {
    bad(option + ": " + e.what());
  }
}

void check_output(const std::string& output) {
  std::error_code ec;
  const fs::path out(output);
  if (fs::is_directory(out, ec)) {
    bad("--output: " + output + " is a directory; give a file path such as " +
        (out / "synthetic.gguf").string());
  }
  if (const std::string kind = non_regular_output(output); !kind.empty()) {
    bad("--output: " + non_regular_output_message(output, kind));
  }
  const fs::path dir = out.has_parent_path() ? out.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec)) {
    bad("--output: directory " + dir.string() +
        " does not exist; create it first or choose another path");
  }
}

// The output appears only complete and validated (written next to it, re-opened, checked).
void write_checked(const GgufWriter& w, const std::string& output, bool vocab_only) {
  auto check = [&](const std::string& tmp) {
    try {
      const auto f = GgufFile::open(tmp);
      if (f->tensors().size() != w.num_tensors()) {
        throw std::logic_error("the file does not read back as written");
      }
      if (!vocab_only) read_model_config(*f);
    } catch (const std::exception& e) {
      throw std::logic_error(std::string("internal error: the model written to ") + tmp +
                             " fails its check (" + e.what() + "); nothing was written");
    }
  };
  try {
    w.write_file(output, check);
  } catch (const std::runtime_error& e) {
    bad(std::string("--output: ") + e.what() +
        "; choose another path, in a writable directory with space for the model");
  }
}

void run_arch(const SynthOptions& o) {
  if (!o.from.empty() || !o.vocab_from.empty() || o.vocab_only || o.real_layers != 0 ||
      o.layers != SmolLm2Shape::kLayers) {
    bad("--arch: not with --from, --vocab-from, --vocab-only, --real-layers or --layers (those "
        "shape the SmolLM2 model; an --arch model has fixed small sizes)");
  }
  ArchModelOptions ao;
  ao.arch = o.arch;
  ao.seed = o.seed;
  ao.dtype = o.dtype_given ? dtypes().at(o.dtype) : GgmlType::kF32;
  ao.quant_mix = o.quant_mix;
  if (o.quant_mix && o.dtype_given) bad("--quant-mix: not with --dtype (the mix sets the types)");
  const GgufWriter w = make_arch_model(ao);
  write_checked(w, o.output, false);
  std::printf("wrote %s: synthetic %s, %s, seed %llu, %zu tensors, %.2f MiB\n", o.output.c_str(),
              o.arch.c_str(), o.quant_mix ? "quant mix" : ggml_type_name(ao.dtype),
              static_cast<unsigned long long>(o.seed), w.num_tensors(),
              static_cast<double>(w.layout().file_size) / (1024.0 * 1024.0));
}

void run(const SynthOptions& o) {
  check_output(o.output);
  if (!o.arch.empty()) {
    run_arch(o);
    return;
  }
  if (o.quant_mix) bad("--quant-mix: only with --arch llama");
  SyntheticModelOptions so;
  so.seed = o.seed;
  so.dtype = dtypes().at(o.dtype);  // CLI11 checked membership
  if (o.layers < 0 || o.layers > SmolLm2Shape::kLayers || (o.layers == 0 && !o.vocab_only)) {
    bad("--layers: " + std::to_string(o.layers) + " is outside 1.." +
        std::to_string(SmolLm2Shape::kLayers) + " (fewer layers make a faster test model)");
  }
  if (o.real_layers < 0) bad("--real-layers: must be >= 0");
  so.layers = static_cast<uint32_t>(o.layers);
  so.real_layers = static_cast<uint32_t>(o.real_layers);
  so.vocab_only = o.vocab_only;
  std::unique_ptr<GgufFile> from, vocab;
  if (!o.from.empty()) {
    from = open_input("--from", o.from);
    so.from = from.get();
    if (!o.vocab_from.empty()) {
      bad("--vocab-from: not with --from, whose own tokenizer is copied; give one of them");
    }
  }
  if (!o.vocab_from.empty()) {
    vocab = open_input("--vocab-from", o.vocab_from);
    so.vocab_from = vocab.get();
  }
  const GgufWriter w = make_synthetic_model(so);
  write_checked(w, o.output, o.vocab_only);
  std::printf(
      "wrote %s: SmolLM2-135M synthetic, %s, %u layers (%u real), seed %llu, %zu tensors, "
      "%.1f MiB\n",
      o.output.c_str(), o.vocab_only ? "metadata only" : o.dtype.c_str(), so.layers, so.real_layers,
      static_cast<unsigned long long>(o.seed), w.num_tensors(),
      static_cast<double>(w.layout().file_size) / (1024.0 * 1024.0));
}

}  // namespace

void register_synth_model(CLI::App& app) {
  auto opts = std::make_shared<SynthOptions>();
  CLI::App* cmd = app.add_subcommand(
      "synth-model",
      "Write a GGUF with SmolLM2-135M's architecture and fixed-seed random weights (tests)");
  cmd->add_option("--output", opts->output, "GGUF file to write (replaced atomically)")->required();
  cmd->add_option("--seed", opts->seed, "Seed of the random weights")->capture_default_str();
  std::string archs;
  for (const char* a : synthetic_architectures())
    archs += (archs.empty() ? "" : ", ") + std::string(a);
  cmd->add_option("--arch", opts->arch,
                  "Write a tiny random model of this architecture instead (" + archs +
                      "; llama3 = llama with rope_freqs.weight); matrices f32 unless --dtype")
      ->check(CLI::IsMember(std::vector<std::string>(synthetic_architectures().begin(),
                                                     synthetic_architectures().end())));
  cmd->add_option("--dtype", opts->dtype,
                  "Type of the matrices: q4_1, q4_0, q8_0, f16, bf16, f32 (norms stay f32; "
                  "q4_* store the embedding as q8_0)")
      ->check(CLI::IsMember({"q4_1", "q4_0", "q8_0", "f16", "bf16", "f32"}))
      ->capture_default_str();
  cmd->add_flag("--quant-mix", opts->quant_mix,
                "With --arch llama: hidden 256, the matrices cycling through every quantized type "
                "plinth reads (Q6_K, Q2_K .. IQ4_XS, Q5_0 .. Q8_0) as random well-formed blocks");
  cmd->add_option("--layers", opts->layers, "Transformer blocks, 1..30")->capture_default_str();
  cmd->add_option("--from", opts->from,
                  "The real SmolLM2-135M GGUF: copy its metadata, embeddings, final norm and "
                  "first --real-layers blocks verbatim");
  cmd->add_option("--real-layers", opts->real_layers,
                  "Blocks copied from --from (0..--layers; the rest are random)")
      ->capture_default_str();
  cmd->add_option("--vocab-from", opts->vocab_from,
                  "Copy the tokenizer.* metadata of this GGUF (default: a generated byte-level "
                  "BPE tokenizer of 49152 tokens)");
  cmd->add_flag("--vocab-only", opts->vocab_only,
                "Write the metadata only, no tensors: a small file to give as --vocab-from");
  cmd->callback([opts, cmd] {
    opts->dtype_given = cmd->count("--dtype") > 0;
    try {
      run(*opts);
    } catch (const std::invalid_argument& e) {
      std::fprintf(stderr, "error: %s\n", e.what());
      throw CLI::RuntimeError(kExitConfig);
    }
  });
}

}  // namespace plinth::cli
