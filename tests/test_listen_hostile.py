"""Listening page under hostile clients (issue 20): slow connections are dropped, deep or huge bodies get a
400 (no traceback), and a clip id a spreadsheet would run as a formula is escaped in the answers CSV."""

from __future__ import annotations

import csv
import json
import socket
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from hear2act.eval.listening import data as listen_data
from hear2act.eval.listening import server as listen_server
from tests.test_listen import http, make_clip_dir, serve  # noqa: F401  (serve is a fixture)

GOOD = {"clip_id": "c2", "label": "concern", "annotator": "ann", "elapsed_ms": 10}


def _closed_by_server(sock: socket.socket) -> bool:
    sock.settimeout(20)
    try:
        return sock.recv(1024) == b""
    except (ConnectionResetError, TimeoutError):
        return False


def test_slow_clients_are_dropped_after_the_connection_timeout(tmp_path: Path, serve: Any,  # noqa: F811
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(listen_server.ListenHandler, "timeout", 0.5)
    srv = serve(make_clip_dir(tmp_path), "ann")
    before = threading.active_count()
    slow = []
    for _ in range(20):  # slowloris: a request line and half a header, then silence
        s = socket.create_connection(srv.server_address[:2])
        s.sendall(b"POST /answer HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Le")
        slow.append(s)
    assert all(_closed_by_server(s) for s in slow)
    for s in slow:
        s.close()
    deadline = time.monotonic() + 10
    while threading.active_count() > before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert threading.active_count() <= before  # every handler thread ended
    assert http(srv.url.rstrip("/") + "/answer", GOOD)[0] == 200  # still serving


def test_a_stalled_body_is_dropped_too(tmp_path: Path, serve: Any, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    monkeypatch.setattr(listen_server.ListenHandler, "timeout", 0.5)
    srv = serve(make_clip_dir(tmp_path), "ann")
    s = socket.create_connection(srv.server_address[:2])
    host = f"127.0.0.1:{srv.server_address[1]}".encode()
    s.sendall(b"POST /answer HTTP/1.1\r\nHost: " + host + b"\r\nContent-Length: 100\r\n\r\n{\"clip")
    assert _closed_by_server(s)
    s.close()


@pytest.mark.parametrize("body, reason", [
    (b"[" * 30_000 + b"]" * 30_000, "nested too deeply"),
    (b'{"elapsed_ms": ' + b"9" * 5_000 + b"}", "body must be JSON"),
])
def test_deep_or_huge_bodies_get_a_400(tmp_path: Path, serve: Any, body: bytes, reason: str,  # noqa: F811
                                       capsys: pytest.CaptureFixture[str]) -> None:
    srv = serve(make_clip_dir(tmp_path), "ann")
    status, _, raw = http(srv.url.rstrip("/") + "/answer", body)
    assert status == 400 and reason in json.loads(raw)["error"]
    assert "Traceback" not in capsys.readouterr().err


def test_a_4000_digit_elapsed_ms_is_out_of_range_not_an_overflow(tmp_path: Path, serve: Any,  # noqa: F811
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    srv = serve(make_clip_dir(tmp_path), "ann")
    body = json.dumps(GOOD).replace('"elapsed_ms": 10', '"elapsed_ms": ' + "9" * 4_000).encode()
    status, _, raw = http(srv.url.rstrip("/") + "/answer", body)
    error = json.loads(raw)["error"]
    assert status == 400 and "elapsed_ms" in error and "4,000 digits" in error and len(error) < 200
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize("cid", ["=HYPERLINK(\"evil.example\",\"x\")", "+1+1", "-2+3", "@SUM(A1)", "'quoted"])
def test_formula_like_clip_ids_are_escaped_in_the_csv(tmp_path: Path, serve: Any, cid: str) -> None:  # noqa: F811
    root = make_clip_dir(tmp_path, intended={cid: "concern", "c2": "resolved"})
    srv = serve(root, "ann")
    assert http(srv.url.rstrip("/") + "/answer", {**GOOD, "clip_id": cid})[0] == 200
    path = listen_data.answers_path(root, "ann")
    rows = list(csv.reader(path.read_text(encoding="utf-8").splitlines()))
    assert rows[1][1] == "'" + cid  # a spreadsheet shows it as text
    assert not any(cell.startswith(("=", "+", "-", "@")) for row in rows for cell in row)
    [answer] = listen_data.read_answers(path)
    assert answer.clip_id == cid  # and it reads back exactly
