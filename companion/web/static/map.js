/* The board as a map (templates/_map.html): drawn by the companion (GET /map), re-read when the
   game changes; zoom by buttons, pinch or drag; a tapped territory shows what is there and, on
   the Game page, offers the moves and purchases its forms make (the rules check them there).
   The page's script calls TowerMap.show(state) with every state it renders. */
"use strict";

const TowerMap = (() => {
  const { el, chip, paint, paintAll, flash } = TC;
  const frame = document.getElementById("map");
  if (!frame) return { show() {} };
  const onTable = frame.dataset.mode === "table";
  const view = frame.querySelector(".map-view");
  const details = frame.querySelector(".map-details");
  const MIN_SHARE = 1 / 8;  // zoomed in at most 8 times

  let state = null;
  let drawnKey = null;
  let svg = null;
  let full = null;     // [x, y, w, h] of the whole map
  let box = null;      // what the viewBox shows now
  let aspect = 1;      // h / w of the view, kept while zooming
  let chosen = null;   // the territory whose details are shown

  const numbers = (text) => text.split(/\s+/).map(Number);

  function visible(s) {
    const turn = s && s.automaton;
    if (!s || !s.game) return false;
    if (!onTable) return true;
    // Small on the Table page: during an automaton's move and the battle it declared.
    return (!!turn && turn.status === "waiting") || (!!s.battle && s.battle.origin === "automaton");
  }

  async function show(s) {
    state = s;
    frame.hidden = !visible(s);
    if (frame.hidden) { drawnKey = null; return; }
    const turn = s.automaton && s.automaton.status === "waiting" ? s.automaton.actions : null;
    const key = JSON.stringify([s.game.map, s.game.territories, s.game.players, turn,
      s.battle && s.battle.territory]);
    if (key === drawnKey) return;
    drawnKey = key;
    try {
      await load();
    } catch (e) {
      view.replaceChildren(el("p", { class: "warning" },
        `The map cannot be drawn (${e.message}).`));
    }
  }

  async function load() {
    const response = await fetch("/map", { credentials: "same-origin" });
    if (!response.ok) throw new Error(`${response.status} ${response.statusText}`);
    const parsed = new DOMParser().parseFromString(await response.text(), "text/html");
    const kept = box && full ? { box, full } : null;
    view.replaceChildren(...parsed.body.childNodes);
    svg = view.querySelector("svg");
    for (const node of svg.querySelectorAll("[data-paint]")) {
      node.style.setProperty("--paint", paint(node.dataset.paint));
    }
    paintAll(view);
    full = numbers(svg.dataset.full);
    const start = onTable ? numbers(svg.dataset.focus) : full;
    aspect = start[3] / start[2];
    svg.style.aspectRatio = `${start[2]} / ${start[3]}`;
    // The Game page keeps its zoom across redraws; the Table page shows each move anew.
    box = !onTable && kept && kept.full.join() === full.join() ? kept.box : fitted(start);
    apply();
    if (chosen && !svg.querySelector(`g.t[data-territory="${CSS.escape(chosen)}"]`)) chosen = null;
    if (chosen) describe(chosen);
  }

  // ---- zoom and pan ----
  function fitted(b) {
    // The same shape as the view: widen or heighten `b` around its middle.
    let [x, y, w, h] = b;
    if (h / w > aspect) {
      const nw = h / aspect;
      x -= (nw - w) / 2;
      w = nw;
    } else {
      const nh = w * aspect;
      y -= (nh - h) / 2;
      h = nh;
    }
    return [x, y, w, h];
  }

  function apply() {
    const maxW = full[2] / Math.min(1, aspect * full[2] / full[3]) * 1.05;
    const w = Math.min(Math.max(box[2], full[2] * MIN_SHARE), maxW);
    const h = w * aspect;
    const cx = box[0] + box[2] / 2;
    const cy = box[1] + box[3] / 2;
    // Never lose the map: its middle stays on the map.
    const x = Math.min(Math.max(cx, full[0]), full[0] + full[2]) - w / 2;
    const y = Math.min(Math.max(cy, full[1]), full[1] + full[3]) - h / 2;
    box = [x, y, w, h];
    svg.setAttribute("viewBox", box.map((v) => v.toFixed(1)).join(" "));
    svg.classList.toggle("zoomed", w < full[2] * 0.98);
  }

  function zoom(factor, fx = 0.5, fy = 0.5) {
    // (fx, fy): the point of the view that stays put, as a share of its width and height.
    const w = box[2] / factor;
    const h = box[3] / factor;
    box = [box[0] + (box[2] - w) * fx, box[1] + (box[3] - h) * fy, w, h];
    apply();
  }

  frame.querySelector(".map-zoom").addEventListener("click", (event) => {
    const button = event.target.closest("button[data-zoom]");
    if (!button || !svg) return;
    const how = button.dataset.zoom;
    if (how === "in") zoom(1.5);
    else if (how === "out") zoom(1 / 1.5);
    else { box = fitted(how === "focus" ? numbers(svg.dataset.focus) : full); apply(); }
  });

  const pointers = new Map();
  let gesture = null;
  let dragged = false;

  function share(x, y) {
    const r = svg.getBoundingClientRect();
    return [(x - r.left) / r.width, (y - r.top) / r.height, r];
  }

  view.addEventListener("pointerdown", (event) => {
    if (!svg) return;
    pointers.set(event.pointerId, [event.clientX, event.clientY]);
    dragged = false;
    gesture = { box: box.slice(), points: new Map(pointers) };
  });
  view.addEventListener("pointermove", (event) => {
    if (!gesture || !pointers.has(event.pointerId)) return;
    pointers.set(event.pointerId, [event.clientX, event.clientY]);
    const [a, b] = [...pointers.values()];
    const [a0, b0] = [...gesture.points.values()];
    const r = svg.getBoundingClientRect();
    const perPixel = gesture.box[2] / r.width;
    if (b && b0) {  // pinch: the map under the fingers' middle stays under it
      const factor = Math.hypot(b[0] - a[0], b[1] - a[1])
        / Math.max(Math.hypot(b0[0] - a0[0], b0[1] - a0[1]), 1);
      const [fx, fy] = share((a0[0] + b0[0]) / 2, (a0[1] + b0[1]) / 2);
      const w = gesture.box[2] / factor;
      const h = gesture.box[3] / factor;
      const dx = ((a[0] + b[0]) - (a0[0] + b0[0])) / 2 * (w / r.width);
      const dy = ((a[1] + b[1]) - (a0[1] + b0[1])) / 2 * (w / r.width);
      box = [gesture.box[0] + (gesture.box[2] - w) * fx - dx,
        gesture.box[1] + (gesture.box[3] - h) * fy - dy, w, h];
      dragged = true;
    } else if (svg.classList.contains("zoomed") || event.pointerType === "mouse") {
      const dx = a[0] - a0[0];
      const dy = a[1] - a0[1];
      if (!dragged && Math.hypot(dx, dy) < 8) return;  // still a tap
      dragged = true;
      box = [gesture.box[0] - dx * perPixel, gesture.box[1] - dy * perPixel,
        gesture.box[2], gesture.box[3]];
    } else {
      return;
    }
    event.preventDefault();
    apply();
  });
  const release = (event) => {
    pointers.delete(event.pointerId);
    gesture = pointers.size ? { box: box.slice(), points: new Map(pointers) } : null;
  };
  for (const kind of ["pointerup", "pointercancel", "pointerleave"]) {
    view.addEventListener(kind, release);
  }

  // ---- a territory tapped ----
  view.addEventListener("click", (event) => {
    const g = event.target.closest && event.target.closest("g.t");
    if (!g || dragged) return;
    choose(g.dataset.territory);
  });
  view.addEventListener("keydown", (event) => {
    const g = event.target.closest && event.target.closest("g.t");
    if (g && (event.key === "Enter" || event.key === " ")) {
      event.preventDefault();
      choose(g.dataset.territory);
    }
  });

  function choose(name) {
    chosen = name;
    for (const g of svg.querySelectorAll("g.t.chosen")) g.classList.remove("chosen");
    describe(name);
    details.scrollIntoView({ block: "nearest", behavior: "smooth" });
  }

  function describe(name) {
    const g = svg.querySelector(`g.t[data-territory="${CSS.escape(name)}"]`);
    g.classList.add("chosen");
    const d = g.dataset;
    const owners = d.owners ? d.owners.split(" ") : [];
    const units = JSON.parse(d.units || "{}");
    const lines = [];
    const facts = [];
    if (d.city) facts.push(`city of ${d.city}, tax ${d.tax}`);
    if (d.crown) facts.push("gold-crown city");
    if (d.castle) facts.push("castle");
    if (Number(d.revolt)) facts.push(`${d.revolt} revolt marker${Number(d.revolt) > 1 ? "s" : ""}`);
    if (g.classList.contains("fight")) facts.push("a battle is fought here");
    lines.push(el("h3", {}, name,
      facts.length ? el("span", { class: "small muted" }, ` — ${facts.join(", ")}`) : ""));
    lines.push(el("p", {}, owners.length === 0 ? "Nobody is here."
      : owners.length > 1
        ? ["Disputed: ", ...owners.flatMap((c, i) => [i ? " and " : "", chip(c)]), "."]
        : ["Held by ", chip(owners[0]), "."]));
    if (owners.length) {
      lines.push(el("ul", { class: "map-units" },
        owners.map((c) => el("li", {}, chip(c), ` ${units[c]}`))));
    }
    if (!onTable) lines.push(...offers(name, owners, d.adjacent ? d.adjacent.split("|") : []));
    lines.push(el("div", { class: "actions" },
      el("button", { type: "button", onclick: close }, "Close")));
    details.replaceChildren(...lines);
    details.hidden = false;
  }

  function close() {
    chosen = null;
    details.hidden = true;
    for (const g of svg.querySelectorAll("g.t.chosen")) g.classList.remove("chosen");
  }

  // What the Game page's forms can do here for each person (not the automatons): moves from a
  // territory they hold alone to its neighbours, moves into it from theirs, purchases placed in
  // it. A button fills the form; the rules check the move or purchase when it is sent.
  function offers(name, owners, adjacent) {
    const game = state && state.game;
    if (!game || game.winner || document.getElementById("move-form") === null) return [];
    const people = Object.entries(game.players || {})
      .filter(([, p]) => !p.automaton).map(([c]) => c);
    const holds = (c, t) => {
      const here = Object.keys(((game.territories || {})[t] || {}).units || {});
      return here.length === 1 && here[0] === c;
    };
    const out = [];
    for (const c of people) {
      const buttons = [];
      if (holds(c, name)) {
        buttons.push(...adjacent.map((to) => el("button", { type: "button", class: "small-button",
          onclick: () => fillMove(c, name, to) }, `Move to ${to}`)));
        buttons.push(el("button", { type: "button", class: "small-button primary",
          onclick: () => fillBuy(c, name) }, "Buy and place here"));
      }
      buttons.push(...adjacent.filter((from) => holds(c, from)).map((from) => el("button", {
        type: "button", class: "small-button", onclick: () => fillMove(c, from, name),
      }, `Move here from ${from}`)));
      if (buttons.length) {
        out.push(el("div", { class: "map-offers" }, el("p", {}, chip(c), " can:"),
          el("div", { class: "row" }, buttons)));
      }
    }
    return out;
  }

  function pick(id, value) {
    const select = document.getElementById(id);
    select.value = value;
    select.dispatchEvent(new Event("change"));
  }

  function fillMove(colour, from, to) {
    pick("move-player", colour);
    pick("move-from", from);
    pick("move-to", to);
    document.getElementById("move-card").scrollIntoView({ block: "start", behavior: "smooth" });
    document.getElementById("move-footman").focus({ preventScroll: true });
    flash(`Move from ${from} to ${to}: enter the units moving, then Move.`, true);
  }

  function fillBuy(colour, where) {
    pick("buy-player", colour);
    pick("buy-where", where);
    document.getElementById("buy-card").scrollIntoView({ block: "start", behavior: "smooth" });
    document.getElementById("buy-footman").focus({ preventScroll: true });
    flash(`Buying for ${colour}, placed in ${where}: enter what to buy, then Buy.`, true);
  }

  return { show };
})();
