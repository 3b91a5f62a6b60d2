import { call, documentUrl } from '../api';
import { hrefOf, useLoad } from '../load';
import { Failure, Json, Panel } from './common';

/** A document as stored (API.md §5.2), and what the index holds of it (INFO, §5.8). */
export function DocumentView({ params }: { params: URLSearchParams }) {
  const index = params.get('index') ?? '';
  const id = params.get('id') ?? '';
  const document = useLoad(() => call<Record<string, unknown>>('GET', documentUrl(index, id)), [index, id]);
  return (
    <Panel title={`Document ${id} of ${index}`} testId="document">
      <p><a href={hrefOf('search', { index })}>Back to the search of {index}</a></p>
      <Failure error={document.error} />
      {document.data !== undefined && <Json value={document.data} />}
    </Panel>
  );
}
