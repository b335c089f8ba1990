// Shared by the instance browser and the compare view: elements built with text only,
// and a data folder's index.js and chunk_NNNN.js loaded through <script> elements
// (pages opened from file:// cannot fetch local files).
window.HOLISTIC_DATA = (function () {
  "use strict";
  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    if (attrs) for (var k in attrs) node.setAttribute(k, attrs[k]);
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  // base: the data folder's URL; statusId: the element that reports a file that failed to load.
  function loader(base, statusId) {
    var chunks = {};
    var waiting = {};
    function loadScript(src) {
      var s = document.createElement("script");
      s.src = src;
      s.onerror = function () { document.getElementById(statusId).textContent = "Could not load " + src; };
      document.body.appendChild(s);
    }
    function deliver(n, payload) {
      chunks[n] = payload;
      (waiting[n] || []).forEach(function (fn) { fn(payload); });
      delete waiting[n];
    }
    function loadChunk(n) {
      return new Promise(function (resolve) {
        if (chunks[n]) return resolve(chunks[n]);
        if (!waiting[n]) { waiting[n] = []; loadScript(base + "chunk_" + String(n).padStart(4, "0") + ".js"); }
        waiting[n].push(resolve);
      });
    }
    return { chunks: chunks, loadScript: loadScript, loadChunk: loadChunk, deliver: deliver };
  }
  return { el: el, loader: loader };
})();
