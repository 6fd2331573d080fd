// Admin → Connections → Check: a filter over a long model list (a cloud
// endpoint lists hundreds). Rows are only hidden, never removed, so a model
// ticked before the filter changed is still sent with the form.
(function () {
  "use strict";
  function setUp(form) {
    var filter = form.querySelector("[data-model-filter]");
    var shown = form.querySelector("[data-model-shown]");
    var ticked = form.querySelector("[data-model-ticked]");
    var rows = Array.prototype.slice.call(form.querySelectorAll("[data-model-row]"));
    function count() {
      if (ticked) {
        ticked.textContent = form.querySelectorAll('input[name="model"]:checked').length + " ticked";
      }
    }
    function apply() {
      var words = (filter.value || "").toLowerCase().split(/\s+/).filter(Boolean);
      var visible = 0;
      rows.forEach(function (row) {
        var name = row.getAttribute("data-model-row");
        var match = words.every(function (w) { return name.indexOf(w) !== -1; });
        row.hidden = !match;
        if (match) { visible += 1; }
      });
      if (shown) { shown.textContent = visible + " of " + rows.length + " shown"; }
    }
    if (filter) { filter.addEventListener("input", apply); }
    form.addEventListener("change", count);
    // Enter in the filter box filters; it does not add the ticked models.
    if (filter) {
      filter.addEventListener("keydown", function (event) {
        if (event.key === "Enter") { event.preventDefault(); apply(); }
      });
    }
    count();
  }
  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("[data-model-check]").forEach(setUp);
  });
})();
