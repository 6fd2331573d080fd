// Admin → Connections → Check: a filter over a long model list (a cloud
// endpoint lists hundreds). Rows are only hidden, never removed, so a model
// ticked before the filter changed is still sent with the form.
function setUp(form) {
  const filter = form.querySelector("[data-model-filter]");
  const shown = form.querySelector("[data-model-shown]");
  const ticked = form.querySelector("[data-model-ticked]");
  const rows = Array.prototype.slice.call(form.querySelectorAll("[data-model-row]"));
  function count() {
    if (ticked) {
      ticked.textContent = form.querySelectorAll('input[name="model"]:checked').length + " ticked";
    }
  }
  function apply() {
    const words = (filter.value || "").toLowerCase().split(/\s+/).filter(Boolean);
    let visible = 0;
    rows.forEach(function (row) {
      const name = row.getAttribute("data-model-row");
      const match = words.every(function (w) { return name.indexOf(w) !== -1; });
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
