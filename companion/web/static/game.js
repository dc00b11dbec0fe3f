/* The Game page: new game, the board as a filterable table, human moves and purchases, history. */
"use strict";

(() => {
  const { el, chip, api, act, flash } = TC;
  const $ = (id) => document.getElementById(id);
  const setup = JSON.parse($("game-config").textContent);  // {colours, maps, map, unit_types, items}
  const UNIT_NAMES = { footman: ["footman", "footmen"], archer: ["archer", "archers"], cavalry: ["cavalry", "cavalry"],
    siege_engine: ["siege engine", "siege engines"], castle: ["castle", "castles"], crown_card: ["Crown Card", "Crown Cards"] };
  const unitText = (kind, n) => `${n} ${(UNIT_NAMES[kind] || [kind, kind])[n === 1 ? 0 : 1]}`;

  let state = null;
  let board = null;   // /api/pages/board for the game's map

  async function loadBoard(map) {
    if (board && board.map === map) return board;
    board = await api("GET", `/api/pages/board?map=${encodeURIComponent(map)}`);
    return board;
  }

  // ---- rendering ----
  function owners(t) { return Object.keys((t && t.units) || {}); }

  function renderBoard() {
    const game = state && state.game;
    const body = $("board").querySelector("tbody");
    if (!game || !board) { body.replaceChildren(); $("board-count").textContent = "No game yet."; return; }
    const text = $("filter-text").value.trim().toLowerCase();
    const owner = $("filter-owner").value;
    const citiesOnly = $("filter-cities").checked;
    let shown = 0;
    const rows = [];
    for (const info of board.territories) {
      const t = (game.territories || {})[info.name] || {};
      const colours = owners(t);
      if (text && !info.name.toLowerCase().includes(text) && !(info.city || "").toLowerCase().includes(text)) continue;
      if (citiesOnly && !info.city) continue;
      if (owner === "-" && colours.length) continue;
      if (owner && owner !== "-" && !colours.includes(owner)) continue;
      shown += 1;
      const unitsCell = el("td", { class: "units-cell" }, ...colours.map((c) => el("span", { class: "u" }, chip(c,
        `${c}: ${Object.entries(t.units[c]).map(([k, n]) => unitText(k, n)).join(", ")}`))));
      rows.push(el("tr", { class: (colours.length > 1 ? "disputed " : "") + (colours.length ? "has-units" : ""), "data-territory": info.name },
        el("td", {}, info.city && info.city !== info.name ? `${info.name} (${info.city})` : info.name),
        el("td", { class: "num", "data-label": info.tax ? "tax" : null }, info.tax ? String(info.tax) : ""),
        el("td", { class: "owner" }, colours.length === 0 ? el("span", { class: "muted" }, "nobody")
          : colours.length === 1 ? chip(colours[0]) : `disputed: ${colours.join(" and ")}`),
        unitsCell,
        el("td", {}, t.castle ? "castle" : ""),
        el("td", { class: "num", "data-label": t.revolt_markers ? "revolt markers" : null }, t.revolt_markers ? String(t.revolt_markers) : "")));
    }
    body.replaceChildren(...rows);
    $("board-count").textContent = `${shown} of ${board.territories.length} territories shown.`;
  }

  function renderPlayers() {
    const game = state && state.game;
    const body = $("players").querySelector("tbody");
    const players = (game && game.players) || {};
    body.replaceChildren(...Object.entries(players).map(([c, p]) => el("tr", { "data-colour": c },
      el("td", {}, chip(c), el("span", { class: "small muted" }, p.automaton ? " automaton" : " person")),
      el("td", { class: "num" }, String(p.coins ?? 0)), el("td", { class: "num" }, String(p.crowns ?? 0)),
      el("td", {}, p.capital || ""))));
    $("automaton-next").disabled = !game || !!game.winner || !!state.battle
      || !!(state.automaton && ["waiting", "needs_roll"].includes(state.automaton.status));
  }

  function renderAutomaton() {
    const turn = state && state.automaton;
    const waiting = !!turn && turn.status === "waiting";
    const rolling = !!turn && turn.status === "needs_roll";
    $("automaton").hidden = !waiting && !rolling;
    TC.rollButtons($("automaton-dice"), turn, refresh);
    if (!waiting && !rolling) return;
    $("automaton-title").replaceChildren("The automaton ", turn.player ? chip(turn.player) : "", rolling ? " needs a die" : " says");
    $("automaton-text").textContent = turn.text || "";
    $("automaton-detail").textContent = turn.card ? `Card: ${turn.card.replace(/_/g, " ")}` : "";
    $("automaton-confirm").hidden = rolling;
  }

  function fillSelect(select, options, keepFirst) {
    const keep = select.value;
    select.replaceChildren(...(keepFirst || []), ...options.map(([value, label]) => el("option", { value }, label)));
    if ([...select.options].some((o) => o.value === keep)) select.value = keep;
  }

  function renderForms() {
    const game = state && state.game;
    const humans = Object.entries((game && game.players) || {}).filter(([, p]) => !p.automaton).map(([c]) => [c, c]);
    fillSelect($("move-player"), humans);
    fillSelect($("buy-player"), humans);
    const names = board ? board.territories.map((t) => [t.name, t.city && t.city !== t.name ? `${t.name} (${t.city})` : t.name]) : [];
    const mine = (colour) => names.filter(([n]) => owners((game.territories || {})[n]).includes(colour));
    if (game) {
      fillSelect($("move-from"), mine($("move-player").value));
      const from = board && board.territories.find((t) => t.name === $("move-from").value);
      fillSelect($("move-to"), from ? from.adjacent.map((n) => [n, n]) : names);
      fillSelect($("buy-where"), mine($("buy-player").value));
    }
    for (const id of ["move-card", "buy-card"]) $(id).hidden = !game || humans.length === 0;
    $("filter-owner").replaceChildren(el("option", { value: "" }, "anyone"), el("option", { value: "-" }, "nobody"),
      ...Object.keys((game && game.players) || {}).map((c) => el("option", { value: c }, c)));
  }

  function renderHistory() {
    const items = ((state && state.history) || []).slice().reverse().map((h) => el("li", {}, h.text || h.kind || ""));
    $("history").replaceChildren(...(items.length ? items : [el("li", { class: "muted" }, "Nothing yet.")]));
    $("undo").disabled = !(state && state.can_undo);
  }

  function nowText() {
    const game = state && state.game;
    const turn = state && state.automaton;
    if (!game) return "No game yet: set one up below.";
    if (game.winner) return `${game.winner} has won the game.`;
    if (state.battle) return "A battle is open: finish it on the Table page.";
    if (turn && turn.status === "waiting") return `${TC.capital(turn.player) || "The automaton"}'s move: set the pieces as it says below, then confirm.`;
    if (turn && turn.status === "needs_roll") return `Roll a die for ${TC.capital(turn.player)} and tap the number it shows.`;
    if (turn && turn.status !== "done" && turn.text) return turn.text;
    return `Round ${game.round}: press “Next step of the round”.`;
  }

  async function render(s) {
    state = s;
    if (s.game) await loadBoard(s.game.map);
    $("now").textContent = nowText();
    const filterOwner = $("filter-owner").value;
    renderForms();
    $("filter-owner").value = filterOwner;
    renderPlayers();
    renderAutomaton();
    TowerMap.show(s);
    renderBoard();
    renderHistory();
    // Without a game, setting one up is the only thing to do: it comes first.
    const grid = $("new-card").parentElement;
    if (!s.game) { $("new-details").open = true; grid.prepend($("new-card")); } else grid.append($("new-card"));
    for (const id of ["players-card", "board-card"]) $(id).hidden = !s.game;
  }

  async function refresh() {
    try {
      await render(await api("GET", "/api/state"));
    } catch (e) {
      $("now").textContent = `The companion does not answer (${e.message}).`;
    }
  }

  // ---- new game form ----
  function playerRow(i, colour, automaton) {
    return el("div", { class: "player-row", "data-row": String(i) },
      el("select", { "aria-label": `player ${i + 1} colour`, name: `colour-${i}` },
        el("option", { value: "" }, "(nobody)"), ...setup.colours.map((c) => el("option", { value: c, selected: c === colour }, c))),
      el("select", { "aria-label": `player ${i + 1} is`, name: `role-${i}` },
        el("option", { value: "player", selected: !automaton }, "a person"),
        el("option", { value: "automaton", selected: automaton }, "an automaton")));
  }
  $("new-players").replaceChildren(...setup.colours.map((c, i) => playerRow(i, i < 2 ? c : "", i === 1)));
  fillSelect($("new-map"), setup.maps.map((m) => [m, m]));
  $("new-map").value = setup.map;
  $("new-seed").value = String(Math.floor(Math.random() * 1e6));
  $("new-physical-dice").checked = !!setup.physical_dice;

  $("new-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const players = [...$("new-players").children].map((row) => ({
      colour: row.querySelector("select[name^=colour]").value,
      automaton: row.querySelector("select[name^=role]").value === "automaton",
    })).filter((p) => p.colour);
    const colours = players.map((p) => p.colour);
    if (players.length < 2) { flash("Choose at least two players."); return; }
    if (new Set(colours).size !== colours.length) { flash("Each colour can play only once."); return; }
    const seed = parseInt($("new-seed").value, 10);
    if (!(seed >= 0)) { flash("Seed: enter a whole number, 0 or more."); return; }
    if (state && state.game && !window.confirm("Start a new game? The current one stays in the history (undo goes back).")) return;
    act($("new-submit"), async () => {
      await api("POST", "/api/game", { map: $("new-map").value, seed, players, physical_dice: $("new-physical-dice").checked });
      $("new-details").open = false;
      flash("New game set up.", true);
      await refresh();
    });
  });

  // ---- moves and purchases ----
  const numberInput = (id, label, max) => el("div", { class: "field" }, el("label", { for: id }, label),
    el("input", { id, type: "number", inputmode: "numeric", min: "0", max: String(max), value: "0", class: "narrow" }));
  $("move-units").replaceChildren(...setup.unit_types.map((k) => numberInput(`move-${k}`, UNIT_NAMES[k][1], 99)));
  $("buy-items").replaceChildren(...setup.items.map((k) => numberInput(`buy-${k}`, UNIT_NAMES[k][1], 20)));

  function readCounts(prefix, kinds) {
    const out = {};
    for (const k of kinds) {
      const raw = $(`${prefix}-${k}`).value.trim();
      const n = raw === "" ? 0 : Number(raw);
      if (!Number.isInteger(n) || n < 0) throw new Error(`${UNIT_NAMES[k][1]}: enter a whole number, 0 or more`);
      if (n) out[k] = n;
    }
    return out;
  }

  $("move-form").addEventListener("submit", (event) => {
    event.preventDefault();
    act($("move-submit"), async () => {
      const units = readCounts("move", setup.unit_types);
      if (!Object.keys(units).length) throw new Error("Units moving: choose at least one unit.");
      await api("POST", "/api/game/move", { player: $("move-player").value, from: $("move-from").value, to: $("move-to").value, units });
      flash("Moved.", true);
      await refresh();
    });
  });
  $("buy-form").addEventListener("submit", (event) => {
    event.preventDefault();
    act($("buy-submit"), async () => {
      const items = readCounts("buy", setup.items);
      if (!Object.keys(items).length) throw new Error("Buy: choose at least one thing.");
      await api("POST", "/api/game/purchase", { player: $("buy-player").value, territory: $("buy-where").value, items });
      flash("Bought.", true);
      await refresh();
    });
  });
  for (const id of ["move-player", "move-from", "buy-player"]) $(id).addEventListener("change", renderForms);
  for (const id of ["filter-text", "filter-owner", "filter-cities"]) $(id).addEventListener("input", renderBoard);

  // ---- automaton and undo ----
  $("automaton-next").addEventListener("click", (e) => act(e.currentTarget, async () => {
    await api("POST", "/api/automaton/next", {});
    await refresh();
  }));
  $("automaton-confirm").addEventListener("click", (e) => act(e.currentTarget, async () => {
    await api("POST", "/api/automaton/confirm", {});
    await refresh();
  }));
  $("undo").addEventListener("click", (e) => act(e.currentTarget, async () => {
    const r = await api("POST", "/api/undo", {});
    flash(r && r.text ? r.text : "Undone.", true);
    await refresh();
  }));

  refresh();
  TC.live(refresh);
})();
