"""Integration test of `plinth serve`'s connection handling, over raw sockets:
  - the cap (--max-connections N): with N connections open, connection N+1 is answered 503 with
    Retry-After and closed; once one closes, new connections are served again;
  - the idle timeout (--idle-timeout S): a silent connection, an idle keep-alive connection and a
    half-sent request are closed by the server within S + a margin; fresh connections are served;
  - the write timeout (--write-timeout S): a client that opens a stream and stops reading (tiny
    receive buffer and MSS, so the server's writes block soon) is closed and its request aborted:
    the KV blocks return to 0, the aborted counter grows, and the server serves on;
  - running out of file descriptors (the server started with a low RLIMIT_NOFILE): accept() fails
    with EMFILE and the listener backs off instead of spinning (the server's CPU time over 2 s
    stays low); once the connections close it serves again;
  - resident memory stays flat across 10,000 short connections (growth under 4 MiB).

  python3 tools/server_tests/test_connections.py --plinth build/plinth --manifest manifests/cpu.json
"""
import json
import resource
import socket
import sys
import time
import unittest
import urllib.parse

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from plinth_server import PlinthServer, parse_args  # noqa: E402

ARGS = None
HEALTH = b"GET /health HTTP/1.1\r\nHost: plinth\r\n\r\n"
HEALTH_CLOSE = b"GET /health HTTP/1.1\r\nHost: plinth\r\nConnection: close\r\n\r\n"
MARGIN_S = 5  # slack on top of a timeout for a loaded 2-core machine


def address(server):
    u = urllib.parse.urlparse(server.url)
    return u.hostname, u.port


def connect(server, timeout=30):
    return socket.create_connection(address(server), timeout=timeout)


def read_response(sock):
    """Reads one HTTP response with a Content-Length body; returns (status, head, body)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError(f"closed before a full response head: {data!r}")
        data += chunk
    head, rest = data.split(b"\r\n\r\n", 1)
    length = 0
    for line in head.split(b"\r\n")[1:]:
        k, v = line.split(b":", 1)
        if k.strip().lower() == b"content-length":
            length = int(v)
    while len(rest) < length:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed inside a response body")
        rest += chunk
    return int(head.split()[1]), head.decode(), rest[:length]


def health_on(sock):
    sock.sendall(HEALTH)
    return read_response(sock)[0]


def wait_closed(sock, limit_s):
    """Seconds until the peer closes `sock` (recv returns EOF or a reset); fails past limit_s."""
    start = time.monotonic()
    sock.settimeout(limit_s)
    try:
        while sock.recv(4096):
            pass
    except ConnectionResetError:
        pass
    return time.monotonic() - start


def served_fresh(server, attempts=50):
    """A /health request on a new connection is answered 200 (retried while the server frees
    connections asynchronously, up to `attempts` × 0.1 s)."""
    for _ in range(attempts):
        with connect(server) as s:
            try:
                if health_on(s) == 200:
                    return True
            except (ConnectionError, OSError):
                pass
        time.sleep(0.1)
    return False


class Cap(unittest.TestCase):
    def test_connection_over_the_cap_gets_503_and_close(self):
        cap = 4
        with PlinthServer(ARGS.plinth, ARGS.manifest, "--max-connections", str(cap)) as server:
            held = [connect(server) for _ in range(cap)]
            for s in held:  # each is accepted and registered once it has been answered
                self.assertEqual(health_on(s), 200)
            extra = connect(server)
            status, head, body = read_response(extra)
            self.assertEqual(status, 503, head)
            self.assertIn("Retry-After: 1", head)
            self.assertIn("Connection: close", head)
            self.assertIn(b"--max-connections", body)
            self.assertLess(wait_closed(extra, MARGIN_S), MARGIN_S)
            extra.close()
            for s in held:  # the open ones are unaffected
                self.assertEqual(health_on(s), 200)
            held.pop().close()
            self.assertTrue(served_fresh(server), "not served after a connection closed")
            for s in held:
                s.close()
            self.assertEqual(server.stop(), 0)


class IdleTimeout(unittest.TestCase):
    def test_idle_connections_are_closed(self):
        timeout = 2
        with PlinthServer(ARGS.plinth, ARGS.manifest, "--idle-timeout", str(timeout)) as server:
            silent = connect(server)
            keep_alive = connect(server)
            self.assertEqual(health_on(keep_alive), 200)
            half = connect(server)
            half.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: plinth\r\n"
                         b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"pro")
            for name, s in (("silent", silent), ("keep-alive", keep_alive), ("half-sent", half)):
                took = wait_closed(s, timeout + MARGIN_S)
                self.assertLess(took, timeout + MARGIN_S, name)
                s.close()
            self.assertTrue(served_fresh(server))
            self.assertEqual(server.stop(), 0)


def wait_metric(server, name, predicate, limit_s):
    """Polls /metrics until `predicate(value of name)` holds (the gauges are updated after each
    engine step); returns the last value."""
    deadline = time.monotonic() + limit_s
    value = server.metrics().get(name)
    while not predicate(value) and time.monotonic() < deadline:
        time.sleep(0.1)
        value = server.metrics().get(name)
    return value


class WriteTimeout(unittest.TestCase):
    def test_a_stream_nobody_reads_is_closed_and_its_request_aborted(self):
        timeout = 2
        with PlinthServer(ARGS.plinth, ARGS.manifest, "--write-timeout", str(timeout)) as server:
            aborted_before = server.metrics()["plinth_request_aborted_total"]
            # A tiny receive buffer and MSS (announced in the SYN, so the server's send buffer
            # stays small too): a few KiB of output fill them and the server's write blocks.
            reader = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            reader.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
            reader.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, 536)
            reader.connect(address(server))
            # Each token's chunk carries 20 top logprobs (about 1 KiB): the buffers fill within
            # the first hundred tokens, long before max_tokens.
            body = json.dumps({"model": server.model, "prompt": "Once upon a time",
                               "max_tokens": 4000, "ignore_eos": True, "stream": True,
                               "logprobs": 20, "temperature": 0}).encode()
            reader.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: plinth\r\n"
                           b"Content-Type: application/json\r\nContent-Length: " +
                           str(len(body)).encode() + b"\r\n\r\n" + body)
            # It runs (holds KV blocks) ...
            self.assertGreater(wait_metric(server, "plinth_kv_cache_used_blocks",
                                           lambda v: v > 0, 60), 0)
            # ... then its writes block, and write-timeout later the server gives it up.
            self.assertEqual(wait_metric(server, "plinth_kv_cache_used_blocks",
                                         lambda v: v == 0, 120), 0,
                             "the stream nobody reads still holds its KV blocks")
            self.assertEqual(wait_metric(server, "plinth_request_aborted_total",
                                         lambda v: v > aborted_before, 10), aborted_before + 1)
            # The connection is closed: what is still buffered drains, then EOF or a reset.
            self.assertLess(wait_closed(reader, 30), 30)
            reader.close()
            self.assertTrue(served_fresh(server))
            status, _, _ = completion(server)
            self.assertEqual(status, 200)
            self.assertEqual(server.stop(), 0)


def completion(server):
    """One short non-streamed completion on a new connection: (status, head, body)."""
    body = json.dumps({"model": server.model, "prompt": "Hello", "max_tokens": 4}).encode()
    with connect(server) as s:
        s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: plinth\r\nConnection: close\r\n"
                  b"Content-Type: application/json\r\nContent-Length: " +
                  str(len(body)).encode() + b"\r\n\r\n" + body)
        return read_response(s)


class FdExhaustion(unittest.TestCase):
    def test_accept_backs_off_without_spinning(self):
        # Learn how many descriptors an idle server holds, then give it a few more than that.
        with PlinthServer(ARGS.plinth, ARGS.manifest) as probe:
            baseline = probe.num_fds()
            self.assertEqual(probe.stop(), 0)
        limit = baseline + 16

        def low_fd_limit():
            resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

        with PlinthServer(ARGS.plinth, ARGS.manifest, preexec_fn=low_fd_limit) as server:
            idle_cpu = server.cpu_seconds()
            # More connections than it has descriptors for; the kernel's backlog holds the rest.
            clients = [connect(server) for _ in range(limit + 32)]
            for _ in range(100):  # until the server holds every descriptor it may
                if server.num_fds() >= limit:
                    break
                time.sleep(0.05)
            self.assertGreaterEqual(server.num_fds(), limit - 1)
            time.sleep(0.3)
            before = server.cpu_seconds()
            time.sleep(2.0)
            spent = server.cpu_seconds() - before
            print(f"fd limit {limit}: server CPU {spent:.3f} s over 2 s at EMFILE "
                  f"({before - idle_cpu:.3f} s while the connections came in)")
            self.assertLess(spent, 0.25, "the accept loop spins on EMFILE")
            for c in clients:
                c.close()
            self.assertTrue(served_fresh(server, attempts=100), "not served after the fds freed")
            self.assertEqual(server.stop(), 0)


class Memory(unittest.TestCase):
    def test_rss_flat_across_10000_connections(self):
        # Before closed connections were freed at once, 10,000 of them kept ~7.8 MiB (a weak_ptr
        # each pinned the session's memory until a drain); now RSS does not move.
        bound_kib = 4 * 1024
        with PlinthServer(ARGS.plinth, ARGS.manifest) as server:
            def churn(n):
                for _ in range(n):
                    with connect(server) as s:
                        s.sendall(HEALTH_CLOSE)
                        status, _, _ = read_response(s)
                        self.assertEqual(status, 200)

            churn(500)  # warm-up: allocator arenas, first-use buffers
            before = server.rss_kib()
            churn(10000)
            after = server.rss_kib()
            print(f"RSS {before} KiB before, {after} KiB after 10,000 connections "
                  f"(+{after - before} KiB; bound {bound_kib} KiB)")
            self.assertLess(after - before, bound_kib)
            self.assertEqual(server.stop(), 0)


def main():
    global ARGS
    ARGS, rest = parse_args()
    prog = unittest.main(argv=[sys.argv[0], "-v", *rest], exit=False)
    return 0 if prog.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
