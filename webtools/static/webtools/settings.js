// The settings page: renders each plugin's tool switches and settings form from the settings API.
// A tool switch saves as soon as it changes; the settings form saves with its button. Every control is
// a native, labelled form element (keyboard and screen readers work as on any form); messages go to a
// role="status" region that stays until the next action, and errors sit under their fields.
(function () {
  "use strict";

  var root = document.getElementById("wt-settings");
  if (!root) return;

  function csrfToken() {
    var match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    return match ? decodeURIComponent(match[1]) : "";
  }

  function api(method, url, body) {
    return fetch(url, {
      method: method,
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken(), "Accept": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then(function (response) {
      if (response.status === 204) return { ok: true, data: null };
      return response.json().then(function (data) { return { ok: response.ok, data: data }; },
        function () { return { ok: response.ok, data: {} }; });
    });
  }

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (key) { node.setAttribute(key, attrs[key]); });
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function toolUrl(plugin, tool) {
    return root.dataset.toolUrl.replace("PLUGIN", encodeURIComponent(plugin)).replace("TOOL", encodeURIComponent(tool));
  }

  function settingsUrl(plugin) {
    return root.dataset.settingsUrl.replace("PLUGIN", encodeURIComponent(plugin));
  }

  // The last message of each plugin's block, kept across re-renders so a confirmation stays.
  var messages = {};

  function status(block, text, failed) {
    messages[block.dataset.plugin] = { text: text, failed: !!failed };
    var node = block.querySelector(".wt-status");
    node.textContent = text;
    node.classList.toggle("wt-failed", !!failed);
  }

  function renderTools(block, plugin) {
    var tools = plugin.tools.filter(function (t) { return t.userToggle; });
    if (!tools.length) return;
    var group = el("fieldset", { "class": "wt-tools" });
    group.appendChild(el("legend", {}, "Tools the assistant may use"));
    tools.forEach(function (tool) {
      var id = "wt-tool-" + plugin.id + "-" + tool.name;
      var row = el("div", { "class": "wt-tool" });
      var box = el("input", { type: "checkbox", id: id, "data-tool": tool.name,
        "aria-describedby": id + "-help" });
      box.checked = tool.enabled;
      box.addEventListener("change", function () {
        box.disabled = true;
        api("PUT", toolUrl(plugin.id, tool.name), { enabled: box.checked }).then(function (result) {
          box.disabled = false;
          if (result.ok) {
            status(block, tool.title + (box.checked ? " is on." : " is off."));
          } else {
            box.checked = !box.checked;
            status(block, (result.data && result.data.detail) || "Could not save.", true);
          }
        }, function () {
          box.disabled = false;
          box.checked = !box.checked;
          status(block, "Could not reach the server.", true);
        });
      });
      var label = el("label", { "for": id });
      label.appendChild(el("span", { "class": "wt-tool-title" }, tool.title));
      row.appendChild(box);
      row.appendChild(label);
      row.appendChild(el("p", { "class": "wt-help", id: id + "-help" }, tool.helpText || tool.description));
      group.appendChild(row);
    });
    block.appendChild(group);
  }

  function fieldInput(id, name, prop, value) {
    var input;
    if (prop.enum) {
      input = el("select", { id: id, name: name });
      prop.enum.forEach(function (option, i) {
        var opt = el("option", { value: option }, (prop.enumNames && prop.enumNames[i]) || option);
        if (option === value) opt.selected = true;
        input.appendChild(opt);
      });
    } else if (prop.type === "boolean") {
      input = el("input", { id: id, name: name, type: "checkbox" });
      input.checked = !!value;
    } else if (prop.type === "array") {
      input = el("textarea", { id: id, name: name, rows: "3" });
      input.value = (value || []).join("\n");
    } else if (prop.writeOnly) {
      input = el("input", { id: id, name: name, type: "password", autocomplete: "off", spellcheck: "false" });
    } else {
      input = el("input", { id: id, name: name, type: prop.format === "uri" ? "url" : (prop.type === "integer" ? "number" : "text") });
      input.value = value === null || value === undefined ? "" : value;
    }
    if (prop["x-show-when"]) input.setAttribute("data-show-when", JSON.stringify(prop["x-show-when"]));
    if (prop["x-choice-help"]) input.setAttribute("data-choice-help", JSON.stringify(prop["x-choice-help"]));
    return input;
  }

  function readForm(form, schema) {
    var body = {};
    Object.keys(schema.properties).forEach(function (name) {
      var prop = schema.properties[name];
      var input = form.elements[name];
      if (!input || input.closest("[hidden]")) return;  // fields hidden by show-when do not apply
      if (prop.writeOnly) {
        if (form.elements[name + "__clear"] && form.elements[name + "__clear"].checked) body[name] = null;
        else if (input.value) body[name] = input.value;
      } else if (prop.type === "boolean") body[name] = input.checked;
      else if (prop.type === "array") body[name] = input.value.split("\n").map(function (s) { return s.trim(); }).filter(Boolean);
      else if (prop.type === "integer") body[name] = input.value === "" ? null : Number(input.value);
      else body[name] = input.value;
    });
    return body;
  }

  // Whether a secret is stored for the values now chosen in the form (a key is kept per engine).
  function secretStored(form, plugin, name) {
    var rule = plugin.schema.properties[name]["x-show-when"];
    if (!rule) return !!plugin.secrets[name];
    var controller = form.elements[rule.field];
    return (plugin.secretsFor[name] || []).indexOf(controller ? controller.value : "") !== -1;
  }

  function updateSecrets(form, plugin) {
    Object.keys(plugin.schema.properties).forEach(function (name) {
      if (!plugin.schema.properties[name].writeOnly) return;
      var stored = secretStored(form, plugin, name);
      var input = form.elements[name];
      input.placeholder = stored ? "Saved — leave blank to keep it" : "Not set";
      var clear = form.querySelector('[data-clear-for="' + name + '"]');
      if (clear) clear.hidden = !stored;
    });
  }

  function showErrors(form, block, errors) {
    var first = null;
    Object.keys(errors || {}).forEach(function (field) {
      var text = [].concat(errors[field]).join(" ");
      var target = form.querySelector('[data-error-for="' + field + '"]');
      var input = form.elements[field];
      if (target && input && !target.parentNode.closest("[hidden]")) {
        target.textContent = text;
        target.hidden = false;
        input.setAttribute("aria-invalid", "true");
        first = first || input;
      } else {
        var general = form.querySelector(".wt-form-error");
        general.textContent = (general.textContent ? general.textContent + " " : "") + text;
        general.hidden = false;
      }
    });
    status(block, "Not saved: please correct the errors below.", true);
    if (first) first.focus();
  }

  function clearErrors(form) {
    form.querySelectorAll(".wt-error, .wt-form-error").forEach(function (n) { n.textContent = ""; n.hidden = true; });
    form.querySelectorAll("[aria-invalid]").forEach(function (n) { n.removeAttribute("aria-invalid"); });
  }

  function renderSettings(block, plugin) {
    if (!plugin.schema) return;
    var form = el("form", { "class": "wt-form", novalidate: "", "aria-label": plugin.name + " settings" });
    var schema = plugin.schema;
    form.appendChild(el("p", { "class": "wt-form-error", role: "alert", hidden: "" }));
    Object.keys(schema.properties).forEach(function (name) {
      var prop = schema.properties[name];
      var id = "wt-field-" + name;
      var wrap = el("div", { "class": "wt-field" + (prop.type === "boolean" ? " wt-check" : "") });
      var input = fieldInput(id, name, prop, plugin.settings[name]);
      var described = [];
      wrap.appendChild(el("label", { "for": id }, prop.title || name));
      wrap.appendChild(input);
      if (prop.description) {
        wrap.appendChild(el("p", { "class": "wt-help", id: id + "-help" }, prop.description));
        described.push(id + "-help");
      }
      if (prop["x-choice-help"]) {
        window.webtoolsChoiceHelp.bind(input, wrap.appendChild(el("p", { "class": "wt-help wt-choice-help", id: id + "-choice" })));
        described.push(id + "-choice");
      }
      if (prop.writeOnly) {
        var clear = el("label", { "class": "wt-clear", "data-clear-for": name });
        var box = el("input", { type: "checkbox", name: name + "__clear" });
        clear.appendChild(box);
        clear.appendChild(document.createTextNode(" Remove the saved " + (prop.title || name)));
        wrap.appendChild(clear);
      }
      wrap.appendChild(el("p", { "class": "wt-error", id: id + "-error", "data-error-for": name, hidden: "" }));
      described.push(id + "-error");
      input.setAttribute("aria-describedby", described.join(" "));
      form.appendChild(wrap);
    });
    var actions = el("div", { "class": "wt-actions" });
    var save = el("button", { type: "submit", "class": "wt-primary" }, "Save settings");
    var reset = el("button", { type: "button", "aria-expanded": "false" }, "Clear my settings");
    actions.appendChild(save);
    actions.appendChild(reset);
    form.appendChild(actions);
    // Clearing deletes every saved key of the plugin: it asks first, in the page (keyboard and screen
    // readers reach it as any other control).
    var confirmBox = el("div", { "class": "wt-confirm", role: "group", hidden: "" });
    var question = el("p", { id: "wt-confirm-" + plugin.id },
      "This deletes your " + (plugin.name || plugin.id) + " settings and every API key you saved here. Clear them?");
    var yes = el("button", { type: "button", "class": "wt-danger" }, "Yes, clear my settings");
    var no = el("button", { type: "button" }, "Keep them");
    confirmBox.setAttribute("aria-labelledby", question.id);
    confirmBox.appendChild(question);
    confirmBox.appendChild(yes);
    confirmBox.appendChild(no);
    form.appendChild(confirmBox);
    function asking(open) {
      confirmBox.hidden = !open;
      reset.setAttribute("aria-expanded", open ? "true" : "false");
      (open ? no : reset).focus();
    }
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      clearErrors(form);
      save.disabled = true;
      api("PUT", settingsUrl(plugin.id), readForm(form, schema)).then(function (result) {
        save.disabled = false;
        if (result.ok) {
          status(block, "Settings saved.");
          replace(block, result.data);
        } else {
          showErrors(form, block, result.data);
        }
      }, function () {
        save.disabled = false;
        status(block, "Could not reach the server; nothing was saved.", true);
      });
    });
    reset.addEventListener("click", function () { asking(true); });
    no.addEventListener("click", function () { asking(false); });
    yes.addEventListener("click", function () {
      asking(false);
      api("DELETE", settingsUrl(plugin.id)).then(function (result) {
        status(block, result.ok ? "Your settings were cleared." : "Could not clear your settings.", !result.ok);
        if (result.ok) load();
      });
    });
    form.addEventListener("change", function () { updateSecrets(form, plugin); });
    block.appendChild(form);
    window.webtoolsShowWhen.bind(form);
    updateSecrets(form, plugin);
  }

  function renderBlock(plugin) {
    var block = el("section", { "class": "wt-plugin", "data-plugin": plugin.id, "aria-labelledby": "wt-h-" + plugin.id });
    block.appendChild(el("h2", { id: "wt-h-" + plugin.id }, plugin.name));
    block.appendChild(el("p", { "class": "wt-status", role: "status", "aria-live": "polite" }));
    renderTools(block, plugin);
    renderSettings(block, plugin);
    var kept = messages[plugin.id];
    if (kept) status(block, kept.text, kept.failed);
    return block;
  }

  function replace(block, plugin) {
    var fresh = renderBlock(plugin);
    block.replaceWith(fresh);
    var save = fresh.querySelector(".wt-primary");
    if (save) save.focus();  // keyboard users stay where they were
  }

  function render(plugins) {
    root.textContent = "";
    if (!plugins.length) {
      root.appendChild(el("p", {}, "No tool has settings you can change."));
    }
    plugins.forEach(function (plugin) { root.appendChild(renderBlock(plugin)); });
    root.setAttribute("data-loaded", "true");
  }

  function load() {
    api("GET", root.dataset.listUrl).then(function (result) {
      if (result.ok) render(result.data);
      else root.textContent = "Could not load your settings.";
    }, function () { root.textContent = "Could not reach the server."; });
  }

  load();
})();
