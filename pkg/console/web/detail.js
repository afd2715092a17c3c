// The detail page of an object: its basic information, conditions and
// events, its pods and their logs, and its YAML; live.
import { useEffect, useRef, useState } from 'preact/hooks';
import { dump } from 'js-yaml';
import { followLog, useList } from './api.js';
import { byKey, podSelector } from './kinds.js';
import { RowActions } from './list.js';
import { age, Empty, ErrorBox, field, html, Link, Loading, navigate, Phase, Tabs, useNow } from './ui.js';

function Info({ kind, o }) {
  const now = useNow();
  const m = o.metadata;
  const rows = [
    ['Kind', `${o.kind} (${o.apiVersion})`],
    ['Created', html`<span title=${m.creationTimestamp}>${age(m.creationTimestamp, now)} ago</span>`],
    ['Phase', html`<${Phase} value=${o.status && o.status.phase} />`],
  ];
  for (const [title, path] of kind.columns || []) if (title !== 'Phase') rows.push([title, String(field(o, path) ?? '')]);
  const tb = o.status && o.status.tensorboard;
  if (tb && tb.dependent && tb.dependent.name) {
    const ns = encodeURIComponent(m.namespace);
    const tbName = encodeURIComponent(tb.dependent.name);
    rows.push(['TensorBoard', html`<${Link} to=${`projects/${ns}/tensorboards/${tbName}`}>${tb.dependent.name}<//>
      ${' '}<${Phase} value=${tb.ready ? 'Running' : 'Pending'} />
      ${tb.ready && html` <a class="button" href=${`/tensorboard/${ns}/${tbName}/`} target="_blank" rel="noopener">Open</a>`}`]);
  }
  if (m.labels) rows.push(['Labels', Object.entries(m.labels).map(([k, v]) => html`<code class="label">${k}=${v}</code> `)]);
  return html`<table class="info">${rows.map(([k, v]) => html`<tr><th>${k}</th><td>${v}</td></tr>`)}</table>`;
}

function Conditions({ o }) {
  const cs = (o.status && o.status.conditions) || [];
  if (!cs.length) return html`<${Empty}>No conditions reported.<//>`;
  return html`<table class="objects conditions"><thead><tr><th>Type</th><th>Status</th><th>Reason</th><th>Message</th><th>Last transition</th></tr></thead>
    <tbody>${cs.map((c) => html`<tr><td>${c.type}</td><td><${Phase} value=${c.status} /></td><td>${c.reason || ''}</td><td>${c.message || ''}</td><td>${c.lastTransitionTime || ''}</td></tr>`)}</tbody></table>`;
}

export function Events({ project, fieldSelector }) {
  const { items, loading, error } = useList([eventsKind], project, { fieldSelector });
  const now = useNow();
  if (loading) return html`<${Loading} what="events" />`;
  const evs = [...items].sort((a, b) => Date.parse(b.lastTimestamp || b.eventTime || 0) - Date.parse(a.lastTimestamp || a.eventTime || 0));
  return html`<${ErrorBox} error=${error} />${!evs.length ? html`<${Empty}>No events.<//>` : html`
    <table class="objects events"><thead><tr><th>Type</th><th>Reason</th><th>Object</th><th>Message</th><th>Count</th><th>Last seen</th></tr></thead>
    <tbody>${evs.slice(0, 100).map((e) => html`<tr class=${e.type === 'Warning' ? 'warning' : ''}><td>${e.type}</td><td>${e.reason}</td>
      <td>${e.involvedObject.kind}/${e.involvedObject.name}</td><td>${e.message}</td><td>${e.count || 1}</td>
      <td>${age(e.lastTimestamp || e.eventTime, now)}</td></tr>`)}</tbody></table>`}`;
}

// eventsKind is the core Event, which no page lists on its own.
export const eventsKind = { key: 'events', kind: 'Event', group: '', version: 'v1', resource: 'events' };

function Pods({ project, pods, loading, base }) {
  const now = useNow();
  if (loading) return html`<${Loading} what="pods" />`;
  if (!pods.length) return html`<${Empty}>No pods.<//>`;
  return html`<table class="objects pods"><thead><tr><th>Name</th><th>Phase</th><th>Ready</th><th>Restarts</th><th>Node</th><th>Age</th><th></th></tr></thead>
    <tbody>${pods.map((p) => {
      const cs = (p.status && p.status.containerStatuses) || [];
      return html`<tr data-name=${p.metadata.name}><td><${Link} to=${`projects/${encodeURIComponent(project)}/pods/${encodeURIComponent(p.metadata.name)}`}>${p.metadata.name}<//></td>
        <td><${Phase} value=${p.status && p.status.phase} /></td>
        <td>${cs.filter((c) => c.ready).length}/${cs.length || (p.spec.containers || []).length}</td>
        <td>${cs.reduce((n, c) => n + (c.restartCount || 0), 0)}</td><td>${p.spec.nodeName || ''}</td>
        <td>${age(p.metadata.creationTimestamp, now)}</td>
        <td><${Link} class="button" to=${`${base}?tab=logs&pod=${encodeURIComponent(p.metadata.name)}`}>Logs<//></td></tr>`;
    })}</tbody></table>`;
}

function Logs({ project, pods, params, base }) {
  const podName = params.get('pod') || (pods[0] && pods[0].metadata.name) || '';
  const pod = pods.find((p) => p.metadata.name === podName);
  const containers = pod ? pod.spec.containers.map((c) => c.name) : [];
  const [container, setContainer] = useState('');
  const [follow, setFollow] = useState(true);
  const [text, setText] = useState('');
  const [error, setError] = useState(null);
  const pre = useRef(null);
  const c = containers.includes(container) ? container : containers[0] || '';
  const phase = pod && pod.status && pod.status.phase;
  useEffect(() => {
    if (!pod || !c || phase === 'Pending') return undefined;
    const ctl = new AbortController();
    setText('');
    setError(null);
    let buf = '';
    let timer = null;
    followLog(project, podName, c, follow, ctl.signal, (t) => {
      buf += t;
      if (buf.length > 1 << 20) buf = buf.slice(buf.length - (1 << 20));
      if (!timer) timer = setTimeout(() => { timer = null; setText(buf); }, 100);
    }).then(() => setText(buf)).catch((err) => { if (!ctl.signal.aborted) setError(err); });
    return () => { ctl.abort(); clearTimeout(timer); };
  }, [podName, c, follow, phase, !!pod]);
  useEffect(() => { if (pre.current && follow) pre.current.scrollTop = pre.current.scrollHeight; }, [text]);
  if (!pods.length) return html`<${Empty}>No pods, so no logs.<//>`;
  const pick = (e) => navigate(`${base}?tab=logs&pod=${encodeURIComponent(e.target.value)}`, true);
  return html`<div class="logs">
    <div class="controls">
      <label>Pod <select value=${podName} onChange=${pick}>${pods.map((p) => html`<option value=${p.metadata.name}>${p.metadata.name}</option>`)}</select></label>
      <label>Container <select value=${c} onChange=${(e) => setContainer(e.target.value)}>${containers.map((n) => html`<option>${n}</option>`)}</select></label>
      <label><input type="checkbox" checked=${follow} onChange=${(e) => setFollow(e.target.checked)} /> Follow</label>
    </div>
    <${ErrorBox} error=${error} />
    ${phase === 'Pending' ? html`<${Empty}>The pod has not started.<//>` : html`<pre class="log" ref=${pre}>${text}</pre>`}
  </div>`;
}

function YAMLView({ o }) {
  const clean = { ...o, metadata: { ...o.metadata } };
  delete clean.metadata.managedFields;
  return html`<pre class="yaml">${dump(clean, { noRefs: true, lineWidth: -1 })}</pre>`;
}

// Lazy renders the export name of module once loaded: the terminal's
// module and xterm.js load only when a terminal opens.
function Lazy({ module, name, ...props }) {
  const [Component, setComponent] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    import(module).then((m) => setComponent(() => m[name]), setError);
  }, [module, name]);
  if (error) return html`<${ErrorBox} error=${error} />`;
  return Component ? html`<${Component} ...${props} />` : html`<${Loading} what="the terminal" />`;
}

export function DetailPage({ project, kind, name, params }) {
  const { items, loading, error } = useList([kind], project, { fieldSelector: `metadata.name=${name}` });
  const o = items[0];
  const selector = o && podSelector(kind, o);
  const podsList = useList(selector ? [byKey.pods] : [], selector ? project : '', { labelSelector: selector || '' });
  const pods = kind.pods === 'self' ? (o ? [o] : []) : podsList.items;
  const tab = params.get('tab') || 'overview';
  const base = `projects/${encodeURIComponent(project)}/${kind.key}/${encodeURIComponent(name)}`;
  const tabs = [['overview', 'Overview']];
  if (kind.pods && kind.pods !== 'self') tabs.push(['pods', 'Pods']);
  if (kind.pods) tabs.push(['logs', 'Logs']);
  if (kind.pods === 'self') tabs.push(['terminal', 'Terminal']);
  tabs.push(['yaml', 'YAML']);
  const head = html`<div class="title"><h1><span class="muted">${kind.kind}</span> ${name}</h1><span class="spacer"></span>
    ${o && html`<${RowActions} kind=${kind} o=${o} project=${project} />`}</div>`;
  if (loading) return html`${head}<${Loading} what=${name} />`;
  if (!o) return html`${head}<${ErrorBox} error=${error} /><${Empty}>${kind.kind} ${name} does not exist in ${project}, or no longer.<//>`;
  return html`<section class="detail">${head}<${ErrorBox} error=${error} />
    <${Tabs} tabs=${tabs} active=${tab} onSelect=${(t) => navigate(`${base}?tab=${t}`, true)} />
    ${tab === 'overview' && html`<h2>Basic information</h2><${Info} kind=${kind} o=${o} />
      <h2>Conditions</h2><${Conditions} o=${o} />
      <h2>Events</h2><${Events} project=${project} fieldSelector=${`involvedObject.name=${name},involvedObject.kind=${kind.kind}`} />`}
    ${tab === 'pods' && html`<${Pods} project=${project} pods=${pods} loading=${podsList.loading} base=${base} />`}
    ${tab === 'logs' && html`<${Logs} project=${project} pods=${pods} params=${params} base=${base} />`}
    ${tab === 'terminal' && html`<${Lazy} module="./terminal.js" name="PodTerminal" project=${project} pod=${o} />`}
    ${tab === 'yaml' && html`<${YAMLView} o=${o} />`}
  </section>`;
}
