"""The chat page `plinth serve` serves at `/`, in a real browser: headless Chromium (Debian's
`chromium` + `chromium-driver`) driven by `selenium`, on a phone-sized window, loopback only.
  - the page shows the served model's name and context size (from GET /v1/models);
  - a message sent at temperature 0 streams a reply equal to /v1/chat/completions' reply to the
    same conversation, with TTFT and tokens/s shown; a second turn carries the conversation;
  - Stop during a long reply aborts the request: plinth_request_aborted_total grows by one and the
    KV blocks return to the pool (plinth_kv_cache_used_blocks back to 0);
  - a screenshot is kept as a test artefact (--artefacts DIR, web_chat.png);
  - `--no-web-ui` serves no page (404 at `/`);
  - with `--api-key` the page asks for the key and then chats with it as a bearer token.

  python3 tools/server_tests/test_web_chat.py --plinth build/plinth --manifest manifests/cpu.json \
      --artefacts build/test-artefacts

Exit 77 (ctest SKIP_RETURN_CODE) when chromium, chromedriver or selenium are missing."""
import json
import os
import shutil
import sys
import time
import unittest
import urllib.error
import urllib.request

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from plinth_server import PlinthServer, ensure_package, parse_args, run_tests  # noqa: E402

ARGS = None
SERVER = None
DRIVER = None
webdriver = None


def api_chat(messages, max_tokens):
    req = urllib.request.Request(
        SERVER.url + "/v1/chat/completions", method="POST",
        data=json.dumps({"messages": messages, "max_tokens": max_tokens,
                         "temperature": 0}).encode(),
        headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.loads(r.read())["choices"][0]["message"]["content"]


def wait_for(predicate, timeout=120, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = predicate()
        if v:
            return v
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def by_id(name):
    return DRIVER.find_element("id", name)


def set_value(name, value):
    DRIVER.execute_script("document.getElementById(arguments[0]).value = arguments[1];",
                          name, str(value))


def state():
    return DRIVER.execute_script("return document.body.dataset.state")


def assistant_messages():
    return DRIVER.find_elements("css selector", ".msg.assistant")


def send(text):
    box = by_id("prompt")
    box.clear()
    box.send_keys(text)
    n = len(assistant_messages())
    by_id("send").click()
    wait_for(lambda: len(assistant_messages()) == n + 1, 10, "the reply bubble")
    return assistant_messages()[-1]


def finish_of(msg):
    return msg.get_attribute("data-finish")


class ChatPage(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        DRIVER.get(SERVER.url + "/")
        wait_for(lambda: state() == "idle", 30, "the page to load the model")

    def test_0_phone_sized(self):
        width = DRIVER.execute_script("return window.innerWidth")
        self.assertEqual(width, 390)
        # Nothing wider than the screen: no horizontal scrolling.
        self.assertLessEqual(DRIVER.execute_script(
            "return document.documentElement.scrollWidth"), width)

    def test_1_model_and_context(self):
        self.assertEqual(by_id("model").text, SERVER.model)
        with urllib.request.urlopen(SERVER.url + "/v1/models", timeout=10) as r:
            ctx = json.loads(r.read())["data"][0]["max_model_len"]
        self.assertIn(f"{ctx:,}", by_id("ctx").text)

    def test_2_reply_equals_api(self):
        set_value("temperature", 0)
        set_value("max-tokens", 24)
        first = "Name three colors of the rainbow."
        msg = send(first)
        wait_for(lambda: finish_of(msg), 120, "the reply to finish")
        text = msg.find_element("css selector", ".text").get_attribute("textContent")
        expected = api_chat([{"role": "user", "content": first}], 24)
        self.assertTrue(expected)
        self.assertEqual(text, expected)
        stats = msg.find_element("css selector", ".stats").text
        self.assertRegex(stats, r"TTFT \d+ ms · [\d.]+ tokens/s · 24 tokens · length")
        # A second turn: the page sends the whole conversation.
        second = "And two more?"
        msg2 = send(second)
        wait_for(lambda: finish_of(msg2), 120, "the second reply")
        text2 = msg2.find_element("css selector", ".text").get_attribute("textContent")
        self.assertEqual(text2, api_chat([{"role": "user", "content": first},
                                          {"role": "assistant", "content": expected},
                                          {"role": "user", "content": second}], 24))

    def test_3_stop_aborts_and_frees_kv(self):
        before = SERVER.metrics()
        set_value("max-tokens", 3000)
        msg = send("Write a very long story about a dragon who learns to cook.")
        text_el = msg.find_element("css selector", ".text")
        wait_for(lambda: len(text_el.get_attribute("textContent")) > 40, 120, "streamed text")
        self.assertGreater(SERVER.metrics()["plinth_kv_cache_used_blocks"], 0)
        by_id("stop").click()
        wait_for(lambda: finish_of(msg) == "stopped", 30, "the reply to stop")
        self.assertEqual(state(), "idle")

        def settled():
            m = SERVER.metrics()
            return m if (m["plinth_kv_cache_used_blocks"] == 0 and
                         m["plinth_num_requests_running"] == 0 and
                         m["plinth_request_aborted_total"] >
                         before["plinth_request_aborted_total"]) else None
        m = wait_for(settled, 30, "the aborted request's KV blocks to return")
        self.assertEqual(m["plinth_request_aborted_total"],
                         before["plinth_request_aborted_total"] + 1)
        self.assertLess(m["plinth_generation_tokens_total"] -
                        before["plinth_generation_tokens_total"], 2000)
        os.makedirs(ARGS.artefacts, exist_ok=True)
        path = os.path.join(ARGS.artefacts, "web_chat.png")
        self.assertTrue(DRIVER.save_screenshot(path))
        print(f"screenshot: {path}")

    def test_4_no_web_ui(self):
        with PlinthServer(ARGS.plinth, ARGS.manifest, "--no-web-ui") as s:
            with self.assertRaises(urllib.error.HTTPError) as cm:
                urllib.request.urlopen(s.url + "/", timeout=10)
            self.assertEqual(cm.exception.code, 404)
        with urllib.request.urlopen(SERVER.url + "/chat.js", timeout=10) as r:
            self.assertTrue(r.headers["Content-Type"].startswith("text/javascript"))


class ChatPageWithKey(unittest.TestCase):
    def test_asks_for_the_key(self):
        with PlinthServer(ARGS.plinth, ARGS.manifest, "--api-key", "page-key") as s:
            DRIVER.get(s.url + "/")
            wait_for(lambda: state() == "needs-key", 30, "the page to ask for the key")
            self.assertTrue(by_id("key-row").is_displayed())
            self.assertIn("API key", by_id("error").text)
            key = by_id("api-key")
            key.send_keys("page-key")
            DRIVER.execute_script(
                "arguments[0].dispatchEvent(new Event('change'))", key)
            wait_for(lambda: state() == "idle", 30, "the page to load the model with the key")
            self.assertEqual(by_id("model").text, s.model)
            set_value("temperature", 0)
            set_value("max-tokens", 8)
            msg = send("Hi")
            wait_for(lambda: finish_of(msg), 60, "the reply")
            self.assertEqual(finish_of(msg), "length")


def main():
    global ARGS, SERVER, DRIVER, webdriver
    ARGS, rest = parse_args(lambda p: p.add_argument("--artefacts", default="test-artefacts"))
    chromium = shutil.which("chromium")
    chromedriver = shutil.which("chromedriver")
    selenium = ensure_package("selenium")
    if not (chromium and chromedriver and selenium):
        print("SKIP: needs Debian's chromium and chromium-driver and PyPI's selenium "
              "(./dev test installs them)")
        return 77
    from selenium import webdriver as wd
    from selenium.webdriver.chrome.service import Service
    webdriver = wd
    opts = wd.ChromeOptions()
    opts.binary_location = chromium
    for a in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--no-proxy-server", "--disable-extensions"]:
        opts.add_argument(a)
    # A phone's viewport (headless windows are at least 500 px wide; emulation goes below).
    opts.add_experimental_option("mobileEmulation", {
        "deviceMetrics": {"width": 390, "height": 844, "pixelRatio": 1.0}})
    with PlinthServer(ARGS.plinth, ARGS.manifest) as server:
        SERVER = server
        DRIVER = wd.Chrome(service=Service(chromedriver), options=opts)
        try:
            return run_tests(server, rest)
        finally:
            DRIVER.quit()


if __name__ == "__main__":
    sys.exit(main())
