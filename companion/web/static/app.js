/* Shared page helpers: JSON calls with the CSRF header, live events, colour chips. No libraries. */
"use strict";

const TC = (() => {
  // Paint for the swatches; any other colour name is tried as a CSS colour.
  const PAINT = { red: "#d7263d", blue: "#2f6fdf", yellow: "#f2d011", purple: "#8e44ad", black: "#111111",
    green: "#2e9e44", orange: "#f28c28", white: "#f4f4f4", brown: "#7b4a24", grey: "#8a8a8a", gray: "#8a8a8a",
    pink: "#f48fb1" };

  const meta = (name) => (document.querySelector(`meta[name="${name}"]`) || {}).content || "";

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : value);
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function paint(colour) {
    return PAINT[colour] || (CSS.supports("color", colour) ? colour : "#888");
  }

  function swatch(colour) {
    const s = el("span", { class: "swatch", "aria-hidden": "true" });
    s.style.setProperty("--swatch", paint(colour));
    return s;
  }

  // A colour is always shown with its name, never by hue alone.
  function chip(colour, label) {
    return el("span", { class: "chip", "data-colour": colour }, swatch(colour),
      label === undefined ? colour : label);
  }

  function paintAll(root) {
    for (const node of (root || document).querySelectorAll(".swatch[data-colour]")) {
      node.style.setProperty("--swatch", paint(node.dataset.colour));
    }
  }

  // "4 blue, 3 red and 1 yellow": colours in `order` first, then the rest.
  function countsText(counts, order) {
    counts = counts || {};
    const names = [...new Set([...(order || []).filter(Boolean), ...Object.keys(counts)])].filter((c) => counts[c] > 0);
    const parts = names.map((c) => `${counts[c]} ${c}`);
    if (parts.length === 0) return "nothing";
    if (parts.length === 1) return parts[0];
    return parts.slice(0, -1).join(", ") + " and " + parts[parts.length - 1];
  }

  let flashTimer = null;
  function flash(message, ok) {
    const box = document.getElementById("flash");
    if (!box) return;
    box.textContent = message;
    box.classList.toggle("ok", !!ok);
    box.hidden = false;
    clearTimeout(flashTimer);
    flashTimer = setTimeout(() => { box.hidden = true; }, ok ? 2500 : 7000);
  }

  // A JSON call; on failure throws an Error whose message is the server's one-line reason.
  async function api(method, url, body) {
    const options = { method, headers: { "Accept": "application/json" }, credentials: "same-origin" };
    if (method !== "GET") {
      options.headers["X-CSRF-Token"] = meta("csrf-token");
      if (body !== undefined) {
        options.headers["Content-Type"] = "application/json";
        options.body = JSON.stringify(body);
      }
    }
    let response;
    try {
      response = await fetch(url, options);
    } catch (e) {
      throw new Error("the companion does not answer: is it still running?");
    }
    let data = null;
    try { data = await response.json(); } catch (e) { data = null; }
    if (!response.ok) {
      const message = (data && (data.error || data.message)) || `${response.status} ${response.statusText}`;
      const error = new Error(message);
      error.status = response.status;
      error.data = data;
      throw error;
    }
    return data;
  }

  // Run an action from a button: mark it busy meanwhile (further clicks on it are ignored),
  // show any error as a message. Whether it is disabled is left to the page's render: the
  // new state may disable it (e.g. "Next step" while a roll is awaited).
  async function act(button, fn) {
    if (button) {
      if (button.getAttribute("aria-busy") === "true") return undefined;
      button.setAttribute("aria-busy", "true");
    }
    try {
      return await fn();
    } catch (e) {
      flash(e.message);
      return undefined;
    } finally {
      if (button) button.removeAttribute("aria-busy");
    }
  }

  // Live updates: server-sent events; `onChange` is called (debounced) after any event,
  // and after a reconnect, so the page re-reads the state and never misses a step.
  function live(onChange, onEvent) {
    const badge = document.getElementById("conn");
    let timer = null;
    const changed = () => { clearTimeout(timer); timer = setTimeout(onChange, 60); };
    if (!window.EventSource) return;
    const source = new EventSource("/events");
    const handle = (message) => {
      let data = null;
      try { data = JSON.parse(message.data); } catch (e) { data = null; }
      if (onEvent && data) onEvent(data, message.type);
      changed();
    };
    source.onmessage = handle;
    for (const kind of ["battle", "automaton", "game", "state", "phase", "announcement", "undo", "panel", "camera", "calibration", "resync"]) {
      source.addEventListener(kind, handle);
    }
    source.onopen = () => { if (badge) { badge.textContent = "live"; badge.classList.remove("off"); } changed(); };
    source.onerror = () => { if (badge) { badge.textContent = "reconnecting…"; badge.classList.add("off"); } };
    return source;
  }

  // The automaton's die rolled at the table (physical dice): one big button per face; a tap
  // sends the value and `after` re-reads the state. Hidden when no roll is wanted.
  function rollButtons(box, turn, after) {
    const roll = turn && turn.status === "needs_roll" ? turn.roll : null;
    box.hidden = !roll;
    if (!roll) { box.replaceChildren(); return; }
    const faces = Array.from({ length: roll.sides }, (_, i) => i + 1);
    box.replaceChildren(...faces.map((value) => el("button", { type: "button", class: "primary", "data-value": String(value),
      "aria-label": `the die shows ${value}`,
      onclick: (e) => act(e.currentTarget, async () => {
        await api("POST", "/api/automaton/roll", { value });
        await after();
      }) }, String(value))));
  }

  const capital = (text) => (text ? text[0].toUpperCase() + text.slice(1) : text);

  const unlocked = () => meta("pin-required") !== "yes" || meta("unlocked") === "yes";

  document.addEventListener("DOMContentLoaded", () => paintAll(document));

  return { el, chip, swatch, paint, paintAll, countsText, flash, api, act, live, meta, unlocked, capital, rollButtons };
})();
