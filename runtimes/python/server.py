"""sless Python runtime server (CONTRACT.md section 4), standard library only.

Shared by python3.11 and python3.12: runtimes/<runtime>/server.py only runs this file
(see runtimes/README.md).

    PORT=9000 SLESS_FUNCTION_DIR=./hello SLESS_ENTRYPOINT=handler.handle python3 runtimes/python3.11/server.py
    SLESS_MODE=job SLESS_EVENT='{"n": 1}' python3 runtimes/python3.11/server.py    one run, result JSON on stdout
"""

import asyncio
import importlib
import inspect
import json
import os
import signal
import socket
import sys
import threading
import traceback
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

PORT = int(os.environ.get("PORT") or 8080)
# Unset: every interface (what an image needs); `sless dev` sets 127.0.0.1.
BIND_ADDRESS = os.environ.get("SLESS_BIND_ADDRESS") or ""


class Server(ThreadingHTTPServer):
    # socketserver's default listen backlog is 5: a burst of calls would be refused.
    request_queue_size = 128
    address_family = socket.AF_INET6 if ":" in BIND_ADDRESS else socket.AF_INET
FUNCTION_DIR = os.path.abspath(os.environ.get("SLESS_FUNCTION_DIR") or "/app/function")
ENTRYPOINT = os.environ.get("SLESS_ENTRYPOINT") or "handler.handle"
TIMEOUT_SEC = float(os.environ.get("SLESS_TIMEOUT_SEC") or 30)
FUNCTION_NAME = os.environ.get("SLESS_FUNCTION_NAME", "")
NAMESPACE = os.environ.get("SLESS_NAMESPACE", "")


def log(message):
    sys.stderr.write("sless-runtime: %s\n" % message)
    sys.stderr.flush()


def fail(message):
    log(message)
    sys.exit(1)


def load_handler():
    module_name, _, func_name = ENTRYPOINT.rpartition(".")
    if not module_name or not func_name:
        fail('SLESS_ENTRYPOINT "%s" must look like "<module>.<function>", e.g. "handler.handle"' % ENTRYPOINT)
    if not os.path.isdir(FUNCTION_DIR):
        fail("SLESS_FUNCTION_DIR %s is not a directory" % FUNCTION_DIR)
    # The function's own modules win over anything else on the path (the server's folder included).
    sys.path.insert(0, FUNCTION_DIR)
    try:
        module = importlib.import_module(module_name)
    except Exception:
        fail('entrypoint "%s": importing module "%s" from %s failed:\n%s'
             % (ENTRYPOINT, module_name, FUNCTION_DIR, traceback.format_exc()))
    handler = getattr(module, func_name, None)
    if not callable(handler):
        fail('entrypoint "%s": module "%s" (%s) has no function "%s"'
             % (ENTRYPOINT, module_name, getattr(module, "__file__", "?"), func_name))
    return handler


def takes_context(handler):
    """True when the handler accepts a second positional argument (or *args)."""
    try:
        params = inspect.signature(handler).parameters.values()
    except (TypeError, ValueError):
        return False
    positional = 0
    for p in params:
        if p.kind == p.VAR_POSITIONAL:
            return True
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            positional += 1
    return positional >= 2


def deadline():
    at = datetime.now(timezone.utc) + timedelta(seconds=TIMEOUT_SEC)
    return at.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _reject_constant(name):
    raise ValueError("%s is not JSON" % name)


def parse_event(raw):
    """The JSON body, the body as a string when it is not JSON, {} when there is none."""
    if not raw:
        return {}
    text = raw.decode("utf-8", errors="replace")
    try:
        # NaN/Infinity are not JSON; refusing them keeps Python in step with the Node and Go runtimes.
        return json.loads(text, parse_constant=_reject_constant)
    except ValueError:
        return text


def join_values(pairs):
    """Repeated query keys and headers are joined with "," (as API Gateway's payload 2.0 does)."""
    out = {}
    for key, value in pairs:
        out[key] = out[key] + "," + value if key in out else value
    return out


def invoke(handler, with_context, event, context):
    result = handler(event, context) if with_context else handler(event)
    if inspect.iscoroutine(result):
        result = asyncio.run(result)
    return result


def dumps(value):
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str).encode("utf-8")


def has_header(headers, name):
    return any(k.lower() == name for k in headers)


def to_response(value):
    """Maps a handler's return value to (status, headers, body bytes) (CONTRACT.md section 4)."""
    if value is None:
        return 204, {}, b""
    if isinstance(value, str):
        return 200, {"Content-Type": "text/plain; charset=utf-8"}, value.encode("utf-8")
    if isinstance(value, (bytes, bytearray)):
        return 200, {"Content-Type": "application/octet-stream"}, bytes(value)
    status = value.get("statusCode") if isinstance(value, dict) else None
    if isinstance(status, int) and not isinstance(status, bool):
        if not 100 <= status <= 599:
            raise ValueError("statusCode %d is not an HTTP status (100-599)" % status)
        headers = {str(k): str(v) for k, v in (value.get("headers") or {}).items()}
        for k, v in headers.items():
            if any(c in k + v for c in "\r\n\0") or not k:
                raise ValueError("invalid response header %r" % k)
        body = value.get("body")
        if body is None:
            return status, headers, b""
        if isinstance(body, (str, bytes, bytearray)):
            if not has_header(headers, "content-type"):
                headers["Content-Type"] = "text/plain; charset=utf-8" if isinstance(body, str) else "application/octet-stream"
            return status, headers, body.encode("utf-8") if isinstance(body, str) else bytes(body)
        if not has_header(headers, "content-type"):
            headers["Content-Type"] = "application/json"
        return status, headers, dumps(body)
    return 200, {"Content-Type": "application/json"}, dumps(value)


class Connections:
    """The open keep-alive connections, so that a drain can close the idle ones at once (a proxy keeps
    connections open; waiting for it to close them would hold SIGTERM for as long as it likes)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.idle = set()
        self.draining = False

    def set_idle(self, conn, idle):
        with self.lock:
            if idle and self.draining:
                return False
            (self.idle.add if idle else self.idle.discard)(conn)
            return True

    def drain(self):
        with self.lock:
            self.draining = True
            for conn in self.idle:
                try:
                    conn.shutdown(socket.SHUT_RD)
                except OSError:
                    pass


def make_request_handler(handler, with_context, connections):
    class RequestHandler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "sless-python"

        def log_message(self, format, *args):  # noqa: A002 - the base class's name
            pass  # one line per request is the proxy's job, not the function's

        def handle_one_request(self):
            # Any method reaches the handler, not only the do_<METHOD> ones the base class knows.
            if not connections.set_idle(self.connection, True):
                self.close_connection = True
                return
            try:
                self.raw_requestline = self.rfile.readline(65537)
            except OSError:
                self.raw_requestline = b""
            connections.set_idle(self.connection, False)
            if not self.raw_requestline:
                self.close_connection = True
                return
            if len(self.raw_requestline) > 65536:
                self.send_error(414)
                return
            if not self.parse_request():
                return
            self.dispatch()
            self.wfile.flush()
            if connections.draining:
                self.close_connection = True

        def dispatch(self):
            url = urlsplit(self.path)
            if self.command == "GET" and url.path == "/health":
                self.send(200, {"Content-Type": "application/json"}, b'{"status":"ok"}')
                return
            try:
                length = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                self.send(400, {"Content-Type": "application/json"}, dumps({"error": "bad Content-Length"}))
                self.close_connection = True
                return
            raw = self.read_chunked() if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower() else self.rfile.read(length)
            headers = join_values((k.lower(), v) for k, v in self.headers.items())
            context = {
                "method": self.command,
                "path": url.path,
                "query": join_values(parse_qsl(url.query, keep_blank_values=True)),
                "headers": headers,
                "function": FUNCTION_NAME,
                "namespace": NAMESPACE,
                "deadline": deadline(),
            }
            try:
                status, out_headers, body = to_response(invoke(handler, with_context, parse_event(raw), context))
            except Exception as err:  # the handler's failure becomes the caller's 500, and a log line
                log("handler error on %s %s:\n%s" % (self.command, url.path, traceback.format_exc()))
                status, out_headers, body = 500, {"Content-Type": "application/json"}, dumps({"error": str(err) or type(err).__name__})
            self.send(status, out_headers, body)

        def read_chunked(self):
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()

        def send(self, status, headers, body):
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            if status != 204 and not has_header(headers, "content-length"):
                self.send_header("Content-Length", str(len(body)))
            if connections.draining:
                self.send_header("Connection", "close")  # the client must not reuse this connection
            self.end_headers()
            if status != 204 and self.command != "HEAD":
                self.wfile.write(body)

    return RequestHandler


def run_job(handler, with_context):
    raw = os.environ.get("SLESS_EVENT", "").encode("utf-8")
    context = {"method": "", "path": "", "query": {}, "headers": {},
               "function": FUNCTION_NAME, "namespace": NAMESPACE, "deadline": deadline()}
    try:
        result = invoke(handler, with_context, parse_event(raw), context)
        RESULT_OUT.write(dumps(result).decode("utf-8") + "\n")
        RESULT_OUT.flush()
        return 0
    except Exception:
        sys.stderr.write(traceback.format_exc())
        return 1


def serve(handler, with_context):
    try:
        connections = Connections()
        server = Server((BIND_ADDRESS, PORT), make_request_handler(handler, with_context, connections))
    except OSError as err:
        fail("cannot listen on %s:%d: %s" % (BIND_ADDRESS or "*", PORT, err))
    # Non-daemon request threads + block_on_close: server_close() waits for in-flight requests.
    server.daemon_threads = False
    server.block_on_close = True
    stopping = threading.Event()

    def on_signal(signum, _frame):
        log("%s: draining" % signal.Signals(signum).name)
        stopping.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    thread = threading.Thread(target=server.serve_forever, name="sless-http", daemon=True)
    thread.start()
    log("serving %s from %s on %s:%d" % (ENTRYPOINT, FUNCTION_DIR, BIND_ADDRESS or "*", PORT))
    while not stopping.wait(3600):
        pass
    server.shutdown()
    connections.drain()
    # server_close() joins the request threads; give them at most the grace period, then leave.
    closer = threading.Thread(target=server.server_close, name="sless-drain", daemon=True)
    closer.start()
    closer.join(min(TIMEOUT_SEC, 25))
    if closer.is_alive():
        log("requests still running after the grace period: exiting anyway")
        sys.stderr.flush()
        os._exit(0)
    return 0


# In job mode stdout carries the result line only: the function's own prints go to stderr.
RESULT_OUT = sys.stdout


def main():
    if os.environ.get("SLESS_MODE") == "job":
        sys.stdout = sys.stderr
    handler = load_handler()
    with_context = takes_context(handler)
    if os.environ.get("SLESS_MODE") == "job":
        return run_job(handler, with_context)
    return serve(handler, with_context)


if __name__ == "__main__":
    sys.exit(main())
