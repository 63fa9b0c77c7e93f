// The report's item list and disagreement list, drawn from each run's embedded data on demand.
// Every text from a model or an input file goes in with textContent: it is never markup.
(function () {
  "use strict";
  var PAGE = 50;

  function node(tag, className, text) {
    var element = document.createElement(tag);
    if (className) { element.className = className; }
    if (text !== undefined && text !== null) { element.textContent = String(text); }
    return element;
  }

  function decode(base64) {
    var binary = atob(base64.trim()), bytes = new Uint8Array(binary.length);
    for (var i = 0; i < binary.length; i++) { bytes[i] = binary.charCodeAt(i); }
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text().then(JSON.parse);
  }

  function num(value) { return value === null || value === undefined ? "–" : value.toFixed(3); }

  function verdict(label, meaning) { return node("span", meaning, label); }

  function pager(total, page, onPage) {
    var bar = node("div", "pager"), pages = Math.max(1, Math.ceil(total / PAGE));
    var previous = node("button", "previous", "‹ previous"), next = node("button", "next", "next ›");
    previous.disabled = page === 0; next.disabled = page >= pages - 1;
    previous.addEventListener("click", function () { onPage(page - 1); });
    next.addEventListener("click", function () { onPage(page + 1); });
    bar.append(previous, node("span", "page-of", "page " + (page + 1) + " of " + pages + " · " + total), next);
    return bar;
  }

  function detail(item) {
    var box = node("div", "detail");
    item.conversation.forEach(function (turn) {
      var div = node("div", "turn " + turn[0]);
      div.append(node("b", null, turn[0] + ": "), document.createTextNode(turn[1]));
      box.append(div);
    });
    item.context.forEach(function (passage) {
      var more = node("details", "evidence");
      more.append(node("summary", null, "evidence: " + passage[0]), node("div", "turn", passage[1]));
      box.append(more);
    });
    var response = node("div", "response");
    response.append(node("b", null, "response: "), document.createTextNode(item.response));
    box.append(response);
    var table = node("table", "criteria"), head = node("tr");
    ["criterion", "points", "final", "votes and explanations"].forEach(function (h) { head.append(node("th", null, h)); });
    table.append(head);
    item.criteria.forEach(function (c) {
      var row = node("tr"), text = node("td", null, c.text);
      row.dataset.criterion = c.id;
      if (c.axis) { text.append(node("span", "ci", " (" + c.axis + ")")); }
      var votes = node("td");
      c.votes.forEach(function (v) {
        var line = node("div"); line.append(node("span", null, v[0] + ": "), verdict(v[1], v[2]));
        if (v[3]) { line.append(node("span", null, " — " + v[3])); }
        votes.append(line);
      });
      c.human.forEach(function (h) {
        var line = node("div"); line.append(node("span", null, "human " + h[0] + ": "), verdict(h[1], h[2]));
        if (h[3]) { line.append(node("span", null, " — " + h[3])); }
        votes.append(line);
      });
      var final = node("td"); final.append(verdict(c.final, c.meaning));
      row.append(text, node("td", null, c.points), final, votes);
      table.append(row);
    });
    box.append(table);
    return box;
  }

  function Run(index, data) {
    this.index = index; this.data = data; this.page = 0; this.open = {};
    this.filters = document.querySelector(".filters[data-run='" + index + "']");
    this.list = document.querySelector(".item-list[data-run='" + index + "']");
    this.disagreementBox = document.querySelector(".disagreement-list[data-run='" + index + "']");
    this.disagreementPage = 0;
    this.disagreements = [];
    var themes = {}, axes = {}, self = this;
    data.items.forEach(function (item) {
      item.themes.forEach(function (t) { themes[t] = true; });
      item.criteria.forEach(function (c) {
        if (c.axis) { axes[c.axis] = true; }
        if (c.judges_disagree || c.human_disagrees) { self.disagreements.push([item, c]); }
      });
    });
    this.fill("theme", Object.keys(themes).sort());
    this.fill("axis", Object.keys(axes).sort());
    this.filters.addEventListener("input", function () { self.page = 0; self.draw(); });
  }

  Run.prototype.fill = function (name, values) {
    var select = this.filters.querySelector("[name=" + name + "]");
    values.forEach(function (v) { var o = node("option", null, v); o.value = v; select.append(o); });
  };

  Run.prototype.value = function (name) {
    var field = this.filters.querySelector("[name=" + name + "]");
    return field.type === "checkbox" ? field.checked : field.value;
  };

  Run.prototype.matches = function (item) {
    var q = this.value("q").trim().toLowerCase(), low = this.value("min"), high = this.value("max");
    var theme = this.value("theme"), axis = this.value("axis");
    if (low !== "" && !(item.score !== null && item.score >= parseFloat(low))) { return false; }
    if (high !== "" && !(item.score !== null && item.score <= parseFloat(high))) { return false; }
    if (theme && item.themes.indexOf(theme) < 0) { return false; }
    if (axis && !item.criteria.some(function (c) { return c.axis === axis; })) { return false; }
    if (this.value("judges") && !item.judges_disagree) { return false; }
    if (this.value("humans") && !item.human_disagrees) { return false; }
    if (this.value("failed") && !item.failed) { return false; }
    if (this.value("abstained") && !item.abstained) { return false; }
    if (q) {
      var haystack = [item.id, item.preview].concat(item.criteria.map(function (c) { return c.text; }));
      if (!haystack.some(function (text) { return text.toLowerCase().indexOf(q) >= 0; })) { return false; }
    }
    return true;
  };

  Run.prototype.shown = function () {
    var self = this, items = this.data.items.filter(function (item) { return self.matches(item); });
    var order = this.value("sort");
    var score = function (item) { return item.score === null ? -Infinity : item.score; };
    if (order === "score-asc") { items.sort(function (a, b) { return score(a) - score(b); }); }
    if (order === "score-desc") { items.sort(function (a, b) { return score(b) - score(a); }); }
    if (order === "disagreements") {
      items.sort(function (a, b) { return (b.judges_disagree + b.human_disagrees) - (a.judges_disagree + a.human_disagrees); });
    }
    return items;
  };

  Run.prototype.draw = function () {
    var self = this, items = this.shown();
    var pages = Math.max(1, Math.ceil(items.length / PAGE));
    this.page = Math.min(this.page, pages - 1);
    var table = node("table", "items"), head = node("tr");
    ["item", "prompt", "themes", "score", "criteria", "flags"].forEach(function (h) { head.append(node("th", null, h)); });
    table.append(head);
    items.slice(this.page * PAGE, (this.page + 1) * PAGE).forEach(function (item) {
      var row = node("tr", "item-row"), flags = [];
      row.id = "item-" + self.index + "-" + item.i;
      if (item.judges_disagree) { flags.push(item.judges_disagree + " judge disagreement(s)"); }
      if (item.human_disagrees) { flags.push(item.human_disagrees + " human disagreement(s)"); }
      if (item.failed) { flags.push(item.failed + " failed"); }
      if (item.abstained) { flags.push(item.abstained + " abstained"); }
      row.append(node("td", null, item.id), node("td", "preview", item.preview), node("td", null, item.themes.join(", ")),
                 node("td", null, num(item.score)), node("td", null, item.criteria.length), node("td", "flag-text", flags.join(" · ")));
      if (flags.length) { row.classList.add("flag"); }
      table.append(row);
      var holder = node("tr", "detail-row"), cell = node("td");
      cell.colSpan = 6; holder.append(cell); holder.hidden = !self.open[item.i];
      if (self.open[item.i]) { cell.append(detail(item)); row.classList.add("open"); }
      row.addEventListener("click", function () {
        self.open[item.i] = !self.open[item.i];
        if (self.open[item.i] && !cell.firstChild) { cell.append(detail(item)); }
        holder.hidden = !self.open[item.i];
        row.classList.toggle("open", self.open[item.i]);
      });
      table.append(holder);
    });
    this.list.replaceChildren(pager(items.length, this.page, function (p) { self.page = p; self.draw(); }), table);
  };

  Run.prototype.drawDisagreements = function () {
    var self = this, rows = this.disagreements;
    if (!rows.length) { this.disagreementBox.replaceChildren(node("p", "na", "No judge–judge or judge–human disagreement.")); return; }
    var table = node("table", "disagreements"), head = node("tr");
    ["item", "criterion", "final", "judges", "humans"].forEach(function (h) { head.append(node("th", null, h)); });
    table.append(head);
    rows.slice(this.disagreementPage * PAGE, (this.disagreementPage + 1) * PAGE).forEach(function (pair) {
      var item = pair[0], c = pair[1], row = node("tr"), link = node("a", "item-link", item.id);
      link.href = "#item-" + self.index + "-" + item.i;
      var cell = node("td"); cell.append(link);
      var final = node("td"); final.append(verdict(c.final, c.meaning));
      var judges = node("td"), humans = node("td");
      c.votes.forEach(function (v) { judges.append(node("span", null, v[0] + ": "), verdict(v[1], v[2]), node("span", null, " ")); });
      c.human.forEach(function (h) { humans.append(node("span", null, h[0] + ": "), verdict(h[1], h[2]), node("span", null, " ")); });
      row.append(cell, node("td", null, c.text), final, judges, humans);
      table.append(row);
    });
    this.disagreementBox.replaceChildren(
      pager(rows.length, this.disagreementPage, function (p) { self.disagreementPage = p; self.drawDisagreements(); }), table);
  };

  Run.prototype.reveal = function (itemIndex) {
    // Open one item wherever it is: clear the filters, go to its page, draw it open.
    this.filters.querySelectorAll("input, select").forEach(function (field) {
      if (field.type === "checkbox") { field.checked = false; } else if (field.name !== "sort") { field.value = ""; }
    });
    var position = this.shown().findIndex(function (item) { return item.i === itemIndex; });
    if (position < 0) { return; }
    this.page = Math.floor(position / PAGE); this.open[itemIndex] = true; this.draw();
    var row = document.getElementById("item-" + this.index + "-" + itemIndex);
    if (row) { row.scrollIntoView(); }
  };

  var runs = {};
  function follow() {
    var match = /^#item-(\d+)-(\d+)$/.exec(location.hash);
    if (match && runs[match[1]]) { runs[match[1]].reveal(parseInt(match[2], 10)); }
  }
  var blobs = document.querySelectorAll("script.run-data");
  Promise.all(Array.prototype.map.call(blobs, function (blob) {
    return decode(blob.textContent).then(function (data) {
      var run = new Run(blob.dataset.run, data);
      runs[blob.dataset.run] = run;
      run.draw(); run.drawDisagreements();
    });
  })).then(function () {
    document.body.dataset.ready = "1";
    window.addEventListener("hashchange", follow);
    follow();
  });
})();
