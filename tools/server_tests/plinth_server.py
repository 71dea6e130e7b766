"""Start and stop a `plinth serve` process on a free loopback port (used by the server tests and
the benchmark). The server prints "plinth: serving NAME on http://HOST:PORT" once it listens."""
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request


class PlinthServer:
    def __init__(self, plinth, manifest, *extra_args, log_level="warn"):
        self.cmd = [plinth, "--log-level", log_level, "serve", "--manifest", manifest,
                    "--port", "0", *extra_args]
        self.proc = None
        self.url = None
        self.model = None

    def __enter__(self):
        self.proc = subprocess.Popen(self.cmd, stdout=subprocess.PIPE, stderr=sys.stderr, text=True)
        m = None
        for _ in range(50):  # a wrapper (gdb, valgrind) may print lines first
            line = self.proc.stdout.readline()
            m = re.match(r"plinth: serving (.*) on (http://\S+)", line)
            if m or not line:
                break
        if not m:
            self.proc.kill()
            raise RuntimeError(f"plinth serve did not start: {line!r} (exit {self.proc.wait()})")
        self.model, self.url = m.group(1), m.group(2)
        # Keep reading stdout so that a chatty wrapper never blocks on a full pipe.
        threading.Thread(target=lambda: [sys.stderr.write(l) for l in self.proc.stdout],
                         daemon=True).start()
        return self

    def stop(self, timeout=60):
        """SIGINT (graceful drain); returns the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            self.stop()

    def metrics(self):
        """/metrics as {name: value} (samples without labels, plus histogram _count/_sum)."""
        with urllib.request.urlopen(self.url + "/metrics", timeout=10) as r:
            text = r.read().decode()
        out = {}
        for line in text.splitlines():
            if line and not line.startswith("#") and "{" not in line:
                name, value = line.rsplit(" ", 1)
                out[name] = float(value)
        return out

    def rss_kib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0


def ensure_openai():
    """Imports the official `openai` package, installing it with pip when missing. Returns the
    module, or None when it cannot be had (the caller skips)."""
    try:
        import openai  # noqa: F401
        return openai
    except ImportError:
        pass
    rc = subprocess.call([sys.executable, "-m", "pip", "install", "--quiet", "openai"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
    if rc != 0:
        return None
    try:
        import openai  # noqa: F401
        return openai
    except ImportError:
        return None
