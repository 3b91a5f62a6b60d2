import { TesseraError } from '@tessera/errors';
import { applyDocumentPatch } from './patch.js';

function failure(body: Record<string, unknown>, ops: unknown): TesseraError {
  try {
    applyDocumentPatch(body, ops);
  } catch (err) {
    expect(err).toBeInstanceOf(TesseraError);
    const e = err as TesseraError;
    expect(e.code).toBe('patch_failed');
    expect(e.status).toBe(400);
    return e;
  }
  throw new Error('the patch was expected to fail');
}

describe('applyDocumentPatch: RFC 6902 operations', () => {
  it('add: sets a member, inserts into an array, appends with -', () => {
    const out = applyDocumentPatch({ a: 1, list: [1, 3] }, [
      { op: 'add', path: '/b', value: { c: 2 } },
      { op: 'add', path: '/list/1', value: 2 },
      { op: 'add', path: '/list/-', value: 4 },
      { op: 'add', path: '/list/4', value: 5 },
      { op: 'add', path: '/a', value: 'replaced' },
    ]);
    expect(out).toEqual({ a: 'replaced', b: { c: 2 }, list: [1, 2, 3, 4, 5] });
  });

  it('add: the parent must exist and an index must be within the array', () => {
    expect(failure({}, [{ op: 'add', path: '/missing/x', value: 1 }]).message)
      .toBe("Patch operation 0 (add) failed: the parent of '/missing/x' does not exist");
    failure({ list: [1] }, [{ op: 'add', path: '/list/3', value: 1 }]);
    failure({ list: [1] }, [{ op: 'add', path: '/list/01', value: 1 }]);
    failure({ s: 'text' }, [{ op: 'add', path: '/s/x', value: 1 }]);
  });

  it('remove: deletes a member or an array element; the target must exist', () => {
    expect(applyDocumentPatch({ a: 1, b: 2, list: [1, 2, 3] }, [
      { op: 'remove', path: '/a' },
      { op: 'remove', path: '/list/0' },
    ])).toEqual({ b: 2, list: [2, 3] });
    failure({ a: 1 }, [{ op: 'remove', path: '/b' }]);
    failure({ list: [1] }, [{ op: 'remove', path: '/list/-' }]);
    failure({ a: 1 }, [{ op: 'remove', path: '' }]);
  });

  it('replace: the target must exist', () => {
    expect(applyDocumentPatch({ a: 1, list: [1, 2] }, [
      { op: 'replace', path: '/a', value: [1] },
      { op: 'replace', path: '/list/1', value: 9 },
    ])).toEqual({ a: [1], list: [1, 9] });
    failure({}, [{ op: 'replace', path: '/a', value: 1 }]);
  });

  it('replace or add at the root replaces the document, which must stay an object', () => {
    expect(applyDocumentPatch({ a: 1 }, [{ op: 'replace', path: '', value: { b: 2 } }])).toEqual({ b: 2 });
    expect(applyDocumentPatch({ a: 1 }, [{ op: 'add', path: '', value: { c: 3 } }])).toEqual({ c: 3 });
    expect(failure({ a: 1 }, [{ op: 'replace', path: '', value: [1] }]).message).toBe('The patched document must be an object');
  });

  it('move: removes from one place and adds at another', () => {
    expect(applyDocumentPatch({ a: { x: 1 }, list: [1, 2, 3] }, [
      { op: 'move', from: '/a/x', path: '/b' },
      { op: 'move', from: '/list/0', path: '/list/-' },
      { op: 'move', from: '/b', path: '/b' },
    ])).toEqual({ a: {}, b: 1, list: [2, 3, 1] });
    failure({ a: 1 }, [{ op: 'move', from: '/missing', path: '/b' }]);
    expect(failure({ a: { b: 1 } }, [{ op: 'move', from: '/a', path: '/a/b/c' }]).message)
      .toBe("Patch operation 0 (move) failed: cannot move '/a' into itself");
    failure({ a: 1 }, [{ op: 'move', from: '/a', path: '/missing/b' }]);
  });

  it('copy: copies by value', () => {
    const out = applyDocumentPatch({ a: { x: [1] } }, [
      { op: 'copy', from: '/a', path: '/b' },
      { op: 'add', path: '/b/x/-', value: 2 },
    ]);
    expect(out).toEqual({ a: { x: [1] }, b: { x: [1, 2] } });
    failure({}, [{ op: 'copy', from: '/missing', path: '/b' }]);
  });

  it('test: compares deeply; a failed test fails the patch', () => {
    expect(applyDocumentPatch({ a: { x: [1, { y: 2 }] } }, [
      { op: 'test', path: '/a', value: { x: [1, { y: 2 }] } },
      { op: 'test', path: '/a/x/1/y', value: 2 },
    ])).toEqual({ a: { x: [1, { y: 2 }] } });
    expect(failure({ a: 1 }, [{ op: 'add', path: '/b', value: 1 }, { op: 'test', path: '/a', value: 2 }]).message)
      .toBe('Patch operation 1 (test) failed: Test operation failed');
    failure({ a: 1 }, [{ op: 'test', path: '/missing', value: null }]);
  });

  it('decodes RFC 6901 escapes', () => {
    expect(applyDocumentPatch({ 'a/b': 1, 'm~n': 2 }, [
      { op: 'replace', path: '/a~1b', value: 10 },
      { op: 'replace', path: '/m~0n', value: 20 },
    ])).toEqual({ 'a/b': 10, 'm~n': 20 });
    failure({ a: 1 }, [{ op: 'replace', path: '/a~2', value: 1 }]);
  });

  it('refuses malformed patches and operations', () => {
    expect(failure({}, { op: 'add' }).message).toBe('A JSON Patch must be an array of operations');
    failure({}, ['add']);
    failure({}, [{ path: '/a', value: 1 }]);
    expect(failure({}, [{ op: 'frobnicate', path: '/a' }]).message).toBe("Patch operation 0 (frobnicate) failed: unknown operation 'frobnicate'");
    failure({}, [{ op: 'add', path: 'a', value: 1 }]);
    failure({}, [{ op: 'add', path: '/a' }]);
    failure({}, [{ op: 'move', path: '/a' }]);
  });

  it('only sees own properties (no inherited /toString or /__proto__)', () => {
    failure({}, [{ op: 'replace', path: '/toString', value: 1 }]);
    failure({}, [{ op: 'remove', path: '/constructor' }]);
    failure({}, [{ op: 'test', path: '/__proto__', value: {} }]);
    failure({}, [{ op: 'add', path: '/__proto__', value: { polluted: true } }]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('applyDocumentPatch: incr and decr', () => {
  it('adds and subtracts', () => {
    expect(applyDocumentPatch({ likes: 10, o: { n: 1.5 } }, [
      { op: 'incr', path: '/likes', value: 5 },
      { op: 'decr', path: '/o/n', value: 0.5 },
    ])).toEqual({ likes: 15, o: { n: 1 } });
  });

  it('fails when the result reaches the limit (an exclusive bound)', () => {
    expect(applyDocumentPatch({ n: 98 }, [{ op: 'incr', path: '/n', value: 1, limit: 100 }])).toEqual({ n: 99 });
    expect(failure({ n: 99 }, [{ op: 'incr', path: '/n', value: 1, limit: 100 }]).message)
      .toBe('Patch operation 0 (incr) failed: the result 100 reaches the limit 100');
    failure({ n: 99 }, [{ op: 'incr', path: '/n', value: 5, limit: 100 }]);
    expect(applyDocumentPatch({ n: 2 }, [{ op: 'decr', path: '/n', value: 1, limit: 0 }])).toEqual({ n: 1 });
    failure({ n: 1 }, [{ op: 'decr', path: '/n', value: 1, limit: 0 }]);
    // Direction follows the effective step: incr by a negative value moves down.
    failure({ n: 1 }, [{ op: 'incr', path: '/n', value: -1, limit: 0 }]);
    expect(applyDocumentPatch({ n: 1 }, [{ op: 'incr', path: '/n', value: -1, limit: -5 }])).toEqual({ n: 0 });
    failure({ n: 1 }, [{ op: 'incr', path: '/n', value: -1, limit: 5 }]);
  });

  it('requires numbers and an existing target', () => {
    failure({ n: '1' }, [{ op: 'incr', path: '/n', value: 1 }]);
    failure({ n: 1 }, [{ op: 'incr', path: '/n', value: '1' }]);
    failure({ n: 1 }, [{ op: 'incr', path: '/n', value: 1, limit: 'x' }]);
    failure({}, [{ op: 'incr', path: '/n', value: 1 }]);
    failure({ n: 1 }, [{ op: 'incr', path: '', value: 1 }]);
    failure({ n: Number.MAX_VALUE }, [{ op: 'incr', path: '/n', value: Number.MAX_VALUE }]);
  });
});

describe('applyDocumentPatch: purity', () => {
  it('never modifies the input document or the operations, even when a later operation fails', () => {
    const body = { a: { list: [1, 2] }, n: 1 };
    const ops = [
      { op: 'add', path: '/a/list/-', value: { v: 3 } },
      { op: 'incr', path: '/n', value: 1 },
      { op: 'remove', path: '/a/list/0' },
      { op: 'test', path: '/n', value: 'no' },
    ];
    const bodyCopy = structuredClone(body);
    const opsCopy = structuredClone(ops);
    failure(body, ops);
    expect(body).toEqual(bodyCopy);
    expect(ops).toEqual(opsCopy);
    const out = applyDocumentPatch(body, ops.slice(0, 3));
    expect(out).toEqual({ a: { list: [2, { v: 3 }] }, n: 2 });
    expect(body).toEqual(bodyCopy);
    // The added value is a copy: changing the result leaves the operation alone.
    ((out.a as { list: { v: number }[] }).list[1]).v = 99;
    expect(ops).toEqual(opsCopy);
  });

  it('an empty patch returns an equal copy', () => {
    const body = { a: [1, { b: 2 }] };
    const out = applyDocumentPatch(body, []);
    expect(out).toEqual(body);
    expect(out).not.toBe(body);
    expect(out.a).not.toBe(body.a);
  });
});
