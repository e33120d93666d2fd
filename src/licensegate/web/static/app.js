// licensegate dashboard: small enhancements on top of pages that work without script.
// No inline script anywhere (the Content-Security-Policy forbids it); everything is wired here.
(function () {
  "use strict";

  function csrfToken() {
    var meta = document.querySelector('meta[name="csrf-token"]');
    return meta ? meta.content : "";
  }

  // htmx requests carry the session's CSRF token in a header.
  document.addEventListener("htmx:configRequest", function (event) {
    event.detail.headers["X-CSRF-Token"] = csrfToken();
  });

  // What a form would send, its address included: two forms with the same are the same action.
  function formSignature(form) {
    return form.getAttribute("action") + "?" + new URLSearchParams(new FormData(form)).toString();
  }

  // A list swapped while the dialog was open (a filter's answer arriving late) has taken the
  // asked form out of the page, and a form out of the page sends nothing: act through the same
  // action's form in the list shown now.
  function liveForm(form) {
    if (form.isConnected) {
      return form;
    }
    var wanted = formSignature(form);
    var forms = document.querySelectorAll("form[data-confirm]");
    for (var i = 0; i < forms.length; i++) {
      if (formSignature(forms[i]) === wanted) {
        return forms[i];
      }
    }
    return null;
  }

  // Confirmations: a form with data-confirm asks in the page's <dialog> before it is sent.
  // Without script the server asks on a page of its own; either way it sees confirmed=1.
  function confirmForm(form) {
    var dialog = document.getElementById("confirm-dialog");
    if (!dialog || typeof dialog.showModal !== "function") {
      return;
    }
    var opener = document.activeElement;
    document.getElementById("confirm-text").textContent = form.getAttribute("data-confirm");
    dialog.returnValue = "";
    dialog.showModal();
    dialog.addEventListener("close", function onClose() {
      dialog.removeEventListener("close", onClose);
      if (dialog.returnValue === "confirm") {
        form = liveForm(form);
        if (!form) {
          return;  // its row is gone from the list shown now: nothing left to confirm
        }
        var flag = document.createElement("input");
        flag.type = "hidden";
        flag.name = "confirmed";
        flag.value = "1";
        form.appendChild(flag);
        form.dataset.confirmed = "1";
        // requestSubmit: an htmx form is sent by htmx (a plain one as usual); submit() would skip it.
        if (typeof form.requestSubmit === "function") {
          form.requestSubmit();
        } else {
          form.submit();
        }
      } else if (opener && opener.focus) {
        opener.focus();
      }
    });
  }

  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!form.matches("form[data-confirm]")) {
      return;
    }
    if (form.dataset.confirmed !== "1") {
      // Stopped here (capture phase), so htmx's listener on the form does not send it either.
      event.preventDefault();
      event.stopPropagation();
      confirmForm(form);
      return;
    }
    // This submission is the confirmed one; the form asks again next time (htmx may keep it).
    delete form.dataset.confirmed;
    setTimeout(function () {
      form.querySelectorAll('input[name="confirmed"]').forEach(function (flag) { flag.remove(); });
    }, 0);
  }, true);

  // A form marked data-error-page whose htmx post is refused (a 4xx page without the part it
  // swaps: a 403, an expired form) shows that page's main content, as a plain post would.
  document.addEventListener("htmx:beforeSwap", function (event) {
    var detail = event.detail;
    var status = detail.xhr ? detail.xhr.status : 0;
    var main = document.getElementById("main");
    var elt = detail.requestConfig ? detail.requestConfig.elt : null;
    if (elt && elt.closest && elt.closest("[data-error-page]") && status >= 400 && status < 500 &&
        main && /<main id="main"/.test(detail.serverResponse || "")) {
      detail.shouldSwap = true;
      detail.isError = false;
      detail.target = main;
      detail.selectOverride = "#main";
      detail.swapOverride = "outerHTML";
    }
  });

  // Post/redirect/get through htmx: the request follows the server's 303 by itself, so the
  // address bar would keep the address posted to while the page shows another (a new webhook, a
  // new team member). Put the shown page's address there, as a plain post would: a reload then
  // asks for that page again instead of posting again. {htmx: true} lets htmx restore the page
  // before it when the browser goes back.
  document.addEventListener("htmx:afterSwap", function (event) {
    var detail = event.detail;
    var xhr = detail.xhr;
    var config = detail.requestConfig;
    if (!xhr || !config || !xhr.responseURL || String(config.verb).toLowerCase() !== "post" ||
        xhr.status < 200 || xhr.status >= 300) {
      return;
    }
    var shown = new URL(xhr.responseURL);
    var posted = new URL(config.path, window.location.href);
    if (shown.origin !== window.location.origin || shown.href === posted.href) {
      return;  // not redirected: the page answered the post itself
    }
    var address = shown.pathname + shown.search;
    if (address !== window.location.pathname + window.location.search) {
      history.replaceState({htmx: true}, document.title, window.location.href);
      history.pushState({htmx: true}, "", address);
    }
  });

  // Copy buttons (shown only where the clipboard can be used).
  // htmx announces every piece it loads, the initial page included: wire each element once.
  function once(el, what) {
    var key = "wired" + what;
    if (el.dataset[key] === "1") {
      return false;
    }
    el.dataset[key] = "1";
    return true;
  }

  function initCopy(root) {
    root.querySelectorAll("button[data-copy]").forEach(function (button) {
      if (!navigator.clipboard || !once(button, "Copy")) {
        return;
      }
      button.hidden = false;
      button.addEventListener("click", function () {
        var source = document.getElementById(button.getAttribute("data-copy"));
        var text = source ? (source.value !== undefined && source.tagName !== "CODE" && source.tagName !== "PRE" ? source.value : source.textContent) : "";
        navigator.clipboard.writeText(text.trim()).then(function () {
          announce("Copied to the clipboard.", "success");
        }, function () {
          announce("The browser did not allow copying; select the text and copy it by hand.", "warning");
        });
      });
    });
  }

  function announce(text, level) {
    var region = document.getElementById("flash");
    if (!region) {
      return;
    }
    var p = document.createElement("p");
    p.className = "flash flash-" + level;
    p.textContent = text;
    region.replaceChildren(p);
  }

  // Exports the page has counted (up to the list's count cap) are fetched here so that a
  // progress bar can show the keys received out of the count; the file is then saved as the
  // link would have saved it. Larger ones are left to the browser's own streamed download.
  function exportWithProgress(link) {
    var total = parseInt(link.getAttribute("data-export"), 10);
    var box = document.querySelector(".export-progress");
    if (!box || !window.fetch || !window.ReadableStream || !(total >= 0)) {
      return false;
    }
    var bar = box.querySelector("progress");
    var said = box.querySelector(".export-count");
    var json = /format=json/.test(link.href);
    bar.max = Math.max(total, 1);
    bar.value = 0;
    said.textContent = "0 of " + total.toLocaleString() + " keys";
    box.hidden = false;
    fetch(link.href, { credentials: "same-origin" }).then(function (res) {
      if (!res.ok || !res.body) {
        throw new Error("the server answered " + res.status);
      }
      var name = (/filename="([^"]+)"/.exec(res.headers.get("content-disposition") || "") || [])[1] || "licenses";
      var reader = res.body.getReader();
      var parts = [];
      var lines = 0;
      function pump() {
        return reader.read().then(function (step) {
          if (step.done) {
            return name;
          }
          parts.push(step.value);
          for (var i = 0; i < step.value.length; i++) {
            if (step.value[i] === 10) {
              lines++;
            }
          }
          // CSV: a header line, then one line a key; JSON: one line a key.
          var received = Math.min(total, Math.max(0, json ? lines : lines - 1));
          bar.value = received;
          said.textContent = received.toLocaleString() + " of " + total.toLocaleString() + " keys";
          return pump();
        });
      }
      return pump().then(function (filename) {
        var url = URL.createObjectURL(new Blob(parts, { type: res.headers.get("content-type") || "" }));
        var save = document.createElement("a");
        save.href = url;
        save.download = filename;
        document.body.appendChild(save);
        save.click();
        save.remove();
        setTimeout(function () { URL.revokeObjectURL(url); }, 10000);
        bar.value = bar.max;
        said.textContent = total.toLocaleString() + " of " + total.toLocaleString() + " keys: saved as " + filename;
      });
    }).catch(function (err) {
      box.hidden = true;
      announce("The export failed: " + (err && err.message ? err.message : err), "error");
    });
    return true;
  }

  document.addEventListener("click", function (event) {
    var link = event.target.closest ? event.target.closest("a[data-export]") : null;
    if (link && !event.ctrlKey && !event.metaKey && !event.shiftKey && exportWithProgress(link)) {
      event.preventDefault();
    }
  });

  // "Select all on this page" for bulk actions.
  document.addEventListener("change", function (event) {
    var box = event.target;
    if (box.matches("input[data-pick-all]")) {
      document.querySelectorAll('input[type="checkbox"][name="ids"]').forEach(function (row) {
        row.checked = box.checked;
      });
    }
  });

  // WebAuthn (security keys, passkeys): the only ceremony that needs script.
  function fromB64url(text) {
    var b64 = text.replace(/-/g, "+").replace(/_/g, "/");
    var raw = atob(b64 + "===".slice((b64.length + 3) % 4));
    var bytes = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) {
      bytes[i] = raw.charCodeAt(i);
    }
    return bytes.buffer;
  }

  function toB64url(buffer) {
    var bytes = new Uint8Array(buffer);
    var raw = "";
    for (var i = 0; i < bytes.length; i++) {
      raw += String.fromCharCode(bytes[i]);
    }
    return btoa(raw).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  function creationOptions(o) {
    o.challenge = fromB64url(o.challenge);
    o.user.id = fromB64url(o.user.id);
    (o.excludeCredentials || []).forEach(function (c) { c.id = fromB64url(c.id); });
    return { publicKey: o };
  }

  function requestOptions(o) {
    o.challenge = fromB64url(o.challenge);
    (o.allowCredentials || []).forEach(function (c) { c.id = fromB64url(c.id); });
    return { publicKey: o };
  }

  function credentialJSON(cred) {
    var r = cred.response;
    var response = { clientDataJSON: toB64url(r.clientDataJSON) };
    if (r.attestationObject) {
      response.attestationObject = toB64url(r.attestationObject);
      response.transports = r.getTransports ? r.getTransports() : [];
    } else {
      response.authenticatorData = toB64url(r.authenticatorData);
      response.signature = toB64url(r.signature);
      response.userHandle = r.userHandle ? toB64url(r.userHandle) : null;
    }
    return JSON.stringify({
      id: cred.id,
      rawId: toB64url(cred.rawId),
      type: cred.type,
      response: response,
      clientExtensionResults: cred.getClientExtensionResults ? cred.getClientExtensionResults() : {},
      authenticatorAttachment: cred.authenticatorAttachment || null
    });
  }

  function initWebAuthn(root) {
    root.querySelectorAll("form[data-webauthn]").forEach(function (form) {
      if (!window.PublicKeyCredential || !once(form, "Webauthn")) {
        return;
      }
      form.querySelectorAll(".webauthn-only").forEach(function (el) { el.hidden = false; });
      form.querySelectorAll(".no-webauthn").forEach(function (el) { el.hidden = true; });
      form.addEventListener("submit", function (event) {
        var field = form.querySelector('input[name="credential"]');
        if (field.value) {
          return;
        }
        event.preventDefault();
        var creating = form.getAttribute("data-webauthn") === "create";
        fetch(form.getAttribute("data-options"), {
          method: "POST",
          headers: { "X-CSRF-Token": csrfToken() },
          credentials: "same-origin"
        }).then(function (res) {
          if (!res.ok) {
            throw new Error("The server did not start the security key prompt (" + res.status + ").");
          }
          return res.json();
        }).then(function (options) {
          return creating
            ? navigator.credentials.create(creationOptions(options))
            : navigator.credentials.get(requestOptions(options));
        }).then(function (cred) {
          field.value = credentialJSON(cred);
          form.submit();
        }).catch(function (err) {
          announce("The security key did not answer: " + (err && err.message ? err.message : err), "error");
        });
      });
    });
  }

  // Uploads (form[data-upload]): sent with XMLHttpRequest so that a <progress> shows how much of
  // the file has gone; the answer (the page the server redirects to, or the form with its error)
  // replaces the page's main part, as htmx does for the other forms. Without script the form
  // posts as usual. A file over the server's limit is refused here, before a byte is sent.
  function sizeText(bytes) {
    if (bytes < 1024) {
      return bytes.toLocaleString("en") + (bytes === 1 ? " byte" : " bytes");
    }
    var units = ["KiB", "MiB", "GiB", "TiB"];
    var amount = bytes;
    var unit = units[0];
    for (var i = 0; i < units.length; i++) {
      amount /= 1024;
      unit = units[i];
      if (amount < 1024) {
        break;
      }
    }
    var shown = amount < 10 ? amount.toFixed(1).replace(/\.0$/, "") : Math.round(amount).toLocaleString("en");
    return shown + " " + unit;
  }

  // The error under a field, as the server renders it (components.html, `field`); "" removes it.
  function fieldError(input, text) {
    var box = input.closest(".field");
    var id = input.id + "-error";
    var old = document.getElementById(id);
    if (old) {
      old.remove();
    }
    var described = (input.getAttribute("aria-describedby") || "").split(" ").filter(function (part) {
      return part && part !== id;
    });
    if (!text) {
      box.classList.remove("invalid");
      input.removeAttribute("aria-invalid");
    } else {
      var p = document.createElement("p");
      p.className = "error";
      p.id = id;
      p.textContent = text;
      box.appendChild(p);
      box.classList.add("invalid");
      input.setAttribute("aria-invalid", "true");
      described.push(id);
    }
    if (described.length) {
      input.setAttribute("aria-describedby", described.join(" "));
    } else {
      input.removeAttribute("aria-describedby");
    }
  }

  function swapMain(doc) {
    var fresh = doc && doc.getElementById ? doc.getElementById("main") : null;
    var main = document.getElementById("main");
    if (!fresh || !main) {
      return null;
    }
    fresh = document.importNode(fresh, true);
    // The status region is filled after it is in the page, so that screen readers announce it.
    var region = fresh.querySelector("#flash");
    var said = region ? Array.prototype.slice.call(region.childNodes) : [];
    if (region) {
      region.replaceChildren();
    }
    main.replaceWith(fresh);
    if (doc.title) {
      document.title = doc.title;
    }
    if (window.htmx) {
      window.htmx.process(fresh);
    }
    init(fresh);
    if (region) {
      setTimeout(function () { region.replaceChildren.apply(region, said); }, 50);
    }
    return fresh;
  }

  function uploadWithProgress(form) {
    var input = form.querySelector('input[type="file"]');
    var file = input && input.files ? input.files[0] : null;
    if (!file) {
      return false; // the browser's own check of `required` (or the server) says so
    }
    var max = parseInt(form.getAttribute("data-max-bytes"), 10);
    var box = form.querySelector("[data-upload-progress]");
    box.hidden = true; // what an earlier upload said
    if (max >= 0 && file.size > max) {
      fieldError(input, "The file is larger than the limit of " + form.getAttribute("data-max-text") +
        ": it has " + file.size.toLocaleString("en") + " bytes, the limit is " + max.toLocaleString("en") + ".");
      input.focus();
      return true;
    }
    fieldError(input, "");
    var bar = box.querySelector("progress");
    var said = box.querySelector(".upload-said");
    var cancel = box.querySelector("[data-upload-cancel]");
    var submit = form.querySelector('button[type="submit"]');
    var action = form.getAttribute("action");
    var xhr = new XMLHttpRequest();
    function stopped(text, level) {
      box.hidden = true;
      submit.disabled = false;
      announce(text, level);
    }
    bar.max = Math.max(file.size, 1);
    bar.value = 0;
    said.textContent = "Sending " + file.name + "…";
    cancel.hidden = false;
    box.hidden = false;
    submit.disabled = true;
    var saidPercent = -10;
    xhr.upload.addEventListener("progress", function (event) {
      if (event.lengthComputable && event.total > 0) {
        bar.max = event.total;
        bar.value = event.loaded;
        // The text (a live region) changes every 10% only, so a screen reader is not flooded.
        var percent = Math.floor((100 * event.loaded) / event.total);
        if (percent >= saidPercent + 10) {
          saidPercent = percent - (percent % 10);
          said.textContent = percent + "% sent (" + sizeText(event.loaded) + " of " + sizeText(event.total) + ")";
        }
      }
    });
    xhr.upload.addEventListener("load", function () {
      bar.value = bar.max;
      cancel.hidden = true;
      said.textContent = "100% sent; the server is storing the file…";
    });
    cancel.onclick = function () { xhr.abort(); };
    xhr.addEventListener("abort", function () {
      stopped("The upload was cancelled; nothing was changed.", "warning");
    });
    xhr.addEventListener("error", function () {
      stopped("The upload failed: the connection to the server was lost.", "error");
    });
    xhr.addEventListener("load", function () {
      var fresh = swapMain(xhr.response);
      if (!fresh) {
        stopped("The upload failed: the server answered " + xhr.status + ".", "error");
        return;
      }
      var invalid = fresh.querySelector('[aria-invalid="true"]');
      if (invalid) {
        invalid.focus();
        return;
      }
      // The same form on the page now: its bar stays full, so the person sees the upload ended.
      var again = Array.prototype.filter.call(fresh.querySelectorAll("form[data-upload]"), function (f) {
        return f.getAttribute("action") === action;
      })[0];
      if (xhr.status < 400 && !again && xhr.responseURL) {
        window.location.assign(xhr.responseURL); // another page (the session ended: sign in)
        return;
      }
      if (xhr.status < 400 && xhr.responseURL !== window.location.href) {
        window.history.replaceState(null, "", xhr.responseURL);
      }
      var done = again ? again.querySelector("[data-upload-progress]") : null;
      if (done) {
        var full = done.querySelector("progress");
        full.max = 1;
        full.value = 1;
        done.querySelector("[data-upload-cancel]").hidden = true;
        done.querySelector(".upload-said").textContent = "Upload complete: " + file.name + " (" + sizeText(file.size) + ").";
        done.hidden = false;
        again.querySelector('button[type="submit"]').focus();
      }
    });
    xhr.open("POST", form.action);
    xhr.responseType = "document";
    xhr.setRequestHeader("X-CSRF-Token", csrfToken());
    xhr.send(new FormData(form));
    return true;
  }

  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (event.defaultPrevented || !form.matches("form[data-upload]") || !window.FormData ||
        !("upload" in new XMLHttpRequest())) {
      return;
    }
    if (uploadWithProgress(form)) {
      event.preventDefault();
    }
  });

  function init(root) {
    initCopy(root);
    initWebAuthn(root);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", function () { init(document); });
  } else {
    init(document);
  }
  document.addEventListener("htmx:load", function (event) { init(event.detail.elt); });
})();
