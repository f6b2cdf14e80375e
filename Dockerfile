# syntax=docker/dockerfile:1
# moneyq: `docker build -t moneyq .`; deploy/docker-compose.yml runs it beside Redis,
# Prometheus and Grafana (docs/deploy.md, "Run with Docker").
# Node 24 LTS: the runtime the project pins (package.json) and every test runs on.
ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
# The dependencies first, in a layer of their own: a change to src/ alone reuses it from the
# build cache instead of downloading every package again. `prepare` (the compile) waits for src.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
# Compile src to dist; then only production dependencies stay.
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM ${NODE_IMAGE}
# tini is PID 1: it hands SIGTERM to node, which then finishes active jobs within the grace
# period, and it reaps zombies.
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini \
  && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production \
    MONEYQ_API_HOST=0.0.0.0 \
    MONEYQ_METRICS_HOST=0.0.0.0
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
COPY console ./console
COPY examples ./examples
# The image's unprivileged user; the application files stay root's, read-only to it.
USER node
EXPOSE 8080 9464
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "bin/moneyq.js", "healthcheck"]
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "bin/moneyq.js", "start"]
