# syntax=docker/dockerfile:1
# pipescaler: build with the dev dependencies, run with the production ones only, as a non-root user.
# Node 24 (the current LTS; Node 20 reached its end of life in April 2026). The code still runs on
# Node 20.19+ (package.json engines): .ci/run tests both Node 20 and this image's Node 24.

FROM node:24.11.1-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

FROM node:24.11.1-bookworm-slim AS runtime
# The production install leaves out the optional dependencies: the embedded demo cloud's server
# (fastify and ~35 packages) and pino-pretty (38 packages instead of 90). docker-compose.yml builds
# with WITH_DEMO_CLOUD=true, as its `cloud` service serves the demo platform from this image.
ARG WITH_DEMO_CLOUD=false
# NODE_OPTIONS caps V8's heap to fit the 512 MiB memory limit the Kubernetes Deployment and the
# systemd unit ship (see config/kubernetes/deployment.yaml): without a cap V8 sizes its heap by
# the machine's memory, not the container's, and lets garbage grow past the limit.
ENV NODE_ENV=production \
    NODE_OPTIONS=--max-old-space-size=320 \
    PIPESCALER_TELEMETRY_LISTEN=0.0.0.0:9464
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev $([ "$WITH_DEMO_CLOUD" = true ] || echo --omit=optional) --no-audit --no-fund \
  && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY config ./config
# The official node image's unprivileged user (uid 1000).
USER node
EXPOSE 9464
# /healthz where the daemon listens: PIPESCALER_TELEMETRY_LISTEN (host:port), a wildcard host asked
# on 127.0.0.1. Node has fetch, so the image needs no HTTP client binary.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "const l = process.env.PIPESCALER_TELEMETRY_LISTEN || '127.0.0.1:9464'; const i = l.lastIndexOf(':'); let h = l.slice(0, i).replace('[', '').replace(']', ''); if (h === '' || h === '0.0.0.0' || h === '::') h = '127.0.0.1'; fetch('http://' + (h.includes(':') ? '[' + h + ']' : h) + ':' + l.slice(i + 1) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "dist/cli/main.js"]
CMD ["run", "config/pipescaler.yaml"]
