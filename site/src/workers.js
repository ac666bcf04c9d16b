// The page's two kinds of Web Worker, as app.js talks to them. Python: micrograph's Python (python.js, with
// Graphviz), asked by message, each request answered by its id. SolutionWorker: the student's side of an
// exercise check (worker.js: the student's code in a Python of its own, no answer key), booted ahead of
// time, used for one check, then thrown away; app.js relays each of the judge's questions to it and its
// answers back, and ends it when a case runs out of time.

// micrograph's Python in a Web Worker (python.js), asked by message.
export class Python {
  constructor() {
    this.worker = new Worker("python.js", { type: "module" });
    this.next = 1;
    this.pending = new Map();  // id -> { resolve, reject } of each request not answered yet
    this.ready = new Promise((resolve, reject) => { this.onReady = resolve; this.onFailed = reject; });
    this.ready.catch(() => {});  // a worker that cannot start is reported by each request and by boot
    this.worker.onmessage = (e) => {
      const m = e.data;
      if (m.ready) { this.onReady(m.times); return; }
      if (m.failed) { this.onFailed(new Error(m.failed)); return; }
      const waiting = this.pending.get(m.id);
      this.pending.delete(m.id);
      if (!waiting) return;
      if ("error" in m) waiting.reject(new Error(m.error)); else waiting.resolve(m.result);
    };
    this.worker.onerror = (e) => {  // python.js or a file it imports could not load or run
      e.preventDefault();
      this.end(new Error("the page's Python stopped: " + (e.message || "its worker could not load")));
    };
  }
  // lessons.publish.web's answer to `op` (python.js's OPS) with `args`: a promise of its text, or of its error
  call(op, ...args) {
    return new Promise((resolve, reject) => {
      const id = this.next++;
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, op, args });
    });
  }
  // Every request not answered yet fails with `error`; the worker is terminated.
  end(error) {
    this.worker.terminate();
    this.onFailed(error);
    for (const waiting of this.pending.values()) waiting.reject(error);
    this.pending.clear();
  }
}

// The student's side of one exercise check.
export class SolutionWorker {
  constructor() {
    this.worker = new Worker("worker.js", { type: "module" });
    this.waiting = null;
    this.timer = null;
    this.ready = new Promise((resolve) => { this.onReady = resolve; });
    this.worker.onmessage = (e) => {
      if (e.data.ready) { this.onReady(); return; }
      const w = this.waiting; this.waiting = null;
      if (w) w(e.data);
    };
    this.worker.onerror = (e) => {
      const w = this.waiting; this.waiting = null;
      if (w) w({ failed: e.message || "an error" });
    };
  }
  post(message, seconds) {
    return new Promise((resolve) => {
      this.timer = seconds ? setTimeout(() => {
        this.waiting = null;
        this.terminate();
        resolve({ timeout: true });
      }, seconds * 1000) : null;
      this.waiting = (data) => { clearTimeout(this.timer); resolve(data); };
      this.worker.postMessage(message);
    });
  }
  async start(exercise) { await this.ready; return this.post({ exercise }, 0); }
  ask(request, seconds) { return this.post({ request }, seconds); }
  terminate() { clearTimeout(this.timer); this.worker.terminate(); }
}
