"""The HTTP server of ``hear2act listen``: serves the listening-test page, the clips, and takes answers.

Stdlib ``http.server``, bound to 127.0.0.1 by default. The intended label never leaves the server.

Requests whose ``Host`` is not one of the server's own names (an IP literal,
``localhost`` for a loopback bind, or this machine's host name, with the bound
port) are refused with 403, which stops DNS-rebinding pages from reading clips
or writing answers; a ``POST`` whose ``Origin`` (or ``Sec-Fetch-Site``) says
it comes from another site is refused too, so no web page can write into the
answers file.

Routes: ``GET /`` the page; ``GET /api/clips`` the clips in this annotator's
order (seeded by the name); ``GET /clip/<id>`` the WAV; ``POST /answer`` a JSON
``{"clip_id", "label", "annotator", "elapsed_ms"}``.
"""

from __future__ import annotations

import ipaddress
import json
import math
import os
import re
import socket
import sys
from collections.abc import Mapping
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import quote, unquote, urlsplit

from .data import (
    LABELS,
    MAX_BODY,
    MAX_ELAPSED_MS,
    MODES,
    AnswerStore,
    Manifest,
    annotator_order,
    answers_path,
    load_manifest,
    validate_annotator,
)


class ListenServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(
        self, address: tuple[str, int], manifest: Manifest, annotator: str, mode: str, verbose: bool = False
    ) -> None:
        self.manifest = manifest
        self.clips = manifest.by_id()
        self.annotator = validate_annotator(annotator)
        if mode not in MODES:
            raise ValueError(f"mode must be one of {list(MODES)}, got {mode!r}")
        self.mode = mode
        self.labels = tuple(name for name, _ in LABELS[mode])
        self.order = annotator_order([c.id for c in manifest.clips], annotator)
        self.store = AnswerStore(answers_path(manifest.root, annotator), annotator)
        self.verbose = verbose
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, ListenHandler)
        self.host_names = _own_names(str(self.server_address[0]))

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        host = f"[{host}]" if ":" in str(host) else host
        return f"http://{host}:{port}/"

    def clips_payload(self) -> dict[str, Any]:
        answered = self.store.answered
        clips = [
            {
                "id": cid,
                "audio": "/clip/" + _quote(cid),
                "context": self.clips[cid].context,
                "utterance": self.clips[cid].utterance,
                "answered": cid in answered,
            }
            for cid in self.order
        ]
        return {
            "annotator": self.annotator,
            "mode": self.mode,
            "labels": [{"value": v, "description": d} for v, d in LABELS[self.mode]],
            "total": len(clips),
            "answered": sum(c["answered"] for c in clips),
            "clips": clips,
        }


def _is_ip(name: str) -> bool:
    """An IP literal cannot be re-pointed by DNS, so any is a legitimate Host."""
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def _own_names(bound: str) -> frozenset[str]:
    """Host names that mean this server: localhost on a loopback bind, else this machine's names too."""
    names = {"localhost"}
    if not (_is_ip(bound) and ipaddress.ip_address(bound).is_loopback):
        names |= {socket.gethostname().lower(), socket.getfqdn().lower()}
    return frozenset(names)


def _quote(s: str) -> str:
    return quote(s, safe="")


class BadRequest(Exception):
    def __init__(self, field: str | None, message: str) -> None:
        super().__init__(message)
        self.field = field


CONNECTION_TIMEOUT_S = 15.0  # a client silent this long (slowloris, a stalled upload) is dropped


class ListenHandler(BaseHTTPRequestHandler):
    server: ListenServer
    server_version = "hear2act-listen"
    protocol_version = "HTTP/1.1"
    timeout = CONNECTION_TIMEOUT_S  # per connection: socket.settimeout on every read and write

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.verbose:
            super().log_message(format, *args)

    # -- helpers
    def _send(self, status: int, body: bytes, ctype: str, extra: Mapping[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, obj: Any) -> None:
        self._send(status, json.dumps(obj).encode("utf-8"), "application/json; charset=utf-8")

    def _error(self, status: int, message: str, field: str | None = None) -> None:
        self._json(status, {"error": message, "field": field})

    # -- who may ask
    def _host_ok(self) -> bool:
        """Is the Host header one of this server's own addresses (with its port)?"""
        host = (self.headers.get("Host") or "").strip().lower()
        port = self.server.server_address[1]
        name, sep, given = host.rpartition(":") if not host.endswith("]") else (host, "", "")
        if not sep or not given.isdigit() or int(given) != port:
            return False
        return name.strip("[]") in self.server.host_names or _is_ip(name.strip("[]"))

    def _origin_ok(self) -> bool:
        """A browser's cross-site POST carries a foreign Origin or Sec-Fetch-Site: cross-site."""
        if self.headers.get("Sec-Fetch-Site", "same-origin").lower() not in ("same-origin", "none"):
            return False
        origin = self.headers.get("Origin")
        if origin is None:  # not a browser page (curl, tests)
            return True
        return origin.strip().lower() == f"http://{(self.headers.get('Host') or '').strip().lower()}"

    def _refuse(self, why: str) -> None:
        self.close_connection = True
        self._error(HTTPStatus.FORBIDDEN, why)

    # -- routes
    def do_GET(self) -> None:
        if not self._host_ok():
            self._refuse("Host is not this server's address")
            return
        path = urlsplit(self.path).path
        if path in ("/", "/index.html"):
            self._send(HTTPStatus.OK, PAGE.encode("utf-8"), "text/html; charset=utf-8",
                       {"Content-Security-Policy": CSP})
        elif path == "/api/clips":
            self._json(HTTPStatus.OK, self.server.clips_payload())
        elif path.startswith("/clip/"):
            self._serve_clip(unquote(path[len("/clip/"):]))
        elif path == "/favicon.ico":
            self._send(HTTPStatus.NO_CONTENT, b"", "image/x-icon")
        else:
            self._error(HTTPStatus.NOT_FOUND, f"no such page: {path}")

    do_HEAD = do_GET

    def _serve_clip(self, cid: str) -> None:
        clip = self.server.clips.get(cid)
        if clip is None:
            self._error(HTTPStatus.NOT_FOUND, f"unknown clip id {cid!r}", "id")
            return
        data = clip.audio.read_bytes()
        size = len(data)
        headers = {"Accept-Ranges": "bytes"}
        rng = _parse_range(self.headers.get("Range"), size)
        if rng is None:
            self._send(HTTPStatus.OK, data, "audio/wav", headers)
        elif rng == (-1, -1):
            self._send(HTTPStatus.REQUESTED_RANGE_NOT_SATISFIABLE, b"", "audio/wav",
                       {**headers, "Content-Range": f"bytes */{size}"})
        else:
            start, end = rng
            headers["Content-Range"] = f"bytes {start}-{end}/{size}"
            self._send(HTTPStatus.PARTIAL_CONTENT, data[start:end + 1], "audio/wav", headers)

    def do_POST(self) -> None:
        if not self._host_ok():
            self._refuse("Host is not this server's address")
            return
        if not self._origin_ok():
            self._refuse("cross-site requests may not post answers")
            return
        if urlsplit(self.path).path != "/answer":
            self._error(HTTPStatus.NOT_FOUND, f"no such endpoint: {self.path}")
            return
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if length < 0 or length > MAX_BODY:
            self.close_connection = True
            self._error(HTTPStatus.BAD_REQUEST, f"body needs a Content-Length of at most {MAX_BODY} bytes")
            return
        try:
            raw = self.rfile.read(length)
        except TimeoutError:  # the body stalled past the connection timeout: drop the connection
            self.close_connection = True
            return
        try:
            clip_id, label, elapsed = self._parse_answer(raw)
        except BadRequest as e:
            self._error(HTTPStatus.BAD_REQUEST, str(e), e.field)
            return
        srv = self.server
        srv.store.add(clip_id, label, elapsed)
        done = sum(cid in srv.store.answered for cid in srv.order)
        print(f"saved {clip_id}: {label} ({elapsed} ms) - {done}/{len(srv.order)} answered", file=sys.stderr)
        self._json(HTTPStatus.OK, {"ok": True, "answered": done, "total": len(srv.order)})

    def _parse_answer(self, raw: bytes) -> tuple[str, str, int]:
        try:
            body = json.loads(raw.decode("utf-8"))
        except RecursionError:
            raise BadRequest(None, "body is nested too deeply") from None
        except ValueError as e:  # not UTF-8, not JSON, an integer over Python's digit limit
            raise BadRequest(None, f"body must be JSON ({type(e).__name__})") from None
        if not isinstance(body, dict):
            raise BadRequest(None, "body must be a JSON object")
        srv = self.server
        clip_id = body.get("clip_id")
        if not isinstance(clip_id, str) or clip_id not in srv.clips:
            raise BadRequest("clip_id", f"unknown clip id {clip_id!r}")
        label = body.get("label")
        if label not in srv.labels:
            raise BadRequest("label", f"label must be one of {list(srv.labels)}, got {label!r}")
        if body.get("annotator") != srv.annotator:
            raise BadRequest("annotator", f"this server collects answers for {srv.annotator!r}, "
                                          f"got {body.get('annotator')!r}")
        elapsed = body.get("elapsed_ms")
        # Compared before any float conversion: a 4,000-digit integer is out of range, not an OverflowError.
        if (isinstance(elapsed, bool) or not isinstance(elapsed, int | float) or not 0 <= elapsed <= MAX_ELAPSED_MS
                or not math.isfinite(elapsed)):
            raise BadRequest("elapsed_ms", f"elapsed_ms must be a number of ms in 0..{MAX_ELAPSED_MS}, "
                                           f"got {_short(elapsed)}")
        return clip_id, label, round(elapsed)


def _short(value: Any) -> str:
    """A bounded rendering of a client's value (a 5,000-digit number is not echoed back)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**30:
        return f"an integer of {len(str(abs(value))):,} digits"
    shown = repr(value)
    return shown if len(shown) <= 60 else shown[:57] + "..."


def _parse_range(header: str | None, size: int) -> tuple[int, int] | None:
    """``(start, end)`` inclusive for a single ``bytes=`` range; None to send it all; (-1, -1) unsatisfiable.

    >>> _parse_range("bytes=0-99", 1000), _parse_range("bytes=900-", 1000), _parse_range("bytes=-10", 1000)
    ((0, 99), (900, 999), (990, 999))
    >>> _parse_range("bytes=2000-", 1000), _parse_range(None, 1000), _parse_range("bytes=0-1,5-6", 1000)
    ((-1, -1), None, None)
    """
    if not header:
        return None
    m = re.fullmatch(r"\s*bytes=(\d*)-(\d*)\s*", header)
    if not m or (not m.group(1) and not m.group(2)):
        return None
    first, last = m.group(1), m.group(2)
    if not first:
        n = int(last)
        return (max(size - n, 0), size - 1) if n > 0 and size > 0 else (-1, -1)
    start = int(first)
    end = min(int(last), size - 1) if last else size - 1
    if start >= size or end < start:
        return (-1, -1)
    return start, end


def make_server(
    clip_dir: str | os.PathLike[str],
    annotator: str,
    host: str = "127.0.0.1",
    port: int = 8765,
    mode: str | None = None,
    verbose: bool = False,
) -> ListenServer:
    """Validate the clip directory and bind a server (port 0 picks a free port); call ``serve_forever``."""
    manifest = load_manifest(clip_dir)
    return ListenServer((host, port), manifest, annotator, mode or manifest.mode, verbose=verbose)


# ---------------------------------------------------------------- page

CSP = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
       "connect-src 'self'; media-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'")

PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Hear2Act listening test</title>
<style>
  body { font: 16px/1.45 system-ui, sans-serif; max-width: 46rem; margin: 2rem auto; padding: 0 1rem;
         color: #1d1d1f; background: #fafafa; }
  header { display: flex; justify-content: space-between; align-items: baseline; }
  h1 { font-size: 1.25rem; margin: 0; }
  #progress { color: #555; font-variant-numeric: tabular-nums; }
  .bar { height: 4px; background: #e3e3e3; border-radius: 2px; margin: .5rem 0 1rem; }
  .bar > div { height: 100%; background: #3366cc; border-radius: 2px; width: 0; }
  .help { color: #555; font-size: .92rem; }
  #context { background: #fff; border: 1px solid #ddd; border-radius: 6px; padding: .6rem .8rem;
             margin: .8rem 0; }
  #context div { margin: .15rem 0; white-space: pre-wrap; }
  #context .speaker { font-weight: 600; }
  #context .user .speaker { color: #2a6a2a; }
  #context .assistant .speaker { color: #3a4fa0; }
  .utt { font-size: 1.1rem; margin: .8rem 0 .3rem; }
  audio { width: 100%; margin: .4rem 0 1rem; }
  fieldset { border: 1px solid #ddd; border-radius: 6px; background: #fff; }
  legend { font-weight: 600; padding: 0 .3rem; }
  label.opt { display: block; padding: .45rem .4rem; border-radius: 4px; cursor: pointer; }
  label.opt:hover { background: #f0f4ff; }
  label.opt .name { font-weight: 600; text-transform: capitalize; margin-right: .4rem; }
  label.opt .key { color: #888; font-size: .8rem; margin-left: .3rem; }
  .actions { display: flex; align-items: center; gap: 1rem; margin-top: 1rem; }
  button { font: inherit; padding: .45rem 1.6rem; border-radius: 6px; border: 1px solid #3366cc;
           background: #3366cc; color: #fff; cursor: pointer; }
  button:disabled { background: #b8c4e0; border-color: #b8c4e0; cursor: default; }
  #status { color: #555; }
  #status.error { color: #b00020; }
  #done { display: none; font-size: 1.15rem; margin-top: 2rem; }
  body[data-state="done"] #test { display: none; }
  body[data-state="done"] #done { display: block; }
  body[data-state="loading"] #test { visibility: hidden; }
</style>
</head>
<body data-state="loading">
<header><h1>Hear2Act listening test</h1><span id="progress"></span></header>
<div class="bar"><div id="bar"></div></div>
<p class="help">Read the conversation, then listen to the user's last turn. Judge how the user really
feels about the assistant's proposal from <em>how</em> it is said, not only from the words.
Keys: 1&ndash;<span id="nkeys">4</span> pick an answer, Enter goes on.</p>
<main id="test">
  <p id="resume" class="help" hidden></p>
  <div id="context" aria-label="Conversation so far"></div>
  <div class="utt"><strong>User:</strong> <span id="utterance"></span></div>
  <audio id="audio" controls preload="auto"></audio>
  <fieldset id="choices"><legend>How does the user feel?</legend></fieldset>
  <div class="actions"><button id="next" type="button" disabled>Next</button><span id="status"></span></div>
</main>
<div id="done"></div>
<script>
"use strict";
const $ = (id) => document.getElementById(id);
const st = { data: null, queue: [], done: 0, t0: 0, busy: false };

function setStatus(text, isError) {
  $("status").textContent = text;
  $("status").className = isError ? "error" : "";
}

function buildChoices(labels) {
  $("nkeys").textContent = String(labels.length);
  labels.forEach((l, i) => {
    const lab = document.createElement("label");
    lab.className = "opt";
    const input = document.createElement("input");
    input.type = "radio"; input.name = "label"; input.value = l.value; input.id = "label-" + l.value;
    input.addEventListener("change", () => { $("next").disabled = st.busy; });
    const name = document.createElement("span");
    name.className = "name"; name.textContent = l.value;
    const desc = document.createElement("span");
    desc.textContent = l.description;
    const key = document.createElement("span");
    key.className = "key"; key.textContent = "(" + (i + 1) + ")";
    lab.append(input, " ", name, desc, key);
    $("choices").append(lab);
  });
}

function renderContext(text) {
  const box = $("context");
  box.replaceChildren();
  for (const line of text.split("\\n")) {
    if (!line.trim()) continue;
    const div = document.createElement("div");
    const m = /^(User|Assistant)\\s*:\\s*(.*)$/i.exec(line);
    if (m) {
      div.className = m[1].toLowerCase();
      const sp = document.createElement("span");
      sp.className = "speaker"; sp.textContent = m[1] + ": ";
      div.append(sp, m[2]);
    } else {
      div.textContent = line;
    }
    box.append(div);
  }
  box.hidden = !box.childElementCount;
}

function selected() {
  const el = document.querySelector('input[name="label"]:checked');
  return el ? el.value : null;
}

function show() {
  const total = st.data.total;
  $("bar").style.width = (100 * st.done / total) + "%";
  const audio = $("audio");
  if (!st.queue.length) {
    audio.pause(); audio.removeAttribute("src"); audio.load();
    $("progress").textContent = total + " of " + total;
    $("done").textContent = "Done: all " + total + " clips answered. Thank you! You can close this tab.";
    document.body.dataset.state = "done";
    delete document.body.dataset.clipId;
    return;
  }
  const clip = st.queue[0];
  $("progress").textContent = "Clip " + (st.done + 1) + " of " + total;
  renderContext(clip.context);
  $("utterance").textContent = clip.utterance;
  audio.pause();
  audio.src = clip.audio;
  audio.load();
  document.querySelectorAll('input[name="label"]').forEach((el) => { el.checked = false; });
  $("next").disabled = true;
  setStatus("", false);
  document.body.dataset.clipId = clip.id;
  document.body.dataset.state = "clip";
  st.t0 = performance.now();
}

async function next() {
  const label = selected();
  if (!label || st.busy || !st.queue.length) return;
  st.busy = true;
  $("next").disabled = true;
  setStatus("Saving\\u2026", false);
  const clip = st.queue[0];
  const body = { clip_id: clip.id, label: label, annotator: st.data.annotator,
                 elapsed_ms: Math.round(performance.now() - st.t0) };
  try {
    const r = await fetch("/answer", { method: "POST", headers: { "Content-Type": "application/json" },
                                       body: JSON.stringify(body) });
    const j = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error(j.error || ("HTTP " + r.status));
  } catch (e) {
    setStatus("Could not save this answer (" + e.message + "). Try again.", true);
    st.busy = false;
    $("next").disabled = false;
    return;
  }
  st.busy = false;
  st.queue.shift();
  st.done += 1;
  show();
}

document.addEventListener("keydown", (ev) => {
  if (document.body.dataset.state !== "clip" || ev.altKey || ev.ctrlKey || ev.metaKey) return;
  const n = Number(ev.key);
  const inputs = document.querySelectorAll('input[name="label"]');
  if (Number.isInteger(n) && n >= 1 && n <= inputs.length) {
    inputs[n - 1].checked = true;
    $("next").disabled = st.busy;
  } else if (ev.key === "Enter") {
    ev.preventDefault();
    next();
  }
});
$("next").addEventListener("click", next);

(async () => {
  try {
    const r = await fetch("/api/clips");
    if (!r.ok) throw new Error("HTTP " + r.status);
    st.data = await r.json();
  } catch (e) {
    document.body.dataset.state = "error";
    document.body.textContent = "Could not load the clips: " + e.message;
    return;
  }
  document.title = "Listening test: " + st.data.annotator;
  buildChoices(st.data.labels);
  st.queue = st.data.clips.filter((c) => !c.answered);
  st.done = st.data.total - st.queue.length;
  if (st.done && st.queue.length) {
    $("resume").textContent = "Welcome back, " + st.data.annotator + ": " + st.done +
      (st.done === 1 ? " clip" : " clips") + " already answered; continuing where you left off.";
    $("resume").hidden = false;
  }
  show();
})();
</script>
</body>
</html>
"""
