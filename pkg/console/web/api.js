// The console's client of the Kubernetes API, which it reaches through the
// gateway as the logged-in user: every request carries the session cookie,
// and those that change state the session's CSRF token.
import { useEffect, useState } from 'preact/hooks';
import { cfg } from './ui.js';

let csrfToken = '';

// ApiError is a refused request: the API server's message, and its
// details (causes name the fields).
export class ApiError extends Error {
  constructor(status, message, details) {
    super(message);
    this.status = status;
    this.details = details;
  }
}

// loginAgain sends the browser to log in, and back here afterwards.
export function loginAgain() {
  location.assign(cfg.loginPath + '?rd=' + encodeURIComponent(location.pathname + location.search));
}

async function failure(res) {
  let message = `${res.status} ${res.statusText}`;
  let details;
  const text = await res.text().catch(() => '');
  try {
    const status = JSON.parse(text);
    if (status.message) message = status.message;
    details = status.details;
  } catch {
    if (text.trim()) message = text.trim();
  }
  if (res.status === 401) loginAgain();
  return new ApiError(res.status, message, details);
}

// getSession returns the login session: the user, their groups and the
// CSRF token. Without one, the browser goes to log in.
export async function getSession() {
  const res = await fetch(cfg.sessionPath, { credentials: 'same-origin', cache: 'no-store' });
  if (!res.ok) throw await failure(res);
  const s = await res.json();
  csrfToken = s.csrfToken;
  return s;
}

// getProjects returns the user's projects with their scopes.
export async function getProjects() {
  const res = await fetch(cfg.projectsPath, { credentials: 'same-origin', cache: 'no-store' });
  if (!res.ok) throw await failure(res);
  return (await res.json()).items;
}

// apiPath is the API path of kind's objects in namespace ns, of one of
// them, or of a subresource of it.
export function apiPath(kind, ns, name, sub) {
  let p = kind.group ? `/apis/${kind.group}/${kind.version}` : `/api/${kind.version}`;
  if (ns) p += `/namespaces/${encodeURIComponent(ns)}`;
  p += `/${kind.resource}`;
  if (name) p += `/${encodeURIComponent(name)}`;
  if (sub) p += `/${sub}`;
  return p;
}

function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) if (v !== undefined && v !== '') q.set(k, v);
  const s = q.toString();
  return s ? '?' + s : '';
}

// request sends a request to the Kubernetes API and returns its JSON.
export async function request(method, path, body, contentType = 'application/json') {
  const headers = { Accept: 'application/json' };
  if (method !== 'GET') headers[cfg.csrfHeader] = csrfToken;
  if (body !== undefined) headers['Content-Type'] = contentType;
  const res = await fetch(cfg.kubernetesPath + path, {
    method,
    headers,
    credentials: 'same-origin',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw await failure(res);
  return res.status === 204 ? null : res.json();
}

export const createObject = (kind, ns, obj, dryRun = false) =>
  request('POST', apiPath(kind, ns) + query({ dryRun: dryRun ? 'All' : '', fieldValidation: 'Strict' }), obj);

export const deleteObject = (kind, ns, name) =>
  request('DELETE', apiPath(kind, ns, name), { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background' });

export const patchObject = (kind, ns, name, patch) =>
  request('PATCH', apiPath(kind, ns, name), patch, 'application/merge-patch+json');

// streamLines calls onLine for each line of a streamed response (a watch,
// followed logs) until signal aborts or the stream ends.
async function streamLines(url, signal, onLine) {
  const res = await fetch(cfg.kubernetesPath + url, { credentials: 'same-origin', signal, cache: 'no-store' });
  if (!res.ok) throw await failure(res);
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += value;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      onLine(buf.slice(0, i));
      buf = buf.slice(i + 1);
    }
  }
  if (buf) onLine(buf);
}

const sleep = (ms, signal) =>
  new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => { clearTimeout(t); resolve(); }, { once: true });
  });

// multiplexed tells whether the page came over HTTP/2 or HTTP/3, where its
// watches share one connection as streamed responses. Over HTTP/1.1 (the
// gateway's own), a browser opens at most six connections to a host and a
// streamed watch would hold one: there the watches go over WebSockets,
// which that limit does not count (the API server sends one event a
// message). Where no WebSocket gets through (a proxy in front that passes
// no upgrades), the lists poll.
const multiplexed = /^h[23]/.test((performance.getEntriesByType('navigation')[0] || {}).nextHopProtocol || '');
const pollInterval = 5000;

// NoSocket is a watch's WebSocket that never opened.
class NoSocket extends Error {}

// socketEvents calls onEvent for each event of a watch served over a
// WebSocket, until signal aborts or the socket closes.
function socketEvents(path, signal, onEvent) {
  return new Promise((resolve, reject) => {
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const ws = new WebSocket(`${scheme}//${location.host}${cfg.kubernetesPath}${path}`);
    ws.binaryType = 'arraybuffer';
    const decoder = new TextDecoder();
    let opened = false;
    let failed = null;
    const abort = () => ws.close();
    signal.addEventListener('abort', abort, { once: true });
    ws.onopen = () => { opened = true; };
    ws.onmessage = (e) => {
      try {
        onEvent(JSON.parse(typeof e.data === 'string' ? e.data : decoder.decode(e.data)));
      } catch (err) {
        failed = err;
        ws.close();
      }
    };
    ws.onclose = () => {
      signal.removeEventListener('abort', abort);
      if (failed) reject(failed);
      else if (opened || signal.aborted) resolve();
      else reject(new NoSocket('the watch\'s WebSocket did not open'));
    };
  });
}

// watchList keeps onState({items, loading, error}) current with the
// objects of kind in ns that opts' selectors pick: one list, served by
// the API server's watch cache, then a watch, resumed from the last
// version seen, and listed anew only when the API server has forgotten
// that version. It returns the function that stops it.
export function watchList(kind, ns, opts, onState) {
  const ctl = new AbortController();
  const { signal } = ctl;
  const selectors = { labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector };
  const items = new Map();
  const publish = (error = null) =>
    onState({ items: [...items.values()], loading: false, error });
  (async () => {
    let rv = '';
    let backoff = 1000;
    let transport = multiplexed ? 'stream' : 'socket';
    while (!signal.aborted) {
      try {
        if (!rv) {
          const list = await request('GET', apiPath(kind, ns) + query({ ...selectors, resourceVersion: '0' }));
          items.clear();
          for (const o of list.items) {
            o.kind = o.kind || kind.kind;
            o.apiVersion = o.apiVersion || (kind.group ? `${kind.group}/${kind.version}` : kind.version);
            items.set(o.metadata.uid, o);
          }
          rv = list.metadata.resourceVersion;
          publish();
        }
        if (transport === 'poll') {
          await sleep(pollInterval, signal);
          rv = '';
          continue;
        }
        let gone = false;
        const onEvent = (ev) => {
          if (ev.type === 'ERROR') {
            if (ev.object && ev.object.code === 410) gone = true;
            return;
          }
          rv = ev.object.metadata.resourceVersion;
          if (ev.type === 'BOOKMARK') return;
          if (ev.type === 'DELETED') items.delete(ev.object.metadata.uid);
          else items.set(ev.object.metadata.uid, ev.object);
          publish();
        };
        const path = apiPath(kind, ns) + query({ ...selectors, watch: '1', resourceVersion: rv, allowWatchBookmarks: 'true' });
        const started = Date.now();
        if (transport === 'stream') await streamLines(path, signal, (line) => line.trim() && onEvent(JSON.parse(line)));
        else await socketEvents(path, signal, onEvent);
        if (gone) rv = '';
        // A watch that ends at once (a proxy that closes it) is retried
        // later and later, not at once.
        if (Date.now() - started < 1000) {
          await sleep(backoff, signal);
          backoff = Math.min(backoff * 2, 30000);
        } else {
          backoff = 1000;
        }
      } catch (err) {
        if (signal.aborted) return;
        if (err instanceof NoSocket) {
          transport = 'poll';
          continue;
        }
        if (err instanceof ApiError && err.status === 410) rv = '';
        publish(err);
        await sleep(backoff, signal);
        backoff = Math.min(backoff * 2, 30000);
      }
    }
  })();
  return () => ctl.abort();
}

// useList is watchList as a hook: the objects of each kind of kinds in ns,
// merged.
export function useList(kinds, ns, opts = {}) {
  const [state, setState] = useState({ items: [], loading: true, error: null });
  const key = kinds.map((k) => k.key).join(',') + '|' + ns + '|' + (opts.labelSelector || '') + '|' + (opts.fieldSelector || '');
  useEffect(() => {
    if (!ns) return undefined;
    const per = new Map();
    setState({ items: [], loading: true, error: null });
    const stops = kinds.map((k) =>
      watchList(k, ns, opts, (s) => {
        per.set(k.key, s);
        const all = [...per.values()];
        setState({
          items: all.flatMap((x) => x.items),
          loading: per.size < kinds.length,
          error: all.find((x) => x.error)?.error || null,
        });
      }),
    );
    return () => stops.forEach((stop) => stop());
  }, [key]);
  return state;
}

// followLog calls onText with a container's log as it comes, until signal
// aborts or the container ends.
export function followLog(ns, pod, container, follow, signal, onText) {
  const p = `/api/v1/namespaces/${encodeURIComponent(ns)}/pods/${encodeURIComponent(pod)}/log` +
    query({ container, follow: follow ? 'true' : '', tailLines: '2000' });
  return streamLines(p, signal, (line) => onText(line + '\n'));
}
