import { existsSync } from "node:fs";
import { findOnPath } from "../../src/redis/private-redis.js";
import { BASE_IMAGES, ensureBaseImages } from "./base-images.js";
import { removeLeftovers } from "./leftovers.js";
import { buildImage, MONEYQ_IMAGE, ROOT } from "./podman.js";

/** What podman needs here beyond itself, each with its Debian package (.ci/run installs them). */
const NEEDED: readonly (readonly [string, string])[] = [
  ["podman", "podman"],
  ["podman-compose", "podman-compose"],
  ["runc", "runc"],
  ["iptables", "iptables"],
  ["debootstrap", "debootstrap"],
  ["/usr/lib/podman/netavark", "netavark"],
  ["/usr/lib/podman/aardvark-dns", "aardvark-dns"],
];

function requirePrograms(): void {
  const missing = NEEDED.filter(([name]) =>
    name.startsWith("/") ? !existsSync(name) : !findOnPath(name, process.env.PATH),
  );
  if (missing.length > 0)
    throw new Error(
      `npm run test:image needs ${missing.map(([name]) => name).join(", ")}: apt-get install ` +
        `--no-install-recommends ${missing.map(([, pkg]) => pkg).join(" ")} (.ci/run installs them)`,
    );
}

/** The Dockerfile's first stage, tagged so that its layers stay podman's build cache. */
const BUILD_STAGE = "localhost/moneyq-test/moneyq-build:local";

/** Builds the moneyq image from the repository's Dockerfile as it is, on the node image made here. */
function buildMoneyqImage(): void {
  const base = ["--build-arg", `NODE_IMAGE=${BASE_IMAGES.node}`];
  buildImage(BUILD_STAGE, [...base, "--target", "build", ROOT]);
  buildImage(MONEYQ_IMAGE, [...base, ROOT]);
}

/** Vitest's global setup for `npm run test:image`: the images, then the tests, then cleanup. */
export default function setup() {
  requirePrograms();
  removeLeftovers();
  const log = (line: string) => console.log(`test:image: ${line}`);
  let started = Date.now();
  ensureBaseImages(log);
  log(`base images ready (${((Date.now() - started) / 1000).toFixed(0)} s)`);
  started = Date.now();
  buildMoneyqImage();
  log(`${MONEYQ_IMAGE} built (${((Date.now() - started) / 1000).toFixed(0)} s)`);
  return () => removeLeftovers();
}
