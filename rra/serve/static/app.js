// The page: ask POST /v1/answer, list the ranked answers, draw the evidence (topic -> path -> answers)
// as an SVG graph, show the knowledge text. No library: everything here is served by the package.
"use strict";

const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";
const MAX_DRAWN_ANSWERS = 3;

function el(tag, attrs = {}, text = "") {
  const node = tag === "svg" || ["g", "line", "circle", "text", "path", "marker", "defs", "title"].includes(tag)
    ? document.createElementNS(SVG, tag) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text) node.textContent = text;
  return node;
}

function short(s, n = 24) { return s.length > n ? s.slice(0, n - 1) + "…" : s; }

async function loadInfo() {
  try {
    const info = await (await fetch("/v1/info")).json();
    $("info").textContent = `${info.method} on ${info.kg.entities} entities, ${info.kg.triples} triples, `
      + `${Object.keys(info.kg.relations).length} relations`;
  } catch (e) { $("info").textContent = "server info unavailable"; }
}

async function ask(event) {
  event.preventDefault();
  const question = $("question").value.trim();
  if (!question) { $("status").textContent = "Type a question first."; return; }
  $("ask").disabled = true;
  $("status").className = "muted";
  $("status").textContent = "Answering…";
  try {
    const resp = await fetch("/v1/answer", {
      method: "POST", headers: {"content-type": "application/json"}, body: JSON.stringify({question}),
    });
    const body = await resp.json();
    const rec = body.error ? body.record : body;
    if (body.error) {
      $("status").className = "error";
      $("status").textContent = `${resp.status} ${body.error.type}: ${body.error.message}`;
    } else {
      $("status").textContent = `status ${rec.status} · ${(rec.timings.total_s * 1000).toFixed(1)} ms`;
    }
    if (rec) show(rec); else $("result").hidden = true;
  } catch (e) {
    $("status").className = "error";
    $("status").textContent = `request failed: ${e}`;
  } finally {
    $("ask").disabled = false;
  }
}

function show(rec) {
  const name = (id) => rec.labels[id] || id;
  const answers = $("answers");
  answers.replaceChildren();
  for (const a of rec.ranked) {
    const li = el("li", {"data-id": a.id}, a.label);
    if (a.score !== null && a.score !== undefined) li.append(el("span", {class: "score"}, a.score.toFixed(3)));
    answers.append(li);
  }
  if (!rec.ranked.length) answers.append(el("li", {class: "below"}, "(no answer)"));
  const plan = (rec.extra || {}).plan_text;  // a question beyond one chain: the query plan that answered it
  $("plan").hidden = !plan;
  $("plan").textContent = plan || "";
  const paths = $("paths");
  paths.replaceChildren();
  for (const p of rec.paths) {
    const li = el("li", {}, p.path.join(" → "));
    li.append(el("span", {class: "score"}, `${Number(p.score).toFixed(3)} · ${p.instances} instances`));
    paths.append(li);
  }
  $("knowledge").textContent = rec.knowledge || "(none)";
  const triples = $("triples");
  triples.replaceChildren();
  for (const [h, r, t] of rec.triples) triples.append(el("li", {}, `(${name(h)}, ${r}, ${name(t)})`));
  $("record").textContent = JSON.stringify(rec, null, 2);
  draw(rec);
  $("result").hidden = false;
}

// The evidence subgraph: for each of the top answers, the shortest chain of evidence triples from the
// topic entity to it (triples walked either way); nodes in columns by their distance from the topic.
function draw(rec) {
  const svg = $("graph");
  svg.replaceChildren();
  const topic = rec.topic_entities[0];
  if (!topic) return;
  const adj = new Map();
  const link = (a, b, t) => { if (!adj.has(a)) adj.set(a, []); adj.get(a).push([b, t]); };
  for (const t of rec.triples) { link(t[0], t[2], t); link(t[2], t[0], t); }
  const parent = new Map([[topic, null]]);
  const depth = new Map([[topic, 0]]);
  const queue = [topic];
  while (queue.length) {
    const u = queue.shift();
    for (const [v, t] of adj.get(u) || []) {
      if (!depth.has(v)) { depth.set(v, depth.get(u) + 1); parent.set(v, [u, t]); queue.push(v); }
    }
  }
  const shown = new Set([topic]);
  const edges = new Map();
  const targets = rec.ranked.map((a) => a.id).filter((id) => depth.has(id)).slice(0, MAX_DRAWN_ANSWERS);
  for (const id of targets) {
    for (let v = id; parent.get(v); v = parent.get(v)[0]) {
      shown.add(v);
      const t = parent.get(v)[1];
      edges.set(t.join("|"), t);
    }
  }
  // columns by distance from the topic; in each, nodes in the order of their parents (fewer crossings)
  const columns = [];
  for (const id of shown) (columns[depth.get(id)] ||= []).push(id);
  for (let d = 1; d < columns.length; d++) {
    const rank = new Map(columns[d - 1].map((id, k) => [id, k]));
    columns[d].sort((a, b) => rank.get(parent.get(a)[0]) - rank.get(parent.get(b)[0]));
  }
  const width = svg.clientWidth || 700, height = svg.clientHeight || 340;
  const pos = new Map();
  columns.forEach((ids, d) => ids.forEach((id, k) => pos.set(id, {
    x: 70 + (columns.length > 1 ? d * (width - 180) / (columns.length - 1) : 0),
    y: (k + 1) * height / (ids.length + 1),
  })));
  const defs = el("defs");
  const marker = el("marker", {id: "arrow", viewBox: "0 0 10 10", refX: 18, refY: 5, markerWidth: 7,
    markerHeight: 7, orient: "auto-start-reverse"});
  marker.append(el("path", {d: "M 0 0 L 10 5 L 0 10 z", fill: "#8b93a1"}));
  defs.append(marker);
  svg.append(defs);
  for (const [h, r, t] of edges.values()) {
    const a = pos.get(h), b = pos.get(t);
    const g = el("g", {class: "edge", "data-relation": r});
    g.append(el("line", {x1: a.x, y1: a.y, x2: b.x, y2: b.y, "marker-end": "url(#arrow)"}));
    g.append(el("text", {x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 - 6, "text-anchor": "middle"}, r));
    svg.append(g);
  }
  const answerSet = new Set(targets);
  for (const id of shown) {
    const p = pos.get(id);
    // the topic can be an answer too (a path that returns to it): it is drawn as both
    const kind = id === topic ? (answerSet.has(id) ? "topic answer" : "topic") : answerSet.has(id) ? "answer" : "hop";
    const g = el("g", {class: `node ${kind}`, "data-id": id});
    g.append(el("circle", {cx: p.x, cy: p.y, r: 9}));
    g.append(el("text", {x: p.x, y: p.y + 24, "text-anchor": "middle"}, short(rec.labels[id] || id)));
    g.append(el("title", {}, `${rec.labels[id] || id} (${id})`));
    svg.append(g);
  }
}

$("ask-form").addEventListener("submit", ask);
loadInfo();
