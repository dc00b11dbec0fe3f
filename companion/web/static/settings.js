/* Settings: the virtual panel (LEDs mirrored live, buttons pressable) and the speech mute. */
"use strict";

(() => {
  const { el, api, act, flash } = TC;
  const $ = (id) => document.getElementById(id);

  function renderLeds(leds) {
    $("leds").replaceChildren(...Object.entries(leds).map(([name, on]) =>
      el("div", { class: "led" + (on ? " on" : ""), "data-led": name },
        el("span", { class: "lamp", "aria-hidden": "true" }),
        `${name.replace(/^led_/, "").replace(/_/g, " ")}: ${on ? "on" : "off"}`)));
  }

  async function refreshPanel() {
    try {
      renderLeds((await api("GET", "/settings/panel")).leds);
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
        renderLeds(r.leds);
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
