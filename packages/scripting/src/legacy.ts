/**
 * ChaiScript compatibility (API.md §11.3), applied to a body before it is
 * compiled: Lua has no compound assignment, so `x += e` (`-=`, `*=`, `/=`)
 * becomes `x = x + (e)`. Lua itself never contains these operators, so the
 * rewrite cannot change a valid Lua script, except inside a multi-line string
 * literal, which is left to the script author. The rest of the legacy
 * interface (`list.append(v)`, `_doc.erase(name)`…) lives in the prelude.
 */

/** A target (`x`, `_doc.a.b`, `_doc["a"][1]`), the operator, and the expression. */
const COMPOUND = /^(\s*)([A-Za-z_]\w*(?:\s*(?:\.\s*[A-Za-z_]\w*|\[[^\]\n]*\]))*)\s*([-+*/])=(?!=)\s*(.+?)\s*$/;
const HAS_COMPOUND = /[-+*/]=/;

export function rewriteLegacy(body: string): string {
  if (!HAS_COMPOUND.test(body)) return body;
  return body.split('\n').map(rewriteLine).join('\n');
}

function rewriteLine(line: string): string {
  if (!HAS_COMPOUND.test(line)) return line;
  const quoted = /["']|\[\[/.test(line);
  let code = line;
  let comment = '';
  if (!quoted) {
    const dashes = line.indexOf('--');
    if (dashes >= 0) {
      code = line.slice(0, dashes).trimEnd();
      comment = line.slice(code.length);
    }
  }
  // Several statements on one line (`a += 1; b -= 2;`) are split only when no string could hold a `;`.
  const statements = quoted ? [code] : code.split(';');
  const out = statements.map((statement) => {
    let text = statement;
    let semicolon = '';
    if (quoted && /;\s*$/.test(text)) {
      text = text.replace(/;\s*$/, '');
      semicolon = ';';
    }
    const m = COMPOUND.exec(text);
    return (m === null ? text : `${m[1]}${m[2]} = ${m[2]} ${m[3]} (${m[4]})`) + semicolon;
  });
  return out.join(';') + comment;
}
