// The machinery of the create forms: a form is a list of fields, each
// reading and writing one part of the object that the YAML preview shows.
// A field is {name, label, type, path} (path: the keys to the value) or,
// where one input sets several parts, {get(obj), set(obj, value)} instead
// of path, with api: the field path the API server names in a refusal of
// that part (a RegExp). Types: text, number, select (options), checkbox,
// object (a name of the project's objects of kind, optionally picked by
// labelSelector; multiple for several), textarea.
import { useList } from './api.js';
import { byKey } from './kinds.js';
import { html } from './ui.js';

// at returns the value at path of obj.
export function at(obj, path) {
  let v = obj;
  for (const k of path) {
    if (v == null) return undefined;
    v = v[k];
  }
  return v;
}

// put sets the value at path of obj, making what is missing on the way;
// an empty value removes the key.
export function put(obj, path, value) {
  let v = obj;
  for (let i = 0; i < path.length - 1; i++) {
    if (v[path[i]] == null) v[path[i]] = typeof path[i + 1] === 'number' ? [] : {};
    v = v[path[i]];
  }
  const last = path[path.length - 1];
  if (value === '' || value === undefined || value === null || value === false || (Array.isArray(value) && !value.length)) delete v[last];
  else v[last] = value;
}

// oneLine refuses what would break the line-based formats some values end
// up in (.s3cfg, a command line).
export function oneLine(label, v) {
  if (/[\r\n]/.test(v)) throw new Error(`${label}: one line, please`);
  return v;
}

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

// apiField is the pattern of the field path the API server gives for path
// (spec.containers[0].resources.limits[nvidia.com/gpu]), any list index
// matching: a job's replicas are set alike, and a refusal may name any.
export function apiField(path) {
  return new RegExp('^' + path.map((k, i) => {
    if (typeof k === 'number') return '\\[\\d+\\]';
    if (/[./]/.test(k)) return `\\[${escape(k)}\\]`;
    return (i ? '\\.' : '') + escape(k);
  }).join('') + '(?=$|[.[])');
}

// fieldCauses splits the causes of a refusal into those of each field (by
// name) and the rest.
export function fieldCauses(fields, causes) {
  const byField = {};
  const rest = [];
  for (const c of causes || []) {
    const f = fields.find((x) => {
      const api = x.api || (x.path && apiField(x.path));
      return api && api.test(c.field || '');
    });
    if (f) (byField[f.name] = byField[f.name] || []).push(c.message);
    else rest.push(c);
  }
  return { byField, rest };
}

function ObjectSelect({ f, project, value, onChange }) {
  const { items } = useList([byKey[f.kind]], project, { labelSelector: f.labelSelector || '' });
  const names = items.map((o) => o.metadata.name).sort();
  if (f.multiple) {
    return html`<select multiple name=${f.name} onChange=${(e) => onChange([...e.target.selectedOptions].map((o) => o.value))}>
      ${names.map((n) => html`<option value=${n} selected=${(value || []).includes(n)}>${n}</option>`)}</select>`;
  }
  return html`<select name=${f.name} value=${value || ''} onChange=${(e) => onChange(e.target.value)}>
    <option value="">${f.none || 'None'}</option>${names.map((n) => html`<option value=${n}>${n}</option>`)}</select>`;
}

const get = (f, obj) => (f.get ? f.get(obj) : at(obj, f.path));

// FieldsForm renders fields over obj, giving setObj a changed copy on
// every edit; errors are the API server's messages by field name, shown
// next to their field.
export function FieldsForm({ fields, obj, setObj, project, errors = {} }) {
  const change = (f, value) => {
    const next = structuredClone(obj);
    if (f.set) f.set(next, value);
    else put(next, f.path, value);
    setObj(next);
  };
  const input = (f) => {
    const value = get(f, obj);
    switch (f.type) {
      case 'number':
        return html`<input type="number" min=${f.min ?? 0} name=${f.name} value=${value ?? ''} onInput=${(e) => change(f, e.target.value === '' ? '' : Number(e.target.value))} />`;
      case 'select':
        return html`<select name=${f.name} value=${value ?? ''} onChange=${(e) => change(f, e.target.value)}>${f.options.map(([v, l]) => html`<option value=${v}>${l}</option>`)}</select>`;
      case 'checkbox':
        return html`<input type="checkbox" name=${f.name} checked=${!!value} onChange=${(e) => change(f, e.target.checked)} />`;
      case 'object':
        return html`<${ObjectSelect} f=${f} project=${project} value=${value} onChange=${(v) => change(f, v)} />`;
      case 'textarea':
        return html`<textarea name=${f.name} rows="4" value=${value ?? ''} onInput=${(e) => change(f, e.target.value)}></textarea>`;
      default:
        return html`<input name=${f.name} required=${!!f.required} placeholder=${f.placeholder || ''} value=${value ?? ''} onInput=${(e) => change(f, e.target.value)} />`;
    }
  };
  const hint = (f) => f.hint && html` <span class="muted">${f.hint}</span>`;
  const error = (f) => errors[f.name] && html`<span class="field-error" data-field=${f.name}>${errors[f.name].join('; ')}</span>`;
  return html`<form class="form" onSubmit=${(e) => e.preventDefault()}>
    ${fields.filter((f) => !f.when || f.when(obj)).map((f) => f.type === 'checkbox'
      ? html`<label class=${errors[f.name] ? 'check invalid' : 'check'}>${input(f)} ${f.label}${error(f)}</label>`
      : html`<label class=${errors[f.name] ? 'invalid' : ''}>${f.label}${hint(f)} ${input(f)}${error(f)}</label>`)}
  </form>`;
}
