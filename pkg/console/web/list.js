// The list page of a kind (or of the job kinds together): live, sortable,
// paged, with each row's actions.
import { useState } from 'preact/hooks';
import { byKey, jobKinds, kindOf, members, openLinks } from './kinds.js';
import { createObject, deleteObject, patchObject } from './api.js';
import { age, Empty, ErrorBox, field, html, Link, Loading, navigate, Phase, toast, useNow } from './ui.js';
import { useList } from './api.js';

const pageSize = 50;

// columnsOf are the list's columns: [title, value of an object].
function columnsOf(kind) {
  const cols = [['Name', (o) => o.metadata.name]];
  for (const [title, path] of kind.columns || []) cols.push([title, (o) => field(o, path)]);
  cols.push(['Age', (o) => o.metadata.creationTimestamp]);
  return cols;
}

function compare(a, b) {
  if (a === b) return 0;
  if (a === undefined || a === null) return 1;
  if (b === undefined || b === null) return -1;
  return String(a).localeCompare(String(b), undefined, { numeric: true });
}

export async function deleteWithConfirm(kind, o) {
  const what = `${kind.kind} ${o.metadata.name}`;
  if (!confirm(`Delete ${what}?`)) return false;
  try {
    await deleteObject(kind, o.metadata.namespace, o.metadata.name);
    toast(`Deleted ${what}`);
    return true;
  } catch (err) {
    toast(`Deleting ${what}: ${err.message}`, 'error');
    return false;
  }
}

export async function setSuspended(kind, o, suspend) {
  const what = `${kind.kind} ${o.metadata.name}`;
  try {
    await patchObject(kind, o.metadata.namespace, o.metadata.name, { spec: { suspend } });
    toast(`${suspend ? 'Suspended' : 'Resumed'} ${what}`);
  } catch (err) {
    toast(`${suspend ? 'Suspending' : 'Resuming'} ${what}: ${err.message}`, 'error');
  }
}

// startExplorer opens an Explorer over the volume: the one of its name,
// created if there is none.
export async function startExplorer(project, name) {
  const explorer = byKey.explorers;
  const obj = {
    apiVersion: `${explorer.group}/${explorer.version}`,
    kind: explorer.kind,
    metadata: { name, namespace: project },
    spec: { storageType: 'pvc', storageName: name },
  };
  try {
    await createObject(explorer, project, obj);
    toast(`Started Explorer ${name}`);
  } catch (err) {
    if (err.status !== 409) {
      toast(`Starting Explorer ${name}: ${err.message}`, 'error');
      return;
    }
  }
  navigate(`projects/${encodeURIComponent(project)}/explorers/${encodeURIComponent(name)}`);
}

export function RowActions({ kind, o, project }) {
  const suspended = kind.suspend && field(o, kind.suspend) === true;
  const running = o.status && (o.status.phase === 'Running' || o.status.phase === 'Ready');
  return html`<span class="actions">
    ${!suspended && running && openLinks(kind, o).map(([label, href]) => html`<a class="button" href=${href} target="_blank" rel="noopener">${label}</a>`)}
    ${kind.suspend && html`<button onClick=${() => setSuspended(kind, o, !suspended)}>${suspended ? 'Resume' : 'Suspend'}</button>`}
    ${kind.explorer && html`<button onClick=${() => startExplorer(project, o.metadata.name)}>Explorer</button>`}
    <button class="danger" onClick=${() => deleteWithConfirm(kind, o)}>Delete</button>
  </span>`;
}

function CreateButton({ kind, project }) {
  const p = `projects/${encodeURIComponent(project)}`;
  if (!kind.of) return html`<${Link} class="button primary" to=${`${p}/${kind.key}/-/create`}>Create ${kind.label}<//>`;
  return html`<select class="button primary" aria-label="Create Job" value="" onChange=${(e) => e.target.value && navigate(`${p}/${e.target.value}/-/create`)}>
    <option value="">Create Job…</option>
    ${jobKinds.map((k) => html`<option value=${k.key}>${k.kind}</option>`)}
  </select>`;
}

export function ListPage({ project, kind }) {
  const { items, loading, error } = useList(members(kind), project);
  const [sort, setSort] = useState({ col: 0, desc: false });
  const [page, setPage] = useState(0);
  const now = useNow();
  const cols = columnsOf(kind);
  const ageCol = cols.length - 1;
  const sorted = [...items].sort((a, b) => {
    const c = compare(cols[sort.col][1](a), cols[sort.col][1](b));
    return sort.desc ? -c : c;
  });
  const pages = Math.max(1, Math.ceil(sorted.length / pageSize));
  const shown = sorted.slice(Math.min(page, pages - 1) * pageSize, (Math.min(page, pages - 1) + 1) * pageSize);
  const by = (i) => setSort((s) => ({ col: i, desc: s.col === i ? !s.desc : i === ageCol }));
  const link = (o) => {
    const k = kindOf(o) || kind;
    return `projects/${encodeURIComponent(project)}/${k.key}/${encodeURIComponent(o.metadata.name)}`;
  };
  return html`<section class="list">
    <div class="title"><h1>${kind.label}</h1><span class="spacer"></span><${CreateButton} kind=${kind} project=${project} /></div>
    <${ErrorBox} error=${error} />
    ${loading ? html`<${Loading} what=${kind.label} />` : !items.length ? html`<${Empty}>No ${kind.label} in ${project} yet.<//>` : html`
    <table class="objects">
      <thead><tr>${cols.map(([title], i) => html`<th aria-sort=${sort.col === i ? (sort.desc ? 'descending' : 'ascending') : 'none'}><button onClick=${() => by(i)}>${title}</button></th>`)}<th>Actions</th></tr></thead>
      <tbody>${shown.map((o) => {
        const k = kindOf(o) || kind;
        return html`<tr data-name=${o.metadata.name}>
          ${cols.map(([title, value], i) => {
            const v = value(o);
            if (i === 0) return html`<td><${Link} to=${link(o)}>${v}<//></td>`;
            if (i === ageCol) return html`<td title=${v}>${age(v, now)}</td>`;
            if (/phase|status/i.test(title)) return html`<td><${Phase} value=${v} /></td>`;
            return html`<td>${v === undefined ? '' : String(v)}</td>`;
          })}
          <td><${RowActions} kind=${k} o=${o} project=${project} /></td>
        </tr>`;
      })}</tbody>
    </table>
    ${pages > 1 && html`<div class="pager">
      <button disabled=${page === 0} onClick=${() => setPage(page - 1)}>Previous</button>
      <span>Page ${Math.min(page, pages - 1) + 1} of ${pages} (${items.length})</span>
      <button disabled=${page >= pages - 1} onClick=${() => setPage(page + 1)}>Next</button></div>`}`}
  </section>`;
}
