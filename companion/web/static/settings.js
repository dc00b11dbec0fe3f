/* Settings: the virtual panel (LEDs mirrored live, buttons pressable) and the speech mute. */
"use strict";

(() => {
  const { el, api, act, flash } = TC;
  const $ = (id) => document.getElementById(id);

  // A blinking LED is shown lit and says "blinking": the page polls too rarely to blink in step.
  function renderLeds(panel) {
    $("leds").replaceChildren(...Object.entries(panel.modes).map(([name, mode]) =>
      el("div", { class: "led" + (mode !== "off" ? " on" : ""), "data-led": name, "data-mode": mode },
        el("span", { class: "lamp", "aria-hidden": "true" }),
        `${name.replace(/_/g, " ")}: ${({ on: "on", off: "off", blink: "blinking", fast: "blinking fast" })[mode] || mode}`)));
  }

  async function refreshPanel() {
    try {
      renderLeds(await api("GET", "/settings/panel"));
    } catch (e) {
      flash(e.message);
    }
  }

  if ($("virtual-panel")) {
    $("panel-buttons").addEventListener("click", (event) => {
      const button = event.target.closest("button.press");
      if (!button) return;
      act(button, async () => {
        const r = await api("POST", "/settings/panel/press", { name: button.dataset.name, long: !!button.dataset.long });
        renderLeds(r);
      });
    });
    refreshPanel();
    TC.live(refreshPanel);
  }

  if ($("mute")) {
    $("mute").addEventListener("click", (e) => act(e.currentTarget, async () => {
      const muted = $("mute").dataset.muted !== "yes";
      const r = await api("POST", "/api/speech", { muted });
      $("mute").dataset.muted = r.muted ? "yes" : "no";
      $("mute").textContent = r.muted ? "Unmute" : "Mute";
      $("speech-state").textContent = r.muted ? "Muted." : "Speaking.";
    }));
  }
})();
