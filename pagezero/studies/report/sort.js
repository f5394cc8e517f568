// Click a header: sort by that column, again to reverse. A number with at most a unit or
// mark after it ("12.3*", "1.25x", "4KB", "#3 (report)") sorts as its number (sizes in
// bytes), any other cell as text.
(function () {
  var units = {KB: 1024, MB: 1048576, GB: 1073741824, TB: 1099511627776};
  function key(text) {
    var m = /^\s*#?([-+]?[0-9.]+)\s*([KMGT]B)?(.*)$/.exec(text);
    if (!m || /[0-9]/.test(m[3])) { return null; }
    return parseFloat(m[1]) * (units[m[2]] || 1);
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    table.querySelectorAll("th").forEach(function (th, col) {
      th.addEventListener("click", function () {
        var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
        var up = !th.classList.contains("asc");
        table.querySelectorAll("th").forEach(function (h) { h.classList.remove("asc", "desc"); });
        th.classList.add(up ? "asc" : "desc");
        rows.sort(function (a, b) {
          var x = a.cells[col].textContent, y = b.cells[col].textContent;
          var kx = key(x), ky = key(y), d;
          if (kx !== null && ky !== null) { d = kx - ky; } else { d = x.localeCompare(y); }
          return up ? d : -d;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
})();
