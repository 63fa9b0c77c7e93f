// The report's lists, drawn from the page's embedded data on demand: each run's items and
// disagreements, the per-criterion agreement between judges, and each comparison of two runs
// item by item. Every text from a model or an input file goes in with textContent: never markup.
(function () {
  "use strict";
  var PAGE = 50, LONG = 160, DEBOUNCE_MS = 250;

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

  function num(value, digits) {
    return value === null || value === undefined ? "–" : value.toFixed(digits === undefined ? 3 : digits);
  }

  function points(value) {
    return (Math.round(value * 10) / 10).toLocaleString("en-US");
  }

  function signed(value) {
    return value === null || value === undefined ? "–" : (value > 0 ? "+" : "") + value.toFixed(3);
  }

  function verdict(label, meaning) { return node("span", meaning, label); }

  // A long text shortened, opened with a click (as the report's long_text macro).
  function longText(text) {
    if (text.length <= LONG) { return document.createTextNode(text); }
    var more = node("details", "long"), summary = node("summary");
    summary.append(node("span", "short", text.slice(0, LONG).trim() + "…"), " ", node("span", "more", "more"));
    more.append(summary, node("span", "full", text));
    return more;
  }

  // A judge by its short name, its whole id on hover.
  function judge(id, names) {
    var span = node("span", "judge", (names && names[id]) || id);
    span.title = id;
    return span;
  }

  function pager(total, page, onPage) {
    var bar = node("div", "pager"), pages = Math.max(1, Math.ceil(total / PAGE));
    var previous = node("button", "previous", "‹ previous"), next = node("button", "next", "next ›");
    previous.disabled = page === 0; next.disabled = page >= pages - 1;
    previous.addEventListener("click", function () { onPage(page - 1); });
    next.addEventListener("click", function () { onPage(page + 1); });
    bar.append(previous, node("span", "page-of", "page " + (page + 1) + " of " + pages + " · " + total.toLocaleString("en-US")), next);
    return bar;
  }

  function header(names) {
    var head = node("tr");
    names.forEach(function (h) { head.append(node("th", null, h)); });
    return head;
  }

  // Run a function once typing pauses: typing 12 characters filters once, not 12 times.
  function debounced(run) {
    var timer = null;
    return function () { clearTimeout(timer); timer = setTimeout(run, DEBOUNCE_MS); };
  }

  function detail(item, names) {
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
    box.append(node("p", "points", points(item.earned) + " of " + points(item.possible) +
                    " points earned · criteria that cost the most points first"));
    var table = node("table", "criteria");
    table.append(header(["criterion", "points", "points lost", "final", "votes and explanations"]));
    item.criteria.forEach(function (c) {
      var row = node("tr"), text = node("td");
      row.dataset.criterion = c.id;
      text.append(longText(c.text));
      if (c.axis) { text.append(node("span", "ci", " (" + c.axis + ")")); }
      var votes = node("td");
      c.votes.forEach(function (v) {
        var line = node("div"); line.append(judge(v[0], names), node("span", null, ": "), verdict(v[1], v[2]));
        if (v[3]) { line.append(node("span", null, " — " + v[3])); }
        votes.append(line);
      });
      c.human.forEach(function (h) {
        var line = node("div"); line.append(node("span", null, "human " + h[0] + ": "), verdict(h[1], h[2]));
        if (h[3]) { line.append(node("span", null, " — " + h[3])); }
        votes.append(line);
      });
      var final = node("td", "final"); final.append(verdict(c.final, c.meaning));
      row.append(text, node("td", null, c.points), node("td", "lost", c.lost ? points(c.lost) : "0"), final, votes);
      table.append(row);
    });
    box.append(table);
    return box;
  }

  // Everything an item says, lower-cased, for the search: built on the first search.
  function searchText(item) {
    if (item.searchText === undefined) {
      var parts = [item.id, item.response];
      item.conversation.forEach(function (turn) { parts.push(turn[1]); });
      item.criteria.forEach(function (c) { parts.push(c.text); });
      item.searchText = parts.join("\n").toLowerCase();
    }
    return item.searchText;
  }

  function Run(index, data) {
    this.index = index; this.data = data; this.page = 0; this.open = {}; this.draws = 0;
    this.names = data.judges || {};
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
    var redraw = function () { self.page = 0; self.draw(); }, typed = debounced(redraw);
    this.filters.addEventListener("input", function (event) {
      if (event.target.name === "q") { typed(); } else { redraw(); }
    });
  }

  Run.prototype.fill = function (name, values) {
    var select = this.filters.querySelector("[name=" + name + "]");
    values.forEach(function (v) { var o = node("option", null, v); o.value = v; select.append(o); });
  };

  Run.prototype.value = function (name) {
    var field = this.filters.querySelector("[name=" + name + "]");
    return field.type === "checkbox" ? field.checked : field.value;
  };

  Run.prototype.matches = function (item, q) {
    var low = this.value("min"), high = this.value("max");
    var theme = this.value("theme"), axis = this.value("axis");
    if (low !== "" && !(item.score !== null && item.score >= parseFloat(low))) { return false; }
    if (high !== "" && !(item.score !== null && item.score <= parseFloat(high))) { return false; }
    if (theme && item.themes.indexOf(theme) < 0) { return false; }
    if (axis && !item.criteria.some(function (c) { return c.axis === axis; })) { return false; }
    if (this.value("judges") && !item.judges_disagree) { return false; }
    if (this.value("humans") && !item.human_disagrees) { return false; }
    if (this.value("failed") && !item.failed) { return false; }
    if (this.value("abstained") && !item.abstained) { return false; }
    return !q || searchText(item).indexOf(q) >= 0;
  };

  Run.prototype.shown = function () {
    var self = this, q = this.value("q").trim().toLowerCase();
    var items = this.data.items.filter(function (item) { return self.matches(item, q); });
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
    var table = node("table", "items");
    table.append(header(["item", "prompt", "themes", "score", "points", "criteria", "flags"]));
    items.slice(this.page * PAGE, (this.page + 1) * PAGE).forEach(function (item) {
      var row = node("tr", "item-row"), flags = [];
      row.id = "item-" + self.index + "-" + item.i;
      if (item.judges_disagree) { flags.push(item.judges_disagree + " judge disagreement(s)"); }
      if (item.human_disagrees) { flags.push(item.human_disagrees + " human disagreement(s)"); }
      if (item.failed) { flags.push(item.failed + " failed"); }
      if (item.abstained) { flags.push(item.abstained + " abstained"); }
      row.append(node("td", null, item.id), node("td", "preview", item.preview), node("td", null, item.themes.join(", ")),
                 node("td", null, num(item.score)), node("td", "points", points(item.earned) + " of " + points(item.possible)),
                 node("td", null, item.criteria.length), node("td", "flag-text", flags.join(" · ")));
      if (flags.length) { row.classList.add("flag"); }
      table.append(row);
      var holder = node("tr", "detail-row"), cell = node("td");
      cell.colSpan = 7; holder.append(cell); holder.hidden = !self.open[item.i];
      if (self.open[item.i]) { cell.append(detail(item, self.names)); row.classList.add("open"); }
      row.addEventListener("click", function () {
        self.open[item.i] = !self.open[item.i];
        if (self.open[item.i] && !cell.firstChild) { cell.append(detail(item, self.names)); }
        holder.hidden = !self.open[item.i];
        row.classList.toggle("open", self.open[item.i]);
      });
      table.append(holder);
    });
    this.list.replaceChildren(pager(items.length, this.page, function (p) { self.page = p; self.draw(); }), table);
    this.draws += 1;
    this.list.dataset.draws = String(this.draws);
    this.list.dataset.query = this.value("q");
  };

  Run.prototype.drawDisagreements = function () {
    var self = this, rows = this.disagreements;
    if (!rows.length) { this.disagreementBox.replaceChildren(node("p", "na", "No judge–judge or judge–human disagreement.")); return; }
    var table = node("table", "disagreements");
    table.append(header(["item", "criterion", "final", "judges", "humans"]));
    rows.slice(this.disagreementPage * PAGE, (this.disagreementPage + 1) * PAGE).forEach(function (pair) {
      var item = pair[0], c = pair[1], row = node("tr"), link = node("a", "item-link", item.id);
      link.href = "#item-" + self.index + "-" + item.i;
      var cell = node("td"); cell.append(link);
      var text = node("td"); text.append(longText(c.text));
      var final = node("td"); final.append(verdict(c.final, c.meaning));
      var judges = node("td"), humans = node("td");
      c.votes.forEach(function (v) { judges.append(judge(v[0], self.names), node("span", null, ": "), verdict(v[1], v[2]), node("span", null, " ")); });
      c.human.forEach(function (h) { humans.append(node("span", null, h[0] + ": "), verdict(h[1], h[2]), node("span", null, " ")); });
      row.append(cell, text, final, judges, humans);
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

  // A figure [value, CI low, CI high, reason] in a cell coloured by agreement (red → green).
  function figure(cell, metric) {
    var value = metric[0];
    if (value === null) {
      cell.append(node("span", "na", "–")); cell.title = metric[3]; cell.style.background = "#eef1f4";
      return cell;
    }
    cell.append(document.createTextNode(num(value)));
    if (metric[1] !== null) { cell.append(node("span", "ci", " [" + num(metric[1]) + ", " + num(metric[2]) + "]")); }
    cell.style.background = "hsl(" + Math.round(120 * Math.max(0, Math.min(1, value))) + ", 55%, 85%)";
    return cell;
  }

  // The per-criterion agreement between judges, drawn when its section is opened.
  function JudgeTable(box, blob) {
    var self = this;
    this.box = box; this.blob = blob; this.page = 0; this.data = null;
    box.closest("details").addEventListener("toggle", function (event) {
      if (event.target.open && self.data === null) {
        decode(self.blob.textContent).then(function (data) { self.data = data; self.draw(); });
      }
    });
  }

  JudgeTable.prototype.draw = function () {
    var self = this, data = this.data, table = node("table", "judge-heatmap");
    table.append(header(["criterion", "units", "α", "Fleiss κ", "percent agreement", "Gwet AC1"]));
    var line = function (label, row, className) {
      var tr = node("tr", className), text = node("td");
      text.append(label);
      var alpha = figure(node("td"), row[1]);
      alpha.append(node("span", "ci", " " + row[2]));
      tr.append(text, node("td", null, row[0].toLocaleString("en-US")), alpha, figure(node("td"), row[3]), figure(node("td"), row[4]),
                figure(node("td"), row[5]));
      table.append(tr);
    };
    data.rows.slice(this.page * PAGE, (this.page + 1) * PAGE).forEach(function (row) {
      line(longText(row[0]), row.slice(1));
    });
    if (data.pooled) {
      line(document.createTextNode(data.pooled[0].toLocaleString("en-US") + " criteria with fewer than " + data.min_units +
                                   " units each, pooled"), data.pooled.slice(1), "pooled");
    }
    this.box.replaceChildren(pager(data.rows.length, this.page, function (p) { self.page = p; self.draw(); }), table);
  };

  // One comparison of two runs, item by item: A, B, B − A, sortable, filtered to changed items.
  function Comparison(number, data) {
    var self = this;
    this.number = number; this.data = data; this.page = 0; this.open = {};
    this.sort = { key: "d", ascending: true };
    this.filters = document.querySelector(".compare-filters[data-compare='" + number + "']");
    this.list = document.querySelector(".compare-list[data-compare='" + number + "']");
    var redraw = function () { self.page = 0; self.draw(); }, typed = debounced(redraw);
    this.filters.addEventListener("input", function (event) {
      if (event.target.name === "q") { typed(); } else { redraw(); }
    });
  }

  Comparison.prototype.shown = function () {
    var changed = this.filters.querySelector("[name=changed]").checked;
    var q = this.filters.querySelector("[name=q]").value.trim().toLowerCase();
    var items = this.data.items.filter(function (item) {
      if (changed && !(item.flipped || item.a !== item.b)) { return false; }
      return !q || (item.id + "\n" + item.preview).toLowerCase().indexOf(q) >= 0;
    });
    var key = this.sort.key, sign = this.sort.ascending ? 1 : -1;
    var value = function (item) { return item[key] === null ? (sign > 0 ? Infinity : -Infinity) : item[key]; };
    if (key === "id") {
      items.sort(function (a, b) { return sign * (a.i - b.i); });
    } else {
      items.sort(function (a, b) { return sign * (value(a) - value(b)) || a.i - b.i; });
    }
    return items;
  };

  Comparison.prototype.draw = function () {
    var self = this, items = this.shown(), data = this.data;
    var pages = Math.max(1, Math.ceil(items.length / PAGE));
    this.page = Math.min(this.page, pages - 1);
    var table = node("table", "compare-items"), head = node("tr");
    [["id", "item"], [null, "prompt"], ["a", "A: " + data.a], ["b", "B: " + data.b], ["d", "B − A"], ["flipped", "criteria flipped"]].forEach(function (column) {
      var th = node("th", column[0] ? "sortable" : null, column[1]);
      if (column[0]) {
        th.dataset.sort = column[0];
        if (self.sort.key === column[0]) { th.classList.add(self.sort.ascending ? "sorted-asc" : "sorted-desc"); }
        th.addEventListener("click", function () {
          self.sort = { key: column[0], ascending: self.sort.key === column[0] ? !self.sort.ascending : true };
          self.draw();
        });
      }
      head.append(th);
    });
    table.append(head);
    items.slice(this.page * PAGE, (this.page + 1) * PAGE).forEach(function (item) {
      var row = node("tr", "compare-row");
      row.dataset.item = item.id;
      var change = node("td", item.d === null || item.d === 0 ? null : (item.d < 0 ? "down" : "up"), signed(item.d));
      row.append(node("td", null, item.id), node("td", "preview", item.preview), node("td", null, num(item.a)),
                 node("td", null, num(item.b)), change, node("td", null, item.flipped));
      table.append(row);
      var holder = node("tr", "compare-detail"), cell = node("td");
      cell.colSpan = 6; holder.append(cell); holder.hidden = !self.open[item.id];
      if (self.open[item.id]) { cell.append(self.sides(item)); }
      row.addEventListener("click", function () {
        self.open[item.id] = !self.open[item.id];
        if (self.open[item.id] && !cell.firstChild) { cell.append(self.sides(item)); }
        holder.hidden = !self.open[item.id];
      });
      table.append(holder);
    });
    this.list.replaceChildren(pager(items.length, this.page, function (p) { self.page = p; self.draw(); }), table);
  };

  // Each criterion's verdict in A and in B, side by side; the flipped ones first.
  Comparison.prototype.sides = function (item) {
    var table = node("table", "sides-table"), data = this.data;
    table.append(header(["criterion", "points", "A: " + data.a, "B: " + data.b]));
    var criteria = item.criteria.slice().sort(function (x, y) { return y[6] - x[6]; });
    criteria.forEach(function (c) {
      var row = node("tr", c[6] ? "flipped" : null), text = node("td"), a = node("td"), b = node("td");
      text.append(longText(c[0]));
      a.className = "side-a"; b.className = "side-b";
      a.append(verdict(c[2], c[3])); b.append(verdict(c[4], c[5]));
      row.append(text, node("td", null, c[1]), a, b);
      table.append(row);
    });
    var links = node("p", "ci"), open = node("a", null, "open the item in run " + data.a);
    open.href = "#item-0-" + item.i;
    links.append(open);
    var box = node("div", "sides-box"); box.append(links, table);
    return box;
  };

  var runs = {};
  function follow() {
    var match = /^#item-(\d+)-(\d+)$/.exec(location.hash);
    if (match && runs[match[1]]) { runs[match[1]].reveal(parseInt(match[2], 10)); }
  }
  document.querySelectorAll("script.judges-data").forEach(function (blob) {
    new JudgeTable(document.querySelector(".judge-table[data-run='" + blob.dataset.run + "']"), blob);
  });
  var loading = Array.prototype.map.call(document.querySelectorAll("script.run-data"), function (blob) {
    return decode(blob.textContent).then(function (data) {
      var run = new Run(blob.dataset.run, data);
      runs[blob.dataset.run] = run;
      run.draw(); run.drawDisagreements();
    });
  }).concat(Array.prototype.map.call(document.querySelectorAll("script.compare-data"), function (blob) {
    return decode(blob.textContent).then(function (data) { new Comparison(blob.dataset.compare, data).draw(); });
  }));
  Promise.all(loading).then(function () {
    document.body.dataset.ready = "1";
    window.addEventListener("hashchange", follow);
    follow();
  });
})();
