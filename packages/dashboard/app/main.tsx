/**
 * The Tessera dashboard (API.md §16.4, docs/dashboard.md): one page, served
 * by the server without a key; every figure it shows comes from the public
 * API, called with the key the user gives when the server asks for one.
 */
import 'uplot/dist/uPlot.min.css';
import './style.css';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { ServerInfo } from '@tessera/client';
import { ApiError, call, onUnauthorized, storedKey, storeKey } from './api';
import { hrefOf, useHashPlace, useLoad } from './load';
import { Failure } from './views/common';
import { DocumentView } from './views/document';
import { IndexesView } from './views/indexes';
import { MetricsView } from './views/metrics';
import { NodesView } from './views/nodes';
import { SearchView } from './views/search';

const VIEWS: readonly [string, string][] = [['indexes', 'Indexes'], ['search', 'Search'], ['nodes', 'Nodes'], ['metrics', 'Metrics']];

function App() {
  const [keyRound, setKeyRound] = useState(0);
  const [needsKey, setNeedsKey] = useState(false);
  useEffect(() => onUnauthorized(() => setNeedsKey(true)), []);
  // `GET /` as JSON (an API client's Accept): who the server is, and whether the key is right.
  const server = useLoad(() => call<ServerInfo>('GET', '/'), [keyRound]);
  const refused = server.error instanceof ApiError && server.error.status === 401;
  if (needsKey || refused) {
    return <KeyPrompt error={storedKey() === undefined || server.loading ? undefined : 'That key was refused.'}
      onKey={(key) => { storeKey(key); setNeedsKey(false); setKeyRound((r) => r + 1); }} />;
  }
  return (
    <>
      <header>
        <h1>Tessera</h1>
        {server.data !== undefined && (
          <span class="server" data-testid="server">{server.data.server} · {server.data.cluster_name} · {server.data.name} ·{' '}
            <span class={server.data.state === 'READY' ? 'badge ok' : 'badge down'}>{server.data.state}</span></span>
        )}
        <nav>{VIEWS.map(([view, label]) => <a key={view} href={hrefOf(view)}>{label}</a>)}</nav>
        {storedKey() !== undefined && <button type="button" onClick={() => { storeKey(undefined); setKeyRound((r) => r + 1); }}>Forget key</button>}
      </header>
      <main>
        <Failure error={refused ? undefined : server.error} />
        {server.data !== undefined && <Current />}
      </main>
    </>
  );
}

function Current() {
  const place = useHashPlace();
  switch (place.view) {
    case 'search': return <SearchView params={place.params} />;
    case 'document': return <DocumentView params={place.params} />;
    case 'nodes': return <NodesView />;
    case 'metrics': return <MetricsView />;
    default: return <IndexesView />;
  }
}

/** The server needs a key (401): ask for it; it is kept in this tab's sessionStorage only. */
function KeyPrompt({ error, onKey }: { error: string | undefined; onKey: (key: string) => void }) {
  const [key, setKey] = useState('');
  return (
    <main class="key-prompt">
      <h1>Tessera</h1>
      <form data-testid="key-form" onSubmit={(event) => { event.preventDefault(); if (key !== '') onKey(key); }}>
        <p>This server needs an API key (<code>--api-key</code>, or a key from <code>POST /.keys/</code>).
          It is kept in this tab only (sessionStorage) and sent as <code>Authorization: Bearer</code>.</p>
        <input type="password" name="apiKey" aria-label="API key" autoComplete="off" value={key}
          onInput={(event) => setKey((event.target as HTMLInputElement).value)} />
        <button type="submit">Use this key</button>
        {error !== undefined && <p class="error" role="alert">{error}</p>}
      </form>
    </main>
  );
}

render(<App />, document.getElementById('app') as HTMLElement);
