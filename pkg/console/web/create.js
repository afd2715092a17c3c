// The create page of a kind: a form for the kinds that have one, and a
// YAML editor for every kind, checked by the API server's dry run. YAML of
// another kind or project is refused before it is sent.
import { useState } from 'preact/hooks';
import { dump, load } from 'js-yaml';
import { createObject, useList } from './api.js';
import { byKey, template } from './kinds.js';
import { ErrorBox, html, Link, navigate, toast } from './ui.js';

// checkObject returns why obj cannot be created as kind in project, or ''.
export function checkObject(kind, project, obj) {
  if (!obj || typeof obj !== 'object' || Array.isArray(obj)) return 'The YAML is not an object.';
  const apiVersion = kind.group ? `${kind.group}/${kind.version}` : kind.version;
  if (obj.kind !== kind.kind) return `This page creates a ${kind.kind}; the YAML is a ${obj.kind || 'object without a kind'}.`;
  const group = (obj.apiVersion || '').includes('/') ? obj.apiVersion.split('/')[0] : '';
  if (group !== kind.group) return `apiVersion ${obj.apiVersion}: want ${apiVersion}.`;
  const ns = obj.metadata && obj.metadata.namespace;
  if (ns && ns !== project) return `metadata.namespace ${ns}: this page creates in project ${project}.`;
  if (!obj.metadata || (!obj.metadata.name && !obj.metadata.generateName)) return 'metadata.name: a name is required.';
  return '';
}

// Causes lists the fields the API server names in a refusal.
function Causes({ error }) {
  const causes = (error && error.details && error.details.causes) || [];
  if (!causes.length) return null;
  return html`<ul class="causes">${causes.map((c) => html`<li><code>${c.field || ''}</code> ${c.message}</li>`)}</ul>`;
}

function NotebookForm({ project, obj, setObj }) {
  const pvcs = useList([byKey.persistentvolumeclaims], project);
  const secrets = useList([byKey.secrets], project, { labelSelector: 'tensorstack.dev/resource=ssh' });
  const c = obj.spec.template.spec.containers[0];
  const limits = (c.resources && c.resources.limits) || {};
  const mount = (c.volumeMounts || []).find((m) => m.mountPath === '/t9k/mnt');
  const update = (f) => {
    const next = structuredClone(obj);
    f(next, next.spec.template.spec.containers[0]);
    setObj(next);
  };
  const setLimit = (name, value) => update((o, ct) => {
    ct.resources = ct.resources || {};
    ct.resources.limits = { ...(ct.resources.limits || {}) };
    if (value) ct.resources.limits[name] = value;
    else delete ct.resources.limits[name];
  });
  const setHome = (pvc) => update((o, ct) => {
    const spec = o.spec.template.spec;
    spec.volumes = (spec.volumes || []).filter((v) => v.name !== 'home');
    ct.volumeMounts = (ct.volumeMounts || []).filter((m) => m.mountPath !== '/t9k/mnt');
    if (pvc) {
      spec.volumes.push({ name: 'home', persistentVolumeClaim: { claimName: pvc } });
      ct.volumeMounts.push({ name: 'home', mountPath: '/t9k/mnt' });
    }
    if (!spec.volumes.length) delete spec.volumes;
    if (!ct.volumeMounts.length) delete ct.volumeMounts;
  });
  const home = mount && (obj.spec.template.spec.volumes || []).find((v) => v.name === mount.name);
  const queue = obj.spec.scheduler && obj.spec.scheduler.t9kScheduler && obj.spec.scheduler.t9kScheduler.queue;
  const ssh = obj.spec.ssh || {};
  return html`<form class="form" onSubmit=${(e) => e.preventDefault()}>
    <label>Name <input name="name" required value=${obj.metadata.name} onInput=${(e) => update((o) => { o.metadata.name = e.target.value; })} /></label>
    <label>Image type <select name="type" value=${obj.spec.type} onChange=${(e) => update((o) => { o.spec.type = e.target.value; })}>
      <option value="jupyter">Jupyter</option><option value="rstudio">RStudio</option></select></label>
    <label>Image <input name="image" required value=${c.image} onInput=${(e) => update((o, ct) => { ct.image = e.target.value; })} /></label>
    <fieldset><legend>Resources (limits)</legend>
      <label>CPU <input name="cpu" value=${limits.cpu || ''} onInput=${(e) => setLimit('cpu', e.target.value)} /></label>
      <label>Memory <input name="memory" value=${limits.memory || ''} onInput=${(e) => setLimit('memory', e.target.value)} /></label>
      <label>GPUs (nvidia.com/gpu) <input name="gpu" value=${limits['nvidia.com/gpu'] || ''} onInput=${(e) => setLimit('nvidia.com/gpu', e.target.value)} /></label>
    </fieldset>
    <label>Storage volume at /t9k/mnt <select name="home" value=${home ? home.persistentVolumeClaim.claimName : ''} onChange=${(e) => setHome(e.target.value)}>
      <option value="">None</option>${pvcs.items.map((p) => html`<option>${p.metadata.name}</option>`)}</select></label>
    <label>Queue of the T9k Scheduler (empty: the default scheduler) <input name="queue" value=${queue || ''}
      onInput=${(e) => update((o) => { if (e.target.value) o.spec.scheduler = { t9kScheduler: { queue: e.target.value } }; else delete o.spec.scheduler; })} /></label>
    <label><input type="checkbox" name="ssh" checked=${!!ssh.enabled} onChange=${(e) => update((o) => { if (e.target.checked) o.spec.ssh = { enabled: true, authorized_keys: ssh.authorized_keys || [] }; else delete o.spec.ssh; })} /> Enable SSH</label>
    ${ssh.enabled && html`<label>SSH public keys <select multiple name="keys" onChange=${(e) => update((o) => { o.spec.ssh.authorized_keys = [...e.target.selectedOptions].map((x) => x.value); })}>
      ${secrets.items.map((s) => html`<option selected=${(ssh.authorized_keys || []).includes(s.metadata.name)}>${s.metadata.name}</option>`)}</select></label>`}
  </form>`;
}

const forms = { Notebook: NotebookForm };

export function CreatePage({ project, kind }) {
  const Form = forms[kind.kind];
  const [mode, setMode] = useState(Form ? 'form' : 'yaml');
  const [obj, setObj] = useState(() => template(kind, project));
  const [text, setText] = useState(() => dump(template(kind, project), { lineWidth: -1 }));
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const toYAML = () => { setText(dump(obj, { lineWidth: -1 })); setMode('yaml'); };
  // toForm takes the YAML's edits into the form when it is still an
  // object the form can show.
  const toForm = () => {
    try {
      const o = load(text);
      if (!checkObject(kind, project, o) && o.spec && o.spec.template) setObj(o);
    } catch {
      // the form keeps what it had
    }
    setMode('form');
  };
  const current = () => {
    if (mode === 'form') return obj;
    try {
      return load(text);
    } catch (err) {
      throw new Error(`The YAML does not parse: ${err.message}`);
    }
  };
  const submit = async (dryRun) => {
    setError(null);
    let o;
    try {
      o = current();
      const why = checkObject(kind, project, o);
      if (why) throw new Error(why);
    } catch (err) {
      setError(err);
      return;
    }
    o.metadata.namespace = project;
    setBusy(true);
    try {
      const made = await createObject(kind, project, o, dryRun);
      if (dryRun) {
        toast(`${kind.kind} ${made.metadata.name || ''} is valid`);
      } else {
        toast(`Created ${kind.kind} ${made.metadata.name}`);
        navigate(`projects/${encodeURIComponent(project)}/${kind.key}/${encodeURIComponent(made.metadata.name)}`);
      }
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return html`<section class="create">
    <div class="title"><h1>Create ${kind.kind}</h1><span class="spacer"></span>
      ${Form && (mode === 'form'
        ? html`<button class="to-yaml" onClick=${toYAML}>Preview YAML</button>`
        : html`<button class="to-form" onClick=${toForm}>Form</button>`)}
      <${Link} class="button" to=${`projects/${encodeURIComponent(project)}/${kind.key}`}>Cancel<//></div>
    ${mode === 'form'
      ? html`<${Form} project=${project} obj=${obj} setObj=${setObj} />`
      : html`<textarea class="yaml-editor" spellcheck="false" aria-label="YAML" value=${text} onInput=${(e) => setText(e.target.value)}></textarea>`}
    <div role="alert" class="submit-error">${error && html`<${ErrorBox} error=${error} /><${Causes} error=${error} />`}</div>
    <div class="buttons">
      <button class="check" disabled=${busy} onClick=${() => submit(true)}>Check (dry run)</button>
      <button class="create primary" disabled=${busy} onClick=${() => submit(false)}>Create</button>
    </div>
  </section>`;
}
