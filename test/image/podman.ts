import { spawnSync } from "node:child_process";
import { join } from "node:path";

/** The repository's root: the Dockerfile's build context and the compose file's home. */
export const ROOT = join(import.meta.dirname, "../..");

/** The moneyq image, under the name deploy/docker-compose.yml gives it. */
export const MONEYQ_IMAGE = "localhost/moneyq:local";

/**
 * The environment of every podman and podman-compose call: podman's settings for these tests
 * (see the file's comments), not the host's; and without the variables the compose file
 * reads, so that the stack under test always pays through its sandbox service.
 */
const env: NodeJS.ProcessEnv = {
  ...process.env,
  CONTAINERS_CONF: join(import.meta.dirname, "containers.conf"),
};
for (const name of ["PAYMENTS_API_URL", "PAYMENTS_API_KEY", "OPS_API_TOKEN"]) delete env[name];

export interface RunResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a program to its end with the tests' podman settings; never throws on a non-zero exit. */
export function run(program: string, args: readonly string[], timeoutMs = 120_000): RunResult {
  const result = spawnSync(program, args, {
    env,
    encoding: "utf8",
    timeout: timeoutMs,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.error) throw result.error;
  return { code: result.status ?? 1, stdout: result.stdout, stderr: result.stderr };
}

/** Runs a program and returns its standard output; a non-zero exit throws with its stderr. */
export function must(program: string, args: readonly string[], timeoutMs?: number): string {
  const result = run(program, args, timeoutMs);
  if (result.code !== 0)
    throw new Error(
      `${program} ${args.join(" ")} exited with ${result.code}:\n${tail(result.stderr || result.stdout)}`,
    );
  return result.stdout;
}

function imageId(name: string): string | undefined {
  const result = run("podman", ["image", "inspect", "--format", "{{.Id}}", name]);
  return result.code === 0 ? result.stdout.trim() : undefined;
}

/**
 * `podman build` with the host's network (`apt-get` and `npm ci` inside a build reach the
 * registries as the host does) and the Docker format (the OCI format has no HEALTHCHECK:
 * podman would drop the Dockerfile's). The image the tag named before is removed when the
 * build made a new one, so repeated runs do not fill the disk.
 */
export function buildImage(tag: string, args: readonly string[]): void {
  const before = imageId(tag);
  must(
    "podman",
    ["build", "--network=host", "--format=docker", "--tag", tag, ...args],
    30 * 60_000,
  );
  if (before && before !== imageId(tag)) run("podman", ["rmi", before]);
}

/** `podman ARGS`, its output; throws on failure. */
export function podman(...args: string[]): string {
  return must("podman", args);
}

/** The last lines of a long output, for an error message. */
export function tail(text: string, lines = 40): string {
  return text.trimEnd().split("\n").slice(-lines).join("\n");
}

/** A container's health as podman records it: "healthy", "unhealthy", "starting" or "". */
export function healthOf(container: string): string {
  return podman("inspect", "--format", "{{.State.Health.Status}}", container).trim();
}

/** The container's log (stdout and stderr), one JSON line per entry for moneyq. */
export function logsOf(container: string): string {
  const result = run("podman", ["logs", container]);
  return result.stdout + result.stderr;
}
