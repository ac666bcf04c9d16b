// The explorer's words and elements: a number as Python writes it, a template of Python's filled, an
// element with its text. Every sentence comes from Python (viz.explore.WORDS, viz.narration.frame_text);
// labels are user text: they only ever go into textContent.

// A number as viz.words.fmt writes it (Python's "{:#.4g}"): 4 significant digits, trailing zeros kept.
export function fmt(x, digits) {
  digits = digits || 4;
  if (x === null || x === undefined) { return "?"; }
  if (x !== x) { return "nan"; }
  if (x === Infinity) { return "inf"; }
  if (x === -Infinity) { return "-inf"; }
  if (x === 0) { x = 0; }
  var e = x.toExponential(digits - 1).split("e");
  var exp = parseInt(e[1], 10);
  if (exp < -4 || exp >= digits) {
    var a = Math.abs(exp);
    return e[0] + "e" + (exp < 0 ? "-" : "+") + (a < 10 ? "0" : "") + a;
  }
  var fixed = x.toFixed(digits - 1 - exp);
  return digits - 1 - exp === 0 ? fixed + "." : fixed;  // Python's "#" form keeps the point: "9440."
}

// A template of viz.explore.WORDS with its {fields} filled.
export function say(template, fields) {
  return template.replace(/\{(\w+)\}/g, function (m, key) { return key in fields ? String(fields[key]) : m; });
}

export function make(tag, cls, text) {
  var e = document.createElement(tag);
  if (cls) { e.className = cls; }
  if (text !== undefined) { e.textContent = text; }
  return e;
}

export function button(words, key, cls, name) {
  var b = make("button", cls, words[key]);
  b.type = "button";
  b.setAttribute("aria-label", name || words[key]);
  return b;
}
