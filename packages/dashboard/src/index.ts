/**
 * The dashboard's built files (build.mjs writes them to dist/public/), for
 * a server to serve as they are: name → bytes, `index.html` the page. The
 * package knows nothing of the server; the server nothing of these files
 * but their names and bytes.
 */
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

/** Where build.mjs puts the bundle. */
export const DASHBOARD_DIR = fileURLToPath(new URL('./public/', import.meta.url));

/** Every built file by name; throws when the dashboard was not built (no index.html). */
export async function dashboardFiles(): Promise<Map<string, Buffer>> {
  const names = await readdir(DASHBOARD_DIR).catch(() => [] as string[]);
  if (!names.includes('index.html')) throw new Error(`the dashboard is not built (no ${DASHBOARD_DIR}index.html): run \`npm run build\``);
  const files = new Map<string, Buffer>();
  for (const name of names.sort()) files.set(name, await readFile(`${DASHBOARD_DIR}${name}`));
  return files;
}
