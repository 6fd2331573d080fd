// Drag and drop onto the upload form's drop zone. Without this script the
// zone is still a label for a plain multiple-file input, and the form posts.
(function () {
  "use strict";

  function setup(zone) {
    var input = zone.querySelector('input[type="file"]');
    var form = zone.closest("form");
    if (!input || !form) return;
    function over(on) { zone.dataset.over = on ? "1" : "0"; }
    ["dragenter", "dragover"].forEach(function (name) {
      zone.addEventListener(name, function (event) { event.preventDefault(); over(true); });
    });
    ["dragleave", "drop"].forEach(function (name) {
      zone.addEventListener(name, function () { over(false); });
    });
    zone.addEventListener("drop", function (event) {
      event.preventDefault();
      if (!event.dataTransfer || !event.dataTransfer.files.length) return;
      input.files = event.dataTransfer.files;
      submit();
    });
    input.addEventListener("change", function () { if (input.files.length) submit(); });
    function submit() {
      if (window.htmx) { window.htmx.trigger(form, "submit"); } else { form.submit(); }
    }
    // A finished upload clears the input so the same file can be chosen again.
    form.addEventListener("htmx:afterRequest", function () { form.reset(); });
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("[data-dropzone]").forEach(setup);
  });
})();
