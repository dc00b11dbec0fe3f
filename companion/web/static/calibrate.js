/* The calibration wizard: tap corners (draggable) and cubes on a still picture, check, test, save. */
"use strict";

(() => {
  const { el, chip, countsText, api, act, flash } = TC;
  const $ = (id) => document.getElementById(id);
  const config = JSON.parse($("wizard-config").textContent);
  const canvas = $("canvas");
  const ctx = canvas.getContext("2d");
  const CORNER_NAMES = ["top-left", "top-right", "bottom-right", "bottom-left"];
  const GRAB_PX = 28;          // how near (screen px) a tap must be to grab a corner

  const w = {
    step: 1, snapshot: null, image: null, corners: [], samples: {}, taps: [], colour: config.colours[0],
    draft: null, controls: {}, hints: null, dragging: -1,
  };

  // ---- steps ----
  const NOW = {
    1: "Step 1: lock the camera, put cubes in the tray, take a picture.",
    2: "Step 2: tap the 4 tray corners, clockwise from top-left.",
    3: "Step 3: choose a colour, tap its cubes.",
    4: "Step 4: check what the counter sees.",
    5: "Step 5: count a test drop.",
    6: "Step 6: name the calibration and save it.",
  };
  function go(step) {
    w.step = step;
    for (const li of $("steps").children) {
      const n = +li.dataset.step;
      li.className = n === step ? "current" : n < step ? "done" : "";
      if (n === step) li.setAttribute("aria-current", "step"); else li.removeAttribute("aria-current");
    }
    for (const panel of document.querySelectorAll("[data-panel]")) panel.hidden = +panel.dataset.panel !== step;
    $("now").textContent = NOW[step];
    if ($("hints")) $("hints").parentElement.hidden = !(step === 2 || step === 3);
    const showCanvas = step >= 2 && !!w.image;
    canvas.hidden = !showCanvas;
    $("live").hidden = showCanvas || !TC.unlocked();
    $("tap-help").textContent = step === 2 ? "Tap a corner; drag a placed corner to adjust it."
      : step === 3 ? `Tapping ${w.colour} cubes.` : "";
    draw();
  }

  // ---- the picture ----
  let liveTimer = null;
  function live() {
    if (!TC.unlocked()) { $("frame-locked").hidden = false; return; }
    const img = $("live");
    const next = () => { if (w.step === 1) img.src = `/calibrate/frame.jpg?t=${Date.now()}`; };
    img.onload = () => { clearTimeout(liveTimer); liveTimer = setTimeout(next, 700); };
    img.onerror = () => { clearTimeout(liveTimer); liveTimer = setTimeout(next, 2000); };
    next();
  }

  function draw() {
    if (!w.image) return;
    canvas.width = w.image.naturalWidth;
    canvas.height = w.image.naturalHeight;
    ctx.drawImage(w.image, 0, 0);
    const scale = canvas.width / Math.max(1, canvas.getBoundingClientRect().width || canvas.width);
    const r = 9 * scale;
    ctx.lineWidth = 3 * scale;
    ctx.font = `bold ${16 * scale}px sans-serif`;
    if (w.hints) {
      ctx.strokeStyle = "rgba(255,255,255,0.6)";
      ctx.setLineDash([4 * scale, 4 * scale]);
      for (const [x, y] of w.hints.corners) { ctx.beginPath(); ctx.arc(x, y, r * 1.6, 0, 7); ctx.stroke(); }
      for (const pts of Object.values(w.hints.samples)) for (const [x, y] of pts) { ctx.beginPath(); ctx.arc(x, y, r, 0, 7); ctx.stroke(); }
      ctx.setLineDash([]);
    }
    if (w.corners.length) {
      ctx.strokeStyle = "#f0b429";
      ctx.beginPath();
      w.corners.forEach(([x, y], i) => (i ? ctx.lineTo(x, y) : ctx.moveTo(x, y)));
      if (w.corners.length === 4) ctx.closePath();
      ctx.stroke();
      w.corners.forEach(([x, y], i) => {
        ctx.fillStyle = "#f0b429";
        ctx.beginPath(); ctx.arc(x, y, r, 0, 7); ctx.fill();
        ctx.fillStyle = "#000"; ctx.fillText(String(i + 1), x - 4 * scale, y + 5 * scale);
      });
    }
    for (const [colour, pts] of Object.entries(w.samples)) {
      for (const [x, y] of pts) {
        ctx.strokeStyle = "#fff"; ctx.beginPath(); ctx.arc(x, y, r, 0, 7); ctx.stroke();
        ctx.fillStyle = TC.paint(colour); ctx.beginPath(); ctx.arc(x, y, r * 0.55, 0, 7); ctx.fill();
        ctx.fillStyle = "#fff"; ctx.fillText(colour, x + r * 1.3, y + 5 * scale);
      }
    }
  }

  function toImage(event) {
    const box = canvas.getBoundingClientRect();
    return [(event.clientX - box.left) * canvas.width / box.width, (event.clientY - box.top) * canvas.height / box.height];
  }

  canvas.addEventListener("pointerdown", (event) => {
    event.preventDefault();
    const [x, y] = toImage(event);
    const grab = GRAB_PX * canvas.width / canvas.getBoundingClientRect().width;
    const near = w.corners.findIndex(([cx, cy]) => Math.hypot(cx - x, cy - y) < grab);
    if (w.step === 2 && near >= 0 && w.corners.length === 4) {
      w.dragging = near;
      canvas.setPointerCapture(event.pointerId);
      return;
    }
    if (w.step === 2 && w.corners.length < 4) {
      w.corners.push([x, y]);
      cornersChanged();
    } else if (w.step === 3 && w.colour) {
      (w.samples[w.colour] = w.samples[w.colour] || []).push([x, y]);
      w.taps.push(w.colour);
      samplesChanged();
    }
  });
  canvas.addEventListener("pointermove", (event) => {
    if (w.dragging < 0) return;
    const [x, y] = toImage(event);
    // (a corner may lie on the picture's outer edge: a tray that fills the frame)
    w.corners[w.dragging] = [Math.min(Math.max(x, 0), canvas.width),
                             Math.min(Math.max(y, 0), canvas.height)];
    draw();
  });
  const endDrag = () => { if (w.dragging >= 0) { w.dragging = -1; cornersChanged(); } };
  canvas.addEventListener("pointerup", endDrag);
  canvas.addEventListener("pointercancel", endDrag);

  function cornersChanged() {
    const n = w.corners.length;
    $("corner-count").textContent = n < 4 ? `${n} of 4 corners: next ${CORNER_NAMES[n]}` : "4 of 4 corners: drag to adjust";
    $("corners-done").disabled = n !== 4;
    draw();
  }

  function samplesChanged() {
    const items = config.colours.filter((c) => (w.samples[c] || []).length).map((c) =>
      el("li", {}, chip(c), ` ${w.samples[c].length} tap${w.samples[c].length > 1 ? "s" : ""}`));
    const missing = config.colours.filter((c) => !(w.samples[c] || []).length);
    if (missing.length) items.push(el("li", { class: "muted" }, `Not tapped yet: ${missing.join(", ")}`));
    $("sample-list").replaceChildren(...items);
    $("tap-help").textContent = w.step === 3 ? `Tapping ${w.colour} cubes.` : "";
    draw();
  }

  function renderPalette() {
    $("palette").replaceChildren(...config.colours.map((c) => el("button", {
      type: "button", "aria-pressed": c === w.colour ? "true" : "false", "data-colour": c,
      onclick: () => { w.colour = c; renderPalette(); samplesChanged(); },
    }, chip(c))));
  }

  // ---- actions ----
  $("lock").addEventListener("click", (e) => act(e.currentTarget, async () => {
    const result = await api("POST", "/calibrate/lock", {});
    w.controls = result.controls || {};
    $("lock-result").textContent = result.text;
  }));
  if ($("layout")) $("layout").addEventListener("click", (e) => act(e.currentTarget, async () => {
    const result = await api("POST", "/calibrate/demo-layout", {});
    flash(`One cube of each colour lies in the tray: ${result.colours.join(", ")}.`, true);
  }));
  $("snap").addEventListener("click", (e) => act(e.currentTarget, async () => {
    const shot = await api("POST", "/calibrate/snapshot", {});
    const img = new Image();
    await new Promise((resolve, reject) => {
      img.onload = resolve;
      img.onerror = () => reject(new Error("could not load the picture"));
      img.src = `/calibrate/frame/${shot.id}.jpg`;
    });
    w.snapshot = shot.id; w.image = img; w.draft = null;
    w.corners = []; w.samples = {}; w.taps = [];
    cornersChanged(); samplesChanged();
    go(2);
    // On a phone the buttons sit below the picture: bring the picture back to tap on.
    canvas.scrollIntoView({ block: "center" });
  }));
  $("corners-reset").addEventListener("click", () => { w.corners = []; cornersChanged(); });
  $("corners-done").addEventListener("click", () => { renderPalette(); samplesChanged(); go(3); });
  $("sample-undo").addEventListener("click", () => {
    const colour = w.taps.pop();
    if (colour) { w.samples[colour].pop(); if (!w.samples[colour].length) delete w.samples[colour]; }
    samplesChanged();
  });
  $("build").addEventListener("click", (e) => act(e.currentTarget, async () => {
    const result = await api("POST", "/calibrate/build", {
      snapshot: w.snapshot, corners: w.corners, samples: w.samples, camera_controls: w.controls,
    });
    w.draft = result.draft;
    const d = result.detected;
    $("detected").replaceChildren(
      el("img", { src: result.image, alt: "The picture with every cube the counter found outlined", class: "shot" }),
      el("p", { id: "detected-counts" }, `Found ${countsText(d.counts)}` + (d.unknown ? `, and ${d.unknown} unknown` : "") + "."));
    $("report").replaceChildren(...result.report_lines.map((line) =>
      el("li", { class: line.startsWith("warning") ? "bad" : "" }, line)));
    go(4);
  }));
  $("back-to-taps").addEventListener("click", () => go(3));
  $("to-test").addEventListener("click", () => go(5));
  $("test").addEventListener("click", (e) => act(e.currentTarget, async () => {
    $("test-result").replaceChildren(el("p", { class: "muted" }, "Dropping and counting…"));
    const r = await api("POST", "/calibrate/test-drop", { draft: w.draft });
    const c = r.counted;
    const nodes = [el("img", { src: r.image, alt: "The test drop with every counted cube outlined", class: "shot" }),
      el("p", { id: "test-counts" }, `Counted ${countsText(c.counts)}` + (c.unknown ? ` and ${c.unknown} unknown` : "") + ".")];
    if (r.truth) {
      nodes.push(el("p", { id: "test-truth" }, `In the tray: ${countsText(r.truth)}.`));
      nodes.push(el("p", { id: "test-verdict", class: r.correct ? "outcome conquered" : "warning" },
        r.correct ? "Correct: every cube counted." : "Not right: tap more cubes of the miscounted colours, or redo the corners."));
    }
    // A doubted count is no verdict on the calibration: a pile can hide a cube from any camera.
    if (!c.sure && !c.unknown) nodes.push(el("p", { id: "test-doubt", class: "muted" },
      "The counter was not sure of this count (the picture rings where): cubes in a pile can hide each other. Spread them out, or drop again, before changing the calibration."));
    $("test-result").replaceChildren(...nodes);
  }));
  if ($("clear")) $("clear").addEventListener("click", (e) => act(e.currentTarget, async () => {
    await api("POST", "/calibrate/clear", {});
    flash("The simulated tray is empty.", true);
  }));
  $("to-save").addEventListener("click", () => {
    const d = new Date();
    const pad = (n) => String(n).padStart(2, "0");
    if (!$("profile-name").value) $("profile-name").value = `tray ${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}${pad(d.getMinutes())}`;
    go(6);
  });
  $("save-form").addEventListener("submit", (event) => {
    event.preventDefault();
    act(event.submitter, async () => {
      const r = await api("POST", "/calibrate/save", { draft: w.draft, name: $("profile-name").value });
      flash(`Saved “${r.saved}”: the companion counts with it now.`, true);
      renderProfiles(r.profiles);
    });
  });
  if ($("hints")) $("hints").addEventListener("click", (e) => act(e.currentTarget, async () => {
    w.hints = await api("GET", "/calibrate/demo-hints");
    draw();
  }));

  function renderProfiles(list) {
    const body = $("profiles").querySelector("tbody");
    body.replaceChildren(...list.map((p) => el("tr", {}, el("td", {}, p.name), el("td", {}, p.saved),
      el("td", {}, el("button", { type: "button", class: "restore", "data-name": p.name }, "Restore")))));
  }
  $("profiles").addEventListener("click", (event) => {
    const button = event.target.closest("button.restore");
    if (!button) return;
    act(button, async () => {
      await api("POST", "/calibrate/restore", { name: button.dataset.name });
      flash(`Restored “${button.dataset.name}”: the companion counts with it now.`, true);
    });
  });

  window.addEventListener("resize", draw);
  go(1);
  window.addEventListener("load", live);
})();
