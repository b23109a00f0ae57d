// Help that depends on the chosen option: under a select carrying
// data-choice-help='{"brave": {"note": "...", "url": "https://...", "link": "Get a Brave API key"}}', a
// paragraph shows the chosen option's note and link (an engine's pricing and key page). Used by the
// settings page and the admin's options forms.
(function () {
  "use strict";

  function httpUrl(url) {
    try {
      var parsed = new URL(url);
      return parsed.protocol === "https:" || parsed.protocol === "http:" ? parsed.href : null;
    } catch (e) {
      return null;
    }
  }

  function update(select, node) {
    var help = JSON.parse(select.getAttribute("data-choice-help"))[select.value];
    node.textContent = "";
    node.hidden = !help;
    if (!help) return;
    if (help.note) node.appendChild(document.createTextNode(help.note + " "));
    var href = help.url && httpUrl(help.url);
    if (href) {
      var a = document.createElement("a");
      a.href = href;
      a.target = "_blank";
      a.rel = "noopener noreferrer";
      a.textContent = help.link || "Get a key";
      node.appendChild(a);
    }
  }

  // Show the help of ``select`` in ``node`` (created after the select when not given).
  function bind(select, node) {
    if (!node) {
      node = document.createElement("p");
      node.className = "help wt-choice-help";
      node.id = select.id + "-choice";
      select.insertAdjacentElement("afterend", node);
    }
    update(select, node);
    select.addEventListener("change", function () { update(select, node); });
    return node;
  }

  window.webtoolsChoiceHelp = { bind: bind };
  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("select[data-choice-help]").forEach(function (select) { bind(select); });
  });
})();
