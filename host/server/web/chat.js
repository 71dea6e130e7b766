// plinth's chat page: a conversation kept in this page, streamed through the server's own
// POST /v1/chat/completions (SSE), the model's name and context size from GET /v1/models.
// No dependencies; served from the binary (host/server/web/, cmake/embed_web.cmake).
"use strict";

const $ = (id) => document.getElementById(id);
const state = {
  model: null,        // the served model id
  messages: [],       // the conversation: {role, content}
  controller: null,   // the running request's AbortController
};

function apiHeaders() {
  const h = {"Content-Type": "application/json"};
  const key = $("api-key").value || sessionStorage.getItem("plinth-api-key") || "";
  if (key) h["Authorization"] = "Bearer " + key;
  return h;
}

function showError(text) {
  const e = $("error");
  e.textContent = text || "";
  e.hidden = !text;
}

async function errorText(res) {
  try {
    const body = await res.json();
    return `${res.status}: ${(body.error && body.error.message) || JSON.stringify(body)}`;
  } catch (_) {
    return `${res.status} ${res.statusText}`;
  }
}

async function loadModel() {
  const res = await fetch("/v1/models", {headers: apiHeaders()});
  if (res.status === 401) {
    $("key-row").hidden = false;
    $("settings").open = true;
    document.body.dataset.state = "needs-key";
    showError("This server needs an API key: enter it under Settings.");
    return;
  }
  if (!res.ok) throw new Error(await errorText(res));
  const m = (await res.json()).data[0];
  state.model = m.id;
  $("model").textContent = m.id;
  $("ctx").textContent = `context ${m.max_model_len.toLocaleString("en")} tokens`;
  $("max-tokens").max = String(m.max_model_len - 1);
  document.body.dataset.state = "idle";
  showError("");
}

function addMessage(role, text) {
  const div = document.createElement("div");
  div.className = "msg " + role;
  const t = document.createElement("div");
  t.className = "text";
  t.textContent = text;
  div.appendChild(t);
  $("log").appendChild(div);
  div.scrollIntoView({block: "end"});
  return div;
}

function setStats(div, text) {
  let s = div.querySelector(".stats");
  if (!s) {
    s = document.createElement("div");
    s.className = "stats";
    div.appendChild(s);
  }
  s.textContent = text;
}

function setBusy(busy) {
  $("send").disabled = busy;
  $("stop").hidden = !busy;
  document.body.dataset.state = busy ? "generating" : "idle";
}

// The data payloads of the complete SSE events in `buffer`; returns [payloads, rest].
function takeEvents(buffer) {
  const payloads = [];
  let end;
  while ((end = buffer.indexOf("\n\n")) >= 0) {
    const frame = buffer.slice(0, end);
    buffer = buffer.slice(end + 2);
    for (const line of frame.split("\n")) {
      if (line.startsWith("data: ")) payloads.push(line.slice(6));
    }
  }
  return [payloads, buffer];
}

async function send(text) {
  showError("");
  state.messages.push({role: "user", content: text});
  addMessage("user", text);
  const div = addMessage("assistant", "");
  div.classList.add("streaming");
  const out = div.querySelector(".text");
  const system = $("system").value.trim();
  const body = {
    model: state.model,
    messages: (system ? [{role: "system", content: system}] : []).concat(state.messages),
    temperature: Number($("temperature").value),
    max_tokens: Number($("max-tokens").value),
    stream: true,
    stream_options: {include_usage: true},
  };
  state.controller = new AbortController();
  setBusy(true);
  const t0 = performance.now();
  let tFirst = null, chunks = 0, usage = null, finish = null, reply = "";
  try {
    const res = await fetch("/v1/chat/completions", {
      method: "POST", headers: apiHeaders(), body: JSON.stringify(body),
      signal: state.controller.signal,
    });
    if (!res.ok) throw new Error(await errorText(res));
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const {value, done} = await reader.read();
      if (done) break;
      let payloads;
      [payloads, buffer] = takeEvents(buffer + decoder.decode(value, {stream: true}));
      for (const p of payloads) {
        if (p === "[DONE]") continue;
        const chunk = JSON.parse(p);
        if (chunk.error) throw new Error(chunk.error.message);
        if (chunk.usage) usage = chunk.usage;
        const choice = chunk.choices && chunk.choices[0];
        if (!choice) continue;
        const delta = choice.delta && choice.delta.content;
        if (delta) {
          if (tFirst === null) tFirst = performance.now();
          chunks++;
          reply += delta;
          out.textContent = reply;
          div.scrollIntoView({block: "end"});
        }
        if (choice.finish_reason) finish = choice.finish_reason;
      }
    }
  } catch (e) {
    if (e.name === "AbortError") {
      finish = "stopped";
    } else {
      showError(String(e.message || e));
      finish = "error";
    }
  } finally {
    state.controller = null;
    div.classList.remove("streaming");
    const tEnd = performance.now();
    const tokens = usage ? usage.completion_tokens : chunks;
    const parts = [];
    if (tFirst !== null) {
      parts.push(`TTFT ${Math.round(tFirst - t0)} ms`);
      const secs = (tEnd - tFirst) / 1000;
      if (tokens > 1 && secs > 0) {
        parts.push(`${((tokens - 1) / secs).toFixed(1)} tokens/s`);
      }
    }
    parts.push(`${usage ? "" : "~"}${tokens} tokens`);  // ~: stopped, counted by chunks
    if (finish) parts.push(finish);
    setStats(div, parts.join(" · "));
    div.dataset.finish = finish || "";
    if (reply) state.messages.push({role: "assistant", content: reply});
    setBusy(false);
  }
}

$("composer").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const text = $("prompt").value;
  if (!text.trim() || state.controller || !state.model) return;
  $("prompt").value = "";
  send(text);
});
$("prompt").addEventListener("keydown", (ev) => {
  if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) {
    ev.preventDefault();
    $("composer").requestSubmit();
  }
});
$("stop").addEventListener("click", () => {
  if (state.controller) state.controller.abort();
});
$("clear").addEventListener("click", () => {
  if (state.controller) state.controller.abort();
  state.messages = [];
  $("log").replaceChildren();
});
$("api-key").addEventListener("change", () => {
  sessionStorage.setItem("plinth-api-key", $("api-key").value);
  loadModel().catch((e) => showError(String(e.message || e)));
});

loadModel().catch((e) => showError("Cannot reach the server: " + String(e.message || e)));
