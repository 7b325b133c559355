// Trajectory viewer of the Hear2Act report: pick a scenario, see its matched rollouts side by side.
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("viewer-data").textContent);
  const $ = (id) => document.getElementById(id);
  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  };
  const chip = (cls, text, title) => {
    const c = el("span", "chip " + cls, text);
    if (title) c.title = title;
    return c;
  };
  const uniq = (xs) => Array.from(new Set(xs));

  function fillSelect(select, values, labels) {
    const keep = select.value;
    select.innerHTML = "";
    values.forEach((v, i) => {
      const o = el("option", null, labels ? labels[i] : v);
      o.value = v;
      select.appendChild(o);
    });
    if (values.includes(keep)) select.value = keep;
  }

  function scenario() {
    return data.scenarios.find((s) => s.id === $("scenario").value);
  }

  function optionName(s, n) {
    const o = s.options.find((x) => x.number === n);
    return o ? o.name : "option " + n;
  }

  function renderInfo(s) {
    const info = $("scenario-info");
    info.innerHTML = "";
    info.appendChild(el("div", null, s.domain + " · " + s.id));
    const req = el("div");
    req.appendChild(el("span", "who", "request"));
    req.appendChild(document.createTextNode(s.request));
    info.appendChild(req);
    const needs = el("div");
    s.needs.forEach((n) => {
      const span = el("span", "need");
      span.appendChild(chip("disclosed", "L" + n.level));
      span.appendChild(document.createTextNode(n.statement));
      needs.appendChild(span);
    });
    info.appendChild(needs);
    const gold = el("div");
    gold.appendChild(chip("gold", "gold " + s.gold));
    gold.appendChild(document.createTextNode(optionName(s, s.gold)));
    info.appendChild(gold);
  }

  function userTurn(t) {
    const d = el("div", "turn user");
    d.appendChild(el("span", "who", "user"));
    d.appendChild(document.createTextNode(t.text));
    if (!t.request) {
      const chips = el("div");
      if (t.state) chips.appendChild(chip("state-" + t.state, t.state, "true state of the current recommendation"));
      if (t.delivery) chips.appendChild(chip("delivery", t.delivery, "delivery label"));
      (t.disclosed || []).forEach((lv) => chips.appendChild(chip("disclosed", "discloses L" + lv)));
      d.appendChild(chips);
    }
    if (t.audio && data.clips[t.audio]) {
      const a = el("audio");
      a.controls = true;
      a.preload = "none";
      a.src = data.clips[t.audio];
      a.dataset.clip = t.audio;
      d.appendChild(a);
    }
    return d;
  }

  function assistantTurn(s, t) {
    const d = el("div", "turn assistant");
    d.appendChild(el("span", "who", t.opening ? "assistant (opening)" : "assistant"));
    const chips = el("span");
    if (t.kind) chips.appendChild(chip(t.kind === "invalid" ? "invalid" : "action", t.kind + (t.option ? " " + t.option : ""),
      t.parse_error || "parsed action"));
    if (t.option && t.option === s.gold && t.kind === "recommend") chips.appendChild(chip("gold", "gold"));
    if (t.error) chips.appendChild(chip("error", "failed", t.error));
    d.appendChild(chips);
    d.appendChild(el("div", "raw", t.raw));
    if (t.reasoning) {
      const det = el("details", "reasoning");
      det.appendChild(el("summary", null, "reasoning"));
      det.appendChild(el("div", "raw", t.reasoning));
      d.appendChild(det);
    }
    return d;
  }

  function card(s, r) {
    const o = r.outcome;
    const ok = o && o.success;
    const c = el("div", "card " + (ok ? "ok" : "fail"));
    c.dataset.rollout = r.rollout_id;
    const head = el("div", "head");
    let title = r.agent + " · " + r.condition;
    if (r.intervention !== "correct") title += " · " + r.intervention;
    if (r.renderer) title += " · " + r.renderer;
    head.appendChild(el("div", "title", title));
    const chips = el("div");
    if (r.failed) chips.appendChild(chip("error", "failed", r.failed));
    else if (o) {
      chips.appendChild(chip(ok ? "outcome-ok" : "outcome-fail", ok ? "success" : "no success"));
      chips.appendChild(chip(o.final_option === s.gold ? "gold" : "delivery", "final " + o.final_option));
      chips.appendChild(chip("delivery", o.turns + " turns"));
      chips.appendChild(chip("disclosed", o.n_disclosed + "/3 needs"));
      if (o.premature_closure) chips.appendChild(chip("invalid", "premature closure"));
    }
    head.appendChild(chips);
    c.appendChild(head);
    r.turns.forEach((t) => c.appendChild(t.who === "user" ? userTurn(t) : assistantTurn(s, t)));
    return c;
  }

  function render() {
    const s = scenario();
    if (!s) return;
    renderInfo(s);
    const reals = uniq(s.rollouts.map((r) => r.realization));
    fillSelect($("realization"), reals);
    const inReal = s.rollouts.filter((r) => r.realization === $("realization").value);
    const blocks = uniq(inReal.map((r) => r.block));
    fillSelect($("block"), blocks);
    const shown = inReal.filter((r) => r.block === $("block").value);
    const cards = $("cards");
    cards.innerHTML = "";
    shown.forEach((r) => cards.appendChild(card(s, r)));
    $("viewer-count").textContent = shown.length + " matched rollouts";
    document.body.dataset.viewerScenario = s.id;
  }

  fillSelect($("scenario"), data.scenarios.map((s) => s.id),
    data.scenarios.map((s) => s.id + " (" + s.rollouts.length + " rollouts)"));
  // Prefer the block with audio so that the first view shows the spoken cards.
  ["scenario", "realization", "block"].forEach((id) => $(id).addEventListener("change", render));
  const notes = $("viewer-notes");
  (data.notes || []).forEach((n) => notes.appendChild(el("li", null, n)));
  if (data.scenarios.length) {
    const s = data.scenarios[0];
    const spoken = s.rollouts.find((r) => r.renderer);
    if (spoken) {
      fillSelect($("realization"), [spoken.realization]);
      fillSelect($("block"), [spoken.block]);
    }
    render();
  } else {
    $("cards").appendChild(el("p", null, "No rollouts to show."));
  }
  document.body.dataset.viewerReady = "1";
})();
