// Shared pieces of the console's pages: templates, routing, toasts and
// the small components every page uses.
import { h } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import htm from 'htm';

export const html = htm.bind(h);

// cfg is the server's configuration of this console (package console's
// Config).
export const cfg = JSON.parse(document.getElementById('console-config').textContent);

// Routing: the path under the console's prefix is the page, so every page
// is a link that can be shared.
const routeListeners = new Set();

function currentRoute() {
  const p = location.pathname;
  return (p.startsWith(cfg.prefix) ? p.slice(cfg.prefix.length) : '') + location.search;
}

export function navigate(to, replace = false) {
  history[replace ? 'replaceState' : 'pushState'](null, '', cfg.prefix + to);
  routeListeners.forEach((f) => f());
}

window.addEventListener('popstate', () => routeListeners.forEach((f) => f()));

export function useRoute() {
  const [route, setRoute] = useState(currentRoute());
  useEffect(() => {
    const f = () => setRoute(currentRoute());
    routeListeners.add(f);
    return () => routeListeners.delete(f);
  }, []);
  return route;
}

export function Link({ to, children, ...rest }) {
  const click = (e) => {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(to);
  };
  return html`<a href=${cfg.prefix + to} onClick=${click} ...${rest}>${children}</a>`;
}

// Toasts report the outcome of an action at the bottom right.
let pushToast = () => {};

export function toast(message, kind = 'info') {
  pushToast({ message, kind });
}

export function Toasts() {
  const [items, setItems] = useState([]);
  useEffect(() => {
    pushToast = (t) => {
      setItems((xs) => [...xs, t]);
      setTimeout(() => setItems((xs) => xs.filter((x) => x !== t)), 6000);
    };
  }, []);
  return html`<div class="toasts">${items.map((t) => html`<div class=${'toast ' + t.kind} role="status">${t.message}</div>`)}</div>`;
}

// field reads a dotted path such as .status.phase from obj; a dot that is
// part of a key is escaped as "\.".
export function field(obj, path) {
  const keys = path.replace(/^\./, '').split(/(?<!\\)\./).map((k) => k.replace(/\\\./g, '.'));
  let v = obj;
  for (const k of keys) {
    if (v == null) return undefined;
    v = v[k];
  }
  return v;
}

// age is how long ago a timestamp was, as kubectl writes it.
export function age(ts, now = Date.now()) {
  if (!ts) return '';
  const s = Math.max(0, Math.floor((now - Date.parse(ts)) / 1000));
  if (s < 120) return s + 's';
  const m = Math.floor(s / 60);
  if (m < 120) return m + 'm';
  const hrs = Math.floor(m / 60);
  if (hrs < 48) return hrs + 'h';
  return Math.floor(hrs / 24) + 'd';
}

// useNow re-renders its component every interval, for ages.
export function useNow(interval = 10000) {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), interval);
    return () => clearInterval(t);
  }, [interval]);
  return now;
}

const phaseClass = {
  Running: 'ok', Succeeded: 'ok', Ready: 'ok', Bound: 'ok', Active: 'ok', True: 'ok',
  Failed: 'bad', Error: 'bad', Lost: 'bad', False: 'bad',
  Pending: 'wait', Created: 'wait', Unknown: 'wait', Suspended: 'wait', Paused: 'wait',
};

export function Phase({ value }) {
  if (value === undefined || value === null || value === '') return html`<span class="muted">—</span>`;
  const text = String(value);
  return html`<span class=${'phase ' + (phaseClass[text] || '')}>${text}</span>`;
}

export function Loading({ what }) {
  return html`<p class="state loading" aria-busy="true">Loading ${what}…</p>`;
}

export function Empty({ children }) {
  return html`<p class="state empty">${children}</p>`;
}

export function ErrorBox({ error }) {
  if (!error) return null;
  return html`<p class="state error" role="alert">${error.message || String(error)}</p>`;
}

// Tabs shows one of its tabs, chosen by a query parameter so that a tab
// can be linked to.
export function Tabs({ tabs, active, onSelect }) {
  return html`<nav class="tabs" role="tablist">${tabs.map(
    ([key, label]) => html`<button role="tab" aria-selected=${key === active} class=${key === active ? 'active' : ''} onClick=${() => onSelect(key)}>${label}</button>`,
  )}</nav>`;
}
