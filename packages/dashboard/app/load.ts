import { useEffect, useState } from 'preact/hooks';

export interface Loaded<T> {
  data: T | undefined;
  error: Error | undefined;
  /** A load is under way (the previous answer is kept meanwhile, so a view does not flash). */
  loading: boolean;
  reload(): void;
}

/** The result of `load()`, run again when `deps` change or on reload(); a stale answer never replaces a newer one. */
export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: Error; loading: boolean }>({ loading: true });
  const [round, setRound] = useState(0);
  useEffect(() => {
    let current = true;
    setState((previous) => ({ ...previous, loading: true }));
    load().then(
      (data) => current && setState({ data, loading: false }),
      (error: unknown) => current && setState({ error: error instanceof Error ? error : new Error(String(error)), loading: false }),
    );
    return () => { current = false; };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, round]);
  return { data: state.data, error: state.error, loading: state.loading, reload: () => setRound((r) => r + 1) };
}

/** Where the page is: `#/view?key=value…` (views link to each other by hash, so Back works). */
export interface Place {
  view: string;
  params: URLSearchParams;
}

export function placeOf(hash: string): Place {
  const [view = '', query = ''] = hash.replace(/^#\/?/, '').split('?');
  return { view: view === '' ? 'indexes' : view, params: new URLSearchParams(query) };
}

export function hrefOf(view: string, params: Record<string, string> = {}): string {
  const query = new URLSearchParams(params).toString();
  return `#/${view}${query === '' ? '' : `?${query}`}`;
}

export function useHashPlace(): Place {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const changed = () => setHash(location.hash);
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return placeOf(hash);
}
