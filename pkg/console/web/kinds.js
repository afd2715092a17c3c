// The kinds the Build Console shows (kinds.json, checked against the
// platform's CRDs and job kinds by package console's tests), and what the
// pages do with each.
import data from './kinds.json' with { type: 'json' };

export const kinds = data.kinds;
export const byKey = Object.fromEntries(kinds.map((k) => [k.key, k]));

// members are the kinds a page lists: the job kinds for the Job page,
// otherwise the kind itself.
export function members(kind) {
  return kind.of ? kind.of.map((k) => byKey[k]) : [kind];
}

// navGroups is the navigation tree, in the seed's order.
export const navGroups = ['Build', 'Storage', 'Auxiliary'].map((g) => [g, kinds.filter((k) => k.nav === g)]);

export const jobKinds = kinds.filter((k) => k.job);

// kindOf returns the kind of an object as the console knows it.
export function kindOf(obj) {
  const [group, version] = obj.apiVersion.includes('/') ? obj.apiVersion.split('/') : ['', obj.apiVersion];
  return kinds.find((k) => k.kind === obj.kind && k.group === group && (k.version === version || !version));
}

// openLinks are the pages a workload serves through the gateway, as
// [label, path] pairs, once it runs.
export function openLinks(kind, obj) {
  const ns = encodeURIComponent(obj.metadata.namespace);
  const name = encodeURIComponent(obj.metadata.name);
  switch (kind.open) {
    case 'notebook':
      return [['Open', `/t9k/notebooks/projects/${ns}/name/${name}/`]];
    case 'tensorboard':
      return [['Open', `/tensorboard/${ns}/${name}/`]];
    case 'explorer':
      return [
        ['File Browser', `/explorer/${ns}/${name}/file-browser/`],
        ['VS Code', `/explorer/${ns}/${name}/code-server/`],
      ];
    default:
      return [];
  }
}

// podSelector is the label selector of a workload's pods, or null.
export function podSelector(kind, obj) {
  if (!kind.pods || kind.pods === 'self') return null;
  return kind.pods.replace('{name}', obj.metadata.name);
}

// template is the object a form or the YAML editor starts from.
export function template(kind, ns) {
  const apiVersion = kind.group ? `${kind.group}/${kind.version}` : kind.version;
  const base = { apiVersion, kind: kind.kind, metadata: { name: '', namespace: ns } };
  const replica = (type, replicas) => ({
    type, replicas,
    template: { spec: { containers: [{ name: type, image: '', command: ['sh', '-c', 'python3 train.py'] }] } },
  });
  switch (kind.kind) {
    case 'Notebook':
      return { ...base, spec: { type: 'jupyter', template: { spec: { containers: [{ name: 'notebook', image: '', resources: { limits: { cpu: '1', memory: '2Gi' } } }] } } } };
    case 'PyTorchTrainingJob':
      return { ...base, spec: { replicaSpecs: [replica('master', 1), replica('worker', 1)] } };
    case 'GenericJob':
      return { ...base, spec: { replicaSpecs: [replica('worker', 1)] } };
    case 'TensorBoard':
      return { ...base, spec: {} };
    case 'PersistentVolumeClaim':
      return { ...base, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } };
    case 'Pod':
      return { ...base, spec: { containers: [{ name: 'main', image: '', command: ['sh', '-c', 'sleep infinity'] }] } };
    case 'DataCube':
      return { ...base, spec: { source: { type: 's3' }, sink: { type: 'pvc', pvc: { name: '' } } } };
    case 'StorageShim':
      return { ...base, spec: { type: 's3', s3: { uri: '', secretRef: { name: '' } } } };
    case 'ConfigMap':
      return { ...base, data: {} };
    case 'Secret':
      return { ...base, metadata: { ...base.metadata, labels: { 'tensorstack.dev/resource': 'ssh' } }, type: 'Opaque' };
    default:
      return { ...base, spec: {} };
  }
}
