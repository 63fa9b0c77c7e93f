// Keyboard review: j/k (or arrows) move between criteria, a agrees, d disagrees, c puts the
// cursor on the label to correct (Enter saves it as a correction), n opens the next unlabelled
// item. After a save the page comes back at the criterion just labelled and moves on from it.
(function () {
  "use strict";
  var rows = Array.prototype.slice.call(document.querySelectorAll("tr.criterion-row"));
  if (!rows.length) { return; }
  var current = 0;
  var saved = /^#criterion-(\d+)$/.exec(location.hash);
  var start = saved ? parseInt(saved[1], 10) + 1 : 0;
  var open = rows.findIndex(function (row, i) { return i >= start && !row.dataset.mine; });
  if (open < 0) { open = rows.findIndex(function (row) { return !row.dataset.mine; }); }
  if (open < 0) { open = saved ? Math.min(parseInt(saved[1], 10), rows.length - 1) : 0; }

  function select(i) {
    rows[current].classList.remove("selected");
    current = Math.max(0, Math.min(rows.length - 1, i));
    rows[current].classList.add("selected");
    rows[current].scrollIntoView({ block: "center" });
  }

  function submit(action) {
    var form = rows[current].querySelector("form");
    form.requestSubmit(form.querySelector("button[value=" + action + "]"));
  }

  rows.forEach(function (row) {
    var form = row.querySelector("form");
    form.addEventListener("keydown", function (event) {  // Enter in the label or the note: a correction
      if (event.key === "Enter" && event.target.tagName !== "BUTTON") {
        event.preventDefault();
        form.requestSubmit(form.querySelector("button[value=correct]"));
      }
    });
  });

  document.addEventListener("keydown", function (event) {
    var typing = /^(INPUT|SELECT|TEXTAREA)$/.test(event.target.tagName);
    if (event.key === "Escape" && typing) { event.target.blur(); return; }
    if (typing || event.ctrlKey || event.metaKey || event.altKey) { return; }
    var go = { j: 1, ArrowDown: 1, k: -1, ArrowUp: -1 }[event.key];
    if (go) { event.preventDefault(); select(current + go); return; }
    if (event.key === "a") { submit("agree"); }
    else if (event.key === "d") { submit("disagree"); }
    else if (event.key === "c") { event.preventDefault(); rows[current].querySelector("select").focus(); }
    else if (event.key === "n") { document.getElementById("next-unlabelled").click(); }
    else if (event.key === "p" && document.getElementById("previous")) { document.getElementById("previous").click(); }
  });
  select(open);
})();
