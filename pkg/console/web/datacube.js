// The DataCube form. One side of a DataCube is a volume of the project (a
// PVC and a directory on it), the other S3, a Git repository or a Hugging
// Face repository; the direction says which side is the source. The
// remote side's options are the executor's (url, token, ref, repo, files,
// s3-*), credentials as references to a Secret's keys as the platform's
// examples write them: an S3-env Secret's endpoint, accessKeyID and
// secretAccessKey, a custom Secret's token.
import { put } from './fields.js';

const remoteKey = (o) => (o.spec.sink.type === 'pvc' ? 'source' : 'sink');
const remote = (o) => o.spec[remoteKey(o)];
const volume = (o) => o.spec[remoteKey(o) === 'source' ? 'sink' : 'source'];

const option = (side, name) => (side.options || []).find((x) => x.name === name);

// setOption sets the option name of side to a value (a string) or to a key
// of a Secret ({secret, key}); an empty value removes it.
function setOption(side, name, v) {
  const rest = (side.options || []).filter((x) => x.name !== name);
  if (typeof v === 'string' && v) rest.push({ name, value: v });
  else if (v && v.secret) rest.push({ name, valueFrom: { secretKeyRef: { name: v.secret, key: v.key } } });
  put(side, ['options'], rest);
}

const secretOf = (side, name) => {
  const o = option(side, name);
  return (o && o.valueFrom && o.valueFrom.secretKeyRef && o.valueFrom.secretKeyRef.name) || '';
};

// optionField is a text field of one option of the remote side, shown for
// the remote types given.
function optionField(f, name, types) {
  return {
    ...f,
    when: (o) => types.includes(remote(o).type),
    get: (o) => (option(remote(o), name) || {}).value || '',
    set: (o, v) => setOption(remote(o), name, v),
  };
}

const s3Keys = [['s3-endpoint', 'endpoint'], ['s3-access-key-id', 'accessKeyID'], ['s3-secret-access-key', 'secretAccessKey']];

export const fields = [
  {
    name: 'direction', label: 'Direction', type: 'select',
    options: [['download', 'Download to the volume'], ['upload', 'Upload from the volume']],
    get: (o) => (o.spec.sink.type === 'pvc' ? 'download' : 'upload'),
    set: (o, v) => {
      if ((v === 'download') !== (o.spec.sink.type === 'pvc')) [o.spec.source, o.spec.sink] = [o.spec.sink, o.spec.source];
    },
  },
  {
    name: 'remoteType', label: 'From or to', type: 'select',
    options: [['s3', 'S3'], ['git', 'Git repository'], ['huggingface', 'Hugging Face repository']],
    get: (o) => remote(o).type,
    set: (o, v) => { o.spec[remoteKey(o)] = { type: v }; },
  },
  optionField({ name: 's3Uri', label: 'S3 URI', placeholder: 's3://bucket/path', required: true }, 's3-uri', ['s3']),
  {
    name: 's3Secret', label: 'S3 credentials', hint: '(an S3-env Secret)', type: 'object', kind: 'secrets',
    labelSelector: 'tensorstack.dev/resource=s3-env',
    when: (o) => remote(o).type === 's3',
    get: (o) => secretOf(remote(o), 's3-endpoint'),
    set: (o, v) => s3Keys.forEach(([name, key]) => setOption(remote(o), name, v && { secret: v, key })),
  },
  optionField({ name: 'url', label: 'Repository URL', placeholder: 'https://$(TOKEN)@github.com/owner/repo.git', required: true }, 'url', ['git']),
  optionField({ name: 'ref', label: 'Branch, tag or commit', hint: '(empty: master)' }, 'ref', ['git']),
  optionField({ name: 'repo', label: 'Repository', placeholder: 'owner/name or datasets/owner/name', required: true }, 'repo', ['huggingface']),
  {
    ...optionField({ name: 'files', label: 'Files', hint: '(comma-separated; empty: all)' }, 'files', ['huggingface']),
    when: (o) => remote(o).type === 'huggingface' && o.spec.sink.type === 'pvc',
  },
  {
    name: 'tokenSecret', label: 'Access token', hint: '(a Secret with the key token)', type: 'object', kind: 'secrets',
    when: (o) => ['git', 'huggingface'].includes(remote(o).type),
    get: (o) => secretOf(remote(o), 'token'),
    set: (o, v) => setOption(remote(o), 'token', v && { secret: v, key: 'token' }),
  },
  {
    name: 'pvc', label: 'Volume', type: 'object', kind: 'persistentvolumeclaims', none: 'Pick a volume',
    api: /^spec\.(source|sink)\.pvc\.name/,
    get: (o) => volume(o).pvc && volume(o).pvc.name,
    set: (o, v) => { volume(o).pvc = { ...volume(o).pvc, name: v }; },
  },
  {
    name: 'subPath', label: 'Directory on the volume', hint: '(empty: its root)',
    api: /^spec\.(source|sink)\.pvc\.subPath/,
    get: (o) => (volume(o).pvc && volume(o).pvc.subPath) || '',
    set: (o, v) => put(volume(o), ['pvc', 'subPath'], v),
  },
];
