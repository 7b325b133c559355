"""``hear2act listen``: scoring, manifest checks, answer storage, the HTTP API, and the page in Chromium."""

from __future__ import annotations

import contextlib
import csv
import doctest
import fcntl
import json
import os
import select
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile as sf

from hear2act.eval.listening import cli as listen
from hear2act.eval.listening import data as listen_data
from hear2act.eval.listening import server as listen_server
from hear2act.eval.listening import stats as listen_stats
from hear2act.eval.listening.stats import accuracy, cohen_kappa, collapse, confusion_matrix, per_class_accuracy
from hear2act_env.cli import main as cli_main

CHROMIUM = Path("/usr/bin/chromium")
# id -> intended state; the e2e annotator answers c1, c2 right and calls c3 (concern) "reluctant".
INTENDED = {"c1": "resolved", "c2": "rejection", "c3": "concern"}


def make_clip_dir(root: Path, mode: str = "4way", intended: dict[str, str] | None = None) -> Path:
    intended = intended or INTENDED
    (root / "clips").mkdir(parents=True, exist_ok=True)
    clips = []
    for i, (cid, state) in enumerate(intended.items()):
        t = np.arange(8000) / 16000  # 0.5 s
        sf.write(root / "clips" / f"{cid}.wav", 0.2 * np.sin(2 * np.pi * (220 + 110 * i) * t), 16000)
        clips.append({"id": cid, "audio": f"clips/{cid}.wav", "utterance": "Okay, sounds good.",
                      "context": f"User: I need a table for two.\nAssistant: Option {i + 1} has one at 7pm.",
                      "intended": state})
    (root / "manifest.json").write_text(json.dumps({"mode": mode, "renderer": "hibari", "clips": clips}))
    return root


def ans(clip: str, label: str, who: str = "a") -> listen_data.Answer:
    return listen_data.Answer(who, clip, label, 100, "2026-01-01T00:00:00.000+00:00")


# ---------------------------------------------------------------- statistics


@pytest.mark.parametrize("module", [listen_stats, listen, listen_data, listen_server])
def test_doctests(module: Any) -> None:
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0


def test_cohen_kappa_hand_computed() -> None:
    same = ["resolved", "concern", "rejection", "reluctant"]
    assert cohen_kappa(same, same) == 1.0
    assert cohen_kappa(["x"] * 5, ["x"] * 5) == 1.0  # p_e == 1: defined as perfect agreement
    # chance level: p_o = 0.5 and p_e = 0.5*0.5 + 0.5*0.5 = 0.5
    assert cohen_kappa(list("yynn"), list("ynyn")) == pytest.approx(0.0)
    assert cohen_kappa(list("yynn"), list("nnyy")) == pytest.approx(-1.0)
    # p_o = 0.8, p_e = 0.7*0.7 + 0.3*0.3 = 0.58 -> 0.22 / 0.42
    assert cohen_kappa(list("yyyyyyynnn"), list("yyyyyynnny")) == pytest.approx(0.22 / 0.42)
    # 3 classes: p_o = 4/6; marginals a = (2,2,2), b = (3,2,1) -> p_e = (6+4+2)/36 = 1/3; kappa = 1/2
    assert cohen_kappa(list("aabbcc"), list("aabbaa")) == pytest.approx(0.5)
    with pytest.raises(ValueError):
        cohen_kappa([], [])
    with pytest.raises(ValueError):
        cohen_kappa(["a"], ["a", "b"])


def test_accuracy_per_class_confusion_and_collapse() -> None:
    gold = ["resolved", "reluctant", "concern", "rejection", "concern"]
    pred = ["resolved", "concern", "concern", "resolved", "reluctant"]
    assert accuracy(gold, pred) == pytest.approx(2 / 5)
    assert per_class_accuracy(gold, pred) == {"resolved": (1, 1), "reluctant": (0, 1), "concern": (1, 2),
                                              "rejection": (0, 1)}
    g2, p2 = [collapse(x) for x in gold], [collapse(x) for x in pred]
    assert g2 == ["resolved"] + ["unresolved"] * 4
    assert accuracy(g2, p2) == pytest.approx(4 / 5)  # only the rejection -> resolved is wrong when collapsed
    assert per_class_accuracy(g2, p2) == {"resolved": (1, 1), "unresolved": (3, 4)}
    rows = ["resolved", "reluctant", "concern", "rejection"]
    assert confusion_matrix(gold, pred, rows) == [[1, 0, 0, 0], [0, 0, 1, 0], [0, 1, 1, 0], [1, 0, 0, 0]]
    assert confusion_matrix(g2, p2, ["resolved", "unresolved"]) == [[1, 0], [1, 3]]
    with pytest.raises(ValueError, match="unknown label"):
        collapse("meh")


def test_score_collapses_binary_annotators_and_pairs(tmp_path: Path) -> None:
    m = listen_data.load_manifest(make_clip_dir(tmp_path))
    answers = {
        "ann": listen_data.latest_answers([ans("c1", "resolved"), ans("c2", "rejection"), ans("c3", "reluctant")]),
        "bin": listen_data.latest_answers([ans("c1", "resolved", "bin"), ans("c2", "unresolved", "bin"),
                                      ans("c3", "resolved", "bin")]),
    }
    r = listen.score(m, answers)
    a, b = r["annotators"]["ann"], r["annotators"]["bin"]
    assert a["mode"] == "4way" and b["mode"] == "binary"
    assert (a["accuracy_4way"]["correct"], a["accuracy_4way"]["total"]) == (2, 3)
    assert a["accuracy_binary"]["value"] == 1.0
    assert a["per_class_4way"]["concern"] == {"correct": 0, "total": 1, "value": 0.0}
    assert a["kappa_vs_intended"]["binary"] == 1.0
    # 4-way vs intended: p_o = 2/3; marginals intended (1,0,1,1) x answers (1,1,0,1) -> p_e = 2/9
    assert a["kappa_vs_intended"]["4way"] == pytest.approx((2 / 3 - 2 / 9) / (1 - 2 / 9))
    assert b["accuracy_4way"] is None and b["kappa_vs_intended"]["4way"] is None
    assert (b["accuracy_binary"]["correct"], b["accuracy_binary"]["total"]) == (2, 3)
    assert b["per_class_binary"]["unresolved"] == {"correct": 1, "total": 2, "value": 0.5}
    assert b["confusion"]["cols"] == ["resolved", "unresolved"]
    assert b["confusion"]["matrix"] == [[1, 0], [0, 0], [1, 0], [0, 1]]
    # binary: ann (R,U,U) vs bin (R,U,R): p_o 2/3, p_e = 1/3*2/3 + 2/3*1/3 = 4/9 -> 0.4
    assert r["pairs"] == [{"a": "ann", "b": "bin", "n": 3, "kappa_4way": None,
                           "kappa_binary": pytest.approx(0.4)}]
    text = listen.format_report(r)
    assert "accuracy 4-way:  0.667 (2/3)" in text and "ann vs bin: n=3, binary 0.400" in text


def test_score_ignores_unknown_clips_and_labels(tmp_path: Path) -> None:
    m = listen_data.load_manifest(make_clip_dir(tmp_path))
    r = listen.score(m, {"x": listen_data.latest_answers([ans("c1", "resolved", "x"), ans("zz", "resolved", "x"),
                                                      ans("c2", "maybe", "x")])})
    e = r["annotators"]["x"]
    assert e["answered"] == 1 and e["ignored"] == 2


# ---------------------------------------------------------------- manifest


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        (lambda d: d.update(mode="3way"), "field 'mode'"),
        (lambda d: d.update(clips=[]), "field 'clips'"),
        (lambda d: d["clips"][1].pop("intended"), r"clips\[1\]: missing field 'intended'"),
        (lambda d: d["clips"][2].update(intended="happy"), r"clips\[2\] \(id 'c3'\)\.intended"),
        (lambda d: d["clips"][1].update(intended="unresolved"), r"clips\[1\] \(id 'c2'\)\.intended"),
        (lambda d: d["clips"][2].update(id="c1"), r"clips\[2\] \(id 'c1'\)\.id: duplicate of clips\[0\]"),
        (lambda d: d["clips"][0].update(audio="../x.wav"), r"clips\[0\] \(id 'c1'\)\.audio: must be a path"),
        (lambda d: d["clips"][1].update(audio="no.wav"), r"clips\[1\] \(id 'c2'\)\.audio: file not found"),
        (lambda d: d["clips"][0].update(context=3), r"clips\[0\]\.context: must be a string"),
        (lambda d: d["clips"].__setitem__(1, "c2"), r"clips\[1\]: must be a JSON object"),
        (lambda d: d["clips"][0].update(audio="manifest.json"), r"clips\[0\] \(id 'c1'\)\.audio: not a WAV"),
    ],
)
def test_manifest_errors_name_field_and_index(tmp_path: Path, patch: Any, message: str) -> None:
    make_clip_dir(tmp_path)
    data = json.loads((tmp_path / "manifest.json").read_text())
    patch(data)
    (tmp_path / "manifest.json").write_text(json.dumps(data))
    with pytest.raises(listen_data.ManifestError, match=message):
        listen_data.load_manifest(tmp_path)


def test_manifest_file_errors_and_cli_exit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(listen_data.ManifestError, match=r"manifest\.json: not found"):
        listen_data.load_manifest(tmp_path)
    (tmp_path / "manifest.json").write_text("{not json")
    with pytest.raises(listen_data.ManifestError, match="not valid JSON"):
        listen_data.load_manifest(tmp_path)
    (tmp_path / "manifest.json").write_text(json.dumps({"mode": "4way", "clips": [{"id": "c1"}]}))
    assert cli_main(["listen", str(tmp_path), "--annotator", "ann", "--port", "0"]) == 2
    assert "clips[0]: missing field 'audio'" in capsys.readouterr().err
    make_clip_dir(tmp_path)
    assert cli_main(["listen", str(tmp_path), "--annotator", "../etc"]) == 2
    assert "annotator name" in capsys.readouterr().err


# ---------------------------------------------------------------- answers file


def test_answers_append_resume_and_last_wins(tmp_path: Path) -> None:
    make_clip_dir(tmp_path)
    path = listen_data.answers_path(tmp_path, "ann")
    store = listen_data.AnswerStore(path, "ann")
    store.add("c1", "concern", 1200)
    store.add("c2", "resolved", 800)
    store.add("c1", "rejection", 300)  # re-answer: appended, and it wins
    rows = list(csv.reader(path.open()))
    assert rows[0] == list(listen_data.CSV_COLUMNS)
    assert [r[1:4] for r in rows[1:]] == [["c1", "concern", "1200"], ["c2", "resolved", "800"],
                                          ["c1", "rejection", "300"]]
    # a torn last line (crash mid-write) is skipped, and the next answer starts on a fresh line
    with path.open("a") as f:
        f.write("ann,c3,conc")
    store = listen_data.AnswerStore(path, "ann")  # a restarted session
    assert {k: a.label for k, a in store.answered.items()} == {"c1": "rejection", "c2": "resolved"}
    store.add("c3", "reluctant", 10)
    latest = listen.load_all_answers(tmp_path)["ann"]
    assert {k: a.label for k, a in latest.items()} == {"c1": "rejection", "c2": "resolved", "c3": "reluctant"}
    assert listen.score(listen_data.load_manifest(tmp_path), {"ann": latest})["annotators"]["ann"]["answered"] == 3


def test_annotator_order_is_seeded_per_annotator() -> None:
    ids = [f"c{i:03d}" for i in range(40)]
    a = listen_data.annotator_order(ids, "alice")
    assert a == listen_data.annotator_order(ids, "alice") and sorted(a) == ids and a != ids
    assert a != listen_data.annotator_order(ids, "bob")


# ---------------------------------------------------------------- HTTP API


@pytest.fixture
def serve() -> Iterator[Any]:
    servers: list[listen_server.ListenServer] = []

    def start(root: Path, annotator: str = "ann", mode: str | None = None) -> listen_server.ListenServer:
        srv = listen_server.make_server(root, annotator, "127.0.0.1", 0, mode)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        servers.append(srv)
        return srv

    yield start
    for srv in servers:
        srv.shutdown()
        srv.server_close()


def http(
    url: str, body: Any = None, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    headers = {"Content-Type": "application/json", **(headers or {})}
    req = urllib.request.Request(url, data=data, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def test_http_api(tmp_path: Path, serve: Any) -> None:
    root = make_clip_dir(tmp_path)
    srv = serve(root, "ann")
    base = srv.url.rstrip("/")
    status, headers, page = http(base + "/")
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    assert b"<audio" in page and b"src=\"http" not in page and b"intended" not in page

    status, _, raw = http(base + "/api/clips")
    data = json.loads(raw)
    assert status == 200 and "intended" not in raw.decode()
    assert [c["id"] for c in data["clips"]] == listen_data.annotator_order(list(INTENDED), "ann")
    assert [lab["value"] for lab in data["labels"]] == ["resolved", "reluctant", "concern", "rejection"]
    assert data["total"] == 3 and data["answered"] == 0 and data["mode"] == "4way"

    status, headers, wav = http(base + "/clip/c2")
    assert status == 200 and headers["Content-Type"] == "audio/wav"
    assert wav == (root / "clips" / "c2.wav").read_bytes()
    status, headers, part = http(base + "/clip/c2", headers={"Range": "bytes=0-11"})
    assert status == 206 and part == wav[:12] and headers["Content-Range"] == f"bytes 0-11/{len(wav)}"
    assert http(base + "/clip/nope")[0] == 404

    good = {"clip_id": "c2", "label": "concern", "annotator": "ann", "elapsed_ms": 1234}
    for patch, field in [({"clip_id": "c9"}, "clip_id"), ({"label": "unresolved"}, "label"),
                         ({"annotator": "bob"}, "annotator"), ({"elapsed_ms": -1}, "elapsed_ms"),
                         ({"elapsed_ms": "1"}, "elapsed_ms")]:
        status, _, raw = http(base + "/answer", {**good, **patch})
        assert status == 400 and json.loads(raw)["field"] == field, (patch, raw)
    status, _, raw = http(base + "/answer", b"[1, 2")
    assert status == 400 and "JSON" in json.loads(raw)["error"]
    assert not listen_data.answers_path(root, "ann").exists()  # nothing invalid was stored

    status, _, raw = http(base + "/answer", good)
    assert status == 200 and json.loads(raw) == {"ok": True, "answered": 1, "total": 3}
    assert json.loads(http(base + "/api/clips")[2])["answered"] == 1

    # a restarted session (new server) resumes: c2 stays answered; re-answering overwrites in scoring
    srv2 = serve(root, "ann")
    clips = json.loads(http(srv2.url + "api/clips")[2])["clips"]
    assert [c["id"] for c in clips if c["answered"]] == ["c2"]
    assert http(srv2.url + "answer", {**good, "label": "rejection"})[0] == 200
    assert len(listen_data.read_answers(listen_data.answers_path(root, "ann"))) == 2
    assert listen.load_all_answers(root)["ann"]["c2"].label == "rejection"

    # binary mode override: two labels; "unresolved" accepted, graded labels refused
    srv3 = serve(root, "bin", "binary")
    labels = [lab["value"] for lab in json.loads(http(srv3.url + "api/clips")[2])["labels"]]
    assert labels == ["resolved", "unresolved"]
    post = {"clip_id": "c1", "label": "concern", "annotator": "bin", "elapsed_ms": 5}
    assert json.loads(http(srv3.url + "answer", post)[2])["field"] == "label"
    assert http(srv3.url + "answer", {**post, "label": "unresolved"})[0] == 200


def test_foreign_origin_and_host_are_refused(tmp_path: Path, serve: Any) -> None:
    root = make_clip_dir(tmp_path)
    srv = serve(root, "ann")
    base, port = srv.url.rstrip("/"), srv.server_address[1]
    good = {"clip_id": "c2", "label": "concern", "annotator": "ann", "elapsed_ms": 10}
    answers = listen_data.answers_path(root, "ann")
    # cross-site writes: a foreign page's fetch/form carries its Origin or Sec-Fetch-Site
    for headers in ({"Origin": "http://evil.example"}, {"Origin": "null"},
                    {"Origin": f"http://127.0.0.1:{port + 1}"}, {"Sec-Fetch-Site": "cross-site"},
                    {"Origin": f"http://127.0.0.1:{port}", "Sec-Fetch-Site": "same-site"}):
        status, _, raw = http(base + "/answer", good, headers)
        assert status == 403 and "cross-site" in json.loads(raw)["error"], headers
    # DNS rebinding: the attacker's name resolves to us, but the Host header still names it
    for host in ("evil.example", f"evil.example:{port}", f"localhost.evil.example:{port}", f"127.0.0.1:{port + 1}"):
        assert http(base + "/answer", good, {"Host": host})[0] == 403, host
        assert http(base + "/api/clips", headers={"Host": host})[0] == 403, host
    assert not answers.exists()  # nothing was written
    # the page itself (same origin) and non-browser clients are served
    same = {"Origin": f"http://127.0.0.1:{port}", "Sec-Fetch-Site": "same-origin"}
    assert http(base + "/answer", good, same)[0] == 200
    assert http(base + "/api/clips", headers={"Host": f"localhost:{port}"})[0] == 200
    assert http(base + "/answer", {**good, "clip_id": "c1"})[0] == 200
    assert len(listen_data.read_answers(answers)) == 2


# ---------------------------------------------------------------- the page, in headless Chromium


class Chromium:
    """Headless Chromium driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``):
    NUL-terminated JSON messages, Chromium reading on its fd 3 and writing on its fd 4. Stdlib only."""

    def __init__(self, profile: Path) -> None:
        to_chrome_r, self._w = os.pipe()
        self._r, from_chrome_w = os.pipe()
        # park Chromium's ends above fd 9 so that moving them onto 3 and 4 cannot clobber them
        for fd in (to_chrome_r, from_chrome_w):
            high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
            os.close(fd)
            if fd == to_chrome_r:
                to_chrome_r = high
            else:
                from_chrome_w = high
        flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--mute-audio", "--remote-debugging-pipe", f"--user-data-dir={profile}", "about:blank"]
        # bash moves the two pipe ends onto fds 3 and 4, then execs Chromium.
        script = f'exec "$0" "$@" 3<&{to_chrome_r} 4>&{from_chrome_w} {to_chrome_r}<&- {from_chrome_w}>&-'
        self.proc = subprocess.Popen(
            ["/bin/bash", "-c", script, str(CHROMIUM), *flags], pass_fds=(to_chrome_r, from_chrome_w),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buf = b""
        self._id = 0
        self.session: str | None = None

    def send(self, method: str, params: dict[str, Any] | None = None, timeout: float = 30.0,
             browser: bool = False) -> dict[str, Any]:
        self._id += 1
        msg: dict[str, Any] = {"id": self._id, "method": method, "params": params or {}}
        if self.session and not browser:
            msg["sessionId"] = self.session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            while b"\0" in self._buf:
                raw, self._buf = self._buf.split(b"\0", 1)
                reply = json.loads(raw)
                if reply.get("id") == self._id:
                    if "error" in reply:
                        raise RuntimeError(f"{method}: {reply['error']}")
                    return reply["result"]
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._r], [], [], left)[0]:
                raise TimeoutError(f"no reply to {method} from Chromium")
            chunk = os.read(self._r, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed the DevTools pipe")
            self._buf += chunk

    def open(self, url: str) -> None:
        target = self.send("Target.createTarget", {"url": url})["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]

    def js(self, expression: str) -> Any:
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True})
        if "exceptionDetails" in result:
            raise RuntimeError(f"JS error in {expression!r}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 30.0) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            try:
                value = self.js(expression)
            except RuntimeError as e:  # e.g. no document.body yet while the page loads
                value, error = None, e
            else:
                error = None
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError(f"timed out waiting for {expression!r} ({error or value!r})")
            time.sleep(0.05)

    def close(self) -> None:
        with contextlib.suppress(OSError, RuntimeError, TimeoutError):
            self.send("Browser.close", browser=True, timeout=5)
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)  # the group started above, Chromium's own children
            self.proc.wait(timeout=5)
        os.close(self._w)
        os.close(self._r)


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium (apt-get install -y chromium)")
def test_page_end_to_end_in_chromium(tmp_path: Path, serve: Any, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_clip_dir(tmp_path / "clips")
    srv = serve(root, "ann")
    answer = {"c1": "resolved", "c2": "rejection", "c3": "reluctant"}
    profile = tmp_path / "profile"
    profile.mkdir()
    browser = Chromium(profile)
    try:
        browser.open(srv.url)
        for k in range(1, 4):
            browser.wait_for("document.body.dataset.state === 'clip' && "
                             f"document.getElementById('progress').textContent === 'Clip {k} of 3'")
            clip = browser.js("document.body.dataset.clipId")
            assert browser.js("document.getElementById('next').disabled") is True
            page = browser.js("({ctx: document.getElementById('context').innerText,"
                              " n: document.querySelectorAll('input[name=label]').length,"
                              " src: document.getElementById('audio').src})")
            assert page["n"] == 4 and f"Option {list(INTENDED).index(clip) + 1} has one" in page["ctx"]
            assert page["src"] == f"{srv.url}clip/{clip}"
            # the WAV really loads and decodes in the browser: 0.5 s
            duration = browser.wait_for("document.getElementById('audio').readyState >= 1 && "
                                        "document.getElementById('audio').duration")
            assert duration == pytest.approx(0.5, abs=0.01)
            browser.js(f"document.getElementById('label-{answer[clip]}').click()")
            browser.js("document.getElementById('next').click()")
        done_text = "document.body.dataset.state === 'done' && document.getElementById('done').innerText"
        assert "all 3 clips answered" in browser.wait_for(done_text)
        # reload = a resumed session: still done, nothing re-asked
        browser.js("location.reload()")
        time.sleep(0.2)
        assert "all 3 clips" in browser.wait_for(done_text)
    finally:
        browser.close()
    rows = list(csv.DictReader(listen_data.answers_path(root, "ann").open()))
    assert len(rows) == 3
    assert {r["clip_id"]: r["label"] for r in rows} == answer
    assert all(r["annotator"] == "ann" and int(r["elapsed_ms"]) >= 0 for r in rows)

    capsys.readouterr()
    assert cli_main(["listen", str(root), "--score"]) == 0
    out = capsys.readouterr().out
    assert "Annotator ann (4way): 3/3 clips answered" in out
    assert "accuracy 4-way:  0.667 (2/3)" in out
    assert "accuracy binary: 1.000 (3/3)" in out
    assert "kappa vs intended: 4-way 0.571, binary 1.000" in out
    assert "    concern    0.000 (0/1)" in out


def test_cli_score_json_and_no_answers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_clip_dir(tmp_path)
    assert cli_main(["listen", str(root), "--score"]) == 0
    assert "No answers yet" in capsys.readouterr().out
    store = listen_data.AnswerStore(listen_data.answers_path(root, "x"), "x")
    store.add("c1", "resolved", 5)
    assert cli_main(["listen", str(root), "--score", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["annotators"]["x"]["accuracy_binary"] == {"correct": 1, "total": 1, "value": 1.0}
    assert cli_main(["listen", str(root)]) == 2
    assert "--annotator" in capsys.readouterr().err

