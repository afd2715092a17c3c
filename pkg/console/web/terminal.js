// The terminal of a Pod's container: a shell started by the Kubernetes
// exec API over a WebSocket through the gateway, as the logged-in user (the
// API server's RBAC decides: create on pods/exec), drawn by xterm.js.
import { useEffect, useRef, useState } from 'preact/hooks';
import { Terminal } from '@xterm/xterm';
import { FitAddon } from '@xterm/addon-fit';
import { apiPath } from './api.js';
import { byKey } from './kinds.js';
import { cfg, Empty, html } from './ui.js';

// The channels of the exec protocol: each binary message starts with its
// channel's byte.
const STDIN = 0;
const STDOUT = 1;
const STDERR = 2;
const ERROR = 3;
const RESIZE = 4;

// shell starts bash where the image has it, else sh.
const shell = ['sh', '-c', 'if command -v bash >/dev/null 2>&1; then exec bash; else exec sh; fi'];

// execURL is the WebSocket URL of a shell in container of pod.
export function execURL(project, pod, container) {
  const q = new URLSearchParams({ container, stdin: 'true', stdout: 'true', stderr: 'true', tty: 'true' });
  for (const c of shell) q.append('command', c);
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${location.host}${cfg.kubernetesPath}${apiPath(byKey.pods, project, pod, 'exec')}?${q}`;
}

// frame is a message of channel ch holding text.
function frame(ch, text) {
  const body = new TextEncoder().encode(text);
  const b = new Uint8Array(body.length + 1);
  b[0] = ch;
  b.set(body, 1);
  return b;
}

// exitMessage is what the API server's status on the error channel says of
// how the shell ended.
function exitMessage(text) {
  try {
    const s = JSON.parse(text);
    if (s.status === 'Success') return 'The shell exited.';
    return s.message || text;
  } catch {
    return text;
  }
}

export function PodTerminal({ project, pod }) {
  const containers = pod.spec.containers.map((c) => c.name);
  const [container, setContainer] = useState(containers[0]);
  const [state, setState] = useState('connecting');
  const [session, setSession] = useState(0);
  const box = useRef(null);
  const running = pod.status && pod.status.phase === 'Running';
  useEffect(() => {
    if (!running) return undefined;
    const term = new Terminal({ cursorBlink: true, fontSize: 13, scrollback: 5000 });
    const fit = new FitAddon();
    term.loadAddon(fit);
    term.open(box.current);
    fit.fit();
    setState('connecting');
    const ws = new WebSocket(execURL(project, pod.metadata.name, container), ['v5.channel.k8s.io', 'v4.channel.k8s.io']);
    ws.binaryType = 'arraybuffer';
    const decoder = new TextDecoder();
    let errorText = '';
    const resize = () => {
      if (ws.readyState === WebSocket.OPEN) ws.send(frame(RESIZE, JSON.stringify({ Width: term.cols, Height: term.rows })));
    };
    ws.onopen = () => {
      setState('open');
      resize();
      term.focus();
    };
    ws.onmessage = (e) => {
      const b = new Uint8Array(e.data);
      if (!b.length) return;
      if (b[0] === STDOUT || b[0] === STDERR) term.write(b.subarray(1));
      else if (b[0] === ERROR) errorText += decoder.decode(b.subarray(1));
    };
    ws.onclose = (e) => {
      const why = errorText ? exitMessage(errorText) : e.reason || (e.code === 1000 ? 'The shell exited.' : `The connection closed (${e.code}).`);
      term.write(`\r\n\x1b[2m${why}\x1b[0m\r\n`);
      setState('closed');
    };
    const input = term.onData((d) => { if (ws.readyState === WebSocket.OPEN) ws.send(frame(STDIN, d)); });
    const sized = term.onResize(resize);
    const observer = new ResizeObserver(() => fit.fit());
    observer.observe(box.current);
    return () => {
      observer.disconnect();
      input.dispose();
      sized.dispose();
      ws.onclose = null;
      ws.close();
      term.dispose();
    };
  }, [project, pod.metadata.name, container, running, session]);
  if (!running) return html`<${Empty}>The pod is not running: a terminal needs a running container.<//>`;
  return html`<div class="terminal-pane">
    <div class="controls">
      <label>Container <select value=${container} onChange=${(e) => setContainer(e.target.value)}>${containers.map((n) => html`<option>${n}</option>`)}</select></label>
      <span class="muted terminal-state" data-state=${state}>${state === 'open' ? 'Connected' : state === 'closed' ? 'Closed' : 'Connecting…'}</span>
      ${state === 'closed' && html`<button class="reconnect" onClick=${() => setSession(session + 1)}>Reconnect</button>`}
    </div>
    <div class="terminal" ref=${box}></div>
  </div>`;
}
