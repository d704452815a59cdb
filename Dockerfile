# One image for every pixflow process (docs/production.md "The image"): JavaScript compiled by tsc,
# run by plain node on a supported LTS, over production dependencies only (no tsx, no test
# packages, no embedded PostgreSQL), as an unprivileged user. docker-compose.yml picks the command:
#   node dist/src/cli/api.js | worker.js | migrate.js | simulator.js | ops.js …
ARG NODE_IMAGE=node:22-bookworm-slim

# Compiles with the full (development) install.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# Its postinstall step and npm start's binary lookup (compiled in); the image runs no local
# Temporal (TEMPORAL_ADDRESS is required in production), so the binaries are not fetched.
COPY tools/temporal-binaries tools/temporal-binaries
# The dashboard's build step too (it finds no sources yet and says so; they are built below).
COPY tools/dashboard tools/dashboard
RUN PIXFLOW_SKIP_TEMPORAL_BINARIES=1 npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src src
COPY workflows workflows
COPY activities activities
COPY migrations migrations
RUN npx tsc -p tsconfig.build.json
# The merchants' dashboard (docs/dashboard.md "Building it"), served from dist/dashboard/.build.
COPY dashboard dashboard
COPY examples/typed-client/api.d.ts examples/typed-client/api.d.ts
RUN npm run dashboard:build && mkdir -p dist/dashboard && cp -r dashboard/.build dist/dashboard/.build

# Production dependencies only; if this fails the build fails (no fallback to a full install).
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# The postinstall step, which does nothing without the development dependencies.
COPY tools/temporal-binaries/postinstall.cjs tools/temporal-binaries/postinstall.cjs
COPY tools/dashboard/postinstall.cjs tools/dashboard/postinstall.cjs
RUN npm ci --omit=dev --no-audit --no-fund

FROM ${NODE_IMAGE}
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app/node_modules node_modules
# dist/ holds src, workflows (bundled by the worker at start from dist/workflows), activities,
# migrations and the package.json they read.
COPY --from=build /app/dist dist
COPY package.json ./
# The processes need no write access to the code; they run unprivileged.
USER node
# API, worker metrics (ours, then the Temporal SDK's), acquirer simulator.
EXPOSE 3000 9100 9464 8090
# The API's liveness on PORT; compose gives the worker and simulator checks of their own.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(process.env.HEALTHCHECK_URL || `http://127.0.0.1:${process.env.PORT || 3000}/healthz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "dist/src/cli/api.js"]
