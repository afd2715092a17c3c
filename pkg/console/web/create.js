// The create page of a kind: a form for the kinds that have one, and a
// YAML editor for every kind, checked by the API server's dry run. YAML of
// another kind or project is refused before it is sent.
import { useState } from 'preact/hooks';
import { dump, load } from 'js-yaml';
import { createObject } from './api.js';
import { FieldsForm, fieldCauses } from './fields.js';
import { forms, SecretForm, secretWithData } from './forms.js';
import { template } from './kinds.js';
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
function Causes({ causes }) {
  if (!causes.length) return null;
  return html`<ul class="causes">${causes.map((c) => html`<li><code>${c.field || ''}</code> ${c.message}</li>`)}</ul>`;
}

// ImportButton reads a YAML or JSON file of the user's into the editor.
function ImportButton({ onText, onError }) {
  const read = async (e) => {
    const file = e.target.files[0];
    e.target.value = '';
    if (!file) return;
    if (file.size > 1 << 20) {
      onError(new Error(`${file.name}: over 1 MiB`));
      return;
    }
    onText(await file.text());
  };
  return html`<label class="button import">Import<input type="file" accept=".yaml,.yml,.json" onChange=${read} /></label>`;
}

export function CreatePage({ project, kind }) {
  const isSecret = kind.kind === 'Secret';
  const hasForm = isSecret || !!forms[kind.kind];
  const [values, setValues] = useState({});
  const [mode, setMode] = useState(hasForm ? 'form' : 'yaml');
  const [obj, setObj] = useState(() => template(kind, project));
  const [text, setText] = useState(() => dump(template(kind, project), { lineWidth: -1 }));
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const formObject = () => (isSecret ? secretWithData(obj, values) : obj);
  const toYAML = () => {
    try {
      setText(dump(formObject(), { lineWidth: -1 }));
      setMode('yaml');
    } catch (err) {
      setError(err);
    }
  };
  // toForm takes the YAML's edits into the form when it is still an
  // object the form can show.
  const toForm = () => {
    try {
      const o = load(text);
      if (!checkObject(kind, project, o) && !isSecret) setObj(o);
    } catch {
      // the form keeps what it had
    }
    setMode('form');
  };
  const current = () => {
    if (mode === 'form') return formObject();
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
  const causes = (error && error.details && error.details.causes) || [];
  const split = mode === 'form' && forms[kind.kind] ? fieldCauses(forms[kind.kind], causes) : { byField: {}, rest: causes };
  const imported = (t) => {
    setError(null);
    setText(t);
    setMode('yaml');
  };
  return html`<section class="create">
    <div class="title"><h1>Create ${kind.kind}</h1><span class="spacer"></span>
      ${hasForm && (mode === 'form'
        ? html`<button class="to-yaml" onClick=${toYAML}>Preview YAML</button>`
        : html`<button class="to-form" onClick=${toForm}>Form</button>`)}
      <${ImportButton} onText=${imported} onError=${setError} />
      <${Link} class="button" to=${`projects/${encodeURIComponent(project)}/${kind.key}`}>Cancel<//></div>
    ${mode === 'form'
      ? isSecret
        ? html`<${SecretForm} obj=${obj} setObj=${setObj} values=${values} setValues=${setValues} />`
        : html`<${FieldsForm} fields=${forms[kind.kind]} project=${project} obj=${obj} setObj=${setObj} errors=${split.byField} />`
      : html`<textarea class="yaml-editor" spellcheck="false" aria-label="YAML" value=${text} onInput=${(e) => setText(e.target.value)}></textarea>`}
    <div role="alert" class="submit-error">${error && html`<${ErrorBox} error=${error} /><${Causes} causes=${split.rest} />`}</div>
    <div class="buttons">
      <button class="check" disabled=${busy} onClick=${() => submit(true)}>Check (dry run)</button>
      <button class="create primary" disabled=${busy} onClick=${() => submit(false)}>Create</button>
    </div>
  </section>`;
}
