// The admin's Test page: picking another tool puts that tool's example input in the box, unless the
// operator has edited the input.
(function () {
  "use strict";
  var examples = JSON.parse(document.getElementById("wt-test-examples").textContent);
  var form = document.getElementById("wt-test-form");
  var tool = form.elements.tool;
  var input = form.elements.input;
  tool.addEventListener("change", function () {
    var untouched = Object.keys(examples).some(function (name) { return examples[name] === input.value; });
    if (untouched || !input.value.trim()) input.value = examples[tool.value] || "{}";
  });
})();
