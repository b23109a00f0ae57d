// The demo chat: sends the conversation, reads the NDJSON events of /chat/stream/ as they come, and
// renders them. Nothing from the model or a tool is ever parsed as HTML: every node is built with
// createElement and textContent, links are http(s) only, and an image loads only after the user has
// seen its full URL and clicked (an image URL can carry conversation data to its host).
(function () {
  "use strict";
  var root = document.getElementById("chat");
  if (!root) return;
  var log = document.getElementById("chat-log");
  var form = document.getElementById("chat-form");
  var input = document.getElementById("chat-input");
  var send = document.getElementById("chat-send");
  var stop = document.getElementById("chat-stop");
  var history = [];
  var controller = null;

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function httpUrl(url) {
    try {
      var parsed = new URL(url);
      return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed.href : null;
    } catch (e) {
      return null;
    }
  }

  function link(url, text) {
    var href = httpUrl(url);
    if (!href) return document.createTextNode(text);
    var a = el("a", "", text);
    a.href = href;
    a.title = href;
    a.target = "_blank";
    a.rel = "noopener noreferrer nofollow";
    return a;
  }

  function image(alt, url) {
    var box = el("div", "chat-image");
    var href = httpUrl(url);
    box.appendChild(document.createTextNode("Image" + (alt ? " “" + alt + "”" : "") + ": "));
    box.appendChild(el("code", "", url));
    if (!href) return box;
    var button = el("button", "chat-image-load", "Load image");
    button.type = "button";
    button.addEventListener("click", function () {
      var img = document.createElement("img");
      img.alt = alt;
      img.referrerPolicy = "no-referrer";
      img.src = href;
      box.replaceChild(img, button);
    });
    box.appendChild(document.createTextNode(" "));
    box.appendChild(button);
    return box;
  }

  // A small safe Markdown subset. Inline: `code`, ![image](url), [link](url), **strong**, *em*.
  var INLINE = /`([^`]+)`|!\[([^\]]*)\]\(([^)\s]+)\)|\[([^\]]+)\]\(([^)\s]+)\)|\*\*([^*]+)\*\*|\*([^*\s][^*]*)\*/g;

  function inline(text, parent) {
    var last = 0, match;
    INLINE.lastIndex = 0;
    while ((match = INLINE.exec(text)) !== null) {
      if (match.index > last) parent.appendChild(document.createTextNode(text.slice(last, match.index)));
      if (match[1] !== undefined) parent.appendChild(el("code", "", match[1]));
      else if (match[3] !== undefined) parent.appendChild(image(match[2], match[3]));
      else if (match[5] !== undefined) parent.appendChild(link(match[5], match[4]));
      else if (match[6] !== undefined) parent.appendChild(el("strong", "", match[6]));
      else parent.appendChild(el("em", "", match[7]));
      last = INLINE.lastIndex;
    }
    if (last < text.length) parent.appendChild(document.createTextNode(text.slice(last)));
  }

  // Blocks: ``` fences, # headings, - and 1. lists, paragraphs separated by blank lines.
  function markdown(source) {
    var out = document.createDocumentFragment();
    var lines = source.replace(/\r\n?/g, "\n").split("\n");
    var i = 0;
    while (i < lines.length) {
      var line = lines[i];
      if (/^```/.test(line)) {
        var code = [];
        for (i++; i < lines.length && !/^```/.test(lines[i]); i++) code.push(lines[i]);
        i++;
        var pre = el("pre");
        pre.appendChild(el("code", "", code.join("\n")));
        out.appendChild(pre);
        continue;
      }
      var heading = /^(#{1,6})\s+(.*)$/.exec(line);
      if (heading) {
        var h = el("h" + Math.min(6, heading[1].length + 2));
        inline(heading[2], h);
        out.appendChild(h);
        i++;
        continue;
      }
      var item = /^\s*(?:[-*]|(\d+)\.)\s+/;
      if (item.test(line)) {
        var list = el(item.exec(line)[1] ? "ol" : "ul");
        while (i < lines.length && item.test(lines[i])) {
          var li = el("li");
          inline(lines[i].replace(item, ""), li);
          list.appendChild(li);
          i++;
        }
        out.appendChild(list);
        continue;
      }
      if (!line.trim()) {
        i++;
        continue;
      }
      var p = el("p");
      var first = true;
      while (i < lines.length && lines[i].trim() && !/^```|^#{1,6}\s/.test(lines[i]) && !item.test(lines[i])) {
        if (!first) p.appendChild(el("br"));
        inline(lines[i], p);
        first = false;
        i++;
      }
      out.appendChild(p);
    }
    return out;
  }

  function show(node) {
    log.appendChild(node);
    node.scrollIntoView({block: "end"});
    return node;
  }

  function Answer() {
    this.text = "";
    this.bubble = null;
    this.calls = {};
  }

  Answer.prototype.handle = function (event) {
    if (event.type === "text") {
      if (!this.bubble) {
        this.bubble = show(el("div", "chat-msg chat-assistant"));
        this.bubble.raw = "";
      }
      this.bubble.raw += event.text;
      this.text += event.text;
      this.bubble.replaceChildren(markdown(this.bubble.raw));
    } else if (event.type === "tool_call") {
      this.bubble = null;  // text after the tools goes into a new bubble below them
      var box = show(el("div", "chat-tool"));
      box.dataset.callId = event.id;
      box.dataset.tool = event.name;
      box.appendChild(el("strong", "chat-tool-name", toolTitle(event.name)));
      box.appendChild(el("span", "chat-tool-args", " " + callSummary(event.arguments)));
      this.calls[event.id] = box;
    } else if (event.type === "tool_result") {
      var call = this.calls[event.id] || show(el("div", "chat-tool"));
      if (event.is_error) call.classList.add("chat-failed");
      call.appendChild(renderResult(event));
      call.appendChild(rawJson(event.output !== null && event.output !== undefined ? event.output : event.text));
    } else if (event.type === "sources" && event.sources.length) {
      var list = el("ol", "chat-sources");
      event.sources.forEach(function (source) {
        var li = el("li");
        li.appendChild(link(source.url, source.title || source.url));
        list.appendChild(li);
      });
      (this.bubble || show(el("div", "chat-msg chat-assistant"))).appendChild(list);
    } else if (event.type === "error") {
      show(notice(event.message));
    }
  };

  // -- tool results, rendered for people: search results, a page preview, an error notice ----------

  var titles = {};
  document.querySelectorAll("#chat-tools input[name=tool]").forEach(function (box) {
    titles[box.value] = box.dataset.title;
  });

  function toolTitle(name) {
    return titles[name] || name;
  }

  function callSummary(args) {
    if (typeof args === "string") {
      try { args = JSON.parse(args); } catch (e) { return args; }
    }
    if (args && typeof args.query === "string") return "“" + args.query + "”";
    if (args && typeof args.url === "string") return args.url;
    return JSON.stringify(args);
  }

  function notice(text) {
    var box = el("div", "chat-notice");
    box.setAttribute("role", "alert");
    box.appendChild(el("strong", "", "Something went wrong. "));
    box.appendChild(document.createTextNode(text));
    return box;
  }

  function hostOf(url) {
    try { return new URL(url).host; } catch (e) { return url; }
  }

  function searchResults(output) {
    var box = el("div", "chat-results");
    if (!output.results.length) box.appendChild(el("p", "chat-muted", "No results."));
    var list = el("ol");
    output.results.forEach(function (result) {
      var li = el("li");
      li.appendChild(link(result.url, result.title || result.url));
      li.appendChild(el("span", "chat-host", " " + hostOf(result.url) + (result.published ? " · " + result.published : "")));
      if (result.snippet) li.appendChild(el("p", "chat-snippet", result.snippet));
      list.appendChild(li);
    });
    if (output.results.length) box.appendChild(list);
    (output.notes || []).forEach(function (note) { box.appendChild(el("p", "chat-muted", note)); });
    return box;
  }

  function pagePreview(output) {
    var box = el("div", "chat-page");
    var title = el("p", "chat-page-title");
    title.appendChild(link(output.url, output.title || output.url));
    box.appendChild(title);
    box.appendChild(el("p", "chat-host", output.url));
    var details = el("details", "chat-preview");
    var shown = (output.content || "").length;
    var total = output.totalCharacters || shown;
    details.appendChild(el("summary", "", "Preview of what the assistant read (" +
      (shown < total ? shown + " of " + total : total) + " characters)"));
    details.appendChild(el("pre", "", output.content || ""));
    box.appendChild(details);
    return box;
  }

  function renderResult(event) {
    var output = event.output;
    if (event.is_error) return notice((output && output.error) || event.text);
    if (output && Array.isArray(output.results)) return searchResults(output);
    if (output && typeof output.url === "string" && typeof output.content === "string") return pagePreview(output);
    return el("pre", "chat-tool-result", event.text);
  }

  function rawJson(value) {
    var details = el("details", "chat-raw");
    details.appendChild(el("summary", "", "Raw JSON"));
    details.appendChild(el("pre", "", typeof value === "string" ? value : JSON.stringify(value, null, 2)));
    return details;
  }

  function chosenTools() {
    var boxes = document.querySelectorAll("#chat-tools input[name=tool]");
    if (!boxes.length) return undefined;
    return Array.prototype.filter.call(boxes, function (box) { return box.checked; })
      .map(function (box) { return box.value; });
  }

  function setBusy(busy) {
    root.dataset.state = busy ? "busy" : "idle";
    send.disabled = busy;
    stop.hidden = !busy;
  }

  async function ask(question) {
    history.push({role: "user", content: question});
    show(el("div", "chat-msg chat-user", question));
    var answer = new Answer();
    controller = new AbortController();
    setBusy(true);
    try {
      var response = await fetch(root.dataset.streamUrl, {
        method: "POST",
        headers: {"Content-Type": "application/json", "X-CSRFToken": root.dataset.csrf},
        body: JSON.stringify({messages: history, tools: chosenTools()}),
        signal: controller.signal,
        credentials: "same-origin",
      });
      if (!response.ok) throw new Error("The server answered HTTP " + response.status + ": " + (await response.text()));
      var reader = response.body.getReader();
      var decoder = new TextDecoder();
      var buffer = "";
      for (;;) {
        var chunk = await reader.read();
        if (chunk.done) break;
        buffer += decoder.decode(chunk.value, {stream: true});
        var end;
        while ((end = buffer.indexOf("\n")) >= 0) {
          var line = buffer.slice(0, end).trim();
          buffer = buffer.slice(end + 1);
          if (line) answer.handle(JSON.parse(line));
        }
      }
    } catch (err) {
      show(err.name === "AbortError" ? el("p", "chat-muted", "Stopped.") : notice(String(err.message || err)));
    } finally {
      if (answer.text) history.push({role: "assistant", content: answer.text});
      else history.pop();  // keep user and assistant turns alternating
      controller = null;
      setBusy(false);
    }
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var question = input.value.trim();
    if (!question || controller) return;
    input.value = "";
    ask(question);
  });
  input.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  stop.addEventListener("click", function () {
    if (controller) controller.abort();
  });
  setBusy(false);
})();
