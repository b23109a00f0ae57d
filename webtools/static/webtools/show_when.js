// Shows a field only while another field has one of some values (the plugins' show_when rules).
// Used by the admin's option forms and by the settings page; a field carries
// data-show-when='{"field": "engine", "values": ["brave"]}'.
(function () {
  "use strict";

  function container(el) {
    return el.closest(".form-row, .wt-field") || el;
  }

  function controllerValue(form, name) {
    var el = form.querySelector('[name="' + name + '"]');
    if (!el) return null;
    // A hidden controller does not apply, so neither do the fields it controls (the renderer's key
    // hides with the renderer when rendering is off). Controllers come first in the form.
    if (container(el).hidden) return null;
    if (el.type === "checkbox") return el.checked ? "true" : "false";
    return el.value;
  }

  function apply(form) {
    form.querySelectorAll("[data-show-when]").forEach(function (el) {
      var rule = JSON.parse(el.getAttribute("data-show-when"));
      var shown = rule.values.indexOf(controllerValue(form, rule.field)) !== -1;
      container(el).hidden = !shown;
      container(el).style.display = shown ? "" : "none";
    });
  }

  function bind(form) {
    apply(form);
    form.addEventListener("change", function () { apply(form); });
  }

  window.webtoolsShowWhen = { bind: bind, apply: apply };
  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("form").forEach(function (form) {
      if (form.querySelector("[data-show-when]")) bind(form);
    });
  });
})();
