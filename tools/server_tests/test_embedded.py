"""Runs examples/embedded_server: it must serve a completion and the chat page (GET /, compiled
into libplinth.so) over HTTP and exit 0 on SIGINT."""
import argparse
import json
import signal
import subprocess
import sys
import urllib.request


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--binary", required=True)
    p.add_argument("--manifest", required=True)
    a = p.parse_args()
    proc = subprocess.Popen([a.binary, a.manifest, "0"], stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if " on http://" not in line:
        proc.kill()
        print(f"FAIL: no serving line: {line!r}")
        return 1
    url = line.split(" on ")[1].strip()
    req = urllib.request.Request(url + "/v1/completions", method="POST",
                                 data=json.dumps({"prompt": "Hello", "max_tokens": 3,
                                                  "temperature": 0, "ignore_eos": True}).encode(),
                                 headers={"Content-Type": "application/json"})
    body = json.loads(urllib.request.urlopen(req, timeout=60).read())
    ok = body["usage"]["completion_tokens"] == 3 and body["choices"][0]["finish_reason"] == "length"
    with urllib.request.urlopen(url + "/", timeout=60) as r:
        page = r.read().decode()
        page_ok = r.headers["Content-Type"].startswith("text/html") and "/chat.js" in page
    print(f"chat page: {'ok' if page_ok else 'MISSING'}")
    ok = ok and page_ok
    proc.send_signal(signal.SIGINT)
    rc = proc.wait(60)
    print(f"completion {body['choices'][0]['text']!r}, exit {rc}")
    return 0 if ok and rc == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
