// The settings page: renders each plugin's tool switches and settings form from the settings API.
// A tool switch saves as soon as it changes; the settings form saves with its button.
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

  function status(block, text, failed) {
    var node = block.querySelector(".wt-status");
    node.textContent = text;
    node.classList.toggle("wt-failed", !!failed);
  }

  function renderTools(block, plugin) {
    var list = el("ul", { "class": "wt-tools" });
    plugin.tools.filter(function (t) { return t.userToggle; }).forEach(function (tool) {
      var item = el("li");
      var id = "wt-tool-" + plugin.id + "-" + tool.name;
      var box = el("input", { type: "checkbox", id: id, "data-tool": tool.name });
      box.checked = tool.enabled;
      box.addEventListener("change", function () {
        box.disabled = true;
        api("PUT", toolUrl(plugin.id, tool.name), { enabled: box.checked }).then(function (result) {
          box.disabled = false;
          if (result.ok) {
            status(block, tool.name + (box.checked ? " is on." : " is off."));
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
      item.appendChild(box);
      item.appendChild(document.createTextNode(" "));
      item.appendChild(el("label", { "for": id }, tool.name));
      item.appendChild(el("span", { "class": "wt-desc" }, tool.description));
      list.appendChild(item);
    });
    if (list.children.length) block.appendChild(list);
  }

  function fieldInput(name, prop, value, secretSet) {
    var input;
    var id = "wt-field-" + name;
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
      input = el("input", { id: id, name: name, type: "password", autocomplete: "off",
        placeholder: secretSet ? "Set — leave blank to keep" : "Not set" });
    } else {
      input = el("input", { id: id, name: name, type: prop.format === "uri" ? "url" : (prop.type === "integer" ? "number" : "text") });
      input.value = value === null || value === undefined ? "" : value;
    }
    if (prop["x-show-when"]) input.setAttribute("data-show-when", JSON.stringify(prop["x-show-when"]));
    return input;
  }

  function readForm(form, schema) {
    var body = {};
    Object.keys(schema.properties).forEach(function (name) {
      var prop = schema.properties[name];
      var input = form.elements[name];
      if (!input) return;
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

  function renderSettings(block, plugin) {
    if (!plugin.schema) return;
    var form = el("form", { "class": "wt-form", novalidate: "" });
    var schema = plugin.schema;
    Object.keys(schema.properties).forEach(function (name) {
      var prop = schema.properties[name];
      var wrap = el("div", { "class": "wt-field" });
      var input = fieldInput(name, prop, plugin.settings[name], plugin.secrets[name]);
      var label = el("label", { "for": input.id }, prop.title || name);
      wrap.appendChild(label);
      wrap.appendChild(input);
      if (prop.writeOnly && plugin.secrets[name]) {
        var clear = el("label", { "class": "wt-help" });
        var box = el("input", { type: "checkbox", name: name + "__clear" });
        if (prop["x-show-when"]) box.setAttribute("data-show-when", JSON.stringify(prop["x-show-when"]));
        clear.appendChild(box);
        clear.appendChild(document.createTextNode(" Clear the stored value"));
        wrap.appendChild(clear);
      }
      if (prop.description) wrap.appendChild(el("div", { "class": "wt-help" }, prop.description));
      wrap.appendChild(el("div", { "class": "wt-error", "data-error-for": name }));
      form.appendChild(wrap);
    });
    var save = el("button", { type: "submit" }, "Save settings");
    var reset = el("button", { type: "button" }, "Clear my settings");
    form.appendChild(save);
    form.appendChild(document.createTextNode(" "));
    form.appendChild(reset);
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      form.querySelectorAll(".wt-error").forEach(function (n) { n.textContent = ""; });
      api("PUT", settingsUrl(plugin.id), readForm(form, schema)).then(function (result) {
        if (result.ok) {
          status(block, "Settings saved.");
          load();
        } else {
          Object.keys(result.data || {}).forEach(function (field) {
            var target = form.querySelector('[data-error-for="' + field + '"]');
            var text = [].concat(result.data[field]).join(" ");
            if (target) target.textContent = text; else status(block, text, true);
          });
          status(block, "Please correct the errors below.", true);
        }
      });
    });
    reset.addEventListener("click", function () {
      api("DELETE", settingsUrl(plugin.id)).then(function (result) {
        status(block, result.ok ? "Settings cleared." : "Could not clear.", !result.ok);
        if (result.ok) load();
      });
    });
    block.appendChild(form);
    window.webtoolsShowWhen.bind(form);
  }

  function render(plugins) {
    root.textContent = "";
    if (!plugins.length) {
      root.appendChild(el("p", {}, "No tool has settings you can change."));
    }
    plugins.forEach(function (plugin) {
      var block = el("section", { "class": "wt-plugin", "data-plugin": plugin.id });
      block.appendChild(el("h2", {}, plugin.name));
      block.appendChild(el("div", { "class": "wt-status", role: "status" }));
      renderTools(block, plugin);
      renderSettings(block, plugin);
      root.appendChild(block);
    });
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
