# The Tessera image: the `tessera` program, its command the container's
# arguments (docs/cluster.md, Docker).
#
#   docker build -t tessera .
#   docker run -p 8880:8880 -v tessera-data:/data tessera               # tessera serve
#   docker run tessera coordinator --etcd http://etcd:2379 --name c1 …  # or node, import, dump, --help
#
# test/src/compose.test.ts reads this file: ENTRYPOINT, USER, VOLUME, ENV and
# HEALTHCHECK are checked against packages/cli/src/node-flags.ts and the CLI.

# --- build: compile the TypeScript, then drop the development dependencies ---
FROM node:20-bookworm-slim AS build
WORKDIR /app

# The manifests first, so that the dependency layer is rebuilt only when they change.
COPY package.json package-lock.json tsconfig.json tsconfig.base.json ./
COPY packages/errors/package.json packages/errors/
COPY packages/documents/package.json packages/documents/
COPY packages/geo/package.json packages/geo/
COPY packages/schema/package.json packages/schema/
COPY packages/search-model/package.json packages/search-model/
COPY packages/http/package.json packages/http/
COPY packages/rpc/package.json packages/rpc/
COPY packages/scripting/package.json packages/scripting/
COPY packages/engine/package.json packages/engine/
COPY packages/node/package.json packages/node/
COPY packages/dashboard/package.json packages/dashboard/
COPY packages/coordinator/package.json packages/coordinator/
COPY packages/cli/package.json packages/cli/
# The client is a workspace too (npm install wants its manifest); the image does not build or need it.
COPY packages/client/package.json packages/client/
# `npm install`, not `npm ci`: the lock file (written by npm 11) leaves out the
# other platforms' optional binaries of unrs-resolver (a jest dependency), and
# `npm ci` refuses it as out of sync ("Missing: @unrs/resolver-binding-… from
# lock file"; .ci/run does the same). `npm install` still installs the locked
# versions. --ignore-scripts: `prepare` (tsc -b) needs the sources, copied
# below; the native modules need no script either — classic-level (LevelDB)
# loads its bundled prebuilds, msgpackr-extract its optional platform package.
RUN npm install --no-audit --no-fund --ignore-scripts

COPY packages ./packages
# packages/cli references every other package (tsconfig.json "references"):
# this builds them all, without the tests (the root tsconfig also builds test/).
# The dashboard's browser bundle (esbuild, a development dependency) is built
# here too: the image serves packages/dashboard/dist/public as it is.
RUN npx tsc -b packages/cli packages/dashboard/app \
 && node packages/dashboard/build.mjs \
 && npm prune --omit=dev --no-audit --no-fund --ignore-scripts \
 && rm -rf packages/*/src packages/*/tsconfig.json packages/*/dist/.tsbuildinfo packages/dashboard/app packages/dashboard/build.mjs packages/dashboard/dist/*.tsbuildinfo \
 && find packages/*/dist \( -name '*.test.*' -o -name '*.bench.*' -o -name '*.d.ts' -o -name '*.d.ts.map' \) -delete

# --- runtime: what runs, owned by root, run by `node` ---
FROM node:20-bookworm-slim
WORKDIR /app
# node_modules/@tessera/* are workspace links to ../../packages/*: the same
# layout under /app keeps them pointing at the compiled packages. packages/
# holds each package's dist and package.json (and node_modules, where npm
# nested one), packages/cli/bin the `tessera` launcher; the root package.json
# gives `tessera --version`.
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/packages ./packages
COPY docker/healthcheck.mjs docker/

# The data directory, writable by `node`; a new named volume copies this
# ownership. TESSERA_DATA and TESSERA_HOST are settings (packages/cli/src/config.ts):
# flags still win. The MALLOC_* variables are SERVER_ENV of packages/cli/src/node-flags.ts.
RUN mkdir /data && chown node:node /data
ENV TESSERA_DATA=/data \
    TESSERA_HOST=0.0.0.0 \
    MALLOC_ARENA_MAX=2 \
    MALLOC_MMAP_THRESHOLD_=131072 \
    MALLOC_TRIM_THRESHOLD_=131072
VOLUME /data
USER node
# HTTP API (serve, coordinator); RPC listener nodes join (coordinator).
EXPOSE 8880 8890

# Liveness: /healthz on the command's HTTP port (--port, else TESSERA_PORT,
# else 8880); a shard node has no HTTP and is healthy while it runs. Not
# /readyz: a coordinator stays unready until a node joins (and while etcd is
# out of reach), and nodes wait for it to be healthy. See the script.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=5 \
  CMD ["node", "docker/healthcheck.mjs"]

# The server drains on SIGTERM (docs/operations.md, Shutdown); node is PID 1
# and handles it itself. The flags are SERVER_NODE_FLAGS (node-flags.ts).
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "--max-semi-space-size=16", "packages/cli/dist/main.js"]
CMD ["serve"]
