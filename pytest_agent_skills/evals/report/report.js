(function () {
  "use strict";
  var runs = function () { return document.querySelectorAll("details.run"); };

  // A link to a run (an evidence, an error, a chip) opens that run and what it sits in.
  function openTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var target = id && document.getElementById(id);
    if (!target) { return; }
    for (var node = target; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") { node.open = true; }
    }
    target.scrollIntoView({block: "start"});
  }
  window.addEventListener("hashchange", openTarget);
  openTarget();

  function setAll(open) {
    runs().forEach(function (run) { run.open = open; });
  }
  var openAll = document.getElementById("open-all");
  var closeAll = document.getElementById("close-all");
  var onlyFailing = document.getElementById("only-failing");
  if (openAll) { openAll.addEventListener("click", function () { setAll(true); }); }
  if (closeAll) { closeAll.addEventListener("click", function () { setAll(false); }); }
  if (onlyFailing) {
    onlyFailing.addEventListener("change", function () {
      document.body.classList.toggle("only-failing", onlyFailing.checked);
    });
  }
})();
