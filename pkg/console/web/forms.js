// The create forms of the kinds that have one, as lists of fields
// (fields.js), and the platform's typed Secrets.
import * as dataCube from './datacube.js';
import { apiField, at, oneLine, put } from './fields.js';
import { html } from './ui.js';

const container = ['spec', 'template', 'spec', 'containers', 0];
const limit = (name) => [...container, 'resources', 'limits', name];

const name = { name: 'name', label: 'Name', path: ['metadata', 'name'], required: true };
const queue = {
  name: 'queue', label: 'Queue of the T9k Scheduler', hint: '(empty: the default scheduler)', api: /^spec\.scheduler/,
  get: (o) => at(o, ['spec', 'scheduler', 't9kScheduler', 'queue']),
  set: (o, v) => { if (v) o.spec.scheduler = { t9kScheduler: { queue: v } }; else delete o.spec.scheduler; },
};

// replicaField is a field of every replica's container of a job, set
// alike in each.
function replicaField(f, path) {
  return {
    ...f,
    api: apiField(['spec', 'replicaSpecs', 0, ...path]),
    get: (o) => at(o.spec.replicaSpecs[0], path),
    set: (o, v) => o.spec.replicaSpecs.forEach((r) => put(r, path, v)),
  };
}

// commandField is a container's command, run by sh -c; containers(o) are
// the containers it sets (each replica's alike in a job).
function commandField(containers, api) {
  return {
    name: 'command', label: 'Command', hint: '(run by sh -c)', api,
    get: (o) => {
      const c = containers(o)[0].command || [];
      return c[0] === 'sh' && c[1] === '-c' ? c[2] : c.join(' ');
    },
    set: (o, v) => containers(o).forEach((c) => put(c, ['command'], v ? ['sh', '-c', v] : '')),
  };
}

const jobFields = [
  name,
  replicaField({ name: 'image', label: 'Image', required: true }, ['template', 'spec', 'containers', 0, 'image']),
  commandField((o) => o.spec.replicaSpecs.map((r) => r.template.spec.containers[0]), apiField(['spec', 'replicaSpecs', 0, 'template', 'spec', 'containers', 0, 'command'])),
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
  Pod: [
    name,
    { name: 'image', label: 'Image', path: ['spec', 'containers', 0, 'image'], required: true },
    commandField((o) => [o.spec.containers[0]], apiField(['spec', 'containers', 0, 'command'])),
    { name: 'cpu', label: 'CPU', path: ['spec', 'containers', 0, 'resources', 'limits', 'cpu'] },
    { name: 'memory', label: 'Memory', path: ['spec', 'containers', 0, 'resources', 'limits', 'memory'] },
    { name: 'gpu', label: 'GPUs (nvidia.com/gpu)', path: ['spec', 'containers', 0, 'resources', 'limits', 'nvidia.com/gpu'] },
  ],
  DataCube: [name, ...dataCube.fields],
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
