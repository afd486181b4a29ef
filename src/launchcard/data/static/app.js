// Progressive enhancement only: every page works without this file.
(function () {
  "use strict";
  var root = document.documentElement;
  var stored = null;
  try { stored = localStorage.getItem("launchcard-theme"); } catch (e) { stored = null; }
  if (stored === "dark" || stored === "light") { root.setAttribute("data-theme", stored); }

  function isDark() {
    var t = root.getAttribute("data-theme");
    if (t) { return t === "dark"; }
    return window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
  }

  function bindCopy(scope) {
    scope.querySelectorAll("button.copy").forEach(function (btn) {
      btn.addEventListener("click", function () {
        var target = document.getElementById(btn.getAttribute("data-copy"));
        if (!target) { return; }
        var text = target.textContent;
        var done = function () { btn.textContent = "Copied"; setTimeout(function () { btn.textContent = "Copy"; }, 1500); };
        if (navigator.clipboard && navigator.clipboard.writeText) {
          navigator.clipboard.writeText(text).then(done, function () { btn.textContent = "Copy failed"; });
        }
      });
    });
  }

  // The deploy files (five emitters) are built on demand: opening the section fetches them in place.
  function bindDeploy(scope) {
    var box = scope.querySelector("details#deploy[data-src]");
    if (!box) { return; }
    box.addEventListener("toggle", function () {
      if (!box.open || box.getAttribute("data-loaded")) { return; }
      box.setAttribute("data-loaded", "1");
      var slot = box.querySelector("#deploy-slot");
      slot.setAttribute("aria-busy", "true");
      fetch(box.getAttribute("data-src"))
        .then(function (r) { return r.text(); })
        .then(function (html) {
          var doc = new DOMParser().parseFromString(html, "text/html");  // server-rendered and escaped
          var files = doc.getElementById("deploy-files");
          if (files) { slot.innerHTML = files.innerHTML; bindCopy(slot); }
          slot.removeAttribute("aria-busy");
        })
        .catch(function () { slot.removeAttribute("aria-busy"); box.removeAttribute("data-loaded"); });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    var theme = document.getElementById("theme");
    if (theme) {
      var show = function () {
        var dark = isDark();
        theme.setAttribute("aria-pressed", String(dark));
        theme.textContent = dark ? "Dark mode: on" : "Dark mode: off";
      };
      show();
      theme.hidden = false;  // without this script the button could do nothing, so it starts hidden
      theme.addEventListener("click", function () {
        var next = isDark() ? "light" : "dark";
        root.setAttribute("data-theme", next);
        show();
        try { localStorage.setItem("launchcard-theme", next); } catch (e) { /* private mode */ }
      });
    }
    document.querySelectorAll("select[data-autosubmit]").forEach(function (sel) {
      sel.addEventListener("change", function () { sel.form.submit(); });
    });
    bindCopy(document);
    bindDeploy(document);

    var form = document.getElementById("builder-form");
    var result = document.getElementById("builder-result");
    if (!form || !result) { return; }
    var pending = null;
    var variant = document.getElementById("b-variant");
    var hardware = document.getElementById("b-hardware");
    var strategy = document.getElementById("b-strategy");
    var nodes = document.getElementById("b-nodes");
    function update(ev) {
      var params = new URLSearchParams(new FormData(form));
      // a variant chosen that does not resolve on the hardware selected: the resolver picks the variant's own
      // (as the URL without hardware= does); the fragment then brings the variant's hardware list
      if (ev && ev.target === variant && variant && hardware) {
        var offered = (variant.options[variant.selectedIndex].getAttribute("data-hardware") || "").split(" ");
        if (offered.indexOf(hardware.value) < 0) { params.delete("hardware"); }
      }
      // a strategy chosen takes its own node count (as the URL without nodes= does), not the last one's
      if (ev && ev.target === strategy) { params.delete("nodes"); }
      var query = params.toString();
      if (pending) { pending.abort(); }
      pending = new AbortController();
      result.setAttribute("aria-busy", "true");
      fetch(form.getAttribute("data-fragment") + "?" + query, { signal: pending.signal })
        .then(function (r) { return r.text(); })
        .then(function (html) {
          result.innerHTML = html;  // server-rendered and escaped
          var fresh = result.querySelector("template#form-options");  // what the selection resolved to
          if (fresh && hardware) { hardware.innerHTML = fresh.innerHTML; }  // the resolved variant's hardware
          if (fresh && nodes && fresh.getAttribute("data-nodes")) { nodes.value = fresh.getAttribute("data-nodes"); }
          result.removeAttribute("aria-busy");
          bindCopy(result);
          bindDeploy(result);
          history.replaceState(null, "", form.getAttribute("action") + "?" + query);
        })
        .catch(function (e) { if (e.name !== "AbortError") { result.removeAttribute("aria-busy"); } });
    }
    // a feature's mode applies only while the feature is checked: its select follows the checkbox (this
    // listener runs before the form's, so the selection sent already has it on or off)
    form.querySelectorAll("input[name=features][type=checkbox]").forEach(function (box) {
      box.addEventListener("change", function () {
        form.querySelectorAll("select[data-feature]").forEach(function (sel) {
          if (sel.getAttribute("data-feature") === box.value) { sel.disabled = !box.checked; }
        });
      });
    });
    form.addEventListener("change", update);
    form.addEventListener("submit", function (ev) { ev.preventDefault(); update(); });
  });
})();
