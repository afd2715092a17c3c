// The project's overview: how many objects of each kind it has, its
// quota, and its recent events.
import { useList } from './api.js';
import { kinds } from './kinds.js';
import { Events } from './detail.js';
import { Empty, ErrorBox, html, Link, Loading } from './ui.js';

const quotaKind = { key: 'resourcequotas', kind: 'ResourceQuota', group: '', version: 'v1', resource: 'resourcequotas' };
const counted = kinds.filter((k) => k.resource && k.nav !== 'Auxiliary');

function Quota({ project }) {
  const { items, loading, error } = useList([quotaKind], project);
  if (loading) return html`<${Loading} what="the quota" />`;
  if (!items.length) return html`<${ErrorBox} error=${error} /><${Empty}>The project has no quota.<//>`;
  return html`<${ErrorBox} error=${error} />${items.map((q) => html`<table class="objects quota"><caption>${q.metadata.name}</caption>
    <thead><tr><th>Resource</th><th>Used</th><th>Hard</th></tr></thead>
    <tbody>${Object.keys((q.status && q.status.hard) || q.spec.hard || {}).sort().map((r) => html`<tr><td>${r}</td>
      <td>${(q.status && q.status.used && q.status.used[r]) || '0'}</td><td>${((q.status && q.status.hard) || q.spec.hard)[r]}</td></tr>`)}</tbody></table>`)}`;
}

export function Overview({ project }) {
  const { items, loading, error } = useList(counted, project);
  const count = (k) => items.filter((o) => o.kind === k.kind).length;
  const p = `projects/${encodeURIComponent(project)}`;
  const jobs = counted.filter((k) => k.job);
  const cards = [
    ...counted.filter((k) => k.nav === 'Build').map((k) => [k.label, `${p}/${k.key}`, count(k)]),
    ['Job', `${p}/jobs`, jobs.reduce((n, k) => n + count(k), 0)],
    ...counted.filter((k) => k.nav === 'Storage').map((k) => [k.label, `${p}/${k.key}`, count(k)]),
  ];
  return html`<section class="overview">
    <div class="title"><h1>${project}</h1></div>
    <${ErrorBox} error=${error} />
    <div class="cards">${cards.map(([label, to, n]) => html`<${Link} class="card" to=${to}><span class="count">${loading ? '…' : n}</span><span>${label}</span><//>`)}</div>
    <h2>Quota</h2><${Quota} project=${project} />
    <h2>Events</h2><${Events} project=${project} />
  </section>`;
}
