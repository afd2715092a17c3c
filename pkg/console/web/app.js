// The Build Console: the frame (user, project selector, navigation) and
// the page the path names:
//
//   projects/<project>/overview
//   projects/<project>/<kind>              the list
//   projects/<project>/<kind>/-/create     the create page
//   projects/<project>/<kind>/<name>       the detail page (?tab=)
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { getProjects, getSession } from './api.js';
import { byKey, navGroups } from './kinds.js';
import { CreatePage } from './create.js';
import { DetailPage } from './detail.js';
import { ListPage } from './list.js';
import { Overview } from './overview.js';
import { cfg, ErrorBox, html, Link, Loading, navigate, Toasts, useRoute } from './ui.js';

const lastProjectKey = 'accelstack.console.project';

function parseRoute(route) {
  const [path, search] = route.split('?');
  const params = new URLSearchParams(search || '');
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] !== 'projects' || !parts[1]) return { page: 'home', params };
  const r = { project: parts[1], page: parts[2] || 'overview', params };
  if (parts[2] && parts[2] !== 'overview') {
    r.kind = byKey[parts[2]];
    r.page = !r.kind ? 'missing' : parts[3] === '-' && parts[4] === 'create' ? 'create' : parts[3] ? 'detail' : 'list';
    r.name = parts[3];
  }
  return r;
}

function Header({ session, projects, project }) {
  const pick = (e) => {
    localStorage.setItem(lastProjectKey, e.target.value);
    navigate(`projects/${encodeURIComponent(e.target.value)}/overview`);
  };
  return html`<header class="top">
    <span class="brand">accelstack <span class="muted">Build Console</span></span>
    <span class="spacer"></span>
    <label class="project">Project
      <select id="project-select" value=${project || ''} onChange=${pick}>
        ${!project && html`<option value="">—</option>`}
        ${project && !projects.some((p) => p.name === project) && html`<option value=${project}>${project}</option>`}
        ${projects.map((p) => html`<option value=${p.name}>${p.name}${p.scopes.length ? ` (${p.scopes.join(', ')})` : ''}</option>`)}
      </select>
    </label>
    <span class="user" title=${(session.groups || []).join(', ')}>${session.user}</span>
    <a class="logout" href=${cfg.logoutPath}>Log out</a>
  </header>`;
}

function Nav({ project, active }) {
  const p = `projects/${encodeURIComponent(project)}`;
  return html`<nav class="side">
    <${Link} to=${`${p}/overview`} class=${active === 'overview' ? 'active' : ''}>Overview<//>
    ${navGroups.map(([group, ks]) => html`<div class="group">${group}</div>
      ${ks.map((k) => html`<${Link} to=${`${p}/${k.key}`} class=${active === k.key ? 'active' : ''}>${k.label}<//>`)}`)}
  </nav>`;
}

function Home({ projects }) {
  useEffect(() => {
    const last = localStorage.getItem(lastProjectKey);
    const p = projects.find((x) => x.name === last) || projects.find((x) => x.scopes.includes('build')) || projects[0];
    if (p) navigate(`projects/${encodeURIComponent(p.name)}/overview`, true);
  }, [projects]);
  if (!projects.length) {
    return html`<main class="content"><h1>No projects</h1>
      <p>You are not a member of any project yet. A project admin adds members with <code>t9k project</code> or the Security Console.</p></main>`;
  }
  return html`<main class="content"><${Loading} what="your project" /></main>`;
}

function Page({ r }) {
  switch (r.page) {
    case 'overview':
      return html`<${Overview} project=${r.project} />`;
    case 'list':
      return html`<${ListPage} project=${r.project} kind=${r.kind} />`;
    case 'create':
      return html`<${CreatePage} project=${r.project} kind=${r.kind} params=${r.params} />`;
    case 'detail':
      return html`<${DetailPage} project=${r.project} kind=${r.kind} name=${r.name} params=${r.params} />`;
    default:
      return html`<h1>Not found</h1><p>The console has no such page.</p>`;
  }
}

function App() {
  const route = useRoute();
  const [session, setSession] = useState(null);
  const [projects, setProjects] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    getSession()
      .then((s) => { setSession(s); return getProjects(); })
      .then(setProjects)
      .catch(setError);
  }, []);
  if (error) return html`<main class="content"><${ErrorBox} error=${error} /></main>`;
  if (!session || !projects) return html`<main class="content"><${Loading} what="your session" /></main>`;
  const r = parseRoute(route);
  if (r.project) localStorage.setItem(lastProjectKey, r.project);
  return html`<div class="frame">
    <${Header} session=${session} projects=${projects} project=${r.project} />
    ${r.page === 'home'
      ? html`<${Home} projects=${projects} />`
      : html`<div class="body"><${Nav} project=${r.project} active=${r.kind ? (r.kind.job ? 'jobs' : r.kind.key) : r.page} />
          <main class="content"><${Page} r=${r} /></main></div>`}
    <${Toasts} />
  </div>`;
}

const root = document.getElementById('app');
root.textContent = '';
render(html`<${App} />`, root);
