"""Start and stop a `plinth serve` process on a free loopback port (used by the server tests and
the benchmark). The server prints "plinth: serving NAME on http://HOST:PORT" once it listens."""
import argparse
import http.client
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request


class PlinthServer:
    def __init__(self, plinth, manifest, *extra_args, log_level="warn", preexec_fn=None,
                 capture_stderr=False):
        """`preexec_fn` runs in the child before exec (e.g. to lower its resource limits).
        `capture_stderr`: the server's log lines are kept in `self.stderr_lines` (and still
        echoed to this process's stderr)."""
        self.preexec_fn = preexec_fn
        self.capture_stderr = capture_stderr
        self.stderr_lines = []
        self.cmd = [plinth, "--log-level", log_level, "serve", "--manifest", manifest,
                    "--port", "0", *extra_args]
        self.proc = None
        self.url = None
        self.model = None

    def __enter__(self):
        self.proc = subprocess.Popen(
            self.cmd, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE if self.capture_stderr else sys.stderr, text=True,
            preexec_fn=self.preexec_fn)
        if self.capture_stderr:
            def keep(stream):
                for line in stream:
                    self.stderr_lines.append(line)
                    sys.stderr.write(line)
            threading.Thread(target=keep, args=(self.proc.stderr,), daemon=True).start()
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

    def wait_for_stderr(self, predicate, timeout=30):
        """The captured log lines once `predicate(lines)` holds, or after `timeout` seconds
        (the server logs a request after its last byte is sent, and the reader thread may lag
        on a loaded machine, so a test must not read the lines the moment a reply arrives)."""
        deadline = time.monotonic() + timeout
        while not predicate(self.stderr_lines) and time.monotonic() < deadline:
            time.sleep(0.05)
        return self.stderr_lines

    def request(self, method, path, body=None, headers=None, timeout=120):
        """One HTTP request on a new connection: (status, headers with lower-case names, body
        bytes). A dict or list `body` is sent as JSON; `headers` add to (or replace) the
        Content-Type: application/json sent with every request."""
        u = urllib.parse.urlparse(self.url)
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)
        if isinstance(body, (dict, list)):
            body = json.dumps(body)
        conn.request(method, path, body=body,
                     headers={"Content-Type": "application/json", **(headers or {})})
        r = conn.getresponse()
        data = r.read()
        conn.close()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, data

    def metrics_text(self):
        """/metrics as served (Prometheus text format 0.0.4)."""
        with urllib.request.urlopen(self.url + "/metrics", timeout=10) as r:
            return r.read().decode()

    def metrics(self):
        """/metrics as {name: value}: samples whose only label is model_name (every series has
        it) under their bare name, others as name{k="v",...} without model_name; histogram
        buckets left out (their _count and _sum are in)."""
        out = {}
        for line in self.metrics_text().splitlines():
            if not line or line.startswith("#"):
                continue
            series, value = line.rsplit(" ", 1)
            name, _, labels = series.partition("{")
            if name.endswith("_bucket"):
                continue
            kept = [kv for kv in re.findall(r'[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*"',
                                            labels) if not kv.startswith("model_name=")]
            out[name + ("{" + ",".join(kept) + "}" if kept else "")] = float(value)
        return out

    def cpu_seconds(self):
        """User + system CPU time the server process has used so far (/proc/PID/stat)."""
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def num_fds(self):
        """Open file descriptors of the server process."""
        return len(os.listdir(f"/proc/{self.proc.pid}/fd"))

    def rss_kib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0


def parse_args(add_arguments=None):
    """The drivers' command line: --plinth and --manifest (required), plus what
    `add_arguments(parser)` adds; the rest goes to unittest. Returns (args, rest)."""
    p = argparse.ArgumentParser()
    p.add_argument("--plinth", required=True)
    p.add_argument("--manifest", required=True)
    if add_arguments:
        add_arguments(p)
    return p.parse_known_args()


def skip(package, pip_name=None):
    """Says that `package` can be neither imported nor installed; returns 77, ctest's
    SKIP_RETURN_CODE for the drivers."""
    print(f"SKIP: the `{package}` package cannot be imported or installed "
          f"(pip install {pip_name or package})")
    return 77


def ensure_openai():
    """Imports the official `openai` package, installing it with pip when missing. Returns the
    module, or None when it cannot be had (the caller skips)."""
    return ensure_package("openai")


def ensure_package(module, pip_name=None):
    """Imports `module`, pip-installing `pip_name` (default: the module's name) when missing.
    Returns the module, or None when it cannot be had (the caller skips)."""
    import importlib
    try:
        return importlib.import_module(module)
    except ImportError:
        pass
    rc = subprocess.call([sys.executable, "-m", "pip", "install", "--quiet", pip_name or module],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
    if rc != 0:
        return None
    try:
        return importlib.import_module(module)
    except ImportError:
        return None


def run_tests(server, argv_rest):
    """Runs this module's unittest cases against `server`, then stops it (SIGINT, graceful drain).
    Returns the process exit code: 0 when every test passed and the server exited 0, else 1."""
    import unittest
    prog = unittest.main(argv=[sys.argv[0], "-v", *argv_rest], exit=False)
    rc = server.stop()
    if rc != 0:
        print(f"plinth serve exited {rc} after SIGINT")
        return 1
    return 0 if prog.result.wasSuccessful() else 1
