import { anonymousExposure, isLoopback } from './exposure.js';

it('loopback addresses: 127.0.0.0/8, ::1 in its forms, localhost', () => {
  for (const host of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1', 'localhost', 'LOCALHOST', 'api.localhost']) {
    expect([host, isLoopback(host)]).toEqual([host, true]);
  }
  for (const host of ['0.0.0.0', '::', '', '10.0.0.5', '128.0.0.1', '::2', 'example.com', 'localhost.example.com', '127.0.0.1.nip.io']) {
    expect([host, isLoopback(host)]).toEqual([host, false]);
  }
});

it('a server off loopback needs a key or --allow-anonymous, and the refusal says how to fix it', () => {
  expect(anonymousExposure({ host: '127.0.0.1', apiKey: '', allowAnonymous: false })).toBeUndefined();
  expect(anonymousExposure({ host: '0.0.0.0', apiKey: 'k'.repeat(16), allowAnonymous: false })).toBeUndefined();
  expect(anonymousExposure({ host: '0.0.0.0', apiKey: '', allowAnonymous: true })).toBeUndefined();
  const refusal = anonymousExposure({ host: '', apiKey: '', allowAnonymous: false });
  expect(refusal).toMatch(/^refusing to serve the HTTP API on every address without an API key/);
  expect(refusal).toMatch(/--api-key KEY \(or TESSERA_API_KEY.*--allow-anonymous/);
  expect(refusal).not.toContain('\n');
});
