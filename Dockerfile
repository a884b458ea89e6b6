# The erc20-etl image: docker-compose.yml builds it (`docker compose build`), or `docker build -t erc20-etl .`.
# It runs the compiled JavaScript with production dependencies only, as an unprivileged user.

# Build: every dependency (the compiler and the bundler are development ones), then src/ and migrations/ compiled into
# dist/, and the CLI bundled into dist/src/bundle/.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# no install scripts: none is needed to compile, and `prepare` would build before the sources are here
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json rolldown.config.ts ./
COPY src src
COPY migrations migrations
RUN npm run build

# Run: production dependencies, dist/ (the migrations compiled in dist/migrations), bin/ and jobs/.
FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
# Production dependencies without the optional ones: those are the platform binaries of embedded-postgres
# (for `demo`, the tests and the bench; the image always runs against a PostgreSQL server of its own, from
# DATABASE_URL), pg's Cloudflare socket, and the compiler cosmiconfig (of graphile-worker) may use for a
# TypeScript config file, which the image does not have. --ignore-scripts: `prepare` would build without the
# compiler, and no dependency left needs an install script.
RUN npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY bin bin
COPY jobs jobs
COPY --from=build /app/dist dist
USER node
ENTRYPOINT ["node", "bin/erc20-etl.js"]
