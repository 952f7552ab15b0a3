// Building elements without ever parsing markup: every text goes in as a text node
// (textContent), so nothing the agent or the desk sends can become HTML or script.

/**
 * A new element: h("button", {class: "allow", onclick: fn}, "Allow once").
 * Attributes named on… become listeners, `text` sets textContent, booleans set the
 * property (disabled, checked, hidden); children are elements or strings (text nodes).
 */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined) continue;
    if (name === "class") element.className = value;
    else if (name === "text") element.textContent = value;
    else if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
    else if (typeof value === "boolean") element[name] = value;
    else element.setAttribute(name, String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child);  // a string becomes a text node, never markup
  }
  return element;
}

/** Replace everything inside `parent` with `children`. */
export function fill(parent, ...children) {
  parent.replaceChildren(...children.flat().filter((child) => child !== null && child !== false));
}
