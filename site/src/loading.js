// Says on the page when its scripts cannot load, instead of "Loading Python…" for ever. A module script runs
// only once every file of its module graph (app.js, vendor.js, charts.js) is fetched and
// linked: a file that is missing fires "error" at app.js's <script>, an import that names nothing (or a
// syntax error) fires "error" at the window, and none of app.js runs, so it cannot say so itself. This plain
// script runs before the module script and listens, and after WAIT_SECONDS says that app.js has not started.
// It falls silent once app.js runs (app.js sets window.micrographTimes first), which reports its own errors.
// It is a file of its own, not inline, so that a content-security policy of script-src 'self' admits it.
(() => {
  const WAIT_SECONDS = 60;
  const here = new URL(".", location.href).href;
  const started = () => "micrographTimes" in window;
  const local = (url) => (url.startsWith(here) ? url.slice(here.length) : url);

  const show = (text) => {
    if (started()) return;
    const status = document.getElementById("status");
    if (status) status.textContent = text;
    document.documentElement.dataset.loadFailed = "true";
  };

  // The files the server refused, from the browser's record of what it fetched (Resource Timing).
  const refused = () =>
    performance.getEntriesByType("resource")
      .filter((entry) => entry.responseStatus >= 400)
      .map((entry) => `${local(entry.name)} (HTTP ${entry.responseStatus})`);

  const advice = "the page cannot start without it; reload the page, or build the site again " +
    "(micrograph site --out DIR --force)";

  window.addEventListener("error", (event) => {
    const target = event.target;
    if (target instanceof HTMLScriptElement) {
      // app.js itself, or a file it imports, could not be fetched
      const files = refused();
      const what = files.length ? files.join(", ") : `${local(target.src)} or a file it imports`;
      show(`micrograph could not load ${what}: ${advice}.`);
    } else if (event instanceof ErrorEvent && event.filename) {
      // a module that was fetched but cannot be linked or run: an import that names nothing, a syntax error
      const message = String(event.message).replace(/^Uncaught /, "");
      show(`micrograph could not load ${local(event.filename)}: ${message}`);
    }
  }, true); // capturing: a script's "error" does not bubble to the window

  setTimeout(() => {
    if (document.documentElement.dataset.loadFailed) return; // already said why
    const files = refused();
    const what = files.length ? files.join(", ") : "app.js and the files it imports";
    show(`micrograph could not load ${what} in ${WAIT_SECONDS} s: reload the page (a slow connection ` +
      "takes longer; the page goes on loading meanwhile).");
  }, WAIT_SECONDS * 1000);
})();
