// One waiting request as a card: the same facts as the desk's dialog, and its answers.
//
// A card is rebuilt from (request, draft) whenever either changes; the draft keeps what
// the person has typed or chosen on this card, so a rebuild loses nothing.

import { h } from "./dom.js";

export const DEFAULT_DENY = "Denied from the phone";
export const DEFAULT_DENY_STOP = "Denied from the phone, and the agent was told to stop";
export const DEFAULT_KEEP_PLANNING = "Keep planning.";

const LEVELS = { high: "High", medium: "Medium", low: "Low" };

let fieldCounter = 0;
const fieldId = (name) => `f${++fieldCounter}-${name}`;

/** A fresh draft: what the person typed or chose on a card, kept across rebuilds. */
export function newDraft() {
  return {
    reason: "", armed: false, picks: {}, other: {}, planMessage: "", status: null,
    group: fieldId("card"),  // the name of this card's radio groups, unique on the page
  };
}

function when(receivedAt) {
  const date = new Date(receivedAt);
  if (Number.isNaN(date.getTime())) return "";
  return date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
}

/** A question card shows its questions in full: a summary that only repeats one goes. */
function asksItsSummary(request) {
  return request.kind === "question"
    && (request.questions ?? []).some((question) => question.question === request.summary);
}

function header(request) {
  const session = request.session ?? {};
  const title = request.kind === "question" ? "Question"
    : request.kind === "plan" ? "Plan to approve" : request.tool;
  return h("header", { class: "card-head" },
    h("p", { class: `kind kind-${request.kind}`, text: title }),
    request.summary && !asksItsSummary(request)
      ? h("p", { class: "summary", text: request.summary }) : null,
    h("p", { class: "session" },
      h("span", { class: "session-name", text: session.name ?? "" }),
      h("span", { class: "sep", text: " · ", "aria-hidden": "true" }),
      h("span", { class: "host", text: session.host ?? "" }),
      h("span", { class: "sep", text: " · ", "aria-hidden": "true" }),
      h("time", { datetime: request.received_at, text: when(request.received_at) })),
    session.cwd ? h("p", { class: "cwd", text: session.cwd }) : null);
}

function coveredNote(request) {
  if (!request.covered_by) return null;
  return h("p", { class: "note covered" },
    `Covered by your new rule ${request.covered_by}, but the agent asked before it held `
    + "that rule, so nothing was allowed for you: you decide.");
}

function hiddenNote(request) {
  const hidden = request.hidden ?? [];
  if (hidden.length === 0) return null;
  return h("div", { class: "note hidden-chars", role: "note" },
    h("p", { text: "Hidden characters in this input (marked below):" }),
    h("ul", {}, hidden.map((mark) => h("li", { text: mark }))));
}

function findingsList(request) {
  const findings = request.findings ?? [];
  if (findings.length === 0) return null;
  return h("section", { class: "findings", "aria-label": "What to look at" },
    h("h3", { text: "What to look at" }),
    h("ul", {}, findings.map((finding) => h("li", { class: `finding level-${finding.level}` },
      h("span", { class: "level", text: LEVELS[finding.level] ?? finding.level }),
      h("span", { text: finding.text })))));
}

function inputView(request) {
  if (request.too_large) {
    return h("div", { class: "note too-large" },
      h("p", { text: `Too large — answer at the desk (${Number(request.size ?? 0)
        .toLocaleString()} bytes).` }),
      h("p", { class: "hint", text: "Allowing needs the desk, which shows the whole "
        + "input; you can still deny it here." }));
  }
  if (request.input === null || request.input === undefined) return null;
  return h("section", { class: "input", "aria-label": "Input" },
    h("h3", { text: "Input" }),
    h("pre", { class: "input-text", tabindex: "0", text: request.input }));
}

function statusLine(draft) {
  if (!draft.status) return null;
  const role = draft.status.state === "error" ? "alert" : "status";
  return h("p", { class: `card-status ${draft.status.state}`, role, text: draft.status.text });
}

function reasonField(draft, name, label, multiline = false) {
  const id = fieldId(name);
  const attributes = {
    id, "data-field": name, value: draft[name] ?? "", autocomplete: "off",
    oninput: (event) => { draft[name] = event.target.value; },
  };
  const field = multiline ? h("textarea", { ...attributes, rows: "3" }) : h("input", attributes);
  if (multiline) field.value = draft[name] ?? "";
  return h("div", { class: "field" }, h("label", { for: id, text: label }), field);
}

function denyGroup(request, draft, ctx) {
  return h("div", { class: "group deny" },
    reasonField(draft, "reason", "Reason (sent to the agent)"),
    h("button", {
      type: "button", class: "deny",
      onclick: () => ctx.send(request, "deny", { message: draft.reason.trim() || DEFAULT_DENY },
        "Denied"),
    }, "Deny"),
    stopButton(request, () => draft.reason, ctx));
}

function stopButton(request, typed, ctx) {
  return h("button", {
    type: "button", class: "deny stop",
    onclick: () => ctx.send(request, "deny_stop",
      { message: typed().trim() || DEFAULT_DENY_STOP }, "Denied and stopped"),
  }, "Deny and stop");
}

function sessionGrant(request, draft, ctx) {
  const suggestions = request.suggestions ?? [];
  if (suggestions.length === 0) return null;
  if (!draft.armed) {
    return h("button", {
      type: "button", class: "allow secondary",
      onclick: () => { draft.armed = true; ctx.rerender(request.id); },
    }, "Allow for this session…");
  }
  return h("div", { class: "grant", role: "group", "aria-label": "Allow for this session" },
    h("p", { text: "This allows the call and grants, for the rest of this session:" }),
    h("ul", { class: "rules" }, suggestions.map((rule) => h("li", {},
      h("code", { text: rule.rule }), h("span", { class: "scope", text: ` (${rule.scope})` })))),
    h("button", {
      type: "button", class: "allow",
      onclick: () => ctx.send(request, "allow_session",
        { rules: suggestions.map((rule) => rule.index) }, "Allowed for this session"),
    }, "Confirm: allow for this session"),
    h("button", {
      type: "button", class: "secondary",
      onclick: () => { draft.armed = false; ctx.rerender(request.id); },
    }, "Cancel"));
}

function toolActions(request, draft, ctx) {
  const allowed = !request.too_large;
  return [
    allowed ? h("div", { class: "group allow" },
      h("button", {
        type: "button", class: "allow",
        onclick: () => ctx.send(request, "allow", {}, "Allowed once"),
      }, "Allow once"),
      sessionGrant(request, draft, ctx)) : null,
    denyGroup(request, draft, ctx),
  ];
}

function chosen(draft, index) {
  const picks = [...(draft.picks[index] ?? [])];
  const other = (draft.other[index] ?? "").trim();
  if (picks.includes("\u0000other")) {
    picks.splice(picks.indexOf("\u0000other"), 1);
    if (other) picks.push(other);
  }
  return picks;
}

function optionRow(question, index, option, draft, update) {
  const id = fieldId(`q${index}`);
  const picks = draft.picks[index] ?? [];
  const input = h("input", {
    id, type: question.multi ? "checkbox" : "radio", name: `${draft.group}-q${index}`,
    checked: picks.includes(option.label),
    onchange: (event) => {
      const now = question.multi ? picks.filter((label) => label !== option.label) : [];
      if (event.target.checked) now.push(option.label);
      draft.picks[index] = now;
      update();
    },
  });
  return h("li", { class: "option" },
    h("label", { for: id }, input,
      h("span", { class: "option-text" },
        h("span", { class: "option-label", text: option.label }),
        option.description ? h("span", { class: "option-description", text: option.description })
          : null)),
    option.preview ? h("details", { class: "preview" },
      h("summary", { text: "Preview" }), h("pre", { text: option.preview })) : null);
}

function otherRow(question, index, draft, update) {
  const option = { label: "\u0000other" };
  const row = optionRow(question, index, option, draft, update);
  const label = row.querySelector(".option-label");
  label.textContent = "Other:";
  const textId = fieldId(`other${index}`);
  row.append(h("input", {
    id: textId, class: "other-text", "data-field": `other${index}`, autocomplete: "off",
    "aria-label": `Your own answer to: ${question.question}`, value: draft.other[index] ?? "",
    oninput: (event) => {
      draft.other[index] = event.target.value;
      const picks = draft.picks[index] ?? [];
      if (!picks.includes(option.label)) {
        draft.picks[index] = question.multi ? [...picks, option.label] : [option.label];
        row.querySelector("input[type=radio], input[type=checkbox]").checked = true;
      }
      update();
    },
  }));
  return row;
}

function questionActions(request, draft, ctx) {
  const questions = request.questions ?? [];
  const submit = h("button", { type: "button", class: "allow" }, "Send answers");
  const update = () => {
    submit.disabled = !questions.every((_, index) => chosen(draft, index).length > 0);
  };
  submit.addEventListener("click", () => {
    const answers = {};
    questions.forEach((question, index) => { answers[question.question] = chosen(draft, index); });
    ctx.send(request, "answer", { answers }, "Answered");
  });
  const blocks = questions.map((question, index) => h("fieldset", { class: "question" },
    h("legend", { text: question.header || `Question ${index + 1}` }),
    h("p", { class: "question-text", text: question.question }),
    question.multi ? h("p", { class: "hint", text: "Choose one or more." }) : null,
    h("ul", { class: "options" },
      (question.options ?? []).map((option) => optionRow(question, index, option, draft, update)),
      otherRow(question, index, draft, update))));
  update();
  return [...blocks, h("div", { class: "group allow" }, submit), denyGroup(request, draft, ctx)];
}

function planActions(request, draft, ctx) {
  return [
    h("section", { class: "plan", "aria-label": "Plan" },
      h("pre", { class: "plan-text", tabindex: "0", text: request.plan ?? "" })),
    h("div", { class: "group allow" },
      h("button", {
        type: "button", class: "allow",
        onclick: () => ctx.send(request, "approve_plan", {}, "Plan approved"),
      }, "Approve plan")),
    h("div", { class: "group deny" },
      reasonField(draft, "planMessage", "What to change (sent to the agent)", true),
      h("button", {
        type: "button", class: "secondary",
        onclick: () => ctx.send(request, "keep_planning",
          { message: draft.planMessage.trim() || DEFAULT_KEEP_PLANNING }, "Sent back"),
      }, "Keep planning"),
      stopButton(request, () => draft.planMessage, ctx)),
  ];
}

const CARD_NAME_CHARS = 100;

/** What a screen reader calls the card: what it asks, not only its kind. */
function cardName(request) {
  const what = request.kind === "question" ? request.questions?.[0]?.question
    : request.kind === "plan" ? null : request.summary;
  const title = request.kind === "question" ? "Question"
    : request.kind === "plan" ? "Plan to approve" : request.tool;
  const name = what ? `${title}: ${what}` : title;
  return name.length > CARD_NAME_CHARS ? `${name.slice(0, CARD_NAME_CHARS - 1)}…` : name;
}

/**
 * The card of `request`. `ctx` gives send(request, decision, content, label),
 * rerender(id) and `connected`; without a connection (or while an answer is on its way)
 * every control is disabled, so nothing looks answerable that cannot be answered.
 */
export function requestCard(request, draft, ctx) {
  const actions = request.kind === "question" ? questionActions(request, draft, ctx)
    : request.kind === "plan" ? planActions(request, draft, ctx)
      : toolActions(request, draft, ctx);
  const busy = draft.status?.state === "sending" || draft.status?.state === "sent";
  return h("li", { class: `card card-${request.kind}`, "data-request-id": request.id },
    h("article", { "aria-label": cardName(request) },
      header(request),
      coveredNote(request),
      hiddenNote(request),
      findingsList(request),
      request.kind === "tool" ? inputView(request) : null,
      statusLine(draft),
      h("fieldset", { class: "actions", disabled: !ctx.connected || busy }, actions)));
}
