/* The Table page: what to do now, the battle being counted, corrections, the automaton, the ledger. */
"use strict";

(() => {
  const { el, chip, countsText, api, act, flash } = TC;
  const $ = (id) => document.getElementById(id);
  const colours = JSON.parse($("colours").textContent);   // {players: [...], farmer: "green"}
  const STOCKS = ["supply", "board", "tower", "cup"];

  let state = null;            // last /api/state
  let battleId = null;         // the battle shown
  let corrected = null;        // emerged counts as the table corrected them (null = as counted)
  let previewSeq = 0;
  let oddsId = null;           // the battle whose odds are shown (they never change)

  // ---- what goes into the tower, in words ----
  function intoText(battle) {
    const into = battle.into_tower || {};
    const cup = battle.cup || {};
    const thrown = {};
    for (const [c, n] of Object.entries(into)) {
      const fromCup = cup[c] || 0;
      if (n - fromCup > 0) thrown[c] = n - fromCup;
    }
    let text = `Throw ${countsText(thrown, [battle.attacker, battle.defender, colours.farmer])}`;
    if (!battle.defender && thrown[colours.farmer]) text += ` (${colours.farmer} = the farmer)`;
    text += Object.values(cup).some((n) => n > 0) ? ` and the cup: ${countsText(cup)}` : " (the cup is empty)";
    return text;
  }

  // The priming throw at setup: what goes in, and that nothing is won.
  function primeText(battle) {
    return `Prime the tower: throw ${countsText(battle.into_tower || {})} (${colours.farmer} = the farmers); what comes out goes back to the supply.`;
  }

  function nowText(s) {
    const b = s && s.battle;
    const turn = s && s.automaton;
    const camera = s && s.camera;
    if (camera && camera.status === "lost" && (!b || b.status !== "counted")) {
      return `Camera lost (${camera.detail}). Counting resumes when it is back.`;
    }
    if (b) {
      switch (b.status) {
        case "waiting_for_throw": return b.kind === "prime" ? primeText(b) : intoText(b);
        case "moving": return "Cubes are falling… wait until the tray is still.";
        case "counted": return "Check the count, fix it with + and −, then Confirm.";
        default: break;
      }
    }
    if (turn && turn.status === "waiting") return `${TC.capital(turn.player) || "The automaton"}'s move: set the pieces as it says below, then confirm.`;
    if (turn && turn.status === "needs_roll") return `Roll a die for ${TC.capital(turn.player)} and tap the number it shows.`;
    if (turn && turn.status !== "done" && turn.text) return turn.text;
    if (s && !s.primed) return "Prime the tower before the first battle, or declare a battle.";
    if (s && s.game) return "Declare a battle, or press Next for the round's next step.";
    return "Declare a battle, or set up a game on the Game page.";
  }

  // ---- outcome in words and named colours ----
  function outcomeNode(battle, outcome) {
    const a = battle.attacker;
    const d = battle.defender || `${colours.farmer} farmers`;
    const words = {
      held: `${d} holds`,
      conquered: `${a} conquers`,
      devastated: "devastated: nobody holds it",
    };
    const box = el("div", {});
    box.append(el("div", { class: "result" },
      `${TC.capital(words[outcome.result] || outcome.result)} — ${a} ${outcome.attacker_strength} against ${d} ${outcome.defender_strength}`));
    const lines = [];
    if (Object.keys(outcome.to_supply || {}).length) lines.push(`to the supply: ${countsText(outcome.to_supply)}`);
    if (Object.keys(outcome.to_province || {}).length) lines.push(`back onto the province: ${countsText(outcome.to_province)}`);
    lines.push(Object.keys(outcome.cup_after || {}).length ? `stays in the cup: ${countsText(outcome.cup_after)}` : "the cup is empty afterwards");
    if (outcome.revolt_marker_added) lines.push("add a revolt marker");
    if (outcome.cancel_pending_action) lines.push(`${battle.defender}'s planned action there is cancelled`);
    box.append(el("div", { class: "detail" }, lines.join("; ") + "."));
    for (const w of outcome.warnings || []) box.append(el("div", { class: "warning" }, w));
    return box;
  }

  // A priming throw wins nothing: what came out goes back to the supply, the rest stays inside.
  function primeOutcome(battle, emerged) {
    const into = Object.values(battle.into_tower || {}).reduce((a, b) => a + b, 0);
    const out = Object.values(emerged).reduce((a, b) => a + b, 0);
    const box = $("outcome");
    box.className = "outcome prime";
    box.replaceChildren(el("div", { class: "result" }, `Back to the supply: ${countsText(emerged, Object.keys(battle.into_tower || {}))}`),
      el("div", { class: "detail" }, `${Math.max(0, into - out)} of the ${into} cubes stay in the tower.`));
    box.hidden = false;
  }

  function showOutcome(battle, outcome) {
    const box = $("outcome");
    if (battle.kind === "prime") {
      if (battle.status === "counted") primeOutcome(battle, emergedNow(battle)); else box.hidden = true;
      return;
    }
    if (!outcome) { box.hidden = true; return; }
    box.className = `outcome ${outcome.result}`;
    box.replaceChildren(outcomeNode(battle, outcome));
    box.hidden = false;
  }

  // ---- steppers ----
  function emergedNow(battle) {
    return corrected || battle.emerged || {};
  }

  function stepperColours(battle) {
    const list = [battle.attacker, battle.defender, colours.farmer]
      .concat(Object.keys(battle.into_tower || {}), Object.keys(battle.emerged || {}), Object.keys(corrected || {}));
    return [...new Set(list.filter(Boolean))];
  }

  function renderCounts(battle) {
    const counted = battle.status === "counted";
    const emerged = emergedNow(battle);
    const rows = stepperColours(battle).map((colour) => {
      const n = emerged[colour] || 0;
      const original = (battle.emerged || {})[colour] || 0;
      const row = el("div", { class: "stepper" + (corrected && n !== original ? " changed" : ""), "data-colour": colour },
        el("span", { class: "name" }, chip(colour)),
        el("button", { type: "button", "aria-label": `one ${colour} fewer`, disabled: !counted || n === 0,
          onclick: () => step(colour, -1) }, "−"),
        el("span", { class: "value", "aria-label": `${n} ${colour}` }, String(n)),
        el("button", { type: "button", "aria-label": `one ${colour} more`, disabled: !counted,
          onclick: () => step(colour, +1) }, "+"));
      return row;
    });
    $("counts").replaceChildren(...rows);
  }

  function step(colour, delta) {
    const battle = state && state.battle;
    if (!battle) return;
    const next = { ...emergedNow(battle) };
    next[colour] = Math.max(0, (next[colour] || 0) + delta);
    corrected = next;
    renderCounts(battle);
    preview(battle, next);
  }

  // The outcome the corrected counts would give, from the server's rules (never guessed here).
  async function preview(battle, emerged) {
    const seq = ++previewSeq;
    if (battle.kind === "prime") { showOutcome(battle, null); return; }
    try {
      const result = await api("POST", "/api/pages/outcome", {
        attacker: battle.attacker, defender: battle.defender || null, thrown: battle.thrown || {},
        cup: battle.cup || {}, revolt_markers: battle.revolt_markers || 0, emerged,
      });
      if (seq === previewSeq) showOutcome(battle, result.outcome);
    } catch (e) {
      if (seq === previewSeq) flash(e.message);
    }
  }

  // ---- the odds before the throw (null when the table plays without them) ----
  const pct = (p) => `${Math.round(p * 100)} %`;
  async function showOdds(battle) {
    if (battle.id === oddsId) return;
    oddsId = battle.id;
    $("battle-odds").hidden = true;
    if (battle.kind === "prime") return;
    const odds = (await api("GET", `/api/battles/${battle.id}`)).odds;
    if (!odds || battle.id !== battleId) return;
    const c = odds.chances;
    $("odds-chances").replaceChildren("Odds before the throw: ", chip(battle.attacker),
      ` conquers ${pct(c.conquered)}, held ${pct(c.held)}, devastated ${pct(c.devastated)}.`);
    const expected = Object.entries(odds.expected)
      .map(([colour, n]) => `${n.toFixed(1)} ${colour}`);
    $("odds-expected").textContent = `Expected out of the tower: ${expected.join(", ")}.`;
    const s = odds.stickiness.text;
    $("odds-tower").textContent = s.charAt(0).toUpperCase() + s.slice(1) + ".";
    $("battle-odds").hidden = false;
  }

  // ---- rendering the whole state ----
  function renderBattle(s) {
    const battle = s.battle;
    $("battle").hidden = !battle;
    $("declare").hidden = !!battle;
    if (!battle) { battleId = null; corrected = null; return; }
    if (battle.id !== battleId) { battleId = battle.id; corrected = null; }
    if (battle.status !== "counted") corrected = null;
    const where = battle.territory ? ` in ${battle.territory}` : "";
    const priming = battle.kind === "prime";
    if (priming) $("battle-title").replaceChildren("Priming the tower");
    else $("battle-title").replaceChildren(chip(battle.attacker), ` attacks `,
      battle.defender ? chip(battle.defender) : "an empty province", where);
    $("cancel").textContent = priming ? "Cancel priming" : "Cancel battle";
    $("battle-status").textContent = ({ waiting_for_throw: "waiting for the throw", moving: "cubes moving",
      counted: "counted", declared: "declared" })[battle.status] || battle.status;
    $("battle-into").textContent = priming ? primeText(battle)
      : `Into the tower: ${countsText(battle.into_tower || {}, [battle.attacker, battle.defender, colours.farmer])}.`;
    showOdds(battle).catch(() => { oddsId = null; });
    const conf = battle.confidence;
    const counted = battle.status === "counted";
    $("battle-confidence").textContent = counted && conf !== undefined && conf !== null
      ? `Count confidence ${Math.round(conf * 100)} %` + (battle.unknown ? ` — ${battle.unknown} unknown blob(s): check the tray`
        : battle.unsure ? " — not sure" : "")
      : "";
    const warnings = (battle.warnings || []).map((w) => el("p", { class: "warning" }, w));
    if (battle.unknown) warnings.push(el("p", { class: "warning" }, `${battle.unknown} thing(s) in the tray could not be named: count them by hand.`));
    else if (counted && battle.unsure) warnings.push(el("p", { class: "warning", id: "battle-unsure" },
      "The camera is not sure of this count (a pile can hide a cube): check it against the tray, where the picture rings it in orange, before confirming."));
    $("battle-warnings").replaceChildren(...warnings);
    renderCounts(battle);
    if (counted) {
      if (corrected) preview(battle, corrected); else showOutcome(battle, battle.outcome);
    } else {
      showOutcome(battle, null);
    }
    $("confirm").disabled = !counted;
    $("recount").disabled = !["counted", "moving"].includes(battle.status);
  }

  // The round's current step: an automaton's decision waits for "confirm"; anything else
  // (a person's turn, the round's start, a confirmed move) goes on with "next".
  function renderAutomaton(s) {
    const turn = s.automaton;
    const show = !!s.game && !s.battle && !s.game.winner;
    $("automaton").hidden = !show;
    TC.rollButtons($("automaton-dice"), show ? turn : null, refresh);
    if (!show) return;
    const rolling = !!turn && turn.status === "needs_roll";
    const waiting = !!turn && turn.status === "waiting";
    const open = !!turn && turn.status !== "done" && !!turn.text;
    $("automaton-title").replaceChildren(waiting || rolling ? "The automaton " : "", turn && turn.player && open ? chip(turn.player) : "",
      rolling ? " needs a die" : waiting ? " says" : (turn && turn.player && open ? " to play" : "The round"));
    $("automaton-text").textContent = open ? turn.text : "When everyone has played, go on with the round.";
    $("automaton-detail").textContent = waiting && turn.card ? `Card: ${turn.card.replace(/_/g, " ")}` : "";
    $("automaton-confirm").hidden = !waiting;
    $("automaton-next").hidden = waiting || rolling;
  }

  function renderLedger(s) {
    const ledger = (s.ledger || (s.game && s.game.ledger)) || null;
    const body = $("ledger").querySelector("tbody");
    if (!ledger) {
      body.replaceChildren();
      $("ledger-note").textContent = "No game yet: the ledger starts with a new game.";
      return;
    }
    const names = new Set();
    for (const stock of STOCKS) Object.keys(ledger[stock] || {}).forEach((c) => names.add(c));
    const order = colours.players.concat([colours.farmer]).filter((c) => names.has(c))
      .concat([...names].filter((c) => !colours.players.includes(c) && c !== colours.farmer).sort());
    body.replaceChildren(...order.map((c) => el("tr", { "data-colour": c }, el("td", {}, chip(c)),
      ...STOCKS.map((stock) => {
        const n = (ledger[stock] || {})[c] || 0;
        return el("td", { class: "num" + (n < 0 ? " neg" : ""), title: n < 0 ? "negative: a miscount somewhere" : null }, String(n));
      }))));
    const neg = order.some((c) => STOCKS.some((st) => ((ledger[st] || {})[c] || 0) < 0));
    $("ledger-note").textContent = neg ? "A negative number means a count was wrong: correct it, or undo." : "";
  }

  // What the table heard: the recent announcements (the same sentences as the voice and the log).
  function renderHistory(s) {
    const said = (s.events && s.events.length ? s.events : s.history || []).slice(-12).reverse();
    const items = said.map((h) => el("li", {},
      h.time ? el("span", { class: "when" }, new Date(h.time * 1000).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })) : "",
      h.text || h.kind || ""));
    $("history").replaceChildren(...(items.length ? items : [el("li", { class: "muted" }, "Nothing yet.")]));
  }

  function renderDeclare(s) {
    const fill = (select, values, extra) => {
      const keep = select.value;
      select.replaceChildren(...(extra || []), ...values.map((c) => el("option", { value: c }, c)));
      if ([...select.options].some((o) => o.value === keep)) select.value = keep;
    };
    const players = s.game ? Object.keys(s.game.players) : colours.players;
    fill($("attacker"), players);
    const first = $("defender").options.length === 0;
    fill($("defender"), players, [el("option", { value: "" }, `empty province (1 ${colours.farmer} farmer)`)]);
    if (first || $("defender").value === $("attacker").value) {
      const other = players.find((c) => c !== $("attacker").value);
      if (other) $("defender").value = other;
    }
    // A battle on the board is fought where two colours meet (the game says which).
    const disputed = Object.entries((s.game && s.game.territories) || {}).filter(([, t]) => Object.keys(t.units).length > 1);
    $("territory-field").hidden = disputed.length === 0;
    fill($("territory"), disputed.map(([name]) => name), [el("option", { value: "" }, "(not on the board)")]);
    $("defender-armies").disabled = !$("defender").value;
  }

  function render(s) {
    state = s;
    $("now").textContent = nowText(s);
    renderAutomaton(s);
    TowerMap.show(s);
    renderBattle(s);
    renderLedger(s);
    renderHistory(s);
    $("prime").hidden = !!s.battle || !!s.primed;
    if (!s.battle) renderDeclare(s);
    $("undo").disabled = !(s.can_undo ?? (s.history || []).length > 0);
  }

  async function refresh() {
    try {
      render(await api("GET", "/api/state"));
    } catch (e) {
      $("now").textContent = `The companion does not answer (${e.message}).`;
    }
  }

  // ---- actions ----
  $("declare-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const attacker = $("attacker").value;
    const defender = $("defender").value || null;
    const a = parseInt($("attacker-armies").value, 10);
    const d = parseInt($("defender-armies").value, 10);
    const r = parseInt($("revolt").value, 10);
    if (!(a >= 1)) { flash("Attacking armies: enter at least 1."); return; }
    if (defender && !(d >= 0)) { flash("Defending armies: enter 0 or more."); return; }
    if (!(r >= 0)) { flash("Revolt markers: enter 0 or more."); return; }
    const thrown = { [attacker]: a };
    if (defender && d > 0) thrown[defender] = d;
    const body = { attacker, defender, revolt_markers: r, thrown };
    if ($("territory").value) body.territory = $("territory").value;
    act($("declare-submit"), async () => { await api("POST", "/api/battles", body); await refresh(); });
  });
  $("defender").addEventListener("change", () => { $("defender-armies").disabled = !$("defender").value; });
  // Choosing a disputed territory fills in its sides and armies from the game.
  $("territory").addEventListener("change", () => {
    const t = state && state.game && state.game.territories[$("territory").value];
    if (!t) return;
    const sides = Object.keys(t.units);
    const attacker = t.attacker && sides.includes(t.attacker) ? t.attacker : sides[0];
    const defender = sides.find((c) => c !== attacker);
    const armies = (c) => Object.values(t.units[c] || {}).reduce((a, b) => a + b, 0);
    $("attacker").value = attacker; $("attacker-armies").value = armies(attacker);
    $("defender").value = defender; $("defender-armies").value = armies(defender);
    $("defender-armies").disabled = false;
    $("revolt").value = t.revolt_markers || 0;
  });

  $("confirm").addEventListener("click", (e) => act(e.currentTarget, async () => {
    const body = corrected ? { emerged: corrected } : {};
    await api("POST", `/api/battles/${battleId}/confirm`, body);
    corrected = null;
    flash("Confirmed.", true);
    await refresh();
  }));
  $("recount").addEventListener("click", (e) => act(e.currentTarget, async () => {
    corrected = null;
    await api("POST", `/api/battles/${battleId}/recount`, {});
    await refresh();
  }));
  $("prime-tower").addEventListener("click", (e) => act(e.currentTarget, async () => {
    await api("POST", "/api/prime", {});
    await refresh();
  }));
  $("cancel").addEventListener("click", (e) => act(e.currentTarget, async () => {
    const what = state && state.battle && state.battle.kind === "prime" ? "the priming" : "this battle";
    if (!window.confirm(`Cancel ${what}? Nothing is applied to the game.`)) return;
    await api("POST", `/api/battles/${battleId}/cancel`, {});
    await refresh();
  }));
  $("undo").addEventListener("click", (e) => act(e.currentTarget, async () => {
    const result = await api("POST", "/api/undo", {});
    flash(result && result.text ? `Undone: ${result.text}` : "Undone.", true);
    await refresh();
  }));
  $("automaton-confirm").addEventListener("click", (e) => act(e.currentTarget, async () => {
    await api("POST", "/api/automaton/confirm", {});
    await refresh();
  }));
  $("automaton-next").addEventListener("click", (e) => act(e.currentTarget, async () => {
    await api("POST", "/api/automaton/next", {});
    await refresh();
  }));

  // The stream starts after the page has loaded, so the page's load never waits on it.
  window.addEventListener("load", () => {
    if (TC.unlocked()) {
      $("stream").src = "/stream.mjpg";
      $("stream").hidden = false;
    } else {
      $("stream-locked").hidden = false;
    }
  });

  refresh();
  TC.live(refresh);
})();
