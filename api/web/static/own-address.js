// A page that answers a form says its own address (data-own-address on <body>): the
// address bar is set back to it, so a reload reads the page instead of posting the form
// again and a copied address opens the page. A file, not an inline script, so a
// Content-Security-Policy of script-src 'self' lets it run.
(function () {
  "use strict";
  var own = document.body && document.body.getAttribute("data-own-address");
  if (own && own.charAt(0) === "/" && window.location.pathname !== own) {
    window.history.replaceState(null, "", own);
  }
})();
