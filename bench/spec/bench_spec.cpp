// bench_spec: speculative decoding (plugins/spec_decode) against the same pipeline without a
// speculator, in one process and one run, on the real model through manifest → EngineHost →
// Engine.
//
// Pipelines (each its own EngineHost, all loaded at start and kept; every one gets the scheduler's
// max_num_seqs = the largest --batch-sizes and the kv_cache's num_blocks = --num-blocks):
//   OFF               <manifest-dir>/cpu.json (no speculator);
//   ngram             <manifest-dir>/cpu_spec_ngram.json;
//   layer_skip:L      <manifest-dir>/cpu_spec_layer_skip.json with exit_layer = L;
//   draft             <manifest-dir>/cpu_spec_draft.json (a second backend_cpu, "role": "draft"),
//                     its draft model replaced by --draft-model when given (`plinth draft-model`
//                     makes one); NOT MEASURED, with the reason, when the file is missing or the
//                     pipeline does not load;
// each speculating one twice: the automatic policy as the manifest has it (adaptive on, the default
// draft_len_schedule) and with "adaptive": false (the schedule alone).
// Workloads: 8 input-grounded chat prompts (rewrite / edit / extract on a 10–30-line code snippet,
// where the answer copies much of the prompt) and 8 open-ended ones, through the model's chat
// template, temperature 0, max_tokens --max-tokens, the model's stop tokens.
// A cell (pipeline × workload × batch B): the workload's prompts through a closed loop of B in
// flight (B queued at t0, the next one queued as soon as one finishes). Output tok/s = generated
// tokens / (last token − t0), so each request's prefill (its TTFT) is inside the wall time;
// decode-only tok/s = tokens / time of the steps in which no request got its first token.
// Every run measures every cell, pipelines in a rotated order per run; a cell's tok/s is the median
// over --runs, its ratio the median of the per-run ratios to OFF's cell of the same run. The greedy
// token ids of every request must equal OFF's of the same run and batch size: else MISMATCH is
// printed and the exit status is 3.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "app/engine_host.hpp"
#include "runtime/host_context.hpp"
#include "runtime/logging.hpp"
#include "runtime/plugin_search.hpp"

#ifdef PLINTH_BENCH_HAS_CPU_KERNELS
#include "isa.hpp"
#include "matmul_choice.hpp"
#endif

namespace fs = std::filesystem;
using namespace plinth;
using json = nlohmann::json;

namespace {

using Tokens = std::vector<int32_t>;

struct Options {
  std::string manifest_dir = PLINTH_SOURCE_DIR_FOR_BENCH "/manifests";
  int runs = 3;
  std::string methods = "ngram,layer_skip:12,layer_skip:20,draft";
  std::string policies = "auto,fixed";
  std::string workloads = "grounded,open";
  std::string batch_sizes = "1,8";
  int max_tokens = 128;
  int prompts = 8;
  int num_blocks = 1024;
  std::string draft_model;
  bool show_outputs = false;
  std::string spec_config;            // JSON object merged into every speculator's config
  std::vector<std::string> variants;  // "NAME=METHOD JSON": one more speculating pipeline
};

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) out.push_back(item);
  if (s.empty() || s.back() == ',') out.emplace_back();
  return out;
}

// ---- prompts ----

// Input-grounded: the answer is mostly the given snippet, changed a little.
const std::vector<std::string> kGrounded = {
    R"(Rename the variable `lst` to `numbers` everywhere in this Python function and return the whole function:

```python
def summarize(lst):
    if not lst:
        return None
    total = 0
    count = 0
    smallest = lst[0]
    largest = lst[0]
    for x in lst:
        total += x
        count += 1
        if x < smallest:
            smallest = x
        if x > largest:
            largest = x
    mean = total / count
    return {
        "count": count,
        "mean": mean,
        "min": smallest,
        "max": largest,
    }
```)",
    R"(Add a short comment above every function in this C file. Keep the code exactly as it is.

```c
#include <stdio.h>
#include <string.h>

int count_words(const char *s) {
    int n = 0, in_word = 0;
    for (; *s; s++) {
        if (*s == ' ' || *s == '\n') {
            in_word = 0;
        } else if (!in_word) {
            in_word = 1;
            n++;
        }
    }
    return n;
}

void reverse(char *s) {
    size_t len = strlen(s);
    for (size_t i = 0; i < len / 2; i++) {
        char t = s[i];
        s[i] = s[len - 1 - i];
        s[len - 1 - i] = t;
    }
}

int main(void) {
    char text[] = "hello world from c";
    printf("%d\n", count_words(text));
    reverse(text);
    printf("%s\n", text);
    return 0;
}
```)",
    R"(Convert this JavaScript code from `var` to `const` or `let` and give back the complete code:

```javascript
var express = require('express');
var app = express();
var port = 3000;

var users = [
  { id: 1, name: 'Alice', email: 'alice@example.com' },
  { id: 2, name: 'Bob', email: 'bob@example.com' },
  { id: 3, name: 'Carol', email: 'carol@example.com' },
];

app.get('/users', function (req, res) {
  res.json(users);
});

app.get('/users/:id', function (req, res) {
  var id = parseInt(req.params.id, 10);
  var user = users.find(function (u) { return u.id === id; });
  if (!user) {
    res.status(404).send('Not found');
    return;
  }
  res.json(user);
});

app.listen(port, function () {
  console.log('Listening on port ' + port);
});
```)",
    R"(Fix the bug in this Python class (the balance can go negative) and return the corrected class in full:

```python
class BankAccount:
    def __init__(self, owner, balance=0):
        self.owner = owner
        self.balance = balance
        self.history = []

    def deposit(self, amount):
        if amount <= 0:
            raise ValueError("deposit must be positive")
        self.balance += amount
        self.history.append(("deposit", amount))

    def withdraw(self, amount):
        if amount <= 0:
            raise ValueError("withdrawal must be positive")
        self.balance -= amount
        self.history.append(("withdraw", amount))

    def statement(self):
        lines = [f"Account of {self.owner}"]
        for kind, amount in self.history:
            lines.append(f"{kind}: {amount}")
        lines.append(f"balance: {self.balance}")
        return "\n".join(lines)
```)",
    R"(Rewrite this SQL query with every keyword in upper case and one clause per line:

```sql
select c.id, c.name, c.email, count(o.id) as orders, sum(o.total) as revenue
from customers c
join orders o on o.customer_id = c.id
left join refunds r on r.order_id = o.id
where o.created_at >= '2024-01-01'
  and o.status = 'paid'
  and r.id is null
group by c.id, c.name, c.email
having count(o.id) > 3
order by revenue desc
limit 20;
```)",
    R"(Extract every function name and its parameters from this Go file, one per line, then repeat the file unchanged:

```go
package geometry

import "math"

type Point struct {
	X, Y float64
}

func Distance(a, b Point) float64 {
	dx := a.X - b.X
	dy := a.Y - b.Y
	return math.Sqrt(dx*dx + dy*dy)
}

func Midpoint(a, b Point) Point {
	return Point{X: (a.X + b.X) / 2, Y: (a.Y + b.Y) / 2}
}

func Perimeter(points []Point) float64 {
	total := 0.0
	for i := range points {
		total += Distance(points[i], points[(i+1)%len(points)])
	}
	return total
}
```)",
    R"(Add type hints to every function in this Python module. Return the whole module.

```python
import json
import os


def load_config(path):
    with open(path) as f:
        return json.load(f)


def save_config(path, config):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(config, f, indent=2)
    os.replace(tmp, path)


def get_value(config, key, default=None):
    parts = key.split(".")
    node = config
    for part in parts:
        if not isinstance(node, dict) or part not in node:
            return default
        node = node[part]
    return node


def set_value(config, key, value):
    parts = key.split(".")
    node = config
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = value
```)",
    R"(Change the port from 8080 to 9090 and the replica count from 2 to 3 in this Kubernetes manifest, and return the whole file:

```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    app: web
spec:
  replicas: 2
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
        - name: web
          image: nginx:1.25
          ports:
            - containerPort: 8080
          resources:
            limits:
              cpu: "500m"
              memory: "256Mi"
          readinessProbe:
            httpGet:
              path: /healthz
              port: 8080
```)",
};

// Open-ended: nothing in the prompt to copy.
const std::vector<std::string> kOpen = {
    "Explain how photosynthesis works, step by step, for a high-school student.",
    "Write a short story about a lighthouse keeper who finds a message in a bottle.",
    "What are the pros and cons of working from home? Give a balanced answer.",
    "Describe the history of the internet, from its beginnings to today.",
    "Write a poem about the ocean at night.",
    "Give me practical tips for learning a new language as an adult.",
    "Plan a three-day trip to Rome for someone who loves food and history.",
    "Why is the sky blue? Explain it simply and then in more detail.",
};

// ---- pipelines ----

struct PipelineSpec {
  std::string label;   // "OFF", "ngram", "layer_skip e12", "draft"
  std::string policy;  // "—" for OFF, "auto" (the default config), "fixed" (adaptive false)
  // Shared only within one spec: each policy's copy gets its own (pipeline_specs). A pointer, so
  // that moving a spec runs no json code (json's noexcept move may allocate in nlohmann 3.x).
  std::shared_ptr<json> manifest = std::make_shared<json>();
  std::optional<std::string> skip;  // why it is not measured
};

// The manifest `file` with the model path and plugin libraries made absolute (resolved the way
// the host resolves them for that file), the scheduler's max_num_seqs and the kv_cache's
// num_blocks set.
json normalized(const fs::path& file, uint32_t max_num_seqs, int num_blocks) {
  json j;
  try {
    j = json::parse(std::ifstream(file));
    const fs::path dir = file.parent_path();
    if (j.contains("model")) j["model"] = (dir / j["model"].get<std::string>()).lexically_normal();
    for (auto& p : j.at("plugins")) {
      const std::string lib = p.at("library");
      if (const auto found = resolve_plugin(lib, dir)) p["library"] = found->string();
      if (p.at("kind") == "scheduler") p["config"]["max_num_seqs"] = max_num_seqs;
      if (p.at("kind") == "kv_cache") p["config"]["num_blocks"] = num_blocks;
      if (p.contains("model")) {  // a draft backend's model
        p["model"] = (dir / p["model"].get<std::string>()).lexically_normal().string();
      }
    }
  } catch (const json::exception& e) {
    throw std::runtime_error(file.string() + ": " + e.what() +
                             " (check it with: plinth manifest check " + file.string() + ")");
  }
  return j;
}

json& speculator_config(json& manifest) {
  for (auto& p : manifest.at("plugins")) {
    if (p.at("kind") == "speculator") {
      if (!p.contains("config")) p["config"] = json::object();
      return p["config"];
    }
  }
  throw std::runtime_error("manifest has no speculator entry");
}

// One pipeline of --methods or --variant: its method, its label (empty: the method's) and the
// JSON merged into its speculator config.
struct SpecItem {
  std::string method, name;
  json extra = json::object();
};

// --methods, then --variant NAME=METHOD [JSON].
std::vector<SpecItem> spec_items(const Options& o) {
  std::vector<SpecItem> items;
  for (const std::string& m : split_list(o.methods)) items.push_back({m, "", json::object()});
  for (const std::string& v : o.variants) {
    const size_t eq = v.find('='), sp = v.find(' ', eq == std::string::npos ? 0 : eq);
    if (eq == std::string::npos || eq == 0) {
      throw std::runtime_error("--variant '" + v + "': expected NAME=METHOD [JSON]");
    }
    SpecItem it{v.substr(eq + 1, sp == std::string::npos ? std::string::npos : sp - eq - 1),
                v.substr(0, eq), json::object()};
    if (sp != std::string::npos) it.extra = json::parse(v.substr(sp + 1));
    if (!it.extra.is_object()) {
      throw std::runtime_error("--variant '" + v + "': JSON not an object");
    }
    items.push_back(std::move(it));
  }
  return items;
}

// cpu_spec_draft.json: a second backend_cpu ("role": "draft") running its "model"; `skip` says
// why not when the manifest (then policy "—") or the draft model is missing.
PipelineSpec draft_spec(const Options& o, const fs::path& dir, uint32_t max_batch) {
  PipelineSpec base;
  base.label = "draft";
  std::error_code ec;
  if (!fs::is_regular_file(dir / "cpu_spec_draft.json", ec)) {
    base.skip = "no " + (dir / "cpu_spec_draft.json").string();
    base.policy = "—";
    return base;
  }
  *base.manifest = normalized(dir / "cpu_spec_draft.json", max_batch, o.num_blocks);
  bool has_draft = false;
  for (auto& p : base.manifest->at("plugins")) {
    if (p.at("kind") != "backend" || p.value("role", "") != "draft") continue;
    if (!o.draft_model.empty()) {
      p["model"] = fs::absolute(o.draft_model).lexically_normal().string();
    }
    const fs::path model = p.value("model", "");
    base.label = "draft (" + model.filename().string() + ")";
    has_draft = true;
    if (!fs::is_regular_file(model, ec)) {
      base.skip = "no draft model " + model.string() +
                  ": make one with `plinth draft-model --model M --layers L --output OUT` and "
                  "pass --draft-model OUT";
    }
  }
  if (!has_draft) base.skip = "cpu_spec_draft.json has no backend with role draft";
  return base;
}

// The pipeline of method `m` (ngram, layer_skip[:L], draft) before its policy.
PipelineSpec method_spec(const Options& o, const fs::path& dir, uint32_t max_batch,
                         const std::string& m) {
  PipelineSpec base;
  if (m == "ngram") {
    base.label = "ngram";
    *base.manifest = normalized(dir / "cpu_spec_ngram.json", max_batch, o.num_blocks);
  } else if (m.rfind("layer_skip", 0) == 0) {
    *base.manifest = normalized(dir / "cpu_spec_layer_skip.json", max_batch, o.num_blocks);
    json& c = speculator_config(*base.manifest);
    if (m.size() > 11 && m[10] == ':') c["exit_layer"] = std::stoi(m.substr(11));
    base.label = "layer_skip e" + std::to_string(c.value("exit_layer", 0));
  } else if (m == "draft") {
    base = draft_spec(o, dir, max_batch);
  } else {
    throw std::runtime_error("unknown method '" + m + "' (ngram, layer_skip[:L], draft)");
  }
  return base;
}

std::vector<PipelineSpec> pipeline_specs(const Options& o, uint32_t max_batch) {
  const fs::path dir = fs::absolute(o.manifest_dir);
  std::vector<PipelineSpec> out;
  out.push_back({"OFF",
                 "—",
                 std::make_shared<json>(normalized(dir / "cpu.json", max_batch, o.num_blocks)),
                 {}});
  const std::vector<std::string> policies = split_list(o.policies);
  for (const SpecItem& item : spec_items(o)) {
    PipelineSpec base = method_spec(o, dir, max_batch, item.method);
    if (base.policy == "—") {  // nothing to measure under any policy
      out.push_back(base);
      continue;
    }
    if (!base.skip) {
      if (!o.spec_config.empty()) {
        const json extra = json::parse(o.spec_config);
        if (!extra.is_object()) throw std::runtime_error("--spec-config must be a JSON object");
        speculator_config(*base.manifest).update(extra);
      }
      speculator_config(*base.manifest).update(item.extra);
      if (!item.name.empty()) base.label = item.name;
    }
    for (const std::string& pol : policies) {
      PipelineSpec s = base;
      s.manifest = std::make_shared<json>(*base.manifest);
      s.policy = pol;
      if (pol == "fixed") speculator_config(*s.manifest)["adaptive"] = false;
      out.push_back(std::move(s));
    }
  }
  return out;
}

struct Loaded {
  PipelineSpec spec;
  std::unique_ptr<HostContext> context;
  std::unique_ptr<EngineHost> host;
  std::string speculator;  // the speculator's config as loaded
};

// Writes the manifest into a private folder (mkdtemp), loads it, removes the folder.
std::unique_ptr<EngineHost> load_host(const json& manifest, HostContext& context) {
  std::string tmpl = (fs::temp_directory_path() / "plinth_bench_spec.XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) {
    throw std::runtime_error("cannot create a temp folder from " + tmpl + "; set TMPDIR");
  }
  const fs::path file = fs::path(tmpl) / "manifest.json";
  std::ofstream(file) << manifest.dump(2);
  EngineHost::Options ho;
  ho.manifest = file;
  std::unique_ptr<EngineHost> host;
  std::string error;
  try {
    host = EngineHost::load(ho, context);
  } catch (const std::exception& e) {
    error = e.what();
  }
  std::error_code ignored;
  fs::remove_all(tmpl, ignored);
  if (!host) throw std::runtime_error(error);
  return host;
}

// ---- measuring ----

struct Cell {
  double wall = 0;  // t0 (first request queued) → last token, seconds
  uint64_t tokens = 0;
  double ttft_sum = 0;  // Σ (first token − queued), seconds
  // Steps in which no request got its first token (no prompt was computed in them, since every
  // prompt fits one step's token budget): their time and the tokens they generated.
  double decode_wall = 0;
  uint64_t decode_tokens = 0;
  std::vector<Tokens> outputs;
  SpecStats spec;  // this cell's share of the engine's counters
  double tok_s() const { return wall > 0 ? double(tokens) / wall : 0; }
  double decode_tok_s() const { return decode_wall > 0 ? double(decode_tokens) / decode_wall : 0; }
};

SpecStats minus(const SpecStats& a, const SpecStats& b) {
  SpecStats d;
  d.num_drafts = a.num_drafts - b.num_drafts;
  d.num_draft_tokens = a.num_draft_tokens - b.num_draft_tokens;
  d.num_accepted_tokens = a.num_accepted_tokens - b.num_accepted_tokens;
  d.accepted_per_position.resize(a.accepted_per_position.size(), 0);
  for (size_t j = 0; j < a.accepted_per_position.size(); ++j) {
    const uint64_t before = j < b.accepted_per_position.size() ? b.accepted_per_position[j] : 0;
    d.accepted_per_position[j] = a.accepted_per_position[j] - before;
  }
  return d;
}

void add_to(SpecStats& sum, const SpecStats& d) {
  sum.num_drafts += d.num_drafts;
  sum.num_draft_tokens += d.num_draft_tokens;
  sum.num_accepted_tokens += d.num_accepted_tokens;
  if (sum.accepted_per_position.size() < d.accepted_per_position.size()) {
    sum.accepted_per_position.resize(d.accepted_per_position.size(), 0);
  }
  for (size_t j = 0; j < d.accepted_per_position.size(); ++j) {
    sum.accepted_per_position[j] += d.accepted_per_position[j];
  }
}

GenerationRequest request(const EngineHost& host, const Tokens& prompt, int max_tokens) {
  GenerationRequest r;
  r.prompt = prompt;
  r.params.temperature = 0.0f;
  r.params.max_tokens = max_tokens;
  r.params.stop_token_ids = host.stop_token_ids();
  return r;
}

// The prompts through a closed loop of `batch` requests in flight.
Cell run_cell(EngineHost& host, const std::vector<Tokens>& prompts, int batch, int max_tokens) {
  using clock = std::chrono::steady_clock;
  Engine& engine = host.engine();
  Cell c;
  c.outputs.resize(prompts.size());
  const SpecStats before = engine.stats().spec;
  std::map<uint64_t, size_t> index;
  std::vector<double> queued(prompts.size(), 0);
  const auto t0 = clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(clock::now() - t0).count(); };
  size_t next = 0;
  auto submit = [&] {
    queued[next] = elapsed();
    index[engine.add_request(request(host, prompts[next], max_tokens))] = next;
    ++next;
  };
  while (next < prompts.size() && next < static_cast<size_t>(batch)) submit();
  double last = 0;
  while (engine.has_unfinished()) {
    const std::vector<RequestOutput> outs = engine.step();
    const double t = elapsed();
    bool prefill = false;
    uint64_t generated = 0;
    for (const RequestOutput& out : outs) {
      const size_t i = index.at(out.request_id);
      generated += out.new_token_ids.size();
      if (c.outputs[i].empty() && !out.new_token_ids.empty()) {
        c.ttft_sum += t - queued[i];
        prefill = true;
      }
      c.outputs[i].insert(c.outputs[i].end(), out.new_token_ids.begin(), out.new_token_ids.end());
      if (out.finished) {
        engine.release(out.request_id);
        if (next < prompts.size()) submit();
      }
    }
    if (!prefill) {
      c.decode_wall += t - last;
      c.decode_tokens += generated;
    }
    last = t;
  }
  c.wall = elapsed();
  for (const Tokens& t : c.outputs) c.tokens += t.size();
  c.spec = minus(engine.stats().spec, before);
  return c;
}

// ---- statistics and printing ----

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// /proc/cpuinfo's first "model name" and the backend's ISA-relevant flags it lists.
std::string cpu_description() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, model = "unknown CPU", flags;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    key.erase(key.find_last_not_of(" \t") + 1);
    const std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
    if (key == "model name" && model == "unknown CPU") model = value;
    if (key == "flags" && flags.empty()) flags = " " + value + " ";
  }
  std::string isa;
  for (const char* f : {"avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512_vnni"}) {
    if (flags.find(std::string(" ") + f + " ") != std::string::npos) isa += std::string(" ") + f;
  }
  return model + " (" + std::to_string(::sysconf(_SC_NPROCESSORS_ONLN)) +
         " logical CPUs online; flags:" + (isa.empty() ? " none of avx2/avx512" : isa) + ")";
}

std::string isa_path(const json& off_manifest) {
  std::string matmul = "auto", threads = "?";  // backend_cpu's default
  for (const auto& p : off_manifest.at("plugins")) {
    if (p.at("kind") == "backend" && p.contains("config")) {
      matmul = p["config"].value("matmul", std::string("auto"));
      if (p["config"].contains("threads")) threads = p["config"]["threads"].dump();
    }
  }
#ifdef PLINTH_BENCH_HAS_CPU_KERNELS
  const std::string family = cpu::isa_name(cpu::best_isa());
  const std::string vnni = cpu::cpu_has_avx512_vnni() ? "yes" : "no";
  if (matmul == "auto") {
    const cpu::MatmulChoice c = cpu::choose_auto_matmul();
    matmul += std::string(" -> ") + cpu::matmul_path_name(c.path) + " (" + c.reason + ")";
  }
#else
  const std::string family = "unknown (bench built without plinth_cpu_kernels)", vnni = "?";
#endif
  return "backend_cpu kernels " + family + " (AVX-512 VNNI " + vnni + "), matmul " + matmul +
         ", threads " + threads;
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  if (!(in >> a >> b >> c)) return "n/a";
  return a + " " + b + " " + c;
}

std::string now_string() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", std::localtime(&t));
  return buf;
}

// The first position where a and b differ (their common length when one is a prefix).
size_t first_difference(const Tokens& a, const Tokens& b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  return i;
}

using Workloads = std::vector<std::pair<std::string, const std::vector<std::string>*>>;
// results[pipe][workload][batch][run]
using Results = std::vector<std::vector<std::vector<std::vector<Cell>>>>;

// The loaded pipelines (OFF first), the workloads, the batch sizes and what was measured.
struct Measured {
  std::vector<Loaded> pipes;
  Workloads workloads;
  std::vector<int> batches;
  Results res;
};

struct Summary {
  std::string where;
  double ratio = 0;
};

// × OFF per policy (for the targets) and per cell.
struct Ratios {
  std::map<std::string, std::vector<Summary>> by_policy, decode_by_policy;
  // "label|policy|workload|batch" → {median ratio, median decode-only ratio}
  std::map<std::string, std::pair<double, double>> ratio_of;
};

void add_options(CLI::App& app, Options& o) {
  app.add_option("--manifest-dir", o.manifest_dir,
                 "Folder with cpu.json, cpu_spec_ngram.json, cpu_spec_layer_skip.json")
      ->check(CLI::ExistingDirectory)
      ->capture_default_str();
  app.add_option("--runs", o.runs, "Runs (each measures every cell); medians over them")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--methods", o.methods,
                 "Comma-separated: ngram, layer_skip[:EXIT_LAYER], draft (needs --draft-model)")
      ->capture_default_str();
  app.add_option("--policies", o.policies,
                 "auto (the manifest's config: adaptive on), fixed (\"adaptive\": false)")
      ->capture_default_str();
  app.add_option("--workloads", o.workloads, "grounded, open")->capture_default_str();
  app.add_option("--batch-sizes", o.batch_sizes, "Requests in flight per cell, comma-separated")
      ->capture_default_str();
  app.add_option("--max-tokens", o.max_tokens, "max_tokens of every request")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  app.add_option("--prompts", o.prompts, "Prompts per workload (the first N of 8)")
      ->check(CLI::Range(1, 8))
      ->capture_default_str();
  app.add_option("--num-blocks", o.num_blocks, "kv_cache num_blocks of every pipeline")
      ->check(CLI::Range(64, 1 << 20))
      ->capture_default_str();
  app.add_option("--draft-model", o.draft_model,
                 "GGUF draft model for method draft (`plinth draft-model --model M --layers L "
                 "--output OUT`)");
  app.add_option("--spec-config", o.spec_config,
                 "JSON object merged into every speculator's config (e.g. '{\"verify_token_cost\": "
                 "0.5}'), before --policies' adaptive");
  app.add_option("--variant", o.variants,
                 "NAME=METHOD JSON: one more pipeline of METHOD (as in --methods) with the JSON "
                 "object merged into its speculator config, e.g. 'ngram-k8=ngram "
                 "{\"num_speculative_tokens\": 8}' (repeatable)");
  app.add_flag("--show-outputs", o.show_outputs,
               "Print OFF's generated text of the first run, per workload and prompt");
}

// --batch-sizes, --methods, --policies and --workloads; false (after printing why) when wrong.
bool parse_lists(const Options& o, std::vector<int>& batches, Workloads& workloads) {
  for (const std::string& b : split_list(o.batch_sizes)) {
    int v = 0;
    try {
      v = std::stoi(b);
    } catch (const std::exception&) {
    }
    if (v < 1 || v > 256) {
      std::fprintf(stderr, "error: --batch-sizes: '%s' is not in 1..256\n", b.c_str());
      return false;
    }
    batches.push_back(v);
  }
  for (const std::string& m : split_list(o.methods)) {
    if (m != "ngram" && m != "draft" && m != "layer_skip" && m.rfind("layer_skip:", 0) != 0) {
      std::fprintf(stderr, "error: --methods: unknown method '%s'\n", m.c_str());
      return false;
    }
  }
  for (const std::string& p : split_list(o.policies)) {
    if (p != "auto" && p != "fixed") {
      std::fprintf(stderr, "error: --policies: '%s' is neither auto nor fixed\n", p.c_str());
      return false;
    }
  }
  for (const std::string& w : split_list(o.workloads)) {
    if (w == "grounded") {
      workloads.emplace_back(w, &kGrounded);
    } else if (w == "open") {
      workloads.emplace_back(w, &kOpen);
    } else {
      std::fprintf(stderr, "error: --workloads: unknown workload '%s'\n", w.c_str());
      return false;
    }
  }
  return true;
}

// Loads every measurable spec; what is not measured is printed and listed in `not_measured`.
std::vector<Loaded> load_pipes(std::vector<PipelineSpec>& specs,
                               std::vector<std::string>& not_measured) {
  std::vector<Loaded> pipes;
  for (PipelineSpec& s : specs) {
    const std::string name = s.label + (s.policy == "—" ? "" : " [" + s.policy + "]");
    if (s.skip) {
      std::printf("%s: NOT MEASURED (%s)\n", name.c_str(), s.skip->c_str());
      not_measured.push_back(name + ": " + *s.skip);
      continue;
    }
    Loaded l;
    l.context = std::make_unique<HostContext>(make_stderr_logger(spdlog::level::warn));
    try {
      l.host = load_host(*s.manifest, *l.context);
    } catch (const std::exception& e) {
      if (s.label == "OFF") throw std::runtime_error(std::string("OFF pipeline: ") + e.what());
      std::printf("%s: NOT MEASURED (the pipeline does not load: %s)\n", name.c_str(), e.what());
      not_measured.push_back(name + ": the pipeline does not load: " + e.what());
      continue;
    }
    for (const auto& p : s.manifest->at("plugins")) {
      if (p.at("kind") == "speculator") l.speculator = p.value("config", json::object()).dump();
    }
    l.spec = std::move(s);
    pipes.push_back(std::move(l));
  }
  return pipes;
}

void print_setup(const Options& o, const std::vector<Loaded>& pipes, uint32_t max_batch) {
  const EngineHost& ref = *pipes.front().host;
  std::printf("bench_spec: %s, model %s, manifests %s\n", now_string().c_str(),
              ref.model_path().c_str(), fs::absolute(o.manifest_dir).lexically_normal().c_str());
  std::printf("CPU: %s\n", cpu_description().c_str());
  std::printf("ISA path: %s\n", isa_path(*pipes.front().spec.manifest).c_str());
  std::printf(
      "runs %d, max_tokens %d, temperature 0, batch sizes %s, %d prompts per workload, "
      "max_num_seqs %u, num_blocks %d\n",
      o.runs, o.max_tokens, o.batch_sizes.c_str(), o.prompts, max_batch, o.num_blocks);
  for (const Loaded& l : pipes) {
    std::printf("  %-22s %-6s %s\n", l.spec.label.c_str(), l.spec.policy.c_str(),
                l.speculator.empty() ? "(no speculator)" : l.speculator.c_str());
  }
}

// Prompts through the chat template (every pipeline runs the same model and tokenizer).
std::vector<std::vector<Tokens>> make_prompts(const Options& o, const Workloads& workloads,
                                              const EngineHost& ref) {
  std::vector<std::vector<Tokens>> prompts;
  for (const auto& [name, texts] : workloads) {
    prompts.emplace_back();
    size_t total = 0;
    for (int i = 0; i < o.prompts; ++i) {
      prompts.back().push_back(ref.encode_chat({{"user", (*texts)[i]}}));
      total += prompts.back().back().size();
    }
    std::printf("workload %s: %d prompts, %zu prompt tokens\n", name.c_str(), o.prompts, total);
  }

  return prompts;
}

// Every cell of every run into m.res, pipelines in a rotated order per run; the seconds it took.
double measure(const Options& o, Measured& m, const std::vector<std::vector<Tokens>>& prompts) {
  const size_t P = m.pipes.size(), W = m.workloads.size(), B = m.batches.size();
  const std::vector<Loaded>& pipes = m.pipes;
  const Workloads& workloads = m.workloads;
  const std::vector<int>& batches = m.batches;
  Results& res = m.res;
  res.assign(P, std::vector<std::vector<std::vector<Cell>>>(W, std::vector<std::vector<Cell>>(B)));
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < o.runs; ++r) {
    for (size_t w = 0; w < W; ++w) {
      for (size_t b = 0; b < B; ++b) {
        for (size_t k = 0; k < P; ++k) {
          const size_t p = (k + static_cast<size_t>(r)) % P;  // rotated order per run
          res[p][w][b].push_back(run_cell(*pipes[p].host, prompts[w], batches[b], o.max_tokens));
          const Cell& c = res[p][w][b].back();
          std::fprintf(stderr, "run %d %s b%d %s [%s]: %.1f tok/s (%llu tokens, %.2f s)\n", r + 1,
                       workloads[w].first.c_str(), batches[b], pipes[p].spec.label.c_str(),
                       pipes[p].spec.policy.c_str(), c.tok_s(),
                       static_cast<unsigned long long>(c.tokens), c.wall);
        }
      }
    }
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Greedy identity against OFF (pipes[0]) of the same run and batch size; prints each mismatch.
// Prints each request of cell (p, w, b) in run r whose greedy tokens differ from OFF's; their
// number.
size_t cell_mismatches(const Measured& m, size_t p, size_t w, size_t b, size_t r) {
  const auto& [pipes, workloads, batches, res] = m;
  const Cell& base = res[0][w][b][r];
  const Cell& c = res[p][w][b][r];
  size_t mismatches = 0;
  for (size_t i = 0; i < c.outputs.size(); ++i) {
    if (c.outputs[i] == base.outputs[i]) continue;
    ++mismatches;
    const size_t at = first_difference(c.outputs[i], base.outputs[i]);
    std::printf(
        "MISMATCH: %s [%s], %s prompt %zu, batch %d, run %zu: %zu tokens vs OFF's %zu, "
        "first difference at token %zu (%d vs OFF's %d)\n",
        pipes[p].spec.label.c_str(), pipes[p].spec.policy.c_str(), workloads[w].first.c_str(), i,
        batches[b], r + 1, c.outputs[i].size(), base.outputs[i].size(), at,
        at < c.outputs[i].size() ? c.outputs[i][at] : -1,
        at < base.outputs[i].size() ? base.outputs[i][at] : -1);
  }
  return mismatches;
}

size_t count_mismatches(const Measured& m) {
  const size_t P = m.pipes.size(), W = m.workloads.size(), B = m.batches.size();
  size_t mismatches = 0;
  for (size_t p = 1; p < P; ++p) {
    for (size_t w = 0; w < W; ++w) {
      for (size_t b = 0; b < B; ++b) {
        for (size_t r = 0; r < m.res[p][w][b].size(); ++r)
          mismatches += cell_mismatches(m, p, w, b, r);
      }
    }
  }
  return mismatches;
}

// OFF itself: run-to-run and batch 1 vs other batch sizes (information, not a failure).
void print_off_consistency(const Measured& m, double total_s) {
  const auto& [pipes, workloads, batches, res] = m;
  const size_t W = workloads.size(), B = batches.size();
  size_t off_same = 0, off_total = 0;
  for (size_t w = 0; w < W; ++w) {
    for (size_t b = 0; b < B; ++b) {
      for (size_t r = 0; r < res[0][w][b].size(); ++r) {
        for (size_t i = 0; i < res[0][w][b][r].outputs.size(); ++i) {
          ++off_total;
          off_same += res[0][w][b][r].outputs[i] == res[0][w][0][0].outputs[i] ? 1 : 0;
        }
      }
    }
  }

  std::printf("\nload average after: %s; measuring took %.0f s\n", load_average().c_str(), total_s);
  std::printf("OFF outputs equal to OFF's batch-%d first run: %zu of %zu requests\n", batches[0],
              off_same, off_total);
}

std::string cell_key(const Measured& m, size_t p, size_t w, size_t b) {
  return m.pipes[p].spec.label + "|" + m.pipes[p].spec.policy + "|" + m.workloads[w].first + "|" +
         std::to_string(m.batches[b]);
}

// One row of the full table: pipeline p on workload w at batch size b; its ratios into `out`.
void print_cell_row(const Measured& m, size_t p, size_t w, size_t b, Ratios& out) {
  const auto& [pipes, workloads, batches, res] = m;
  const std::vector<Cell>& cells = res[p][w][b];
  std::vector<double> tps, ratio, dtps, dratio, ttft;
  SpecStats s;
  bool same = true;
  for (size_t r = 0; r < cells.size(); ++r) {
    const Cell& base = res[0][w][b][r];
    tps.push_back(cells[r].tok_s());
    ratio.push_back(cells[r].tok_s() / base.tok_s());
    dtps.push_back(cells[r].decode_tok_s());
    dratio.push_back(cells[r].decode_tok_s() / base.decode_tok_s());
    ttft.push_back(1e3 * cells[r].ttft_sum / double(cells[r].outputs.size()));
    add_to(s, cells[r].spec);
    same = same && cells[r].outputs == base.outputs;
  }
  std::string per_pos;
  for (size_t j = 0; j < s.accepted_per_position.size(); ++j) {
    per_pos += (j ? " / " : "") + std::to_string(s.accepted_per_position[j]);
  }
  const bool off = p == 0;
  char rate[32] = "—", len[32] = "—";
  if (!off) {
    std::snprintf(rate, sizeof rate, "%.1f%%", 100 * s.acceptance_rate());
    std::snprintf(len, sizeof len, "%.2f", s.mean_acceptance_length());
  }
  std::printf(
      "| %s | %d | %s | %s | %.1f | ×%.2f | %.1f | ×%.2f | %s | %s | %llu | %llu | %llu | "
      "%s | %.0f | %llu | %s |\n",
      workloads[w].first.c_str(), batches[b], pipes[p].spec.label.c_str(),
      pipes[p].spec.policy.c_str(), median(tps), median(ratio), median(dtps), median(dratio), rate,
      len, static_cast<unsigned long long>(s.num_drafts),
      static_cast<unsigned long long>(s.num_draft_tokens),
      static_cast<unsigned long long>(s.num_accepted_tokens),
      per_pos.empty() ? "—" : per_pos.c_str(), median(ttft),
      static_cast<unsigned long long>(cells.front().tokens), off ? "—" : (same ? "yes" : "**NO**"));
  if (!off) {
    const std::string where =
        pipes[p].spec.label + ", " + workloads[w].first + ", batch " + std::to_string(batches[b]);
    out.by_policy[pipes[p].spec.policy].push_back({where, median(ratio)});
    out.decode_by_policy[pipes[p].spec.policy].push_back({where, median(dratio)});
    out.ratio_of[cell_key(m, p, w, b)] = {median(ratio), median(dratio)};
  }
}

// The full table, one row per cell; the ratios it shows.
Ratios print_table(const Measured& m) {
  const size_t P = m.pipes.size(), W = m.workloads.size(), B = m.batches.size();
  std::printf(
      "\n| workload | batch | pipeline | policy | output tok/s | × OFF | decode-only tok/s | × "
      "OFF "
      "decode-only | acceptance rate | mean acceptance length | drafts | draft tokens | accepted "
      "| accepted per position | mean TTFT ms | tokens | greedy = OFF |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  Ratios r;
  for (size_t w = 0; w < W; ++w) {
    for (size_t b = 0; b < B; ++b) {
      for (size_t p = 0; p < P; ++p) print_cell_row(m, p, w, b, r);
    }
  }
  return r;
}

// Compact: × OFF per pipeline (rows) and cell (columns), end to end and decode-only.
void print_compact(const Measured& m,
                   const std::map<std::string, std::pair<double, double>>& ratio_of) {
  const auto& [pipes, workloads, batches, res] = m;
  const size_t P = pipes.size(), W = workloads.size(), B = batches.size();
  for (const bool decode_only : {false, true}) {
    std::printf("\n× OFF, %s (median of per-run ratios):\n\n| pipeline | policy |",
                decode_only ? "decode-only tok/s" : "output tok/s");
    for (size_t w = 0; w < W; ++w)
      for (size_t b = 0; b < B; ++b)
        std::printf(" %s b%d |", workloads[w].first.c_str(), batches[b]);
    std::printf("\n|---|---|");
    for (size_t i = 0; i < W * B; ++i) std::printf("---|");
    std::printf("\n");
    for (size_t p = 1; p < P; ++p) {
      std::printf("| %s | %s |", pipes[p].spec.label.c_str(), pipes[p].spec.policy.c_str());
      for (size_t w = 0; w < W; ++w) {
        for (size_t b = 0; b < B; ++b) {
          const auto& r = ratio_of.at(cell_key(m, p, w, b));
          std::printf(" ×%.2f |", decode_only ? r.second : r.first);
        }
      }
      std::printf("\n");
    }
  }
}

// OFF's generated text of the first run, per workload and prompt.
void print_outputs(const Measured& m, const EngineHost& ref) {
  const Workloads& workloads = m.workloads;
  const Results& res = m.res;
  const size_t W = workloads.size();
  for (size_t w = 0; w < W; ++w) {
    for (size_t i = 0; i < res[0][w][0][0].outputs.size(); ++i) {
      const Tokens& t = res[0][w][0][0].outputs[i];
      std::printf("\n--- OFF output, %s prompt %zu (%zu tokens):\n%s\n", workloads[w].first.c_str(),
                  i, t.size(), ref.tokenizer().decode(t, true).c_str());
    }
  }
}

// Per policy, end to end and decode-only: the lowest × OFF and the cells below ×0.95.
void print_policy_summaries(const Ratios& r) {
  for (const bool decode_only : {false, true}) {
    for (const auto& [policy, list] : decode_only ? r.decode_by_policy : r.by_policy) {
      const auto worst = std::min_element(list.begin(), list.end(),
                                          [](auto& x, auto& y) { return x.ratio < y.ratio; });
      size_t below = 0;
      for (const Summary& s : list) below += s.ratio < 0.95 ? 1 : 0;
      std::printf("  policy %s, %s: lowest ×%.2f (%s); %zu of %zu cells below ×0.95%s\n",
                  policy.c_str(), decode_only ? "decode-only" : "output tok/s", worst->ratio,
                  worst->where.c_str(), below, list.size(),
                  policy == "auto" ? (below == 0 ? " (target met)" : " (target NOT met)") : "");
    }
  }
}

void print_targets(const Ratios& r, const std::vector<std::string>& not_measured,
                   size_t mismatches) {
  std::printf("\nTargets (as measured):\n");
  const auto ng = r.ratio_of.find("ngram|auto|grounded|1");
  if (ng != r.ratio_of.end()) {
    std::printf(
        "  ngram [auto], grounded, batch 1: ×%.2f OFF output tok/s, ×%.2f decode-only (target "
        "≥ ×2.00): %s\n",
        ng->second.first, ng->second.second,
        ng->second.first >= 2.0 ? "met"
                                : (ng->second.second >= 2.0 ? "met decode-only" : "NOT met"));
  }
  print_policy_summaries(r);
  for (const std::string& n : not_measured) std::printf("  NOT MEASURED: %s\n", n.c_str());
  std::printf("  greedy outputs equal OFF's: %s\n",
              mismatches == 0 ? "every request of every cell and run"
                              : (std::to_string(mismatches) + " MISMATCHES").c_str());
}

// Loads, measures and prints; 0, or 3 when a greedy output differs from OFF's.
int run(const Options& o) {
  Measured m;
  if (!parse_lists(o, m.batches, m.workloads)) return 1;
  const uint32_t max_batch =
      static_cast<uint32_t>(*std::max_element(m.batches.begin(), m.batches.end()));
  std::vector<PipelineSpec> specs = pipeline_specs(o, max_batch);
  std::vector<std::string> not_measured;
  m.pipes = load_pipes(specs, not_measured);
  print_setup(o, m.pipes, max_batch);
  const EngineHost& ref = *m.pipes.front().host;
  const std::vector<std::vector<Tokens>> prompts = make_prompts(o, m.workloads, ref);
  // Warm-up: one short request per pipeline.
  for (Loaded& l : m.pipes) run_cell(*l.host, {prompts[0][0]}, 1, 8);
  std::printf("load average before: %s\n", load_average().c_str());
  std::fflush(stdout);

  const double total_s = measure(o, m, prompts);
  const size_t mismatches = count_mismatches(m);
  print_off_consistency(m, total_s);
  const Ratios r = print_table(m);
  print_compact(m, r.ratio_of);
  if (o.show_outputs) print_outputs(m, ref);
  print_targets(r, not_measured, mismatches);
  if (mismatches > 0) {
    std::printf("\nMISMATCH: %zu requests' greedy tokens differ from OFF (see above)\n",
                mismatches);
    return 3;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Options o;
    CLI::App app{
        "bench_spec: speculative decoding (ngram, layer_skip, draft) vs none, on input-grounded "
        "and open-ended chat prompts, batch 1 and 8, on the real model"};
    add_options(app, o);
    CLI11_PARSE(app, argc, argv);
    return run(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_spec: error: %s\n", e.what());
    return 2;
  } catch (...) {
    std::fprintf(stderr, "bench_spec: error: unknown exception\n");
    return 2;
  }
}
