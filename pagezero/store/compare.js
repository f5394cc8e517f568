// Opens compare-A-B.html for the two sets chosen, the older first, where it exists
// (the index page of pagezero store publish).
function openComparison() {
  var a = +document.getElementById("base").value, b = +document.getElementById("other").value;
  var name = "compare-" + Math.min(a, b) + "-" + Math.max(a, b) + ".html";
  var message = document.getElementById("compare-message");
  if (a === b) { message.textContent = "choose two different result sets"; return false; }
  if (PAIRS.indexOf(name) < 0) { message.textContent = "no page for this pair"; return false; }
  window.location.href = name;
  return false;
}
