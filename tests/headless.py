"""Drive a headless Chromium over the DevTools protocol, with the standard library only.

The browser test and the page-load benchmark need a real browser: load the
page, collect console errors, read the DOM, click a filter, take a
screenshot. Chromium's ``--remote-debugging-pipe`` speaks the DevTools
protocol as NUL-terminated JSON on file descriptors 3 (commands in) and 4
(replies and events out), so no websocket client, Node toolchain or
browser download is needed: only Debian's ``chromium``.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import queue
import shutil
import signal
import tempfile
import threading
import time
from typing import Any, Optional

DEFAULT_CHROMIUM = "/usr/bin/chromium"

# Flags that let Chromium run headless in a container without a sandbox, a
# GPU or any network of its own (no updates, sync or telemetry).
CHROMIUM_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-default-apps", "--disable-extensions", "--mute-audio", "--hide-scrollbars",
    "--disable-dev-shm-usage", "--remote-debugging-pipe",
)


class BrowserError(RuntimeError):
    """The browser failed, timed out or reported a protocol error."""


def find_chromium() -> Optional[str]:
    """Path of a Chromium binary: ``$CHROMIUM``, /usr/bin/chromium, or one on PATH."""
    for candidate in (os.environ.get("CHROMIUM"), DEFAULT_CHROMIUM, shutil.which("chromium"),
                      shutil.which("chromium-browser")):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def _high_fd(fd: int) -> int:
    # Move a descriptor to >= 10 so that placing the pipes on 3 and 4 in the
    # child can never overwrite one with the other.
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return moved


class Browser:
    """A headless Chromium process and one page (tab) in it.

    Use as a context manager::

        with Browser() as browser:
            browser.navigate("http://127.0.0.1:8080/")
            browser.evaluate("document.title")
    """

    def __init__(self, executable: Optional[str] = None, width: int = 1400, height: int = 1000,
                 timeout_s: float = 30.0):
        self.executable = executable or find_chromium()
        if not self.executable:
            raise BrowserError("no Chromium found (install Debian's chromium, or set $CHROMIUM)")
        self.width, self.height, self.timeout_s = width, height, timeout_s
        self.console_errors: list[str] = []
        self._events: "queue.Queue[dict]" = queue.Queue()
        self._replies: dict = {}
        self._reply_ready = threading.Condition()
        self._next_id = 0
        self._session: Optional[str] = None
        self._pid: Optional[int] = None
        self._profile = None
        self._write_fd = self._read_fd = None

    # -- process and protocol -------------------------------------------

    def __enter__(self) -> "Browser":
        try:
            self.start()
        except BaseException:
            self.close()  # never leave a browser process behind
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def start(self) -> None:
        self._profile = tempfile.mkdtemp(prefix="dashboard-chromium-")
        to_browser_r, to_browser_w = os.pipe()
        from_browser_r, from_browser_w = os.pipe()
        to_browser_r, from_browser_w = _high_fd(to_browser_r), _high_fd(from_browser_w)
        log_path = os.path.join(self._profile, "chromium.log")
        argv = [self.executable, *CHROMIUM_FLAGS, f"--user-data-dir={self._profile}",
                f"--window-size={self.width},{self.height}", "about:blank"]
        self._pid = os.posix_spawn(self.executable, argv, dict(os.environ), file_actions=[
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600),
            (os.POSIX_SPAWN_DUP2, 1, 2),
            (os.POSIX_SPAWN_DUP2, to_browser_r, 3),
            (os.POSIX_SPAWN_DUP2, from_browser_w, 4),
        ])
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._write_fd, self._read_fd = to_browser_w, from_browser_r
        threading.Thread(target=self._read_loop, name="chromium-devtools-reader", daemon=True).start()
        target = self.send("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
        self._session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True},
                                  session=False)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable")
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": self.width, "height": self.height, "deviceScaleFactor": 1, "mobile": False})

    def close(self) -> None:
        if self._pid is not None:
            try:
                self.send("Browser.close", session=False, timeout_s=5)
            except BrowserError:
                pass
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                if os.waitpid(self._pid, os.WNOHANG)[0]:
                    break
                time.sleep(0.05)
            else:
                os.kill(self._pid, signal.SIGKILL)
                os.waitpid(self._pid, 0)
            self._pid = None
        for fd in (self._write_fd, self._read_fd):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._write_fd = self._read_fd = None
        if self._profile:
            shutil.rmtree(self._profile, ignore_errors=True)
            self._profile = None

    def _read_loop(self) -> None:
        buffer = b""
        while True:
            try:
                chunk = os.read(self._read_fd, 1 << 16)
            except (OSError, TypeError):
                chunk = b""
            if not chunk:
                with self._reply_ready:
                    self._replies[None] = {"error": {"message": "Chromium closed the DevTools pipe"}}
                    self._reply_ready.notify_all()
                return
            buffer += chunk
            while b"\0" in buffer:
                raw, buffer = buffer.split(b"\0", 1)
                message = json.loads(raw)
                if "id" in message:
                    with self._reply_ready:
                        self._replies[message["id"]] = message
                        self._reply_ready.notify_all()
                else:
                    self._on_event(message)

    def _on_event(self, message: dict) -> None:
        method, params = message.get("method"), message.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            text = " ".join(str(arg.get("value", arg.get("description", ""))) for arg in params.get("args", []))
            self.console_errors.append(f"console.{params['type']}: {text}")
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            description = details.get("exception", {}).get("description") or details.get("text")
            self.console_errors.append(f"uncaught exception: {description}")
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            entry = params["entry"]
            self.console_errors.append(f"{entry.get('source')}: {entry.get('text')} {entry.get('url', '')}".strip())
        self._events.put(message)

    def send(self, method: str, params: Optional[dict] = None, session: bool = True,
             timeout_s: Optional[float] = None) -> dict:
        """Send one DevTools command and wait for its result."""
        with self._reply_ready:
            self._next_id += 1
            message_id = self._next_id
        message: dict[str, Any] = {"id": message_id, "method": method, "params": params or {}}
        if session and self._session:
            message["sessionId"] = self._session
        try:
            os.write(self._write_fd, json.dumps(message).encode() + b"\0")
        except OSError as error:
            raise BrowserError(f"{method}: cannot write to Chromium ({error})") from None
        deadline = time.monotonic() + (timeout_s or self.timeout_s)
        with self._reply_ready:
            while message_id not in self._replies:
                if None in self._replies:
                    raise BrowserError(f"{method}: {self._replies[None]['error']['message']}")
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise BrowserError(f"{method}: no reply within {timeout_s or self.timeout_s} s")
                self._reply_ready.wait(remaining)
            reply = self._replies.pop(message_id)
        if "error" in reply:
            raise BrowserError(f"{method}: {reply['error'].get('message')}")
        return reply.get("result", {})

    def wait_event(self, method: str, timeout_s: Optional[float] = None) -> dict:
        """The next event named ``method`` (earlier other events are dropped)."""
        deadline = time.monotonic() + (timeout_s or self.timeout_s)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise BrowserError(f"no {method} event within {timeout_s or self.timeout_s} s")
            try:
                event = self._events.get(timeout=remaining)
            except queue.Empty:
                continue
            if event.get("method") == method:
                return event.get("params", {})

    # -- page actions -----------------------------------------------------

    def navigate(self, url: str) -> float:
        """Load ``url`` and wait for its load event; returns seconds from request to load."""
        while not self._events.empty():
            self._events.get_nowait()
        started = time.perf_counter()
        result = self.send("Page.navigate", {"url": url})
        if result.get("errorText"):
            raise BrowserError(f"navigate {url}: {result['errorText']}")
        self.wait_event("Page.loadEventFired")
        return time.perf_counter() - started

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (JSON-serialisable results)."""
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True})
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            raise BrowserError(f"evaluate {expression!r}: "
                               f"{details.get('exception', {}).get('description') or details.get('text')}")
        return result.get("result", {}).get("value")

    def wait_for(self, expression: str, timeout_s: Optional[float] = None) -> Any:
        """Poll until ``expression`` is truthy; returns its value."""
        deadline = time.monotonic() + (timeout_s or self.timeout_s)
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise BrowserError(f"{expression!r} still false after {timeout_s or self.timeout_s} s")
            time.sleep(0.05)

    def click(self, selector: str) -> None:
        """Click the centre of the first element matching ``selector``, as a mouse would."""
        box = self.evaluate(
            "(() => { const e = document.querySelector(" + json.dumps(selector) + ");"
            " if (!e) return null; e.scrollIntoView({block: 'center'});"
            " const r = e.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()")
        if not box:
            raise BrowserError(f"click: no element matches {selector!r}")
        x, y = box
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left",
                                                   "clickCount": 0 if kind == "mouseMoved" else 1})

    def screenshot(self, path: str, full_page: bool = True) -> str:
        """Save a PNG of the page (the whole scrollable page by default)."""
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            size = self.send("Page.getLayoutMetrics")["cssContentSize"]
            params.update({"captureBeyondViewport": True,
                           "clip": {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1}})
        data = self.send("Page.captureScreenshot", params, timeout_s=60)["data"]
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "wb") as stream:
            stream.write(base64.b64decode(data))
        return path
