// The phone page of Qoder Desktop's Away mode: pairs this phone with the desk, then shows
// the desk's waiting requests and sends this phone's signed answers over one WebSocket.
// Protocol: docs/AWAY-PROTOCOL.md. Nothing here is trusted by the desk on its own: every
// answer is signed by this phone's non-extractable key and checked there.

import { newDraft, requestCard } from "./cards.js";
import { fill, h } from "./dom.js";
import {
  b64url, forgetPhone, loadPhone, makeKey, pairingCode, phoneName, savePhone, signed,
} from "./keys.js";

const BACKOFF_S = [0.5, 1, 2, 4, 8, 15];
const NOT_CONNECTED = "Not connected — requests will not reach this phone until it reconnects.";
const RESULT_TEXT = {
  "unknown request": "The desk no longer has this request.",
  "bad signature": "Refused: the desk could not verify this phone's signature.",
  "stale nonce": "Refused: this answer was out of date.",
  revoked: "Refused: revoked — this phone may no longer answer.",
  clock: "Refused: this phone's clock is more than 10 minutes off the desk's.",
  invalid: "Refused: the desk could not read this answer.",
};

const REFUSED_TEXT = {
  "unknown device": "The desk does not know this phone (it may have been removed there). "
    + "Pair it again from the desk.",
  "bad signature": "The desk could not verify this phone's key.",
  clock: "This phone's clock is more than 10 minutes off the desk's. Correct it, then try again.",
  "too slow": "This phone took too long to sign in.",
  invalid: "The desk could not read this phone's sign-in.",
};

const state = {
  phone: null,           // this phone's record in IndexedDB (key, device or pairing id)
  socket: null,
  connected: false,      // authenticated on the current socket
  closing: false,        // this page closed the socket on purpose (revoked, refused)
  pairingRefused: false,
  desk: "",
  screen: "loading",
  requests: new Map(),   // id → the desk's Request
  drafts: new Map(),     // id → what the person typed or chose on its card
  cards: new Map(),      // id → its card element
  sentHere: new Map(),   // id → what this phone answered ("Allowed once")
  goneBy: new Map(),     // id → who answered it, for a late result
  goneAwaiting: new Map(),  // id → {title, by}: answered while this phone's answer was on its way
  attempt: 0,
  retryTimer: null,
};

const main = () => document.getElementById("main");

// ---- notices and the connection banner -------------------------------------------

function notice(text, kind = "info") {
  const list = document.getElementById("notices");
  const item = h("li", { class: `notice ${kind}`, text });
  list.prepend(item);
  while (list.children.length > 4) list.lastElementChild.remove();
  setTimeout(() => item.remove(), 12000);
}

function setBanner(text, offerReconnect) {
  const banner = document.getElementById("connection");
  banner.hidden = text === null;
  banner.classList.toggle("down", offerReconnect);
  document.getElementById("connection-text").textContent = text ?? "";
  document.getElementById("reconnect-now").hidden = !offerReconnect;
}

function showCount() {
  const count = state.requests.size;
  const label = document.getElementById("waiting-count");
  label.textContent = state.screen !== "requests" ? ""
    : count === 0 ? "Nothing waiting" : count === 1 ? "1 waiting" : `${count} waiting`;
  document.title = count && state.screen === "requests" ? `(${count}) Qoder Desk` : "Qoder Desk";
}

// ---- screens ------------------------------------------------------------------------

function screen(name, ...children) {
  state.screen = name;
  main().dataset.screen = name;
  fill(main(), ...children);
  showCount();
}

function panel(title, ...lines) {
  return h("section", { class: "panel" }, h("h2", { text: title }),
    lines.map((line) => (typeof line === "string" ? h("p", { text: line }) : line)));
}

function showInsecure() {
  screen("insecure", panel("This page is not secure here",
    "It must be opened over HTTPS that this phone trusts, so that it can make and use its "
    + "own key. Install the desk's certificate as the desk's Away settings explain, then "
    + "scan the pairing code again."));
}

function showUnpaired(why) {
  screen("unpaired", panel("This phone is not paired",
    why ?? "On the desk, open Settings → Devices → Pair a phone, and scan the code it shows."));
}

function showPairing(code, deskCode, waiting) {
  const mismatch = deskCode && deskCode !== code;
  screen("pairing", h("section", { class: "panel pairing" },
    h("h2", { text: "Pair this phone" }),
    h("p", { text: "Check that the desk shows the same code, then confirm there." }),
    h("p", { class: "code", id: "pairing-code", "aria-label": "Pairing code", text: code }),
    mismatch ? h("p", { class: "note danger", role: "alert",
      text: `The desk reported another code (${deskCode}): something between this phone and `
        + "the desk changed the request. Do not confirm; refuse it at the desk." }) : null,
    h("p", { class: "hint", text: waiting ? "Waiting for you to confirm at the desk…"
      : "Connecting to the desk…" })));
}

function showRevoked() {
  screen("revoked", panel("This device was revoked",
    "The desk no longer accepts answers from this phone, and the phone has deleted its key. "
    + "To use it again, pair it anew from the desk."));
}

function showPairingRefused() {
  screen("refused", panel("Pairing refused",
    "The desk refused to pair this phone, and its key was deleted. To try again, make a "
    + "new pairing code at the desk."));
}

function showRefused(reason) {
  const pairing = !state.phone?.deviceId;
  const text = pairing && reason === "unknown device"
    ? "The desk no longer waits for this pairing (it ended, or was confirmed before this "
      + "phone reconnected). Remove this phone from the desk's devices if it is listed, "
      + "then pair again."
    : REFUSED_TEXT[reason] ?? `The desk said: ${reason || "not accepted"}.`;
  screen("refused", panel("The desk refused this phone", text,
    h("div", { class: "group" },
      h("button", { type: "button", class: "secondary", onclick: () => connect() }, "Try again"),
      h("button", {
        type: "button", class: "deny",
        onclick: async () => { await forget(); showUnpaired(); },
      }, "Forget this phone's key"))));
}

function showRequests() {
  if (state.screen === "requests") return;
  state.cards.clear();
  screen("requests",
    h("p", { class: "empty panel", id: "empty", text: "Nothing is waiting for an answer." }),
    h("ol", { class: "requests", id: "requests", "aria-label": "Waiting requests" }));
  renderList();
}

// ---- the request list ---------------------------------------------------------------

const cardContext = {
  get connected() { return state.connected; },
  send: (request, decision, content, label) => answer(request, decision, content, label),
  rerender: (id) => rerenderCard(id),
};

function draftOf(id) {
  if (!state.drafts.has(id)) state.drafts.set(id, newDraft());
  return state.drafts.get(id);
}

function buildCard(id) {
  return requestCard(state.requests.get(id), draftOf(id), cardContext);
}

function rerenderCard(id) {
  const old = state.cards.get(id);
  if (!old || !state.requests.has(id)) return;
  const active = old.contains(document.activeElement) ? document.activeElement : null;
  const field = active?.dataset.field;
  const selection = field ? [active.selectionStart, active.selectionEnd] : null;
  const card = buildCard(id);
  old.replaceWith(card);
  state.cards.set(id, card);
  const again = field ? card.querySelector(`[data-field="${field}"]`) : null;
  if (again) {
    again.focus();
    if (selection[0] !== null) again.setSelectionRange(...selection);
  }
}

function newestFirst(a, b) {
  const byTime = Date.parse(b.received_at) - Date.parse(a.received_at);
  return byTime || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
}

function renderList() {
  showCount();
  const list = document.getElementById("requests");
  if (!list) return;
  const empty = document.getElementById("empty");
  empty.hidden = state.requests.size > 0;
  empty.textContent = state.connected ? "Nothing is waiting for an answer."
    : "Not connected to the desk yet: nothing to show.";
  for (const [id, card] of state.cards) {
    if (!state.requests.has(id)) {
      card.remove();
      state.cards.delete(id);
    }
  }
  let previous = null;
  for (const request of [...state.requests.values()].sort(newestFirst)) {
    let card = state.cards.get(request.id);
    if (!card) {
      card = buildCard(request.id);
      state.cards.set(request.id, card);
    }
    const wanted = previous ? previous.nextSibling : list.firstChild;
    if (wanted !== card) list.insertBefore(card, wanted);
    previous = card;
  }
}

function rerenderAll() {
  for (const id of state.cards.keys()) rerenderCard(id);
}

function setRequest(request) {
  state.requests.set(request.id, request);
  if (state.cards.has(request.id)) rerenderCard(request.id);
  renderList();
}

function dropRequest(id) {
  state.requests.delete(id);
  state.drafts.delete(id);
  renderList();
}

function titleOf(request) {
  if (!request) return "A request";
  if (request.kind === "question") return "A question";
  if (request.kind === "plan") return "A plan";
  return request.summary ? `${request.tool}: ${request.summary}` : request.tool;
}

// ---- answering --------------------------------------------------------------------------

async function answer(request, decision, content, label) {
  const draft = draftOf(request.id);
  if (!state.connected || !state.phone?.deviceId) return;
  draft.status = { state: "sending", text: "Sending…" };
  rerenderCard(request.id);
  const frame = await signed(state.phone.privateKey, [
    "qoder-desktop answer v1", request.id, request.nonce, decision, content,
    state.phone.deviceId, Date.now(),
  ]);
  if (!state.connected || state.socket?.readyState !== WebSocket.OPEN) {
    draft.status = { state: "error", text: "Not sent: the connection to the desk dropped." };
    rerenderCard(request.id);
    return;
  }
  state.sentHere.set(request.id, label);
  state.socket.send(JSON.stringify({ type: "answer", ...frame }));
}

function onResult(message) {
  if (message.id === null || message.id === undefined) {
    // The desk could not read which request it was for (an answer it could not verify):
    // every answer still on its way from this phone was not taken.
    const text = RESULT_TEXT[message.reason] ?? `Refused: ${message.reason}.`;
    for (const [id, draft] of state.drafts) {
      if (draft.status?.state !== "sending") continue;
      state.sentHere.delete(id);
      draft.status = { state: "error", text };
      rerenderCard(id);
    }
    notice(text, "error");
    return;
  }
  const draft = state.drafts.get(message.id);
  const gone = state.goneAwaiting.get(message.id);  // it left the list before its result
  state.goneAwaiting.delete(message.id);
  const mine = state.sentHere.get(message.id);
  state.sentHere.delete(message.id);
  const title = gone?.title ?? titleOf(state.requests.get(message.id));
  if (message.ok) {
    if (gone) {
      notice(`${title}: ${mine ?? "Answered"} from this phone.`, "done");
    } else if (draft && state.requests.has(message.id)) {
      draft.status = { state: "sent", text: `${mine ?? "Answered"} — the desk accepted it.` };
      rerenderCard(message.id);
    }
    return;
  }
  let text = RESULT_TEXT[message.reason] ?? `Refused: ${message.reason}.`;
  if (message.reason === "already answered") {
    const by = gone?.by ?? state.goneBy.get(message.id);
    text = by && by !== "the desk" ? `Already answered by ${by}.`
      : "Already answered at the desk.";
  }
  if (draft && state.requests.has(message.id)) {
    draft.status = { state: "error", text };
    rerenderCard(message.id);
  } else {
    notice(`${title}: ${text}`, "error");
  }
}

function onGone(message) {
  const request = state.requests.get(message.id);
  const title = titleOf(request);
  state.goneBy.set(message.id, message.by);
  if (state.goneBy.size > 500) state.goneBy.delete(state.goneBy.keys().next().value);
  dropRequest(message.id);
  if (message.why === "withdrawn") {
    notice(`${title}: withdrawn by the agent.`);
  } else if (message.why === "timed_out") {
    notice(`${title}: timed out.`);
  } else if (state.sentHere.has(message.id)) {
    // This phone's answer is on its way: its result says whether it was the one that won.
    state.goneAwaiting.set(message.id, { title, by: message.by });
  } else if (request) {
    notice(`${title}: answered ${message.by ? `by ${message.by}` : "at the desk"}.`);
  }
}

// ---- the connection -------------------------------------------------------------------

function scheduleReconnect() {
  clearTimeout(state.retryTimer);
  const base = BACKOFF_S[Math.min(state.attempt, BACKOFF_S.length - 1)];
  const delay = base * (1 + Math.random() * 0.2);
  state.attempt += 1;
  setBanner(`${NOT_CONNECTED} Trying again in ${Math.ceil(delay)} s.`, true);
  state.retryTimer = setTimeout(connect, delay * 1000);
}

function connect() {
  clearTimeout(state.retryTimer);
  if (state.socket || !state.phone) return;
  state.closing = false;
  state.pairingRefused = false;
  const socket = new WebSocket(`wss://${location.host}/ws`);
  state.socket = socket;
  if (!state.connected && state.attempt === 0) setBanner("Connecting to the desk…", false);
  socket.addEventListener("message", (event) => {
    if (socket === state.socket) onMessage(event.data);
  });
  socket.addEventListener("close", (event) => {
    if (socket === state.socket) onClose(event);
  });
}

function onClose(event) {
  state.socket = null;
  const wasConnected = state.connected;
  state.connected = false;
  if (state.closing) return;
  if (event.code === 4403) {
    if (state.pairingRefused || !state.phone?.deviceId) {
      forget().then(showPairingRefused);
    } else {
      revoked();
    }
    return;
  }
  if (event.code === 4401) {
    setBanner(null, false);
    showRefused(state.refusedReason);
    return;
  }
  if (wasConnected) {
    rerenderAll();
    renderList();
  }
  scheduleReconnect();
}

async function authenticate(challenge) {
  const phone = state.phone;
  const id = phone.deviceId ?? phone.pairingId;
  const frame = await signed(phone.privateKey, ["qoder-desktop auth v1", challenge, id, Date.now()]);
  state.socket?.send(JSON.stringify({ type: "auth", ...frame }));
}

async function onPaired(message) {
  state.phone = { ...state.phone, deviceId: message.device_id, pairingId: null, name: message.name };
  await savePhone(state.phone);
  notice(`Paired as “${message.name}”.`, "done");
}

function onSnapshot(requests) {
  state.connected = true;
  state.attempt = 0;
  setBanner(null, false);
  state.requests = new Map(requests.map((request) => [request.id, request]));
  for (const id of state.drafts.keys()) {
    if (!state.requests.has(id)) state.drafts.delete(id);
    else if (state.drafts.get(id).status?.state !== "error") state.drafts.get(id).status = null;
  }
  if (state.screen === "requests") {
    renderList();
    rerenderAll();
  } else {
    showRequests();
  }
}

function onMessage(data) {
  let message;
  try {
    message = JSON.parse(data);
  } catch {
    return;
  }
  switch (message.type) {
    case "hello":
      state.desk = message.desk ?? "";
      document.getElementById("desk-name").textContent = state.desk || "Qoder Desk";
      authenticate(message.challenge);
      break;
    case "pairing":
      if (message.state === "waiting") {
        setBanner(null, false);
        showPairing(state.phone.code, message.code, true);
      }
      else if (message.state === "refused") state.pairingRefused = true;
      break;
    case "paired":
      onPaired(message);
      break;
    case "refused":
      state.refusedReason = message.reason;
      break;
    case "revoked":
      revoked();
      break;
    case "snapshot":
      onSnapshot(message.requests ?? []);
      break;
    case "added":
    case "updated":
      if (message.type === "added") navigator.vibrate?.(60);
      setRequest(message.request);
      break;
    case "gone":
      onGone(message);
      break;
    case "result":
      onResult(message);
      break;
    default:
      break;
  }
}

async function forget() {
  state.phone = null;
  state.requests.clear();
  state.drafts.clear();
  await forgetPhone();
}

function revoked() {
  state.closing = true;
  state.connected = false;
  clearTimeout(state.retryTimer);
  state.socket?.close();
  state.socket = null;
  setBanner(null, false);
  forget().then(showRevoked);
}

// ---- pairing ----------------------------------------------------------------------------

const PAIR_ERRORS = {
  403: "This pairing code was already used or has expired. Make a new one at the desk.",
  429: "Too many pairing attempts. Wait a minute, then make a new code at the desk.",
  400: "The desk could not read this pairing request.",
};

async function pair(token) {
  showPairing("…", null, false);
  const key = await makeKey();
  const name = phoneName(navigator.userAgent);
  const code = await pairingCode(token, key.spki);
  showPairing(code, null, false);
  let response;
  try {
    response = await fetch("/api/pair", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ token, public_key: b64url(key.spki), name }),
      credentials: "omit",
      cache: "no-store",
    });
  } catch {
    showUnpaired("Could not reach the desk. Check that Away mode is on and this phone is on "
      + "the network the desk listens on, then scan the code again.");
    return;
  }
  if (!response.ok) {
    showUnpaired(PAIR_ERRORS[response.status] ?? `The desk refused the pairing (${response.status}).`);
    return;
  }
  const body = await response.json();
  if (state.socket) {
    state.closing = true;
    state.socket.close();
    state.socket = null;
  }
  await forgetPhone();  // a phone paired before is replaced by this pairing
  state.phone = {
    privateKey: key.privateKey, spki: key.spki, name,
    pairingId: body.pairing_id, deviceId: null, code,
  };
  await savePhone(state.phone);
  showPairing(code, body.code, false);
  state.attempt = 0;
  connect();
}

// ---- start ------------------------------------------------------------------------------

async function start() {
  document.getElementById("reconnect-now").addEventListener("click", () => {
    state.attempt = 0;
    connect();
  });
  if (!window.isSecureContext || !window.crypto?.subtle || !window.indexedDB) {
    showInsecure();
    return;
  }
  const retryNow = () => {
    if (!state.socket && state.phone && !state.closing && state.screen !== "refused") {
      state.attempt = 0;
      connect();
    }
  };
  window.addEventListener("online", retryNow);
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible") retryNow();
  });
  const token = new URLSearchParams(location.hash.slice(1)).get("pair");
  if (token) {
    history.replaceState(null, "", location.pathname);  // the token leaves the address bar
    await pair(token);
    return;
  }
  state.phone = await loadPhone();
  if (!state.phone) {
    showUnpaired();
    return;
  }
  if (state.phone.deviceId) {
    showRequests();
  } else {
    showPairing(state.phone.code, null, false);
  }
  connect();
}

start();
