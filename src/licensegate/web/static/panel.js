// licensegate customer panel: connecting the desktop web loader (see docs/clients.md, "Web loader").
// The page asks its server for a one-time token (POST .../handoff, CSRF header), then offers it
// with the username to the loader's local listener until the loader has logged in with it; then
// it shows the buttons, and a click sends the button's value (with the same token) to the loader.
(function () {
  "use strict";

  var root = document.getElementById("web-loader");
  if (!root) {
    return;
  }
  var connect = document.getElementById("loader-connect");
  var status = document.getElementById("loader-status");
  var buttons = document.getElementById("loader-buttons");
  var base = "http://localhost:" + root.getAttribute("data-port");
  var user = null;
  var token = null;
  var deadline = 0;
  var timer = null;
  var busy = false;

  function say(text) {
    status.textContent = text;
  }

  function csrfToken() {
    var meta = document.querySelector('meta[name="csrf-token"]');
    return meta ? meta.content : "";
  }

  function stop() {
    if (timer !== null) {
      clearInterval(timer);
      timer = null;
    }
  }

  function loaderUrl(path, params) {
    var query = Object.keys(params).map(function (name) {
      return encodeURIComponent(name) + "=" + encodeURIComponent(params[name]);
    });
    return base + path + "?" + query.join("&");
  }

  function poll() {
    if (busy) {
      return;
    }
    if (Date.now() > deadline) {
      stop();
      connect.disabled = false;
      say("The connection token expired before the loader answered. Start the loader, then press Connect again.");
      return;
    }
    busy = true;
    fetch(loaderUrl("/handshake", { user: user, token: token }), { mode: "cors", cache: "no-store" })
      .then(function (response) {
        return response.json().then(function (body) {
          return { ok: response.ok, body: body };
        }, function () {
          return { ok: false, body: {} };
        });
      })
      .then(function (result) {
        busy = false;
        stop();
        if (result.ok && result.body.success) {
          connect.hidden = true;
          buttons.hidden = false;
          say("The loader is signed in.");
          var first = buttons.querySelector("button");
          if (first) {
            first.focus();
          }
        } else {
          connect.disabled = false;
          say("The loader could not sign in: " + (result.body.message || "no answer") + " Press Connect to try again.");
        }
      }, function () {
        busy = false; // not running yet: try again at the next tick
      });
  }

  connect.hidden = false;
  connect.addEventListener("click", function () {
    connect.disabled = true;
    stop();
    say("Asking for a connection token…");
    fetch(root.getAttribute("data-handoff"), {
      method: "POST",
      headers: { "X-CSRF-Token": csrfToken() },
      credentials: "same-origin",
      cache: "no-store",
    }).then(function (response) {
      if (!response.ok) {
        connect.disabled = false;
        say(response.status === 401
          ? "Your session has ended: reload the page and sign in again."
          : "No token could be issued; try again.");
        return null;
      }
      return response.json();
    }).then(function (body) {
      if (!body) {
        return;
      }
      user = body.user;
      token = body.token;
      deadline = Date.now() + body.expires_in * 1000;
      say("Waiting for the loader… Start it on this computer if it is not running.");
      poll();
      timer = setInterval(poll, 2000);
    }, function () {
      connect.disabled = false;
      say("The panel could not be reached; try again.");
    });
  });

  buttons.addEventListener("click", function (event) {
    var button = event.target.closest("button[data-value]");
    if (!button || token === null) {
      return;
    }
    var label = button.textContent.trim();
    fetch(loaderUrl("/button", { value: button.getAttribute("data-value"), token: token }), {
      mode: "cors",
      cache: "no-store",
    }).then(function (response) {
      say(response.ok ? "Sent to the loader: " + label + "." : "The loader refused " + label + ".");
    }, function () {
      say("The loader no longer answers.");
    });
  });
})();
