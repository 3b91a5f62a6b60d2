import type { ComponentChildren } from 'preact';

export function Failure({ error }: { error: Error | undefined }) {
  return error === undefined ? null : <p class="error" role="alert">{error.message}</p>;
}

export function Panel({ title, children, testId }: { title: string; children: ComponentChildren; testId?: string }) {
  return (
    <section class="panel" data-testid={testId}>
      <h2>{title}</h2>
      {children}
    </section>
  );
}

/** A value as indented JSON. */
export function Json({ value }: { value: unknown }) {
  return <pre class="json">{JSON.stringify(value, null, 2)}</pre>;
}
