// The create forms: each kind's form is a list of fields, each reading and
// writing one part of the object that the YAML preview shows. A field is
// {name, label, type, path} (path: the keys to the value) or, where one
// input sets several parts, {get(obj), set(obj, value)} instead of path.
// Types: text, number, select (options), checkbox, object (a name of the
// project's objects of kind, optionally picked by labelSelector; multiple
// for several), textarea.
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

const get = (f, obj) => (f.get ? f.get(obj) : at(obj, f.path));

// oneLine refuses what would break the line-based formats some values end
// up in (.s3cfg, a command line).
export function oneLine(label, v) {
  if (/[\r\n]/.test(v)) throw new Error(`${label}: one line, please`);
  return v;
}

const container = ['spec', 'template', 'spec', 'containers', 0];
const limit = (name) => [...container, 'resources', 'limits', name];

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

// FieldsForm renders fields over obj, giving setObj a changed copy on
// every edit.
export function FieldsForm({ fields, obj, setObj, project }) {
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
  return html`<form class="form" onSubmit=${(e) => e.preventDefault()}>
    ${fields.filter((f) => !f.when || f.when(obj)).map((f) => f.type === 'checkbox'
      ? html`<label class="check">${input(f)} ${f.label}</label>`
      : html`<label>${f.label}${f.hint && html` <span class="muted">${f.hint}</span>`} ${input(f)}</label>`)}
  </form>`;
}

const name = { name: 'name', label: 'Name', path: ['metadata', 'name'], required: true };
const queue = {
  name: 'queue', label: 'Queue of the T9k Scheduler', hint: '(empty: the default scheduler)',
  get: (o) => at(o, ['spec', 'scheduler', 't9kScheduler', 'queue']),
  set: (o, v) => { if (v) o.spec.scheduler = { t9kScheduler: { queue: v } }; else delete o.spec.scheduler; },
};

// replicaField is a field of every replica's container of a job, set
// alike in each.
function replicaField(f, path) {
  return {
    ...f,
    get: (o) => at(o.spec.replicaSpecs[0], path),
    set: (o, v) => o.spec.replicaSpecs.forEach((r) => put(r, path, v)),
  };
}

const jobFields = [
  name,
  replicaField({ name: 'image', label: 'Image', required: true }, ['template', 'spec', 'containers', 0, 'image']),
  {
    name: 'command', label: 'Command', hint: '(run by sh -c)',
    get: (o) => (at(o.spec.replicaSpecs[0], ['template', 'spec', 'containers', 0, 'command']) || [])[2] || '',
    set: (o, v) => o.spec.replicaSpecs.forEach((r) => put(r, ['template', 'spec', 'containers', 0, 'command'], v ? ['sh', '-c', v] : '')),
  },
  replicaField({ name: 'cpu', label: 'CPU per replica' }, ['template', 'spec', 'containers', 0, 'resources', 'limits', 'cpu']),
  replicaField({ name: 'memory', label: 'Memory per replica' }, ['template', 'spec', 'containers', 0, 'resources', 'limits', 'memory']),
  replicaField({ name: 'gpu', label: 'GPUs per replica (nvidia.com/gpu)' }, ['template', 'spec', 'containers', 0, 'resources', 'limits', 'nvidia.com/gpu']),
  queue,
];

// forms are the kinds with a form, by kind.
export const forms = {
  Notebook: [
    name,
    { name: 'type', label: 'Image type', type: 'select', path: ['spec', 'type'], options: [['jupyter', 'Jupyter'], ['rstudio', 'RStudio']] },
    { name: 'image', label: 'Image', path: [...container, 'image'], required: true },
    { name: 'cpu', label: 'CPU', path: limit('cpu') },
    { name: 'memory', label: 'Memory', path: limit('memory') },
    { name: 'gpu', label: 'GPUs (nvidia.com/gpu)', path: limit('nvidia.com/gpu') },
    {
      name: 'home', label: 'Storage volume at /t9k/mnt', type: 'object', kind: 'persistentvolumeclaims',
      get: (o) => at((o.spec.template.spec.volumes || []).find((v) => v.name === 'home'), ['persistentVolumeClaim', 'claimName']),
      set: (o, pvc) => {
        const spec = o.spec.template.spec;
        const ct = spec.containers[0];
        spec.volumes = (spec.volumes || []).filter((v) => v.name !== 'home');
        ct.volumeMounts = (ct.volumeMounts || []).filter((m) => m.mountPath !== '/t9k/mnt');
        if (pvc) {
          spec.volumes.push({ name: 'home', persistentVolumeClaim: { claimName: pvc } });
          ct.volumeMounts.push({ name: 'home', mountPath: '/t9k/mnt' });
        }
        if (!spec.volumes.length) delete spec.volumes;
        if (!ct.volumeMounts.length) delete ct.volumeMounts;
      },
    },
    queue,
    {
      name: 'ssh', label: 'Enable SSH', type: 'checkbox',
      get: (o) => at(o, ['spec', 'ssh', 'enabled']),
      set: (o, v) => { if (v) o.spec.ssh = { enabled: true }; else delete o.spec.ssh; },
    },
    { name: 'keys', label: 'SSH public keys', type: 'object', multiple: true, kind: 'secrets', labelSelector: 'tensorstack.dev/resource=ssh', path: ['spec', 'ssh', 'authorized_keys'], when: (o) => at(o, ['spec', 'ssh', 'enabled']) },
  ],
  PyTorchTrainingJob: [
    ...jobFields.slice(0, 3),
    {
      name: 'workers', label: 'Workers', type: 'number', min: 0,
      get: (o) => (o.spec.replicaSpecs.find((r) => r.type === 'worker') || {}).replicas,
      set: (o, v) => { const w = o.spec.replicaSpecs.find((r) => r.type === 'worker'); if (w) w.replicas = v === '' ? 0 : v; },
    },
    ...jobFields.slice(3),
  ],
  GenericJob: [
    ...jobFields.slice(0, 3),
    { name: 'replicas', label: 'Replicas', type: 'number', min: 1, path: ['spec', 'replicaSpecs', 0, 'replicas'] },
    ...jobFields.slice(3),
  ],
  TensorBoard: [
    name,
    { name: 'pvc', label: 'Logs on the volume', type: 'object', kind: 'persistentvolumeclaims', path: ['spec', 'logDir', 'pvc', 0, 'name'] },
    {
      name: 'subPath', label: 'Log directory on the volume', hint: '(one per line)',
      type: 'textarea',
      get: (o) => (at(o, ['spec', 'logDir', 'pvc', 0, 'subPath']) || []).join('\n'),
      set: (o, v) => put(o, ['spec', 'logDir', 'pvc', 0, 'subPath'], v.split('\n').map((s) => s.trim()).filter(Boolean)),
    },
  ],
  PersistentVolumeClaim: [
    name,
    { name: 'size', label: 'Size', path: ['spec', 'resources', 'requests', 'storage'], required: true },
    {
      name: 'accessMode', label: 'Access mode', type: 'select',
      options: [['ReadWriteOnce', 'ReadWriteOnce'], ['ReadWriteMany', 'ReadWriteMany'], ['ReadOnlyMany', 'ReadOnlyMany']],
      get: (o) => (o.spec.accessModes || [])[0], set: (o, v) => { o.spec.accessModes = [v]; },
    },
    { name: 'storageClass', label: 'Storage class', hint: '(empty: the default)', path: ['spec', 'storageClassName'] },
  ],
  StorageShim: [
    name,
    { name: 'uri', label: 'S3 URI', placeholder: 's3://bucket/path', path: ['spec', 's3', 'uri'], required: true },
    { name: 'secret', label: 'S3 Secret', type: 'object', kind: 'secrets', labelSelector: 'tensorstack.dev/resource=s3-cfg', path: ['spec', 's3', 'secretRef', 'name'] },
    { name: 'readOnly', label: 'Read only', type: 'checkbox', path: ['spec', 's3', 'readOnly'] },
  ],
};

// secretTypes are the platform's Secret types (the tensorstack.dev/resource
// label): the form fields of each and how they become the Secret's data.
export const secretTypes = {
  ssh: { label: 'SSH public key', fields: [['key', 'Public key', 'textarea']], data: (v) => ({ 'ssh-publickey': v.key.trim() + '\n' }) },
  's3-cfg': {
    label: 'S3-cfg',
    fields: [['endpoint', 'Service endpoint'], ['accessKey', 'Access key ID'], ['secretKey', 'Secret access key']],
    data: (v) => ({
      '.s3cfg': `[default]\naccess_key = ${oneLine('Access key ID', v.accessKey)}\nsecret_key = ${oneLine('Secret access key', v.secretKey)}\n` +
        `host_base = ${oneLine('Service endpoint', v.endpoint)}\nhost_bucket = ${v.endpoint}\n`,
    }),
  },
  's3-env': {
    label: 'S3-env',
    fields: [['endpoint', 'Service endpoint'], ['accessKey', 'Access key ID'], ['secretKey', 'Secret access key']],
    data: (v) => ({ endpoint: v.endpoint, accessKeyID: v.accessKey, secretAccessKey: v.secretKey }),
  },
  docker: { label: 'Docker', fields: [['config', 'config.json', 'textarea']], data: (v) => ({ 'config.json': v.config }) },
  apikey: { label: 'API key', fields: [['apikey', 'API key']], data: (v) => ({ apikey: v.apikey }) },
  other: {
    label: 'Custom',
    fields: [['pairs', 'key=value, one per line', 'textarea']],
    data: (v) => Object.fromEntries(v.pairs.split('\n').filter((l) => l.trim()).map((l) => {
      const i = l.indexOf('=');
      if (i <= 0) throw new Error(`"${l}": want key=value`);
      return [l.slice(0, i).trim(), l.slice(i + 1)];
    })),
  },
};

// SecretForm makes a Secret of one of the platform's types; its values
// live in the form (the Secret's data is written when it is created).
export function SecretForm({ obj, setObj, values, setValues }) {
  const type = obj.metadata.labels['tensorstack.dev/resource'];
  const t = secretTypes[type];
  const setType = (v) => {
    const next = structuredClone(obj);
    next.metadata.labels['tensorstack.dev/resource'] = v;
    setObj(next);
  };
  return html`<form class="form" onSubmit=${(e) => e.preventDefault()}>
    <label>Name <input name="name" required value=${obj.metadata.name}
      onInput=${(e) => setObj({ ...obj, metadata: { ...obj.metadata, name: e.target.value } })} /></label>
    <label>Type <select name="secretType" value=${type} onChange=${(e) => setType(e.target.value)}>
      ${Object.entries(secretTypes).map(([k, v]) => html`<option value=${k}>${v.label}</option>`)}</select></label>
    ${t.fields.map(([key, label, kind]) => html`<label>${label}
      ${kind === 'textarea'
        ? html`<textarea name=${key} rows="4" value=${values[key] || ''} onInput=${(e) => setValues({ ...values, [key]: e.target.value })}></textarea>`
        : html`<input name=${key} type=${/secret|apikey/i.test(key) ? 'password' : 'text'} autocomplete="off" value=${values[key] || ''} onInput=${(e) => setValues({ ...values, [key]: e.target.value })} />`}</label>`)}
  </form>`;
}

// secretWithData returns obj with the data the values of its type make.
export function secretWithData(obj, values) {
  const t = secretTypes[obj.metadata.labels['tensorstack.dev/resource']];
  const filled = Object.fromEntries(t.fields.map(([k]) => [k, values[k] || '']));
  return { ...obj, stringData: t.data(filled) };
}
