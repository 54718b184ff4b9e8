// The page's only script (the server's Content-Security-Policy allows no inline script or
// event handler): a form with data-confirm asks before it submits; live refresh polls the
// server's change fingerprint and reloads the page when files on disk change (another process,
// an editor, the CLI), unless the person is typing in a form.
(function () {
  "use strict";
  document.addEventListener("submit", function (event) {
    var form = event.target;
    var question = form && form.getAttribute && form.getAttribute("data-confirm");
    if (question && !window.confirm(question)) { event.preventDefault(); }
  });
  var fingerprint = null;
  var dirty = false;
  var status = document.getElementById("live");
  document.addEventListener("input", function () { dirty = true; });
  function busy() {
    var el = document.activeElement;
    return dirty || (el && (el.tagName === "TEXTAREA" || el.tagName === "INPUT" || el.tagName === "SELECT"));
  }
  function poll() {
    var url = "/api/v1/changes" + (fingerprint ? "?since=" + encodeURIComponent(fingerprint) : "");
    fetch(url, { headers: { "Accept": "application/json" } })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (body) {
        if (!body) { return; }
        if (body.changed && !busy()) { window.location.reload(); return; }
        if (!body.changed) { fingerprint = body.fingerprint; }
        if (status) { status.textContent = body.changed ? "files changed: save or reload" : "live"; }
      })
      .catch(function () { if (status) { status.textContent = "offline"; } });
  }
  poll();
  window.setInterval(poll, 3000);
})();
